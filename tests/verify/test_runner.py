"""The runner, the CLI and the pytest fixture on small throwaway cases.

Each program run is a subprocess that imports torch (1-2 s), so the cases are
shared by a module-scoped fixture and single runs are used where they suffice.
"""

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torchdevice_lint.verify import cli, runner  # noqa: E402
from torchdevice_lint.verify._child import kill_child  # noqa: E402
from torchdevice_lint.verify.forkserver import ForkServer  # noqa: E402
from torchdevice_lint.verify.report import format_table  # noqa: E402
from torchdevice_lint.verify.runner import Case, check_codemod, run_program  # noqa: E402

FIXED = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def run():
    torch.manual_seed(0)
    weight = torch.randn(3, 2).to(device)
    x = torch.randn(4, 3)
    x = x.to(device)
    return {"out": x @ weight, "steps": torch.tensor([1, 2])}
"""
DISCARDED_MOVE = FIXED.replace("    x = x.to(device)\n", "    x.to(device)\n")
CHANGED_OUTPUT = FIXED.replace("x @ weight", "x @ weight + 1e-3")


def fake_fix_source(source, *, unsafe=False):
    """Stands in for the codemod: the one rewrite these cases need."""
    return source.replace("    x.to(device)\n", "    x = x.to(device)\n")


def write_case(root: Path, name: str, original: str, fixed: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "original.py").write_text(original)
    (folder / "fixed.py").write_text(fixed)
    return folder


def write_program(path: Path, body: str) -> Path:
    source = "import torch\n\n\ndef run():\n" + textwrap.indent(textwrap.dedent(body), "    ")
    path.write_text(source)
    return path


@pytest.fixture
def fake_codemod(monkeypatch):
    monkeypatch.setattr(runner, "load_fix_source", lambda: (fake_fix_source, ""))


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """torchdevice-verify --json over a buggy, a clean and a changed case: status, cases, stderr."""
    root = tmp_path_factory.mktemp("fixtures")
    write_case(root / "tdl004", "discarded_move", DISCARDED_MOVE, FIXED)
    write_case(root / "tdl004", "clean", FIXED, FIXED)
    write_case(root / "tdl004", "changed_output", FIXED, CHANGED_OUTPUT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "load_fix_source", lambda: (fake_fix_source, ""))
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = cli.main([str(root), "--json", "--timeout", "60"])
    report = json.loads(stdout.getvalue())
    return status, {case["case"]: case for case in report["cases"]}, stderr.getvalue()


@pytest.fixture(scope="module")
def cli_json(cli_run):
    return cli_run[:2]


def test_cli_prints_a_line_per_case_as_it_is_judged(cli_run):
    _, cases, stderr = cli_run
    lines = stderr.splitlines()
    assert lines[0] == "torchdevice-verify: 3 cases, each run on every device in a subprocess"
    judged = [re.fullmatch(r"\[(\d)/3\] (tdl004/\w+): (.+) \(after (\d+\.\d) s\)", line) for line in lines[1:]]
    assert all(judged) and len(judged) == 3, lines
    assert [int(match[1]) for match in judged] == [1, 2, 3]
    assert {match[2]: match[3] for match in judged} == {name: case["result"] for name, case in cases.items()}
    seconds = [float(match[4]) for match in judged]
    assert seconds == sorted(seconds)


def test_quiet_prints_no_line_per_case(tmp_path, fake_codemod, capsys, monkeypatch):
    monkeypatch.setattr(runner, "run_program", lambda case, program, device, timeout: runner.ProgramRun(program, device, "ok"))
    monkeypatch.setattr(runner, "judge", lambda case, runs: runner.CaseResult(case, runs, [], "ok"))
    write_case(tmp_path / "tdl004", "clean", FIXED, FIXED)
    assert cli.main([str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert cli.main([str(tmp_path)]) == 0
    assert capsys.readouterr().err.splitlines()[1].startswith("[1/1] tdl004/clean: ok (after ")


def test_simulation_catches_the_discarded_move_the_fix_removed(cli_json):
    _, cases = cli_json
    case = cases["tdl004/discarded_move"]
    assert case["result"] == "ok" and case["passed"]
    assert case["codemod"] == "matches"
    runs = {(r["program"], r["device"]): r for r in case["runs"]}
    assert runs["original", "simulated"]["status"] == "error"
    assert "Expected all tensors to be on the same device" in runs["original", "simulated"]["error"]
    assert runs["original", "cpu"]["status"] == "ok"  # on a laptop the bug is invisible
    assert runs["fixed", "simulated"]["output_devices"] == ["cpu", "cuda:0"]
    assert any("simulated CUDA" in bug for bug in case["bugs_removed"])
    assert case["max_abs_diff"] == 0.0


def test_clean_case_passes_everywhere(cli_json):
    _, cases = cli_json
    case = cases["tdl004/clean"]
    assert case["result"] == "ok" and not case["bugs_removed"]
    assert {r["status"] for r in case["runs"]} == {"ok"}
    assert case["devices"].startswith("cpu, sim")


def test_changed_output_is_a_difference_and_fails_the_cli(cli_json):
    status, cases = cli_json
    case = cases["tdl004/changed_output"]
    assert case["result"] == "outputs differ" and not case["passed"]
    assert case["max_abs_diff"] == pytest.approx(1e-3, rel=1e-3)
    assert case["codemod"] == "differs"  # the fake codemod leaves the original as it is
    assert status == 1


def test_hanging_program_is_reported_as_timeout_and_killed_with_what_it_started(tmp_path):
    program = write_program(tmp_path / "hang.py", """\
        import subprocess, sys
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open("helper.pid", "w").write(str(helper.pid))
        while True:
            pass
    """)
    run = run_program(Case("hang", program, None), "original", "cpu", timeout=4)
    assert run.status == "timeout" and "no result after 4 s" in run.error
    helper = int((tmp_path / "helper.pid").read_text())
    assert not _alive(helper)


def test_a_slow_server_start_does_not_count_against_the_programs_time_limit(tmp_path):
    # A cold import of torch can outlast a short limit; the first program must still get all of it.
    slow_start = tmp_path / "slow_start"
    slow_start.mkdir()
    (slow_start / "sitecustomize.py").write_text("import time\ntime.sleep(4)\n")
    program = write_program(tmp_path / "quick.py", "return {}")
    server = ForkServer({**os.environ, "PYTHONPATH": str(slow_start)})
    argv = ["--device", "cpu", "--file", str(program), "--out", str(tmp_path / "out.pt"),
            "--report", str(tmp_path / "report.json")]
    try:
        ended = server.run(argv, cwd=tmp_path, env=dict(os.environ), stdout=tmp_path / "stdout",
                           stderr=tmp_path / "stderr", timeout=3)
    finally:
        server.close()
    assert not ended.timed_out and ended.returncode == 0


def test_a_child_killed_before_it_made_its_process_group_dies_all_the_same():
    # A child killed right after the fork has not called setsid yet: its pid names no group.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        kill_child(child.pid)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.kill()


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, killed and waiting for its reaper, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def run_twice(tmp_path, body: str, device: str = "cpu") -> list:
    program = write_program(tmp_path / "probe.py", body)
    return [run_program(Case("probe", program, None), "original", device, timeout=60) for _ in range(2)]


def test_each_program_runs_in_a_fresh_process_forked_from_one_server(tmp_path):
    """torch is imported once per verifier (the server), yet no program sees another's state."""
    first, second = run_twice(tmp_path, """\
        import os
        seen_before = getattr(torch, "_probe_mark", False)
        torch._probe_mark = True
        return {"pid": os.getpid(), "parent": os.getppid(), "seen_before": seen_before}
    """)
    assert first.ok and second.ok, (first.details, second.details)
    assert first.outputs["parent"] == second.outputs["parent"] != os.getpid()
    assert first.outputs["pid"] != second.outputs["pid"]
    assert first.outputs["seen_before"] is second.outputs["seen_before"] is False


def test_a_program_runs_in_its_folder_with_cuda_hidden_on_the_cpu(tmp_path):
    body = """\
        import os
        return [os.getcwd(), os.environ.get("CUDA_VISIBLE_DEVICES", "unset")]
    """
    program = write_program(tmp_path / "where.py", body)
    on_cpu = run_program(Case("where", program, None), "original", "cpu", timeout=60)
    assert on_cpu.outputs == [str(tmp_path), ""]
    simulated = run_program(Case("where", program, None), "original", "simulated", timeout=60)
    assert simulated.outputs == [str(tmp_path), os.environ.get("CUDA_VISIBLE_DEVICES", "unset")]


def test_a_crashing_program_is_that_run_s_failure_and_the_next_runs(tmp_path):
    crashed, _ = run_twice(tmp_path, """\
        import ctypes
        print("about to crash", file=sys.stderr, flush=True)
        ctypes.string_at(0)
    """.replace("import ctypes", "import ctypes, sys"))
    assert crashed.status == "crash" and crashed.error == "process died: about to crash"
    healthy = run_program(Case("ok", write_program(tmp_path / "ok.py", "return 1\n"), None),
                          "original", "simulated", timeout=60)
    assert healthy.ok and healthy.outputs == 1


def test_a_program_that_kills_the_server_fails_alone_and_a_new_server_takes_over(tmp_path):
    killer = write_program(tmp_path / "killer.py", """\
        import os, signal, time
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(600)
    """)
    killed = run_program(Case("killer", killer, None), "original", "cpu", timeout=60)
    assert killed.status == "crash" and "the verifier's worker died (exit status -9)" in killed.error
    first, second = run_twice(tmp_path, "import os\nreturn os.getppid()\n")
    assert first.ok and first.outputs == second.outputs


def test_a_program_computes_on_one_thread_unless_the_user_sets_a_count(tmp_path, monkeypatch):
    """One program per core side by side: a thread pool in each would oversubscribe the cores."""
    program = write_program(tmp_path / "threads.py", "return torch.get_num_threads()\n")
    run = run_program(Case("threads", program, None), "original", "cpu", timeout=60)
    assert run.ok and run.outputs == 1, run.details
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert runner._server_environment()["OMP_NUM_THREADS"] == "3"


def test_raising_program_is_reported_with_its_error(tmp_path):
    program = write_program(tmp_path / "boom.py", "raise ValueError('boom')\n")
    run = run_program(Case("boom", program, None), "original", "simulated", timeout=60)
    assert run.status == "error" and run.error == "ValueError: boom"
    assert "Traceback" in run.details


def test_script_mode_fixes_a_copy_and_prints_the_table(tmp_path, fake_codemod, capsys):
    script = tmp_path / "train.py"
    script.write_text(DISCARDED_MOVE)
    status = cli.main([str(script), "--entry", "train:run"])
    table = capsys.readouterr().out
    assert status == 0
    assert script.read_text() == DISCARDED_MOVE  # the user's file is untouched
    assert "ok (bug the fix removed)" in table
    assert "max abs diff" in table and "train.py" in table


def test_pytest_fixture_verifies_a_case_folder(tmp_path, fake_codemod, torchdevice_verify):
    folder = write_case(tmp_path, "clean", FIXED, FIXED)
    (result,) = torchdevice_verify(folder)
    assert result.passed and result.case.codemod == "matches"


def test_codemod_unavailable_is_reported_not_raised(tmp_path):
    case = Case("c", write_case(tmp_path, "c", FIXED, FIXED) / "original.py",
                tmp_path / "c" / "fixed.py")
    check_codemod(case, None, "codemod unavailable (ImportError: no engine)")
    assert case.codemod == "codemod unavailable (ImportError: no engine)"
    result = runner.judge(case, [])
    assert result.passed and "codemod unavailable" in result.notes[0]


def test_codemod_output_differing_from_fixed_form_is_shown(tmp_path):
    folder = write_case(tmp_path, "c", DISCARDED_MOVE, FIXED.replace("x @ weight", "weight"))
    case = Case("c", folder / "original.py", folder / "fixed.py")
    check_codemod(case, fake_fix_source)
    assert case.codemod == "differs" and "+    return {\"out\": x @ weight" in case.codemod_diff


def test_cli_without_torch_exits_2_with_one_line(monkeypatch, capsys, tmp_path):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real_find_spec(name, *a))
    assert cli.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == cli.NEEDS_TORCH


def test_the_torch_hint_says_cpu_build_first_as_the_readme_does():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    [install] = [line for line in readme.splitlines() if "'.[verify]'" in line and line.startswith("pip install")]
    assert install.index("pip install torch") < install.index("[verify]")
    hint = cli.NEEDS_TORCH
    assert hint.index("CPU build") < hint.index("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert hint.index("whl/cpu") < hint.index("pip install 'torchdevice-lint[verify]'")


def test_table_lists_every_case(cli_json):
    # The JSON was produced by the same results the table formats.
    _, cases = cli_json
    assert set(cases) == {"tdl004/discarded_move", "tdl004/clean", "tdl004/changed_output"}
    assert format_table([]).endswith("0 case(s), 0 failed")


def write_report_only_case(root: Path, original: str, suggested: str) -> Path:
    folder = root / "tdl010" / "suggested"
    folder.mkdir(parents=True)
    (folder / "original.py").write_text(original)
    (folder / "suggested.py").write_text(suggested)
    return folder


def test_a_suggested_form_stands_in_for_the_fixed_one(tmp_path):
    folder = write_report_only_case(tmp_path, FIXED, CHANGED_OUTPUT)
    (case,) = runner.discover_cases(tmp_path)
    assert (case.report_only, case.fixed) == (True, folder / "suggested.py")
    check_codemod(case, fake_fix_source)
    assert case.codemod == runner.REPORT_ONLY


def test_a_report_only_original_the_codemod_changes_is_a_failure(tmp_path):
    write_report_only_case(tmp_path, DISCARDED_MOVE, FIXED)
    (case,) = runner.discover_cases(tmp_path)
    check_codemod(case, fake_fix_source)
    assert case.codemod == "differs" and "original.py (codemod)" in case.codemod_diff
    assert runner.judge(case, []).result == "codemod differs"
