"""``torchdevice-fix``: check, diff or rewrite files. Exit 0 clean, 1 findings or changes, 2 errors."""

from __future__ import annotations

import argparse
import difflib
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional, Sequence

from torchdevice_lint import __version__
from torchdevice_lint.engine import Linter, Settings, SourceError
from torchdevice_lint.findings import Finding, Safety
from torchdevice_lint.rules import ALL_RULES

#: Folders never worth descending into (flake8's defaults plus virtual environments).
DEFAULT_EXCLUDES = frozenset(
    {".git", ".hg", ".svn", ".bzr", "CVS", "__pycache__", ".tox", ".nox", ".eggs", ".venv", "venv",
     "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)

STDIN = "-"


@dataclass
class RunSummary:
    findings: int = 0
    changed_files: int = 0
    fixed: int = 0
    errors: int = 0
    by_code: dict[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.findings or self.changed_files else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdevice-fix",
        description="Find and fix PyTorch device handling that breaks on other machines.",
    )
    parser.add_argument("paths", nargs="*", help="files or folders to check; '-' reads stdin")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    mode.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    parser.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (TDL, TDL00)")
    parser.add_argument("--ignore", type=_codes, default=(), help="comma-separated codes or prefixes to disable")
    parser.add_argument("--preview", action="store_true", help="enable rules that are still in preview")
    parser.add_argument("--device-style", choices=("cuda", "accelerator"), default="cuda",
                        help="idiom a fix uses when it must bind a device (default: cuda)")
    parser.add_argument("--stdin-filename", default=STDIN, help="name to report for '-'")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _codes(text: str) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in text.split(",") if code.strip())


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.explain:
        return explain(args.explain)
    if not args.paths:
        build_parser().print_usage(sys.stderr)
        print("torchdevice-fix: error: give at least one path, or '-' for stdin", file=sys.stderr)
        return 2
    settings = Settings(select=args.select, ignore=args.ignore, preview=args.preview, device_style=args.device_style)
    linter = Linter(settings)
    summary = RunSummary()
    for path in iter_python_files(args.paths, summary):
        process(path, linter, args, summary)
    if args.fix and summary.fixed:
        print(f"Fixed {summary.fixed} finding(s) in {summary.changed_files} file(s).", file=sys.stderr)
    return summary.exit_code


def explain(code: str) -> int:
    for rule in ALL_RULES:
        if rule.code == code.upper():
            print(f"{rule.code} ({rule.name})\n\n{rule.documentation()}")
            return 0
    print(f"torchdevice-fix: error: no rule {code}", file=sys.stderr)
    return 2


def iter_python_files(paths: Sequence[str], summary: RunSummary) -> Iterator[str]:
    """Named files as given; folders searched for ``*.py``, skipping the usual clutter."""
    for path in paths:
        if path == STDIN or os.path.isfile(path):
            yield path
        elif os.path.isdir(path):
            yield from _walk_folder(path)
        else:
            report_error(path, "no such file or directory", summary)


def _walk_folder(folder: str) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(root, name)


def process(path: str, linter: Linter, args: argparse.Namespace, summary: RunSummary) -> None:
    shown = args.stdin_filename if path == STDIN else path
    try:
        original = sys.stdin.buffer.read() if path == STDIN else Path(path).read_bytes()
    except OSError as error:
        report_error(shown, error.strerror or str(error), summary)
        return
    try:
        if args.fix or args.diff:
            result = linter.fix(original, unsafe=args.unsafe_fixes)
            fixed, remaining = result.source, result.remaining
        else:
            fixed, remaining = original, linter.lint(original)
    except SourceError as error:
        report_error(shown, str(error), summary)
        if path == STDIN and args.fix:
            sys.stdout.buffer.write(original)
        return
    assert isinstance(fixed, bytes)
    changed = fixed != original
    if args.diff:
        if changed:
            summary.changed_files += 1
            sys.stdout.write(unified_diff(shown, original, fixed))
        return
    if args.fix:
        if path == STDIN:
            sys.stdout.buffer.write(fixed)
        elif changed:
            try:
                write_atomically(path, fixed)
            except OSError as error:
                report_error(shown, f"cannot write: {error.strerror or error}", summary)
                return
        if changed:
            summary.changed_files += 1
            summary.fixed += result.applied
    for finding in sorted(remaining, key=lambda f: (f.line, f.column, f.code)):
        summary.findings += 1
        summary.by_code[finding.code] = summary.by_code.get(finding.code, 0) + 1
        stream = sys.stderr if (args.fix and path == STDIN) else sys.stdout
        print(format_finding(shown, finding), file=stream)


def format_finding(path: str, finding: Finding) -> str:
    """flake8's ``path:line:col: CODE message``, with the column 1-based as flake8 prints it."""
    marker = ""
    if finding.fix_safety is Safety.SAFE:
        marker = " [*]"
    elif finding.fix_safety is Safety.UNSAFE:
        marker = " [unsafe fix]"
    return f"{path}:{finding.line}:{finding.column + 1}: {finding.code} {finding.message}{marker}"


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new = after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))


def write_atomically(path: str, data: bytes) -> None:
    """Write through a temporary file and a rename: a file is always wholly old or new."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not os.access(path, os.W_OK):
        raise PermissionError(13, "file is read-only")
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=".torchdevice-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def report_error(path: str, message: str, summary: RunSummary) -> None:
    summary.errors += 1
    print(f"{path}: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
