"""Check files in worker processes and hand back the results in the order of the files.

The order of the output never depends on the number of jobs: workers take the largest files
first (so that no big file is left running alone at the end) and the results are released in
the order the files were given, exactly as one process would produce them.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Callable, Iterator, Optional, Sequence, TextIO, TypeVar

Result = TypeVar("Result")

#: Below this many files a pool costs more than it saves.
MIN_FILES_FOR_POOL = 2

_worker_function: Optional[Callable[[str], object]] = None


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def map_in_order(
    function: Callable[[str], Result],
    paths: Sequence[str],
    jobs: int,
    ready: Optional[Callable[[str], Optional[Result]]] = None,
) -> Iterator[tuple[str, Result]]:
    """``(path, function(path))`` for each path, in the order of ``paths``.

    ``jobs <= 1`` (or a single file) runs in this process; otherwise ``function`` runs in up to
    ``jobs`` worker processes. ``function`` must not raise for bad input (an exception from it
    ends the run, as it would in one process) and its results must pickle. With several jobs,
    ``ready(path)`` is asked first in this process (a cache): files it answers never go to a
    worker, and when it answers all of them no worker is started.
    """
    if jobs <= 1 or len(paths) < MIN_FILES_FOR_POOL:
        for path in paths:
            yield path, function(path)
        return
    pending: dict[int, Result] = {}
    if ready is not None:
        for index, path in enumerate(paths):
            answer = ready(path)
            if answer is not None:
                pending[index] = answer
    todo = [index for index in range(len(paths)) if index not in pending]
    next_index = 0

    def release() -> Iterator[tuple[str, Result]]:
        nonlocal next_index
        while next_index in pending:
            yield paths[next_index], pending.pop(next_index)
            next_index += 1

    yield from release()
    if len(todo) == 1:
        pending[todo[0]] = function(paths[todo[0]])
    elif todo:
        todo.sort(key=lambda index: -_size(paths[index]))
        with _context().Pool(processes=min(jobs, len(todo)), initializer=_initialize, initargs=(function,)) as pool:
            for index, result in pool.imap_unordered(_run, ((index, paths[index]) for index in todo), chunksize=1):
                pending[index] = result
                yield from release()
    yield from release()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _context():
    # fork starts workers in milliseconds with everything already imported; elsewhere (or
    # where fork is unavailable) the platform's default start method is used.
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _initialize(function: Callable[[str], object]) -> None:
    global _worker_function
    _worker_function = function
    # Ctrl-C reaches the whole process group: the parent alone answers it, and ends the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    sys.stderr = _SilentOnceOrphaned(sys.stderr, parent)  # type: ignore[assignment]
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """End this worker once its parent is gone (killed with SIGKILL, it cannot end the pool)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


class _SilentOnceOrphaned:
    """A worker's stderr that says nothing once the parent is gone: the broken-pipe traceback
    of handing back a result nobody waits for is no news to the user."""

    def __init__(self, stream: TextIO, parent: int) -> None:
        self.stream, self.parent = stream, parent

    def write(self, text: str) -> int:
        return self.stream.write(text) if os.getppid() == self.parent else len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _run(task: tuple[int, str]) -> tuple[int, object]:
    index, path = task
    assert _worker_function is not None
    return index, _worker_function(path)
