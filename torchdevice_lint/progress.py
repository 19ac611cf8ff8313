"""A progress bar for long runs and the summary line that closes every run, both on stderr.

The bar is drawn only when stderr is a terminal, ``--quiet`` is off and ``CI`` is unset, and
only once a run has lasted `DELAY` seconds: short runs and piped or logged output never see
control characters. The summary line is printed unless ``--quiet``.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Optional, TextIO

#: Seconds before the bar first appears, and between redraws.
DELAY = 0.5
REFRESH = 0.1
WIDTH = 30


def bar_wanted(stream: TextIO, quiet: bool, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether a progress bar may be drawn on ``stream``."""
    environ = os.environ if environ is None else environ
    if quiet or environ.get("CI") or environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """``[#####.....] 120/400 files  path/to/current.py`` redrawn in place on a terminal."""

    def __init__(self, total: int, stream: Optional[TextIO] = None, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 1
        self.done = 0
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._shown = False

    def advance(self, path: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < DELAY or (now - self._last_draw < REFRESH and self.done < self.total):
            return
        self._last_draw = now
        filled = WIDTH * self.done // max(self.total, 1)
        head = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} files  "
        room = _columns(self.stream) - 1 - len(head)
        shown = path if len(path) <= room else "..." + path[len(path) - room + 3 :] if room > 3 else ""
        self.stream.write("\r" + (head + shown).ljust(len(head) + max(room, 0)))
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        """Wipe the bar (before other output to the same terminal, and at the end)."""
        if self._shown:
            self.stream.write("\r" + " " * (_columns(self.stream) - 1) + "\r")
            self.stream.flush()
            self._shown = False

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        columns = 0
    return max(columns, 40) if columns else 80  # a terminal of unknown size reports 0


@dataclass
class Summary:
    """What a run did, for the exit status and the closing line."""

    files: int = 0
    findings: int = 0
    changed_files: int = 0
    fixed: int = 0
    errors: int = 0
    by_code: Counter = field(default_factory=Counter)

    def line(self, elapsed: float, mode: str = "check") -> str:
        """``Checked 12 files: 5 findings (TDL001: 3, TDL003: 2), 2 fixed in 1 file, 0 errors in 0.42s``.

        ``mode`` is ``check``, ``fix`` (says what was fixed) or ``diff`` (what a fix would change).
        """
        files = f"{self.files} file{'' if self.files == 1 else 's'}"
        if self.findings:
            per_rule = ", ".join(f"{code}: {count}" for code, count in sorted(self.by_code.items()))
            findings = f"{self.findings} finding{'' if self.findings == 1 else 's'} ({per_rule})"
        else:
            findings = "no findings"
        changed = f"{self.changed_files} file{'' if self.changed_files == 1 else 's'}"
        if mode == "diff":
            parts = [f"Checked {files}: {self.fixed} fix{'' if self.fixed == 1 else 'es'} would change {changed}"]
        else:
            parts = [f"Checked {files}: {findings}"]
        if mode == "fix":
            parts.append(f"{self.fixed} fixed in {changed}")
        parts.append(f"{self.errors} error{'' if self.errors == 1 else 's'}")
        return ", ".join(parts) + f" in {elapsed:.2f}s"
