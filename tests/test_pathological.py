"""One pathological file never takes the run down: generated deep and huge inputs, dying workers.

Every run here goes through a subprocess with a timeout, so that a crash (a segmentation fault
kills the process, not the test) or a hang fails the test instead of the suite.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from torchdevice_lint.config import ConfigError, parse_table
from torchdevice_lint.guard import Budget, TooComplex, check_nesting, run_guarded, within_budget
from torchdevice_lint.parallel import map_in_order

HEAD = "import torch\n"

#: The inputs of issue 15: each is valid for LibCST (1,000 brackets are past Python's own 200).
PATHOLOGICAL = {
    "or_chain": lambda: HEAD + "x = " + " or ".join(f"a{i}" for i in range(10_000)) + "\n",
    "plus_chain": lambda: HEAD + "x = " + " + ".join(f"a{i}" for i in range(10_000)) + "\n",
    "parentheses": lambda: HEAD + "x = " + "(" * 1_000 + "1" + ")" * 1_000 + "\n",
    "calls": lambda: HEAD + "x = " + "f(" * 500 + "torch.zeros(3)" + ")" * 500 + "\n",
    "lists": lambda: HEAD + "x = " + "[" * 200 + "1" + "]" * 200 + "\n",
    "long_list": lambda: HEAD + "x = [\n" + "".join(f"    {i},\n" for i in range(100_000)) + "]\n",
    "elif_ladder": lambda: HEAD
    + "def f(x):\n    if x == 0:\n        return 0\n"
    + "".join(f"    elif x == {i}:\n        return {i}\n" for i in range(1, 5_000))
    + "    return x.cuda()\n",
}
#: Nested past the default budget of 1,000 levels: always refused, whatever the machine's speed.
TOO_DEEP = {"or_chain", "plus_chain", "elif_ladder"}

ORDINARY = {
    "ordinary_a.py": "import torch\nmodel = Net().cuda()\n",
    "ordinary_b.py": "import torch\nx = torch.zeros(3)\nx.cuda()\n",
}
ORDINARY_FIXED = {
    "ordinary_a.py": "model = Net().to(device)",
    "ordinary_b.py": "x = x.to(device)",
}

#: Every run ends well within this, or the test fails (a hang).
RUN_TIMEOUT = 150
#: The per-file time budget the runs use: small, so that slow files show the deadline at work.
FILE_TIMEOUT = "2"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pathological")
    for name, make in PATHOLOGICAL.items():
        (root / f"{name}.py").write_text(make())
    return root


def _copy(project: Path, destination: Path) -> list[str]:
    destination.mkdir()
    paths = []
    for source in sorted(project.iterdir()):
        target = destination / source.name
        target.write_bytes(source.read_bytes())
        paths.append(str(target))
    for name, text in ORDINARY.items():
        (destination / name).write_text(text)
        paths.append(str(destination / name))
    return paths


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT)


def _refused(stderr: str) -> dict[str, str]:
    """The files named on an error line, with the reason."""
    refused = {}
    for line in stderr.splitlines():
        match = re.fullmatch(r"(.+): error: (.+)", line)
        if match:
            refused[Path(match.group(1)).stem] = match.group(2)
    return refused


# Each mode and each worker count once (each run costs seconds): the serial and the parallel
# paths differ in where the file is checked, check and fix in what is written afterwards.
@pytest.mark.parametrize(("mode", "jobs"), [("check", "2"), ("fix", "1")])
def test_the_cli_names_each_pathological_file_and_reports_the_others(project, tmp_path, mode, jobs):
    paths = _copy(project, tmp_path / "files")
    command = [sys.executable, "-m", "torchdevice_lint.cli", "--no-cache", "-j", jobs, "--file-timeout", FILE_TIMEOUT]
    run = _run(command + (["--fix"] if mode == "fix" else []) + paths, tmp_path)
    assert "Traceback" not in run.stderr
    refused = _refused(run.stderr)
    assert set(refused) <= set(PATHOLOGICAL), run.stderr
    assert TOO_DEEP <= set(refused), run.stderr
    for reason in refused.values():
        assert re.fullmatch(r"too complex to check \(.+\)", reason), reason
    assert run.returncode == 2
    assert f"Checked {len(paths)} files" in run.stderr  # the summary: the run completed
    if mode == "check":
        assert "ordinary_a.py:2:9: TDL001" in run.stdout
        assert "ordinary_b.py:3:1: TDL004" in run.stdout
    else:
        for name, fixed in ORDINARY_FIXED.items():
            assert fixed in (tmp_path / "files" / name).read_text()
        for name in refused:
            assert (tmp_path / "files" / f"{name}.py").read_text() == PATHOLOGICAL[name]()
    checked = set(PATHOLOGICAL) - set(refused)
    if mode == "check" and "calls" in checked:
        assert "calls.py:2:" not in run.stdout  # f(...) of a CPU tensor: nothing to report


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_flake8_gives_one_line_for_a_file_past_its_budget(project, tmp_path, jobs):
    # flake8 builds its own ``ast`` before any plugin runs: under Python's default recursion limit
    # its parse of the 10,000-term ``+`` chain and the elif ladder raised RecursionError and ended
    # the run; the plugin raises the limit when flake8 loads it.
    # Without the 100,000-line list: flake8's own checks spend about 10 s on it, with or without us.
    paths = [path for path in _copy(project, tmp_path / "files") if Path(path).stem != "long_list"]
    command = [sys.executable, "-m", "flake8", "--select", "TDL", "-j", jobs, "--torchdevice-file-timeout", FILE_TIMEOUT]
    run = _run(command + paths, tmp_path)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 1
    too_complex = re.findall(r"^(.+):1:1: TDL999 too complex to check \(.+\)$", run.stdout, re.MULTILINE)
    assert TOO_DEEP <= {Path(path).stem for path in too_complex}
    assert {Path(path).stem for path in too_complex} <= set(PATHOLOGICAL)
    assert "ordinary_a.py:2:9: TDL001" in run.stdout
    assert "ordinary_b.py:3:1: TDL004" in run.stdout


def test_the_pre_commit_hooks_run_the_guarded_cli():
    hooks = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text()
    assert re.findall(r"entry: (\S+)", hooks) == ["torchdevice-fix", "torchdevice-fix"]


# ---------------------------------------------------------------- the guard itself
@pytest.mark.parametrize("name", sorted(TOO_DEEP))
def test_nesting_past_the_budget_is_refused_before_libcst(name):
    with pytest.raises(TooComplex, match=r"too complex to check \(nested \d+ levels deep; the limit is 1000\)"):
        run_guarded(lambda: check_nesting(PATHOLOGICAL[name](), Budget()), Budget())


def test_a_raised_depth_budget_checks_the_or_chain_on_the_big_stack():
    source = PATHOLOGICAL["or_chain"]() + "y = torch.zeros(2).cuda()\n"
    from torchdevice_lint import lint_source

    findings = within_budget(source, lambda: lint_source(source), Budget(depth=20_000))
    assert [(f.line, f.code) for f in findings] == [(3, "TDL001")]


def test_ordinary_code_never_reaches_the_parse_of_the_depth_check(monkeypatch):
    import ast

    def fail(*args, **kwargs):
        raise AssertionError("the byte scan should have cleared this file")

    monkeypatch.setattr(ast, "parse", fail)
    for module in ("engine.py", "cli.py", "analysis/flow.py"):
        check_nesting((Path(__file__).parent.parent / "torchdevice_lint" / module).read_bytes(), Budget())


def test_a_file_past_its_time_is_interrupted():
    started = time.monotonic()

    def spin() -> None:
        while True:
            pass

    with pytest.raises(TooComplex, match=r"took more than 0.5 s"):
        run_guarded(spin, Budget(seconds=0.5))
    assert time.monotonic() - started < 5


def test_an_interruption_swallowed_once_is_repeated_until_the_thread_stops():
    swallowed = []

    def swallow_the_first_deadline() -> None:
        while True:
            try:
                while True:
                    pass
            except BaseException as error:  # as a finalizer does, where the deadline may land
                if swallowed:
                    raise
                swallowed.append(error)

    with pytest.raises(TooComplex):
        run_guarded(swallow_the_first_deadline, Budget(seconds=0.2))
    assert len(swallowed) == 1
    assert not [thread for thread in threading.enumerate() if thread.name == "torchdevice-file"]


#: A file's work that swallows every interruption for ``sys.argv[1]`` seconds while LibCST parses
#: (a thread killed inside its native parser at exit aborts the process), after a report.
SWALLOWING_PROGRAM = """
import sys, time
import libcst
from torchdevice_lint import guard

guard.GRACE_SECONDS, guard.EXIT_GRACE_SECONDS = 0.2, 2.0
source = "x = [" + "f(1) + g[2], " * 200 + "]"

def work():
    started = time.monotonic()
    while time.monotonic() - started < float(sys.argv[1]):
        try:
            libcst.parse_module(source)
        except BaseException:
            pass

try:
    guard.run_guarded(work, guard.Budget(seconds=0.1))
except guard.TooComplex as error:
    print(error, flush=True)
"""


def test_a_thread_left_behind_is_stopped_before_the_interpreter_exits():
    run = subprocess.run([sys.executable, "-c", SWALLOWING_PROGRAM, "1.5"], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (0, "too complex to check (took more than 0.1 s)\n", "")


#: A file's work stuck in one native call: an interruption waits for the next Python instruction.
STUCK_PROGRAM = """
import time
from torchdevice_lint import guard

guard.GRACE_SECONDS, guard.EXIT_GRACE_SECONDS = 0.2, 1.0
try:
    guard.run_guarded(lambda: time.sleep(600), guard.Budget(seconds=0.1))
except guard.TooComplex as error:
    print(error, flush=True)
"""


def test_a_thread_that_cannot_be_stopped_ends_the_process_in_one_line():
    run = subprocess.run([sys.executable, "-c", STUCK_PROGRAM], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stdout == "too complex to check (took more than 0.1 s)\n"
    assert run.stderr == "error: a file's check could not be stopped; exiting without waiting for it\n"


def test_the_budget_is_configured_and_checked():
    assert parse_table({"file-timeout": 5, "max-nesting": 300}, "pyproject.toml") == {
        "file_timeout": 5.0,
        "max_nesting": 300,
    }
    for key, value in (("file-timeout", 0), ("file-timeout", "5"), ("max-nesting", 10), ("max-nesting", 2.5)):
        with pytest.raises(ConfigError, match=key):
            parse_table({key: value}, "pyproject.toml")


# ---------------------------------------------------------------- dying and hanging workers
class _Misbehaving:
    """Checks a "file" by its name: ``crash`` dies of SIGSEGV, ``hang`` never returns."""

    def __call__(self, path: str) -> str:
        if path == "crash":
            faulthandler.disable()  # pytest's handler would print this deliberate crash's stack into the log
            os.kill(os.getpid(), signal.SIGSEGV)
        if path == "hang":
            time.sleep(600)
        return f"checked {path}"


def test_a_worker_that_dies_or_hangs_costs_only_its_file():
    paths = ["a", "crash", "b", "hang", "c", "crash", "d"]
    started = time.monotonic()
    results = list(
        map_in_order(_Misbehaving(), paths, 2, failed=lambda path, reason: f"{path}: {reason}", seconds=1.0)
    )
    assert time.monotonic() - started < 30
    assert [path for path, _ in results] == paths
    outcome = dict(results)
    for path in ("a", "b", "c", "d"):
        assert outcome[path] == f"checked {path}"
    assert re.fullmatch(r"crash: the worker checking this file crashed \(SIGSEGV\); please report it", outcome["crash"])
    assert outcome["hang"] == "hang: too complex to check (took more than 1 s)"


#: Deep, but within the budget: past the main thread's recursion limit, checked on the big stack.
NOT_CHAIN = HEAD + "x = " + "not " * 900 + "torch.zeros(3).cuda()\n"


@pytest.mark.parametrize("name", sorted(TOO_DEEP | {"parentheses", "not_chain"}))
def test_the_python_api_checks_or_refuses_each_deep_input_without_crashing(name):
    """lint_source and fix_source run under the same guard as the front ends: a child process,
    so that a segmentation fault (the or-chain) or a RecursionError (the not-chain) fails this
    test rather than the suite."""
    program = (
        "import sys\n"
        "from torchdevice_lint import SourceError, fix_source, lint_source\n"
        "source = sys.stdin.read()\n"
        "for run in (lambda: lint_source(source), lambda: fix_source(source)):\n"
        "    try:\n"
        "        run()\n"
        "        print('checked')\n"
        "    except SourceError as error:\n"
        "        print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], input=NOT_CHAIN if name == "not_chain" else PATHOLOGICAL[name](), capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = result.stdout.splitlines()
    assert len(outcomes) == 2
    for outcome in outcomes:
        assert outcome == "checked" or outcome.startswith("too complex to check (")
    if name in TOO_DEEP:
        assert all(outcome.startswith("too complex to check (") for outcome in outcomes)
    if name == "not_chain":
        assert outcomes == ["checked", "checked"]
