"""The progress bar appears only on a terminal (not piped, not in CI, not with --quiet); the
summary line closes every run unless --quiet."""

import io
import os
import re
import subprocess
import sys

import pytest

from torchdevice_lint import progress
from torchdevice_lint.cli import main
from torchdevice_lint.progress import Progress, Summary, bar_wanted


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def many_files(tmp_path):
    for index in range(40):
        (tmp_path / f"m{index:02}.py").write_text("import torch\nmodel = Net().cuda()\n" if index % 10 == 0 else "x = 1\n")
    return tmp_path


def test_no_progress_output_when_stderr_is_not_a_terminal(many_files, capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    monkeypatch.delenv("CI", raising=False)
    assert main(["--output-format", "concise", "-j", "1", str(many_files)]) == 1
    err = capsys.readouterr().err
    assert "\r" not in err and "[#" not in err
    assert err.splitlines() == [
        re.match(r"Checked 40 files: 4 findings \(TDL001: 4\), 0 errors in \d+\.\d\ds", err).group(0)
    ]


def test_quiet_prints_no_summary(many_files, capsys):
    assert main(["-q", "--output-format", "concise", str(many_files)]) == 1
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "isatty, quiet, environ, wanted",
    [
        (True, False, {}, True),
        (False, False, {}, False),
        (True, True, {}, False),
        (True, False, {"CI": "true"}, False),
        (True, False, {"TERM": "dumb"}, False),
        (True, False, {"CI": ""}, True),
    ],
)
def test_when_a_bar_is_wanted(isatty, quiet, environ, wanted):
    stream = FakeTerminal() if isatty else io.StringIO()
    assert bar_wanted(stream, quiet, environ) is wanted


def test_bar_draws_in_place_and_clears(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    stream = FakeTerminal()
    bar = Progress(4, stream)
    for name in "abcd":
        bar.advance(f"{name}.py")
    drawn = stream.getvalue()
    assert drawn.count("\r") == 4 and "\n" not in drawn
    assert "[" + "#" * 30 + "] 4/4 files  d.py" in drawn
    bar.clear()
    assert stream.getvalue().endswith("\r")


def test_short_runs_and_disabled_bars_draw_nothing():
    stream = FakeTerminal()
    bar = Progress(100, stream)  # the default delay has not passed
    bar.advance("a.py")
    silent = Progress(100, stream, enabled=False)
    silent.advance("b.py")
    silent.clear()
    assert stream.getvalue() == ""


def test_summary_line():
    summary = Summary(files=12, findings=5, changed_files=1, fixed=2, errors=1)
    summary.by_code.update({"TDL003": 2, "TDL001": 3})
    assert summary.line(0.4234, "fix") == (
        "Checked 12 files: 5 findings (TDL001: 3, TDL003: 2), 2 fixed in 1 file, 1 error in 0.42s"
    )
    assert Summary(files=1).line(1.0) == "Checked 1 file: no findings, 0 errors in 1.00s"
    assert Summary(files=2, fixed=3, changed_files=2).line(0, "diff") == (
        "Checked 2 files: 3 fixes would change 2 files, 0 errors in 0.00s"
    )


def test_fix_summary_counts_fixes(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import torch\nmodel = Net().cuda()\nx = y.cuda(0)\n")
    assert main(["--fix", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert re.fullmatch(
        r"Checked 1 file: 1 finding \(TDL001: 1\), 1 fixed in 1 file, 0 errors in \d+\.\d\ds\n", err
    ), err


DRIVER = """
import sys
import torchdevice_lint.progress as progress
progress.DELAY = 0.0
progress.REFRESH = 0.0
from torchdevice_lint.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("ci, quiet, bar", [(False, False, True), (True, False, False), (False, True, False)])
def test_on_a_real_terminal(many_files, ci, quiet, bar):
    import pty

    leader, follower = pty.openpty()
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["TERM"] = "xterm"
    if ci:
        env["CI"] = "true"
    argv = [sys.executable, "-c", DRIVER, "--output-format", "concise", "-j", "1", str(many_files)]
    process = subprocess.Popen(
        argv + (["--quiet"] if quiet else []), stdout=subprocess.PIPE, stderr=follower, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not chunk:
            break
        chunks.append(chunk)
    out = process.communicate(timeout=120)[0].decode()
    os.close(leader)
    terminal = b"".join(chunks).decode()
    assert process.returncode == 1
    assert len(out.splitlines()) == 4 and "\r" not in out  # findings never carry the bar
    assert ("/40 files" in terminal) is bar
    assert ("Checked 40 files" in terminal) is (not quiet)


#: Holds the file holding "slow" until the test creates GO_FLAG (or 30 s pass): the test can then
#: look at the terminal while one file is still being checked.
SLOW_DRIVER = DRIVER.replace(
    "from torchdevice_lint.cli import main",
    """import os, time
from torchdevice_lint.engine import Linter
checked = Linter.lint
def lint(self, source, *context):
    if b"slow" in source:
        deadline = time.monotonic() + 30
        while not os.path.exists(os.environ["GO_FLAG"]) and time.monotonic() < deadline:
            time.sleep(0.05)
    return checked(self, source, *context)
Linter.lint = lint
from torchdevice_lint.cli import main""",
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_with_two_jobs_the_bar_moves_and_findings_stream_while_a_file_is_still_checked(tmp_path):
    import pty
    import select

    project = tmp_path / "project"
    project.mkdir()
    # First in path order and the largest (workers take it first); the other ten finish meanwhile.
    (project / "a_slow.py").write_text("import torch\nslow = Net().cuda()\n" + "pad = 1\n" * 50)
    for index in range(10):
        (project / f"m{index}.py").write_text(f"import torch\nm{index} = Net().cuda()\nn{index} = x.cuda()\n")
    flag = tmp_path / "go"
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env.update(TERM="xterm", GO_FLAG=str(flag), TORCHDEVICE_CACHE_DIR=str(tmp_path / "cache"))
    leader, follower = pty.openpty()
    argv = [sys.executable, "-c", SLOW_DRIVER, "--output-format", "concise", "--file-timeout", "120", "-j", "2"]
    process = subprocess.Popen(argv + [str(project)], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    terminal, before_slow_finished = b"", None
    try:
        while True:
            if select.select([leader], [], [], 60)[0] == []:
                raise AssertionError(f"no output for 60 s: {terminal!r}")
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closes when the process ends
                break
            if not chunk:
                break
            terminal += chunk
            if before_slow_finished is None and b"10/11 files" in terminal:
                before_slow_finished = terminal.decode()
                flag.touch()
    finally:
        process.wait(timeout=120)
        os.close(leader)
    assert process.returncode == 1
    assert before_slow_finished is not None and "a_slow.py:2:8" not in before_slow_finished, (
        "the bar only moved once the slow file was done"
    )
    # The bar went through the counts while a file was still being checked ...
    counts = [int(count) for count in re.findall(r"\] (\d+)/11 files", before_slow_finished)]
    assert counts == sorted(counts) and len(set(counts)) >= 2 and max(counts) == 10, counts
    # ... and the findings of the files done were on the screen already, each file's together.
    shown = [line for line in re.split(r"[\r\n]+", before_slow_finished) if " TDL001 " in line]
    assert len(shown) == 20 and not any("a_slow.py" in line for line in shown)
    files = [line.split(":")[0] for line in shown]
    assert all(files[i] == files[i + 1] for i in range(0, 20, 2)), files
    final = terminal.decode()
    assert final.count("a_slow.py:2:8: TDL001") == 1 and "Checked 11 files: 21 findings" in final
