"""torchdevice-verify: prove that device fixes keep outputs and remove device bugs.

    torchdevice-verify fixtures/                 every case under a folder
    torchdevice-verify fixtures/tdl004/case/     one case
    torchdevice-verify train.py --entry run      fix a copy of a script and compare

Exit status: 0 all verified, 1 a difference or a failing fixed program,
2 usage errors (no torch, no cases, codemod unavailable for a script).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from torchdevice_lint.verify.runner import CaseResult

#: The CPU build of torch first, as the README says: '[verify]' alone would let pip pull a
#: CUDA build of several GB.
NEEDS_TORCH = (
    "torchdevice-verify needs torch: install its CPU build first, "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu, "
    "then pip install 'torchdevice-lint[verify]'"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdevice-verify",
        description="Run original and fixed PyTorch programs on the CPU, a simulated CUDA "
        "device and real CUDA when present, and compare their outputs.",
    )
    parser.add_argument("path", type=Path,
                        help="a fixtures folder, one case folder, or a Python script")
    parser.add_argument("--entry", default="run",
                        help="for a script: the function to call, 'function' or "
                        "'module:function' (default: run)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds each program may run (default: 60)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="programs run at once (default: number of CPUs)")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no line per case on stderr while the cases run")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if importlib.util.find_spec("torch") is None:
        print(NEEDS_TORCH, file=sys.stderr)
        return 2
    from torchdevice_lint.verify.report import format_json, format_table
    from torchdevice_lint.verify.runner import discover_cases, verify_cases, verify_script

    if args.path.is_file():
        try:
            results = [verify_script(args.path, args.entry, timeout=args.timeout)]
        except RuntimeError as error:  # the codemod cannot be loaded
            print(f"torchdevice-verify: {error}", file=sys.stderr)
            return 2
    elif args.path.is_dir():
        cases = discover_cases(args.path)
        if not cases:
            print(f"torchdevice-verify: no original.py under {args.path}", file=sys.stderr)
            return 2
        results = verify_cases(cases, timeout=args.timeout, jobs=args.jobs,
                               finished=None if args.quiet else CaseProgress(len(cases), sys.stderr))
    else:
        print(f"torchdevice-verify: {args.path}: no such file or folder", file=sys.stderr)
        return 2
    print(format_json(results) if args.json else format_table(results, details=True))
    return 0 if all(result.passed for result in results) else 1


class CaseProgress:
    """``[ 3/36] tdl004/discarded_move: ok (after 12.4 s)`` on stderr as each case is judged: a run over
    the bundled fixtures takes minutes, and a line per case also reads well in a CI log."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream, self.done = total, stream, 0
        self.started = time.monotonic()
        print(f"torchdevice-verify: {total} case{'' if total == 1 else 's'}, each run on every device in a subprocess",
              file=stream, flush=True)

    def __call__(self, result: CaseResult) -> None:
        self.done += 1
        width = len(str(self.total))
        print(f"[{self.done:>{width}}/{self.total}] {result.case.name}: {result.result} "
              f"(after {time.monotonic() - self.started:.1f} s)", file=self.stream, flush=True)


if __name__ == "__main__":
    sys.exit(main())
