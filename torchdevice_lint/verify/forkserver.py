"""One process that imports torch once and forks a fresh child for every program run.

A cold ``import torch`` costs 1-3 s of CPU; the programs the verifier runs mostly take a few
milliseconds. So the verifier starts ``_child.py --serve`` once, which imports torch and then
forks one child per request (`_child.serve`). Isolation stays that of a process per program:
each child has its own memory, session, folder, environment, stdout and stderr; a crash or a
hang ends that child alone, and a timeout kills its process group. If the server itself dies
(a program killed its parent, the machine ran out of memory), the runs in flight end as
crashes and the next request starts a new server.

What a child cannot get from a forked server: a hash seed or anything else torch reads at
import time from an environment other than the one the server started with.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Optional

from torchdevice_lint.verify._child import kill_child

SERVER_SCRIPT = Path(__file__).resolve().with_name("_child.py")
#: Seconds to wait for the server to reap a child after its process group was killed.
REAP_GRACE = 10.0
#: Seconds a new server may spend importing torch before it forks its first child; a
#: program's own time limit starts when its child is forked.
SERVER_START_LIMIT = 120.0


@dataclass
class Ended:
    """How one forked program ended: its exit status, or why there is none."""

    returncode: Optional[int] = None  # negative: killed by that signal
    timed_out: bool = False
    server_died: str = ""  # the server's last words when it died under the program


@dataclass
class _Request:
    server: Optional[subprocess.Popen] = None
    pid: Optional[int] = None
    forked: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    outcome: Ended = field(default_factory=Ended)


class ForkServer:
    """Runs programs in children forked from one torch-importing server; thread-safe."""

    def __init__(self, environment: dict[str, str]) -> None:
        self.environment = environment
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._process: Optional[subprocess.Popen] = None
        self._requests: dict[int, _Request] = {}
        self._stderr: Optional[IO[bytes]] = None

    def run(self, argv: list[str], *, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path,
            timeout: float) -> Ended:
        """Run ``_child.main(argv)`` in a forked child and wait at most ``timeout`` seconds."""
        request = _Request()
        with self._lock:
            number = next(self._ids)
            self._requests[number] = request
            message = {"id": number, "argv": argv, "cwd": str(cwd), "env": env,
                       "stdout": str(stdout), "stderr": str(stderr)}
            try:
                process = request.server = self._server()
                assert process.stdin is not None  # started with stdin=PIPE
                process.stdin.write((json.dumps(message) + "\n").encode())
                process.stdin.flush()
            except OSError:  # the server died just now; its reader ends this request
                pass
        request.forked.wait(SERVER_START_LIMIT)
        if not request.ended.wait(timeout):
            if request.pid is not None:
                kill_child(request.pid)
            request.ended.wait(REAP_GRACE)
            request.outcome.timed_out = True
        return request.outcome

    def close(self) -> None:
        """End the server (and any child it still has)."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(OSError):
                assert process.stdin is not None  # started with stdin=PIPE
                process.stdin.close()
            try:
                process.wait(REAP_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _server(self) -> subprocess.Popen:
        """The running server, started or replaced when needed (under the lock)."""
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stderr = tempfile.TemporaryFile(prefix="torchdevice-verify-server-")
        self._process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT), "--serve"], env=self.environment,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            start_new_session=True,  # a Ctrl-C meant for the verifier reaches it through EOF
        )
        threading.Thread(target=self._read_replies, args=(self._process, self._stderr),
                         name="torchdevice-verify-server", daemon=True).start()
        return self._process

    def _read_replies(self, process: subprocess.Popen, stderr: IO[bytes]) -> None:
        assert process.stdout is not None  # started with stdout=PIPE
        for line in process.stdout:
            reply = json.loads(line)
            with self._lock:
                request = self._requests.get(reply["id"])
                if request is None:
                    continue
                if "pid" in reply:
                    request.pid = reply["pid"]
                    request.forked.set()
                else:
                    del self._requests[reply["id"]]
                    request.outcome.returncode = reply["returncode"]
                    request.ended.set()
        process.wait()
        stderr.seek(0)
        last_words = _last_line(stderr.read().decode(errors="replace"))
        with self._lock:  # the requests still open in this server: it died under them
            orphans = [self._requests.pop(number) for number, request in list(self._requests.items())
                       if request.server is process]
        for request in orphans:
            if request.pid is not None:
                kill_child(request.pid)
            request.outcome.server_died = (
                f"the verifier's worker died (exit status {process.returncode})"
                + (f": {last_words}" if last_words else "")
            )
            request.forked.set()
            request.ended.set()


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


#: Variables read when Python or torch starts (``sys.path``, the hash seed, thread pools):
#: a child inherits those from the server, so a change in them needs a new server. Any other
#: variable reaches the child through its request.
STARTUP_VARIABLES = ("PYTHON", "TORCH", "OMP_", "MKL_", "LD_", "CUDA_", "NVIDIA_")

_shared: Optional[ForkServer] = None
_shared_lock = threading.Lock()


def shared_server(environment: dict[str, str]) -> ForkServer:
    """The process's server, started with ``environment``; a new one if a variable read at
    startup changed since."""
    global _shared
    with _shared_lock:
        if _shared is None or _startup(_shared.environment) != _startup(environment):
            if _shared is None:
                atexit.register(_close_shared)
            else:
                _shared.close()
            _shared = ForkServer(environment)
        return _shared


def _startup(environment: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if name.startswith(STARTUP_VARIABLES)}


def _close_shared() -> None:
    if _shared is not None:
        _shared.close()
