"""Run the linter over any folder and print findings per rule and per file.

    python scripts/measure.py PATH [--fix-check] [--jobs N] [--show N] [--select TDL003]

``--fix-check`` also fixes every file in memory (unsafe fixes included) and checks that the
output parses (and compiles, where the input did), that a second fix changes nothing, and
that every line without a fixable finding comes out byte for byte (up to the two binding lines a fix
may insert, and the blank lines around them). Notebooks are checked through the notebook front end: the fixed notebook must
be a notebook again and fixing it twice must change nothing. Nothing is written to disk.
``--jobs`` spreads the files over worker processes (the report is the same).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from torchdevice_lint.engine import Linter
from torchdevice_lint.files import MissingPath, iter_python_files
from torchdevice_lint.findings import Finding
from torchdevice_lint.notebook import Notebook, fix_notebook, is_notebook, lint_notebook
from torchdevice_lint.parallel import map_in_order
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.settings import Settings

_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


@dataclass
class Outcome:
    lines: int = 0
    findings: list[Finding] = field(default_factory=list)
    #: unreadable, crash, unparsable, not-compiling, not-idempotent, lines-changed (or None)
    problem: Optional[str] = None
    detail: str = ""


class Check:
    """One file's lint (and fix check); a picklable callable for worker processes."""

    def __init__(self, select: tuple[str, ...], fix_check: bool) -> None:
        self.linter = Linter(Settings(select=select))
        self.fix_check = fix_check

    def __call__(self, path: str) -> Outcome:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            return Outcome(problem="unreadable", detail=str(error))
        outcome = Outcome(lines=data.count(b"\n"))
        try:
            if is_notebook(path):
                outcome.findings = lint_notebook(data, self.linter)
                if self.fix_check:
                    self._check_notebook(data, outcome)
            else:
                outcome.findings = self.linter.lint(data)
                if self.fix_check:
                    self._check_fix(data, outcome)
        except SourceError as error:
            outcome.problem, outcome.detail = "unreadable", str(error)
        except Exception:  # a crash is what this script exists to find
            outcome.problem, outcome.detail = "crash", traceback.format_exc()
        return outcome

    def _check_fix(self, data: bytes, outcome: Outcome) -> None:
        result = self.linter.fix(data, unsafe=True)
        once = result.source
        assert isinstance(once, bytes)
        try:
            cst.parse_module(once)
        except cst.ParserSyntaxError as error:
            outcome.problem, outcome.detail = "unparsable", str(error).splitlines()[0]
            return
        if _compiles(data) and not _compiles(once):
            outcome.problem = "not-compiling"
            return
        if self.linter.fix(once, unsafe=True).source != once:
            outcome.problem = "not-idempotent"
            return
        # Only lines check mode reports as fixable may change (unsafe fixes are applied here).
        touched = {line for f in outcome.findings if f.fix_safety is not None for line in range(f.line, f.end_line + 1)}
        before, after = _LINE.findall(data), _LINE.findall(once)
        kept = collections.Counter(line for number, line in enumerate(before, 1) if number not in touched)
        lost = kept - collections.Counter(after)
        if lost or not 0 <= len(after) - len(before) <= 6:
            outcome.problem = "lines-changed"
            outcome.detail = repr(list(lost)[:3])

    def _check_notebook(self, data: bytes, outcome: Outcome) -> None:
        once = fix_notebook(data, self.linter, unsafe=True).data
        Notebook.parse(once)
        if fix_notebook(once, self.linter, unsafe=True).data != once:
            outcome.problem = "not-idempotent"


def _compiles(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, "<file>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--fix-check", action="store_true")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--show", type=int, default=0, help="print up to N findings per rule")
    parser.add_argument("--select", default=None)
    args = parser.parse_args()
    select = tuple(args.select.split(",")) if args.select else ("TDL",)
    per_rule: collections.Counter[str] = collections.Counter()
    per_file: collections.Counter[str] = collections.Counter()
    problems: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    paths = []
    for path in iter_python_files(args.paths):
        if isinstance(path, MissingPath):
            print(f"missing: {path}", file=sys.stderr)
        else:
            paths.append(path)
    files = lines = notebooks = 0
    started = time.perf_counter()
    for path, outcome in map_in_order(Check(select, args.fix_check), paths, args.jobs):
        files += 1
        notebooks += is_notebook(path)
        lines += outcome.lines
        if outcome.problem is not None:
            problems[outcome.problem] += 1
            print(f"{outcome.problem.upper()}: {path} {outcome.detail}", file=sys.stderr)
            if outcome.problem in ("unreadable", "crash"):
                continue
        for finding in outcome.findings:
            per_rule[finding.code] += 1
            per_file[path] += 1
            if args.show and len(examples[finding.code]) < args.show:
                examples[finding.code].append(f"{path}:{finding.line}:{finding.column + 1}: {finding.message}")
    elapsed = time.perf_counter() - started
    checked = files - problems["unreadable"] - problems["crash"]
    print(f"files {files} ({notebooks} notebooks), lines {lines}, unreadable {problems['unreadable']}, "
          f"crashes {problems['crash']}, unparsable fixes {problems['unparsable']}, "
          f"fixes that no longer compile {problems['not-compiling']}, non-idempotent {problems['not-idempotent']}, "
          f"untouched lines changed {problems['lines-changed']}, {elapsed:.1f} s")
    if args.fix_check and checked:
        idempotent = checked - problems["not-idempotent"] - problems["unparsable"]
        print(f"fix check: {checked} files, {100 * idempotent / checked:.2f}% idempotent")
    print("findings per rule:")
    for code, count in sorted(per_rule.items()):
        print(f"  {code}: {count}")
    print("files with most findings:")
    for path, count in per_file.most_common(15):
        print(f"  {count:5d}  {path}")
    for code, shown in sorted(examples.items()):
        print(f"\n{code} examples:")
        for line in shown:
            print(f"  {line}")
    bad = sum(problems[name] for name in ("crash", "unparsable", "not-compiling", "not-idempotent", "lines-changed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
