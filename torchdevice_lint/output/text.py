"""Text output: flake8 lines (``concise``), lines with source and caret (``full``), statistics, diffs."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from typing import TYPE_CHECKING, Iterable

from torchdevice_lint.findings import Finding, Safety
from torchdevice_lint.parsing import LOCATED
from torchdevice_lint.rules import rule_for

if TYPE_CHECKING:
    from torchdevice_lint.output import Entry

RESET = "\033[0m"
BOLD = "\033[1m"
RED = "\033[31m"
GREEN = "\033[32m"
YELLOW = "\033[33m"
CYAN = "\033[36m"
DIM = "\033[2m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color and text else text


def format_finding(path: str, finding: Finding) -> str:
    """flake8's ``path:line:col: CODE message``, the column 1-based as flake8 prints it.

    ``[*]`` marks a safe fix and ``[unsafe fix]`` an unsafe one; nothing follows otherwise.
    """
    return f"{path}:{finding.line}:{finding.column + 1}: {finding.code} {finding.message}{fix_marker(finding)}"


def error_line(path: str, message: str) -> str:
    """``path:2:24: error: syntax error: ...`` for a located message (flake8's position, so editors
    jump to it), ``path: error: ...`` otherwise."""
    located = LOCATED.match(message)
    if located is None:
        return f"{path}: error: {message}"
    return f"{path}:{located.group(0)}error: {message[located.end():]}"


def fix_marker(finding: Finding) -> str:
    if finding.fix_safety is Safety.SAFE:
        return " [*]"
    if finding.fix_safety is Safety.UNSAFE:
        return " [unsafe fix]"
    return ""


def fix_note(finding: Finding) -> str:
    if finding.fix_safety is Safety.SAFE:
        return "fix available: run with --fix"
    if finding.fix_safety is Safety.UNSAFE:
        return "unsafe fix available: run with --fix --unsafe-fixes (review the change)"
    if finding.fix_withheld:
        return f"fix not applied: {finding.fix_withheld}"
    return "no automatic fix"


def format_full(entry: "Entry", color: bool = False) -> str:
    """The flake8 line, then the source line with a caret under the expression, then the fix."""
    finding = entry.finding
    head = (
        f"{_paint(entry.location, BOLD, color)}:{finding.line}:{finding.column + 1}: "
        f"{_paint(finding.code, BOLD + RED, color)} {finding.message}"
    )
    number = str(finding.line)
    gutter = " " * len(number)
    lines = [head]
    if entry.source_line:
        source = entry.source_line.rstrip("\r\n")
        start = min(finding.column, len(source))
        end = finding.end_column if finding.end_line == finding.line else len(source)
        width = max(1, min(end, len(source)) - start)
        # Keep tabs so the caret lines up under the same characters in any tab width.
        padding = "".join("\t" if char == "\t" else " " for char in source[:start])
        lines += [
            f" {gutter} |",
            f" {number} | {source}",
            f" {gutter} | {padding}{_paint('^' * width, RED, color)}",
        ]
    note = fix_note(finding)
    style = GREEN if finding.fix_safety is Safety.SAFE else YELLOW if finding.fix_safety else DIM
    lines.append(f" {gutter} = {_paint(note, style, color)}")
    return "\n".join(lines) + "\n"


def statistics(entries: Iterable["Entry"]) -> list[dict]:
    """Per code: how many findings, how many with a safe or an unsafe fix (sorted by count)."""
    counts: Counter = Counter()
    safe: Counter = Counter()
    unsafe: Counter = Counter()
    for entry in entries:
        code = entry.finding.code
        counts[code] += 1
        if entry.finding.fix_safety is Safety.SAFE:
            safe[code] += 1
        elif entry.finding.fix_safety is Safety.UNSAFE:
            unsafe[code] += 1
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_for(code)
        rows.append(
            {
                "code": code,
                "name": rule.name if rule is not None else "",
                "count": count,
                "fixable": safe[code] + unsafe[code],
                "safe_fixes": safe[code],
                "unsafe_fixes": unsafe[code],
            }
        )
    return rows


def format_statistics(rows: list[dict], as_json: bool = False) -> str:
    """One row per code, each column as wide as its widest cell, so the columns line up."""
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    count_width = max((len(str(row["count"])) for row in rows), default=0)
    name_width = max((len(row["name"]) for row in rows), default=0)
    lines = [
        f"{row['count']:>{count_width}}  {row['code']}  {row['name']:<{name_width}}  {_fixability(row)}"
        for row in rows
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def _fixability(row: dict) -> str:
    if row["fixable"] == row["count"] and not row["unsafe_fixes"]:
        return "[*] all fixable"
    if not row["fixable"]:
        return "no fix"
    parts = []
    if row["safe_fixes"]:
        parts.append(f"{row['safe_fixes']} safe")
    if row["unsafe_fixes"]:
        parts.append(f"{row['unsafe_fixes']} unsafe")
    return f"{row['fixable']} fixable ({', '.join(parts)})"


def _unified_lines(old: list[str], new: list[str], fromfile: str, tofile: str, context: int = 3) -> list[str]:
    """``difflib.unified_diff`` without its junk heuristic: a line that recurs in more than 1% of
    a file of 200 lines or more (``    return model`` in semseg's resnet.py) is "popular" to
    difflib and never matched, so an unchanged last line showed as removed and added again."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    lines: list[str] = []
    for group in matcher.get_grouped_opcodes(context):
        if not lines:
            lines += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        lines.append(f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@\n")
        for tag, old_start, old_end, new_start, new_end in group:
            if tag == "equal":
                lines += _marked(" ", old[old_start:old_end])
                continue
            lines += _marked("-", old[old_start:old_end])
            lines += _marked("+", new[new_start:new_end])
    return lines


def _marked(sign: str, lines: list[str]) -> list[str]:
    """``lines`` as diff lines, with git's marker after a file's last line that has no newline
    (else the next line of the diff ran on after it: ``...pkl')))+        self.G...``)."""
    marked = []
    for line in lines:
        if line.endswith(("\n", "\r")):
            marked.append(sign + line)
        else:
            marked += [sign + line + "\n", "\\ No newline at end of file\n"]
    return marked


def _span(start: int, end: int) -> str:
    """A hunk's range as unified diffs write it: ``start,length`` (1-based; ``start`` alone
    for one line; the line before for none)."""
    length = end - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def unified_diff(path: str, before: bytes, after: bytes, color: bool = False) -> str:
    old = before.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new = after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    # git's spelling, also for an absolute path: a/tmp/x.py, never a//tmp/x.py
    relative = path.lstrip("/")
    lines = _unified_lines(old, new, f"a/{relative}", f"b/{relative}")
    if not color:
        return "".join(lines)
    painted = []
    for line in lines:
        body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if line.startswith(("---", "+++")):
            painted.append(_paint(body, BOLD, True) + newline)
        elif line.startswith("@@"):
            painted.append(_paint(body, CYAN, True) + newline)
        elif line.startswith("+"):
            painted.append(_paint(body, GREEN, True) + newline)
        elif line.startswith("-"):
            painted.append(_paint(body, RED, True) + newline)
        else:
            painted.append(line)
    return "".join(painted)
