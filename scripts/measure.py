"""Run the linter over any folder and print findings per rule and per file.

    python scripts/measure.py PATH [--fix-check] [--show N] [--select TDL003]

``--fix-check`` also fixes every file in memory (unsafe fixes included) and checks that the
output parses and that a second fix changes nothing. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback

import libcst as cst

from torchdevice_lint.files import MissingPath, iter_python_files
from torchdevice_lint.engine import Linter, Settings, SourceError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--fix-check", action="store_true")
    parser.add_argument("--show", type=int, default=0, help="print up to N findings per rule")
    parser.add_argument("--select", default=None)
    args = parser.parse_args()
    select = tuple(args.select.split(",")) if args.select else ("TDL",)
    linter = Linter(Settings(select=select))
    per_rule: collections.Counter[str] = collections.Counter()
    per_file: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    files = errors = crashes = unparsable = not_idempotent = lines = 0
    started = time.perf_counter()
    for path in iter_python_files(args.paths):
        if isinstance(path, MissingPath):
            print(f"missing: {path}", file=sys.stderr)
            continue
        files += 1
        data = open(path, "rb").read()
        lines += data.count(b"\n")
        try:
            findings = linter.lint(data)
            if args.fix_check:
                once = linter.fix(data, unsafe=True).source
                cst.parse_module(once)
                if linter.fix(once, unsafe=True).source != once:
                    not_idempotent += 1
                    print(f"NOT IDEMPOTENT: {path}", file=sys.stderr)
        except SourceError:
            errors += 1
            continue
        except cst.ParserSyntaxError:
            unparsable += 1
            print(f"FIX DOES NOT PARSE: {path}", file=sys.stderr)
            continue
        except Exception:  # a crash is what this script exists to find
            crashes += 1
            print(f"CRASH: {path}\n{traceback.format_exc()}", file=sys.stderr)
            continue
        for finding in findings:
            per_rule[finding.code] += 1
            per_file[path] += 1
            if len(examples[finding.code]) < args.show:
                examples[finding.code].append(f"{path}:{finding.line}:{finding.column + 1}: {finding.message}")
    elapsed = time.perf_counter() - started
    print(f"files {files}, lines {lines}, unreadable {errors}, crashes {crashes}, "
          f"unparsable fixes {unparsable}, non-idempotent {not_idempotent}, {elapsed:.1f} s")
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
    return 1 if crashes or unparsable or not_idempotent else 0


if __name__ == "__main__":
    sys.exit(main())
