"""Check files in worker processes and hand back the results in the order of the files, or as
they finish.

Workers take the largest files first (so that no big file is left running alone at the end).
`map_in_order` releases the results in the order the files were given, exactly as one process
would produce them, so that output never depends on the number of jobs; `map_as_completed`
hands each one over as soon as it is done. A worker that dies (a crash in native code) or
overruns its deadline costs only the file it held: that file gets an error result and a fresh
worker takes its place.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Callable, Iterator, NoReturn, Optional, Sequence, TextIO, TypeVar, Union

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
    failed: Optional[Callable[[str, str], Result]] = None,
    seconds: Optional[float] = None,
    finished: Optional[Callable[[str], None]] = None,
) -> Iterator[tuple[str, Result]]:
    """``(path, function(path))`` for each path, in the order of ``paths``.

    ``jobs <= 1`` (or a single file) runs in this process; otherwise ``function`` runs in up to
    ``jobs`` worker processes. ``function`` must not raise for bad input (an exception from it
    ends the run, as it would in one process) and its results must pickle. With several jobs,
    ``ready(path)`` is asked first in this process (a cache): files it answers never go to a
    worker, and when it answers all of them no worker is started. ``failed(path, reason)`` is
    the result of a file whose worker died or held it past ``seconds``; without it such a
    file raises `WorkerLost`. ``finished(path)`` is called as each file's result arrives, before
    the files ahead of it are done (a progress bar that moves as files finish).
    """
    pending: dict[int, Result] = {}
    next_index = 0
    for index, result in _completions(function, paths, jobs, ready, failed, seconds):
        if finished is not None:
            finished(paths[index])
        pending[index] = result
        while next_index in pending:
            yield paths[next_index], pending.pop(next_index)
            next_index += 1


def map_as_completed(
    function: Callable[[str], Result],
    paths: Sequence[str],
    jobs: int,
    ready: Optional[Callable[[str], Optional[Result]]] = None,
    failed: Optional[Callable[[str, str], Result]] = None,
    seconds: Optional[float] = None,
) -> Iterator[tuple[str, Result]]:
    """`map_in_order`'s results in the order the files finish (answers of ``ready`` first):
    for a reader watching a terminal, who should see each file as soon as it is done."""
    for index, result in _completions(function, paths, jobs, ready, failed, seconds):
        yield paths[index], result


def _completions(
    function: Callable[[str], Result],
    paths: Sequence[str],
    jobs: int,
    ready: Optional[Callable[[str], Optional[Result]]],
    failed: Optional[Callable[[str, str], Result]],
    seconds: Optional[float],
) -> Iterator[tuple[int, Result]]:
    """``(index, result)`` for each of ``paths`` as it finishes: see `map_in_order`."""
    if jobs <= 1 or len(paths) < MIN_FILES_FOR_POOL:
        for index, path in enumerate(paths):
            yield index, function(path)
        return
    todo = []
    for index, path in enumerate(paths):
        answer = ready(path) if ready is not None else None
        if answer is None:
            todo.append(index)
        else:
            yield index, answer
    if len(todo) == 1:
        yield todo[0], function(paths[todo[0]])
    elif todo:
        todo.sort(key=lambda index: -_size(paths[index]))
        lost = failed or _raise_lost
        for index, outcome in _run_in_workers(function, paths, todo, min(jobs, len(todo)), seconds):
            yield index, lost(paths[index], outcome.reason) if isinstance(outcome, _Lost) else outcome


class WorkerLost(Exception):
    """A file whose worker died or overran its deadline, where the caller gave no ``failed``."""


class _Lost:
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _raise_lost(path: str, reason: str) -> NoReturn:
    raise WorkerLost(f"{path}: {reason}")


class _Worker:
    """One worker process and the task it holds (None when idle)."""

    def __init__(self, function: Callable[[str], object]) -> None:
        context = _context()
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(function, child), daemon=True)
        self.process.start()
        child.close()
        self.task: Optional[int] = None
        self.started = 0.0

    def give(self, index: int, path: str) -> None:
        self.task, self.started = index, time.monotonic()
        self.connection.send((index, path))

    def stop(self) -> None:
        self.connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def _run_in_workers(
    function: Callable[[str], Result], paths: Sequence[str], todo: list[int], jobs: int, seconds: Optional[float]
) -> Iterator[tuple[int, Union[Result, _Lost]]]:
    """``(index, result or _Lost)`` for each of ``todo``, in the order they finish."""
    queue = deque(todo)
    workers = [_Worker(function) for _ in range(jobs)]
    try:
        while True:
            for worker in workers:
                if worker.task is None and queue:
                    index = queue.popleft()
                    worker.give(index, paths[index])
            busy = [worker for worker in workers if worker.task is not None]
            if not busy:
                return
            timeout = None
            if seconds is not None:
                timeout = max(0.0, min(worker.started + seconds for worker in busy) - time.monotonic())
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout))
            for slot, worker in enumerate(workers):
                if worker.task is None:
                    continue
                index = worker.task
                if worker.connection in ready:
                    try:
                        done, result = worker.connection.recv()
                    except (EOFError, OSError):
                        pass  # died while answering: its sentinel says how
                    else:
                        worker.task = None
                        yield done, result
                        continue
                lost = None
                if worker.process.sentinel in ready or not worker.process.is_alive():
                    worker.process.join()
                    lost = _Lost(_death(worker.process.exitcode))
                elif seconds is not None and time.monotonic() - worker.started >= seconds:
                    lost = _Lost(f"too complex to check (took more than {seconds:g} s)")
                if lost is not None:
                    worker.stop()
                    workers[slot] = _Worker(function)
                    yield index, lost
    finally:
        for worker in workers:
            worker.stop()


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker checking this file crashed ({name}); please report it"
    return f"the worker checking this file exited (status {exitcode}); please report it"


def _serve(function: Callable[[str], object], connection: Connection) -> None:
    """A worker's life: check the files it is handed, one at a time, until the pipe closes."""
    _initialize(function)
    while True:
        try:
            index, path = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(_run((index, path)))


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
    sys.stderr = _SilentOnceOrphaned(sys.stderr, parent)
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
