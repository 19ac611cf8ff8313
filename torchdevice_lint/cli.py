"""``torchdevice-fix``: check, diff or rewrite files. Exit 0 clean, 1 findings or changes, 2 errors."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Optional, Sequence

from torchdevice_lint import __version__
from torchdevice_lint.engine import Linter, Settings
from torchdevice_lint.files import STDIN, MissingPath, iter_python_files
from torchdevice_lint.output.text import format_finding, unified_diff
from torchdevice_lint.rules import ALL_RULES
from torchdevice_lint.runner import process_file, write_atomically

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
    for path in iter_python_files(args.paths):
        if isinstance(path, MissingPath):
            report_error(str(path), "no such file or directory", summary)
            continue
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


def process(path: str, linter: Linter, args: argparse.Namespace, summary: RunSummary) -> None:
    shown = args.stdin_filename if path == STDIN else path
    result = process_file(path, linter, fix=args.fix or args.diff, unsafe=args.unsafe_fixes)
    if result.error is not None:
        report_error(shown, result.error, summary)
        if path == STDIN and args.fix:
            sys.stdout.buffer.write(result.original)
        return
    if args.diff:
        if result.changed:
            summary.changed_files += 1
            sys.stdout.write(unified_diff(shown, result.original, result.fixed))
        return
    if args.fix:
        if path == STDIN:
            sys.stdout.buffer.write(result.fixed)
        elif result.changed:
            try:
                write_atomically(path, result.fixed)
            except OSError as error:
                report_error(shown, f"cannot write: {error.strerror or error}", summary)
                return
        if result.changed:
            summary.changed_files += 1
            summary.fixed += result.applied
    stream = sys.stderr if (args.fix and path == STDIN) else sys.stdout
    for finding in sorted(result.findings, key=lambda f: (f.line, f.column, f.code)):
        summary.findings += 1
        summary.by_code[finding.code] = summary.by_code.get(finding.code, 0) + 1
        print(format_finding(shown, finding), file=stream)


def report_error(path: str, message: str, summary: RunSummary) -> None:
    summary.errors += 1
    print(f"{path}: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
