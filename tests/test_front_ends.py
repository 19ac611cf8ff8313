"""The flake8 plugin, run for real in subprocesses (the pre-commit hooks: test_pre_commit.py)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CLI_MARKER = re.compile(r" \[(\*|unsafe fix)\]$")


def run(*command, cwd=None, env=None):
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_flake8_and_cli_report_the_same_findings_on_the_fixtures():
    flake8 = run(sys.executable, "-m", "flake8", "--select", "TDL", str(FIXTURES))
    cli = run(sys.executable, "-m", "torchdevice_lint.cli", "--output-format", "concise", str(FIXTURES))
    assert flake8.returncode == 1 and cli.returncode == 1, flake8.stderr + cli.stderr
    flake8_lines = sorted(flake8.stdout.splitlines())
    cli_lines = sorted(CLI_MARKER.sub("", line) for line in cli.stdout.splitlines())
    assert flake8_lines == cli_lines
    assert len(flake8_lines) >= 40
    assert {line.split(": ")[1].split()[0] for line in flake8_lines} >= {"TDL001", "TDL002", "TDL003", "TDL004"}


def test_flake8_honours_noqa_and_select(tmp_path):
    path = tmp_path / "script.py"
    path.write_text("import torch\na = x.cuda()\nb = y.cuda()  # noqa: TDL001\n")
    result = run(sys.executable, "-m", "flake8", "--select", "TDL", str(path))
    assert result.stdout.splitlines() == [
        f"{path}:2:5: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`"
    ]
    assert run(sys.executable, "-m", "flake8", "--select", "E501", str(path)).stdout == ""


#: flake8 with every engine (`Linter`) built in the process counted.
FLAKE8_COUNTING_ENGINES = """\
import sys
from torchdevice_lint.engine import Linter
from flake8.main.cli import main

built = []
initialise = Linter.__init__
Linter.__init__ = lambda self, *args, **kwargs: built.append(1) or initialise(self, *args, **kwargs)
status = main()
print("engines built:", len(built), file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize("noqa_flag", [[], ["--disable-noqa"]])
def test_flake8_plugin_builds_its_engine_once_per_process_not_per_file(tmp_path, noqa_flag):
    names = [f"m{number}.py" for number in range(4)]
    for name in names:
        (tmp_path / name).write_text("import torch\na = x.cuda()\nb = y.cuda()  # noqa: TDL001\n")

    def flake8(*files):
        result = run(sys.executable, "-c", FLAKE8_COUNTING_ENGINES, "--isolated", "--jobs", "1", "--select", "TDL",
                     *noqa_flag, *files, cwd=tmp_path)
        return int(result.stderr.splitlines()[-1].split(": ")[1]), result.stdout.splitlines()

    one_file, _ = flake8(names[0])
    four_files, lines = flake8(*names)
    assert one_file == four_files <= 2
    per_file = 2 if noqa_flag else 1  # --disable-noqa: the silenced line too
    assert sorted(line.split(":")[0] for line in lines) == sorted(names * per_file)
