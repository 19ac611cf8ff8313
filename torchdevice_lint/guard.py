"""Keep one pathological file from taking the run down: a depth check, a big stack, a deadline.

LibCST's native parser, its code generator and visitors, and the flow analysis all recurse as
deep as the syntax tree: a generated ``a0 or a1 or ... or a9999`` is 10,000 levels deep and
overflows the C stack of the main thread (a segmentation fault, not an exception). So each
file's work runs in a thread with a large stack and a raised recursion limit, after a check
that its nesting stays within the budget (deeper files are refused before LibCST sees them),
and under a deadline. A refused file raises `TooComplex`, whose message is one line.
"""

from __future__ import annotations

import ast
import atexit
import ctypes
import os
import re
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Callable, TypeVar, Union

from torchdevice_lint.parsing import SourceError

Result = TypeVar("Result")

#: The stack of the thread a file is checked in: address space, paid for only where touched.
STACK_BYTES = 512 * 1024 * 1024
#: Python frames allowed per level of nesting (visitors, code generation and the analysis
#: each take a few); the stack above holds this many with a wide margin.
FRAMES_PER_LEVEL = 24
#: Seconds a file's thread gets to stop after its deadline before it is left behind.
GRACE_SECONDS = 2.0
#: Seconds a thread left behind gets to stop when the interpreter exits, before the process ends without finalizing.
EXIT_GRACE_SECONDS = 30.0
#: Seconds between two interruptions of a thread that has not stopped yet.
INTERRUPT_INTERVAL = 0.05


@dataclass(frozen=True)
class Budget:
    """What one file may cost: seconds of checking, and levels of syntactic nesting."""

    #: Seconds to parse, analyse and fix one file (hand-written modules take well under 5).
    seconds: float = 60.0
    #: Levels of nesting of the syntax tree (an ``or`` chain of n operands counts n; hand-written code stays under 100).
    depth: int = 1000


class TooComplex(SourceError):
    """A file past its budget: the message is one line, ``too complex to check (...)``.

    A `SourceError`, so that callers of the Python API catch one exception for a file that
    cannot be checked; front ends that must tell it apart (it is never cached) catch it first."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"too complex to check ({reason})")


def run_guarded(function: Callable[[], Result], budget: Budget) -> Result:
    """``function()`` on a thread with a large stack under ``budget.seconds``.

    Its exceptions are raised here. Past the deadline the thread is interrupted (between two
    Python instructions: a native call finishes first) and `TooComplex` is raised; a thread
    that does not stop within a grace period is left behind, and stopped at exit.
    """
    outcome: dict[str, Union[Result, BaseException]] = {}

    def target() -> None:
        _ON_GUARDED_THREAD.active = True
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed to the caller's thread
            outcome["error"] = error

    _raise_recursion_limit(budget.depth * FRAMES_PER_LEVEL + 1000)
    with _STACK_SIZE_LOCK:
        previous = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="torchdevice-file", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join(budget.seconds)
    if thread.is_alive():
        _stop(thread, GRACE_SECONDS)
        if thread.is_alive():
            _leave_behind(thread)
        raise TooComplex(f"took more than {budget.seconds:g} s")
    error = outcome.get("error")
    if isinstance(error, _DeadlinePassed):
        raise TooComplex(f"took more than {budget.seconds:g} s")
    if isinstance(error, BaseException):
        raise error
    return outcome["value"]  # type: ignore[return-value]


class _DeadlinePassed(BaseException):
    """Raised inside a file's thread at its deadline (a BaseException: no ``except Exception`` eats it)."""


_STACK_SIZE_LOCK = threading.Lock()
_ON_GUARDED_THREAD = threading.local()
#: Threads past their grace period, still running: the interpreter must not finalize under them.
_LEFT_BEHIND: list[threading.Thread] = []


def _stop(thread: threading.Thread, seconds: float) -> None:
    """Interrupt ``thread`` until it ends or ``seconds`` pass.

    Once is not enough: an interruption that lands in a finalizer (a weakref callback) is
    swallowed there, and the thread goes on with its file."""
    _install_quiet_hooks()
    ends = time.monotonic() + seconds
    while thread.is_alive() and time.monotonic() < ends:
        ident = thread.ident
        if ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(_DeadlinePassed))
        thread.join(INTERRUPT_INTERVAL)


def _leave_behind(thread: threading.Thread) -> None:
    if not _LEFT_BEHIND:
        atexit.register(_stop_left_behind)
    _LEFT_BEHIND.append(thread)


def _stop_left_behind() -> None:
    """At exit, stop the threads left behind first: one the interpreter kills while it runs
    inside LibCST's native parser aborts the whole process (SIGABRT) after the run's report.
    One that cannot be stopped ends the process without finalizing, with exit code 2."""
    for thread in _LEFT_BEHIND:
        _stop(thread, EXIT_GRACE_SECONDS)
    if any(thread.is_alive() for thread in _LEFT_BEHIND):
        print("error: a file's check could not be stopped; exiting without waiting for it", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)


def _install_quiet_hooks() -> None:
    """A deadline that lands in a finalizer, or past the end of a file's work, is dropped rather
    than printed as a traceback: the file is reported past its budget all the same."""
    global _previous_unraisablehook, _previous_excepthook
    if sys.unraisablehook is _quiet_deadline_in_finalizers:
        return
    _previous_unraisablehook, sys.unraisablehook = sys.unraisablehook, _quiet_deadline_in_finalizers
    _previous_excepthook, threading.excepthook = threading.excepthook, _quiet_deadline_in_threads


_previous_unraisablehook = sys.unraisablehook
_previous_excepthook = threading.excepthook


def _quiet_deadline_in_finalizers(unraisable: "sys.UnraisableHookArgs") -> None:
    if not isinstance(unraisable.exc_value, _DeadlinePassed):
        _previous_unraisablehook(unraisable)


def _quiet_deadline_in_threads(raised: "threading.ExceptHookArgs") -> None:
    if not isinstance(raised.exc_value, _DeadlinePassed):
        _previous_excepthook(raised)


#: The recursion limit a host program gets for its own parse (see `allow_deep_trees_in_host`):
#: flake8's pyflakes checker takes about three Python frames per level of the tree.
HOST_RECURSION_LIMIT = 60_000


def allow_deep_trees_in_host() -> None:
    """Let the program that loads us build deep syntax trees itself.

    flake8 turns each file into an ``ast`` before any plugin runs, and under Python's default
    limit of 1,000 a 10,000-term ``+`` chain raises RecursionError there, ending the whole run
    with a traceback. That conversion takes under 100 bytes of C stack per level (a chain of
    80,000 terms still converts on the main thread's 8 MB stack), which bounds the limit;
    pyflakes then walks a 10,000-level tree in about 30,000 frames, and the plugin refuses
    the file in one line."""
    _raise_recursion_limit(HOST_RECURSION_LIMIT)


def _raise_recursion_limit(limit: int) -> None:
    if sys.getrecursionlimit() < limit:
        sys.setrecursionlimit(limit)


def check_nesting(source: Union[str, bytes], budget: Budget) -> None:
    """Raise `TooComplex` when the file nests deeper than ``budget.depth``; run it on a guarded thread.

    A scan of the bytes clears almost every file at once; only a file with a long run of
    operators, deep brackets or a long ``elif`` ladder is parsed by Python's own C parser
    (bounded, and several times faster than LibCST) and its tree measured.
    """
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    if not _may_nest_deeper(data, budget.depth):
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except SyntaxError as error:
        # LibCST reports it with Python's own diagnosis, unless LibCST would spend minutes on
        # brackets nested far past Python's limit of 200 before accepting them.
        if "too many nested parentheses" in str(error.msg) and _bracket_depth(data) > budget.depth:
            raise TooComplex(f"brackets nested more than {budget.depth} levels deep") from None
        return
    except (RecursionError, MemoryError):
        raise TooComplex(f"nested deeper than Python's parser allows; the limit is {budget.depth} levels") from None
    depth = syntax_depth(tree)
    if depth > budget.depth:
        raise TooComplex(f"nested {depth} levels deep; the limit is {budget.depth}")


#: Tokens that each may add a level of nesting to LibCST's tree: operators, keywords that
#: chain (``or``, ``and``, ``not``, ``if``/``else``, ``lambda``, ``for``), attribute dots.
_NESTING_TOKEN = re.compile(rb"[-+*/%@&|^<>~]|\b(?:and|or|not|if|else|lambda|for|await)\b|\.[A-Za-z_]")
_BRACKET = re.compile(rb"[()\[\]{}]")
_OPENING = frozenset(b"([{")


def _may_nest_deeper(data: bytes, limit: int) -> bool:
    """Whether the file might nest deeper than ``limit``: cheap, and never wrong when it says no.

    A level of nesting takes at least one byte, and bracketed depth, chained operators or an
    ``elif`` each take a token; so a short file, or one whose brackets stay shallow and whose
    lines and bracketed spans hold few such tokens, cannot be deep.
    """
    if len(data) <= limit:
        return False
    if data.count(b"elif") * 4 > limit or data.count(b"\\\n") * 4 > limit:
        return True
    if any(len(line) > limit and _chained_tokens(line) > limit // 2 for line in data.splitlines()):
        return True
    depth, start = 0, 0
    for match in _BRACKET.finditer(data):
        if match.group()[0] in _OPENING:
            if depth == 0:
                start = match.start()
            depth += 1
            if depth > limit // 4:
                return True
        elif depth > 0:
            depth -= 1
            if depth == 0 and match.end() - start > limit and _chained_tokens(data[start : match.end()]) > limit // 2:
                return True
    return False


def _bracket_depth(data: bytes) -> int:
    depth = deepest = 0
    for match in _BRACKET.finditer(data):
        depth = depth + 1 if match.group()[0] in _OPENING else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _chained_tokens(data: bytes) -> int:
    return len(_NESTING_TOKEN.findall(data))


def syntax_depth(tree: ast.AST) -> int:
    """How deep LibCST will nest this module: the ``ast`` depth, a boolean chain of n operands counting n - 1."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        below = depth + 1 + (len(node.values) - 2 if isinstance(node, ast.BoolOp) else 0)
        stack.extend((child, below) for child in ast.iter_child_nodes(node))
    return deepest


def within_budget(source: Union[str, bytes], work: Callable[[], Result], budget: Budget) -> Result:
    """``work()`` on one file's ``source``: its nesting checked, then the work, on a guarded thread.

    Called again on that thread (the flake8 plugin guards its call of the guarded Python API),
    the outer budget governs and ``work()`` runs at once."""
    if getattr(_ON_GUARDED_THREAD, "active", False):
        return work()

    def checked() -> Result:
        check_nesting(source, budget)
        return work()

    return run_guarded(checked, budget)
