"""Rewrite each fixture's ``fixed.py`` (the codemod's output) and ``findings.txt``.

A report-only case (a ``suggested.py`` beside the original, written by hand) gets no
``fixed.py``: the codemod must leave its original alone, which the tests check.

Run after a deliberate change to a rule; review the diff before committing. The test suite
fails while any stored file differs from what the tool produces.
"""

from __future__ import annotations

import sys
from pathlib import Path

from torchdevice_lint import Settings, fix_source, lint_source
from torchdevice_lint.verify.runner import fixture_settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def findings_text(source: bytes, settings: Settings) -> str:
    """One ``line:column CODE`` per finding of the original (column 1-based, as printed)."""
    return "".join(f"{f.line}:{f.column + 1} {f.code}\n" for f in lint_source(source, settings))


def main() -> int:
    changed = 0
    for original in sorted(FIXTURES.glob("*/*/original.py")):
        source = original.read_bytes()
        settings = fixture_settings(original.parent)  # a preview rule's cases run it alone
        outputs = [(original.with_name("findings.txt"), findings_text(source, settings).encode())]
        if not original.with_name("suggested.py").exists():
            outputs.append((original.with_name("fixed.py"), fix_source(source, unsafe=True, settings=settings)))
        for path, content in outputs:
            if not path.exists() or path.read_bytes() != content:
                path.write_bytes(content)
                changed += 1
                print(f"wrote {path.relative_to(FIXTURES.parent)}")
    print(f"{changed} file(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
