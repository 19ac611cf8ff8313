"""``torchdevice-fix``: check, diff or rewrite files. Exit 0 clean, 1 findings or changes, 2 errors."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Callable, Optional, Sequence, TextIO

from torchdevice_lint import __version__
from torchdevice_lint.analysis.project import index_for_run
from torchdevice_lint.cache import CACHE_DIR_ENV, DEFAULT_CACHE_DIR, ResultCache
from torchdevice_lint.config import (
    DEVICE_STYLES,
    Config,
    ConfigError,
    check_codes,
    check_device_name,
    check_file_timeout,
    check_max_nesting,
    resolve_config,
)
from torchdevice_lint.files import STDIN, MissingPath, describe, iter_python_files
from torchdevice_lint.notebook import Notebook, NotebookError, is_notebook
from torchdevice_lint.output import FORMATS, Entry, write_entries
from torchdevice_lint.output.text import error_line, format_statistics, statistics, unified_diff
from torchdevice_lint.parallel import default_jobs, map_as_completed, map_in_order
from torchdevice_lint.parsing import collect_young_objects_less_often
from torchdevice_lint.progress import Progress, Summary, bar_wanted
from torchdevice_lint.rules import ALL_RULES
from torchdevice_lint.runner import WORKER_GRACE_SECONDS, FileJob, FileResult, interrupts_deferred, write_atomically


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdevice-fix",
        description="Find and fix PyTorch device handling that breaks on other machines. "
        "Settings come from [tool.torchdevice-lint] in the nearest pyproject.toml; flags override them.",
    )
    parser.add_argument("paths", nargs="*", help="files or folders to check (.py and .ipynb); '-' reads stdin")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    mode.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")

    rules = parser.add_argument_group("rules")
    rules.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (TDL, TDL00)")
    rules.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to disable")
    rules.add_argument("--preview", action=argparse.BooleanOptionalAction, default=None,
                       help="enable rules that are still in preview")
    rules.add_argument("--device-style", choices=DEVICE_STYLES, default=None,
                       help="idiom a fix uses when it must bind a device (default: cuda)")
    rules.add_argument("--device-name", type=_identifier, default=None,
                       help="name of the device variable a fix binds (default: device)")

    files = parser.add_argument_group("files and configuration")
    files.add_argument("--config", metavar="PATH", help="use this pyproject.toml instead of the nearest one")
    files.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    files.add_argument("--exclude", type=_patterns, default=None,
                       help="comma-separated gitignore-style patterns to skip (replaces the default list)")
    files.add_argument("--extend-exclude", type=_patterns, default=None,
                       help="comma-separated patterns to skip in addition to 'exclude'")
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what .gitignore files ignore (default: on)")
    files.add_argument("--stdin-filename", default=STDIN,
                       help="name to report for '-' (a .ipynb name reads a notebook)")

    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=FORMATS, default="full",
                        help="full (default: source line and caret), concise (flake8's line), json, sarif, github")
    output.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead")
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour diffs and text output (auto: when stdout is a terminal and NO_COLOR is unset)")
    output.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary line")

    speed = parser.add_argument_group("speed")
    speed.add_argument("-j", "--jobs", type=_jobs, default=None,
                       help="worker processes (default: one per core; 1 checks in this process)")
    speed.add_argument("--no-cache", action="store_true",
                       help=f"do not read or write the check cache ({CACHE_DIR_ENV} or ./{DEFAULT_CACHE_DIR})")
    speed.add_argument("--file-timeout", metavar="SECONDS", type=_checked(check_file_timeout, float), default=None,
                       help="seconds one file may take; a slower file is reported as too complex (default: 60)")
    speed.add_argument("--max-nesting", metavar="LEVELS", type=_checked(check_max_nesting, int), default=None,
                       help="levels of syntactic nesting a file may have; a deeper one is reported as too complex (default: 1000)")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _codes(text: str) -> tuple[str, ...]:
    codes = tuple(code.strip().upper() for code in text.split(",") if code.strip())
    try:
        return check_codes(list(codes), "codes")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from None


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of jobs, got {text!r}")
    return jobs


def _checked(check: Callable[[Any, str], Any], convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``convert`` the text, then ``check`` it as the configuration would."""

    def parse(text: str) -> Any:
        try:
            return check(convert(text), "value")
        except (ValueError, ConfigError) as error:
            message = str(error).split(": ", 1)[-1] if isinstance(error, ConfigError) else f"not a number: {text!r}"
            raise argparse.ArgumentTypeError(message) from None

    return parse


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(pattern.strip() for pattern in text.split(",") if pattern.strip())


def _identifier(text: str) -> str:
    try:
        return check_device_name(text, "device name")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from None


def exit_code(summary: Summary) -> int:
    if summary.errors:
        return 2
    return 1 if summary.findings or summary.changed_files else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    collect_young_objects_less_often()  # the workers inherit it
    args = build_parser().parse_args(argv)
    if args.explain:
        return explain(args.explain)
    if not args.paths and args.statistics:
        args.paths = ["."]  # like `ruff check --statistics`: a summary of the project here
    if not args.paths:
        build_parser().print_usage(sys.stderr)
        print("torchdevice-fix: error: give at least one path, or '-' for stdin", file=sys.stderr)
        return 2
    try:
        config = configure(args)
    except ConfigError as error:
        print(f"torchdevice-fix: error: {error}", file=sys.stderr)
        return 2
    run = Run(args, config)
    try:
        return run.execute()
    except KeyboardInterrupt:
        print(run.interrupted(), file=sys.stderr)
        return 130


def configure(args: argparse.Namespace) -> Config:
    """The file's settings with the command line's on top."""
    return resolve_config(args.paths, args.config, args.isolated).overridden(**vars(args))


def explain(code: str) -> int:
    for rule in ALL_RULES:
        if rule.code == code.upper():
            try:
                print(f"{rule.code} ({rule.name})\n\n{rule.documentation()}", flush=True)
            except BrokenPipeError:
                # `--explain X | head`: the reader has what it wanted; point stdout at devnull so exit flushes quietly.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    print(f"torchdevice-fix: error: no rule {code}", file=sys.stderr)
    return 2


def color_wanted(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class Run:
    """One invocation: files in, findings, diffs or rewrites out, a summary on stderr."""

    def __init__(self, args: argparse.Namespace, config: Config) -> None:
        self.args = args
        self.config = config
        self.summary = Summary()
        self.color = color_wanted(args.color, sys.stdout)
        self.collected: list[Entry] = []
        self.progress = Progress(0, sys.stderr, enabled=False)
        self.total = 0
        #: json and sarif are one document; statistics are counted at the end.
        self.deferred = args.statistics or args.output_format in ("json", "sarif")
        fixing = args.fix or args.diff
        cache = None if (fixing or args.no_cache) else ResultCache()
        #: Checks one file; runs in worker processes with ``-j`` above 1.
        self.job = FileJob(config.settings_for, fixing, args.unsafe_fixes, cache, config.budget())

    def execute(self) -> int:
        paths = list(iter_python_files(self.args.paths, self.config))
        self.progress = Progress(len(paths), sys.stderr, enabled=bar_wanted(sys.stderr, self.args.quiet))
        self.total = len(paths)
        files = [path for path in paths if not isinstance(path, MissingPath) and path != STDIN]
        self.job.project = index_for_run(self.args.paths, files, self.walk)
        jobs = self.args.jobs or default_jobs()
        job, seconds = self.job, self.job.budget.seconds + WORKER_GRACE_SECONDS
        if self.as_completed():
            results = map_as_completed(job, files, jobs, job.cached, job.failed, seconds)
        else:  # the order of ``files`` whatever the number of jobs; the bar still moves as files finish
            results = map_in_order(job, files, jobs, job.cached, job.failed, seconds, finished=self.progress.advance)
        for path in paths:
            if isinstance(path, MissingPath):
                self.report_error(str(path), path.reason)
                self.progress.advance()
            elif path == STDIN:
                self.summary.files += 1
                self.process(path)
                self.progress.advance()
            else:
                self.summary.files += 1
                done, result = next(results)
                self.process(done, result)
                if self.as_completed():
                    self.progress.advance(done)
        self.progress.clear()
        self.finish()
        return exit_code(self.summary)

    def as_completed(self) -> bool:
        """Whether each file's findings are printed as soon as it is checked, in the order files
        finish: for a person at a terminal. Piped or redirected output (CI logs, pre-commit, a
        file, a diff to apply) keeps the order of the paths, the same for any ``-j``."""
        isatty = getattr(sys.stdout, "isatty", None)
        return bool(isatty and isatty()) and not self.deferred

    def interrupted(self) -> str:
        """The one line Ctrl-C leaves: every file is wholly old or wholly new."""
        self.progress.clear()
        written = self.summary.changed_files if self.args.fix else 0
        return f"interrupted: {written} files written, {self.total - written} untouched"

    def walk(self, folder: str) -> list[str]:
        """The Python files of a folder, as this run's configuration walks them."""
        return [path for path in iter_python_files([folder], self.config) if isinstance(path, str)]

    def finish(self) -> None:
        stream = sys.stderr if (self.args.fix and STDIN in self.args.paths) else sys.stdout
        if self.args.statistics:
            stream.write(format_statistics(statistics(self.collected), as_json=self.args.output_format == "json"))
        elif self.deferred:
            write_entries(self.collected, self.args.output_format, stream)
        if not self.args.quiet:
            mode = "fix" if self.args.fix else "diff" if self.args.diff else "check"
            print(self.summary.line(self.progress.elapsed(), mode), file=sys.stderr)

    def process(self, path: str, result: Optional[FileResult] = None) -> None:
        args = self.args
        shown = args.stdin_filename if path == STDIN else path
        if result is None:
            result = self.job(path, name=shown)
        if result.error is not None:
            self.report_error(shown, result.error)
            if not result.partial:
                if path == STDIN and args.fix:
                    sys.stdout.buffer.write(result.original)
                return
        if args.diff:
            if result.changed:
                self.summary.changed_files += 1
                self.summary.fixed += result.applied
                self.progress.clear()
                sys.stdout.write(diff_text(shown, result, self.color))
            return
        if args.fix:
            assert result.fixed is not None  # fix mode sets it for every file without an error
            with interrupts_deferred():  # a file is counted as written exactly when it is
                if path == STDIN:
                    sys.stdout.buffer.write(result.fixed)
                elif result.changed:
                    try:
                        write_atomically(path, result.fixed, expected=result.original)
                    except OSError as error:
                        self.report_error(shown, f"cannot write: {describe(error)}")
                        return
                if result.changed:
                    self.summary.changed_files += 1
                    self.summary.fixed += result.applied
        entries = entries_for(shown, result)
        for entry in entries:
            self.summary.findings += 1
            self.summary.by_code[entry.finding.code] += 1
        if self.deferred:
            self.collected.extend(entries)
        elif entries:
            self.progress.clear()
            stream = sys.stderr if (args.fix and path == STDIN) else sys.stdout
            write_entries(entries, args.output_format, stream, color=self.color)
            stream.flush()

    def report_error(self, path: str, message: str) -> None:
        self.summary.errors += 1
        self.progress.clear()
        print(error_line(path, message), file=sys.stderr)


_LINE_BREAK = re.compile(r"\r\n?|\n")


def entries_for(shown: str, result: FileResult) -> list[Entry]:
    """The findings of one file, sorted, with the source line each one quotes."""
    findings = sorted(result.findings, key=lambda f: (f.cell or 0, f.line, f.column, f.code))
    if not findings:
        return []
    data = result.fixed if result.fixed is not None else result.original
    if any(finding.cell is not None for finding in findings):
        try:
            notebook = Notebook.parse(data)
        except NotebookError:
            return [Entry(shown, finding) for finding in findings]
        entries = []
        for finding in findings:
            text, file_line = notebook.line_of(finding.cell or 0, finding.line)
            entries.append(Entry(shown, finding, text, file_line))
        return entries
    lines = _LINE_BREAK.split(data.decode("utf-8", "replace"))
    return [
        Entry(shown, finding, lines[finding.line - 1] if 0 < finding.line <= len(lines) else "")
        for finding in findings
    ]


def diff_text(shown: str, result: FileResult, color: bool) -> str:
    assert result.fixed is not None
    if not is_notebook(shown):
        return unified_diff(shown, result.original, result.fixed, color)
    before, after = Notebook.parse(result.original), Notebook.parse(result.fixed)
    parts = []
    for cell in before.cells:
        new = after.cell(cell.index)
        if new is not None and new.source != cell.source:
            parts.append(unified_diff(f"{shown}:cell_{cell.index}", _with_newline(cell.source),
                                      _with_newline(new.source), color))
    return "".join(parts)


def _with_newline(text: str) -> bytes:
    return (text if text.endswith("\n") or not text else text + "\n").encode("utf-8")


if __name__ == "__main__":
    sys.exit(main())
