"""Check or fix one file at a time and say what happened; the CLI decides what to print."""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from torchdevice_lint.analysis.project import ProjectIndex
from torchdevice_lint.api import fix_file, lint_file
from torchdevice_lint.cache import ResultCache
from torchdevice_lint.engine import Linter
from torchdevice_lint.files import STDIN, TEMPORARY_PREFIX, TEMPORARY_SUFFIX, describe
from torchdevice_lint.findings import Finding
from torchdevice_lint.guard import Budget, TooComplex, within_budget
from torchdevice_lint.notebook import MAX_CODE_BYTES, is_notebook
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.settings import Settings


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    original: bytes = b""
    #: The fixed bytes in fix or diff mode (equal to ``original`` when nothing applies).
    fixed: Optional[bytes] = None
    applied: int = 0
    #: A one-line reason the file could not be checked or written.
    error: Optional[str] = None
    #: The ``error`` concerns a part of the file (notebook cells); the rest was checked.
    partial: bool = False

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


#: Larger files are refused: LibCST needs about 200 bytes of memory per byte of source, and
#: the largest hand-written modules seen (torch/nn/functional.py, diffusers) are near 300 kB.
#: A notebook's limit counts its code (its outputs, images included, cost no parse).
MAX_FILE_BYTES = MAX_CODE_BYTES

#: A notebook file above this is refused before its code is measured: reading is the cost then.
MAX_NOTEBOOK_BYTES = 100_000_000


def process_file(
    path: str,
    linter: Linter,
    fix: bool,
    unsafe: bool,
    name: Optional[str] = None,
    cache: Optional[ResultCache] = None,
    project: Optional[ProjectIndex] = None,
    budget: Budget = Budget(),
) -> FileResult:
    """Read, then lint (or fix in memory) one file within ``budget``; never raises for bad input.

    A path (or, for stdin, a ``name``) ending in ``.ipynb`` is checked as a Jupyter notebook.
    In check mode a ``cache`` answers for bytes it has seen under the same settings and the
    same ``project`` index (stdin is judged alone, without it).
    """
    result = FileResult(path)
    try:
        result.original = sys.stdin.buffer.read() if path == STDIN else _read(path, is_notebook(name or path))
    except OSError as error:
        result.error = describe(error)
        return result
    notebook = is_notebook(name or path)
    if path == STDIN:
        project = None
    kind = _cache_kind(name or path, linter, project)
    if cache is not None and not fix:
        cached = cache.get(result.original, kind)
        if isinstance(cached, str):
            result.error = cached
            return result
        if cached is not None:
            result.findings = cached
            return result
    cell_errors: list[str] = []

    def work() -> None:
        if fix:
            outcome = fix_file(
                result.original, linter, unsafe=unsafe, notebook=notebook, project=project, path=path, cell_errors=cell_errors
            )
            assert isinstance(outcome.source, bytes)
            result.fixed, result.findings, result.applied = outcome.source, outcome.remaining, outcome.applied
        else:
            result.findings = lint_file(
                result.original, linter, notebook=notebook, project=project, path=path, cell_errors=cell_errors
            )
        if cell_errors:
            result.error, result.partial = "; ".join(cell_errors) + " (the other cells were checked)", True

    try:
        within_budget(result.original, work, budget)
    except (TooComplex, RecursionError) as error:
        # Not cached: the verdict depends on the budget and on the machine's speed.
        result.error = str(error) if isinstance(error, TooComplex) else str(TooComplex("nested too deeply to analyse"))
        return result
    except SourceError as error:
        result.error = str(error)
    except Exception as error:  # a bug of ours: say so for this file, and let the run go on
        result.error = f"internal error ({type(error).__name__}: {error}); please report it"
        return result
    if cache is not None and not fix and not result.partial:
        cache.put(result.original, result.error if result.error is not None else result.findings, kind)
    return result


def _cache_kind(name: str, linter: Linter, project: Optional[ProjectIndex]) -> str:
    """What decides a check's outcome besides the bytes: how they are read, the settings,
    the facts of the project's other files."""
    facts = project.fingerprint if project is not None else "alone"
    return f"{'ipynb' if is_notebook(name) else 'py'} {linter.settings!r} noqa={linter.noqa} project={facts}"


def _read(path: str, notebook: bool = False) -> bytes:
    """The bytes of a regular file of acceptable size; OSError with a one-line reason otherwise."""
    info = os.stat(path)  # before opening: opening a FIFO would wait for a writer
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise OSError(0, "not a regular file")
    limit = MAX_NOTEBOOK_BYTES if notebook else MAX_FILE_BYTES
    if info.st_size > limit:
        raise OSError(0, f"file too large to check ({info.st_size / 1e6:.1f} MB; the limit is {limit / 1e6:.1f} MB)")
    with open(path, "rb") as handle:
        return handle.read()


#: How long past a file's budget its worker process is given before it is killed (the worker
#: stops the file itself at the budget; this covers a native call that cannot be interrupted).
WORKER_GRACE_SECONDS = 5.0


class FileJob:
    """``process_file`` with fixed options, as a picklable callable for worker processes.

    ``settings_for`` gives each file's settings (per-file ignores); one `Linter` is built for
    each distinct `Settings` and reused.
    """

    def __init__(
        self,
        settings_for: Callable[[str], Settings],
        fix: bool,
        unsafe: bool,
        cache: Optional[ResultCache] = None,
        budget: Budget = Budget(),
    ) -> None:
        self.settings_for, self.fix, self.unsafe, self.cache = settings_for, fix, unsafe, cache
        self.budget = budget
        self._linters: dict[Settings, Linter] = {}
        #: The walked project's index, set by the caller once the files are known.
        self.project: Optional[ProjectIndex] = None

    def linter_for(self, name: str) -> Linter:
        settings = self.settings_for(name)
        linter = self._linters.get(settings)
        if linter is None:
            linter = self._linters[settings] = Linter(settings)
        return linter

    def cached(self, path: str) -> Optional[FileResult]:
        """The result the cache holds for the file as it is now, else None (no checking)."""
        if self.cache is None or self.fix:
            return None
        try:
            data = _read(path, is_notebook(path))
        except OSError:
            return None
        outcome = self.cache.get(data, _cache_kind(path, self.linter_for(path), self.project))
        if outcome is None:
            return None
        result = FileResult(path, original=data)
        if isinstance(outcome, str):
            result.error = outcome
        else:
            result.findings = outcome
            if not outcome:
                result.original = b""
        return result

    def failed(self, path: str, reason: str) -> FileResult:
        """The result of a file whose worker process died or overran its deadline."""
        return FileResult(path, error=reason)

    def __call__(self, path: str, name: Optional[str] = None) -> FileResult:
        shown = name or path
        result = process_file(
            path, self.linter_for(shown), self.fix, self.unsafe, name=shown, cache=self.cache, project=self.project,
            budget=self.budget,
        )
        if not self.fix and not result.findings and path != STDIN:
            result.original = b""  # only quoted findings need it: keep the pipe from workers light
        return result


def write_atomically(path: str, data: bytes, expected: Optional[bytes] = None) -> None:
    """Write through a temporary file and a rename: a file is always wholly old or new.

    The new file keeps the old one's mode (and owner, where allowed); a symlink is followed and
    its target rewritten. With ``expected``, a file whose bytes are no longer those is left
    alone (someone edited it since it was read). Raises OSError with a one-line ``strerror``.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    mode = stat.S_IMODE(info.st_mode)
    # No write bit means "leave me alone", for root too (whom os.access lets write anything).
    if not os.access(target, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(13, "file is read-only")
    if expected is not None:
        with open(target, "rb") as handle:
            if handle.read() != expected:
                raise OSError(0, "file changed since it was read; run again")
    folder = os.path.dirname(target)
    with interrupts_deferred():
        descriptor, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=TEMPORARY_SUFFIX, dir=folder)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(temporary, info.st_uid, info.st_gid)
                except OSError:
                    pass
            os.replace(temporary, target)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise


#: Set while a block defers interrupts: a nested block leaves the deferring to the outer one.
_DEFERRING = False


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C (and SIGTERM) wait until the block is done, then are raised: a file is written whole,
    and counted once it is (one that arrived between creating the temporary file and the ``try``
    that removes it left the temporary behind, seen once in test_stress).

    The handlers are swapped for ones that only record the signal: Python runs its handlers on
    the main thread whichever thread the signal reaches, whereas a signal mask holds it for the
    main thread alone and lets any other thread of the process take it."""
    global _DEFERRING
    if _DEFERRING or threading.current_thread() is not threading.main_thread():
        yield  # only the main thread runs Python's signal handlers
        return
    arrived: list[int] = []
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(number) is not None:  # None: a handler installed outside Python, left alone
            previous[number] = signal.signal(number, lambda number, frame: arrived.append(number))
    _DEFERRING = True
    try:
        yield
    finally:
        _DEFERRING = False
        for number, handler in previous.items():
            signal.signal(number, handler)
        for waiting in dict.fromkeys(arrived):
            signal.raise_signal(waiting)
