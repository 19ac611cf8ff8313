"""Run one program's entry point in a fresh process and save what it returns.

Every program and device gets a process of its own, so that a crash, a hang or
a stray global in user code never reaches the verifier itself, nor another
program. Those processes are forked from one server that imported torch once
(``--serve``; `torchdevice_lint.verify.forkserver` talks to it): a cold
``import torch`` per program was most of the verifier's time. Each forked child
gets its own session, folder, environment, stdout and stderr, then runs `main`
with arguments such as

    --device simulated --file case/original.py --entry run --out result.pt --report report.json

The server runs as a script, not with ``-m``, so that the user's program sees
neither this package (``torchdevice_lint/__init__`` imports the linter engine)
nor its folder on ``sys.path``.

The report (JSON) says ``ok`` with the devices the returned tensors were on, or
``error`` with the exception; the outputs are saved on the CPU with
``torch.save``. A missing report means the child died.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import importlib.util
import json
import os
import selectors
import signal
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

DEVICES = ("cpu", "simulated", "cuda")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="_child.py")
    parser.add_argument("--device", choices=DEVICES, required=True)
    parser.add_argument("--file", type=Path, required=True, help="the program to import")
    parser.add_argument("--entry", default="run", help="function to call")
    parser.add_argument("--module", help="import the entry from this module instead")
    parser.add_argument("--path", action="append", default=[], help="extra sys.path entries")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--report", type=Path, required=True)
    return parser.parse_args(argv)


def _make_deterministic() -> None:
    """Outputs must be comparable: no TF32, deterministic kernels where torch has them."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
        # The public torch.use_deterministic_algorithms also configures inductor,
        # which costs ~2 s of imports per child; the flag itself is what we need.
        set_flag = getattr(torch._C, "_set_deterministic_algorithms", None)
        if set_flag is not None:
            set_flag(True, warn_only=True)
        else:
            torch.use_deterministic_algorithms(True, warn_only=True)


@functools.lru_cache(maxsize=None)
def _load_sibling(name: str) -> Any:
    """Import a module of this folder by path, without importing the package."""
    spec = importlib.util.spec_from_file_location(
        f"_torchdevice_verify_{name}", Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _device_context(device: str) -> contextlib.AbstractContextManager:
    import torch

    simulation = _load_sibling("simulated_cuda")
    hidden_cuda, simulated_cuda = simulation.hidden_cuda, simulation.simulated_cuda
    if device == "simulated":
        return simulated_cuda()
    if device == "cpu":
        return hidden_cuda()
    if not torch.cuda.is_available():
        raise RuntimeError("no real CUDA device in this process")
    return contextlib.nullcontext()


def _load_entry(args: argparse.Namespace) -> Any:
    """Import the program under its own name, so that sibling modules importing it get it."""
    name = args.file.stem
    search_path = [str(args.file.parent)] + [p for p in args.path if p]
    sys.path[:0] = search_path
    spec = importlib.util.spec_from_file_location(name, args.file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if args.module and args.module != name:
        module = importlib.import_module(args.module)
    return getattr(module, args.entry)


def _to_cpu(value: Any, devices: set[str]) -> Any:
    """The returned structure with every tensor detached and on the CPU."""
    import torch

    if isinstance(value, torch.Tensor):
        devices.add(str(value.device))
        return value.detach().cpu().clone()
    if isinstance(value, list):
        return [_to_cpu(v, devices) for v in value]
    if isinstance(value, tuple):  # named tuples too, saved as plain tuples
        return tuple(_to_cpu(v, devices) for v in value)
    if isinstance(value, dict):
        return {k: _to_cpu(v, devices) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(
        f"the entry point returned a {type(value).__name__}; return tensors, numbers or "
        "tuples/lists/dicts of them"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    report: dict[str, Any] = {"status": "error"}
    try:
        import torch

        _make_deterministic()
        devices: set[str] = set()
        with _device_context(args.device):
            entry = _load_entry(args)
            outputs = _to_cpu(entry(), devices)
        torch.save(outputs, args.out)
        report = {"status": "ok", "devices": sorted(devices)}
    except BaseException as error:  # user code may raise anything, SystemExit included
        report = {
            "status": "error",
            "error_type": type(error).__name__,
            "message": str(error),
            "traceback": traceback.format_exc(),
        }
    args.report.write_text(json.dumps(report))
    return 0 if report["status"] == "ok" else 1


# -- the fork server ------------------------------------------------------------
#
# Requests come on stdin, one JSON object a line: {"id", "argv", "cwd", "env", "stdout",
# "stderr"}. Replies go to stdout, one a line: {"id", "pid"} once the child is forked, then
# {"id", "returncode"} once it has ended (negative: killed by that signal). EOF on stdin ends
# the server and the children it still has.


def serve() -> int:
    import torch  # noqa: F401  (the point: imported once, inherited by every child)

    with contextlib.suppress(ImportError):
        # An optimizer's first step imports it (sympy included): 2-3 s in every child otherwise.
        import torch._dynamo  # noqa: F401
    _make_deterministic()
    _load_sibling("simulated_cuda")
    gc.freeze()  # a collection in a child would touch, and so copy, every page of the server
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that SIGCHLD wakes select
    children: dict[int, int] = {}  # pid -> request id
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.fd == wake_read:
                os.read(wake_read, 4096)
                continue
            chunk = os.read(0, 1 << 16)
            if not chunk:  # the verifier is gone or done
                for pid in children:
                    kill_child(pid)
                return 0
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    os.close(wake_read)
                    os.close(wake_write)
                    _run_forked(request)  # never returns
                children[pid] = request["id"]
                _reply({"id": request["id"], "pid": pid})
        _reap(children)


def _run_forked(request: dict[str, Any]) -> None:
    """In the forked child: become the process `main` expects, run it, and exit."""
    code = 70
    try:
        os.setsid()  # its own process group: a timeout kills it and anything it started
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = [sys.argv[0], *request["argv"]]
        code = main(request["argv"])
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)  # skip interpreter teardown: user threads must not hang the exit


def _reap(children: dict[int, int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        request = children.pop(pid, None)
        if request is not None:
            _reply({"id": request, "returncode": os.waitstatus_to_exitcode(status)})


def _reply(message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(1, data):]


def kill_child(pid: int) -> None:
    """Kill a forked child and anything it started (its process group). A child forked a moment
    ago may not have made its group yet: it is killed by its pid as well. The server calls it
    at shutdown, `forkserver` on a timeout."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # runner.py, cli.py... must not shadow the user's modules
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: _child.py --serve (requests on stdin; see torchdevice_lint.verify.forkserver)")
    sys.exit(serve())
