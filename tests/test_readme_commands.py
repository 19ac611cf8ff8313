"""The CI script runs exactly the README's test command, in a venv of its own."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^python3 -m venv .*python -m pytest$", readme, flags=re.MULTILINE)
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_the_readme_test_command():
    assert _readme_test_command() in (ROOT / ".ci" / "run").read_text().splitlines()


def test_test_venv_differs_from_quick_start_venv():
    readme = (ROOT / "README.md").read_text()
    quick_start_venv = re.search(r"^python3 -m venv (\S+) .*torchdevice-fix", readme, flags=re.MULTILINE).group(1)
    test_venv = re.match(r"python3 -m venv (\S+)", _readme_test_command()).group(1)
    assert test_venv != quick_start_venv
    assert f"{test_venv}/" in (ROOT / ".gitignore").read_text().splitlines()


def test_explain_piped_into_head_ends_without_traceback():
    import subprocess
    import sys

    explain = subprocess.Popen(
        [sys.executable, "-c", "import sys; from torchdevice_lint.cli import main; sys.exit(main(['--explain', 'TDL003']))"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    explain.stdout.close()  # the reader goes away before anything is read, as `| head -0` does
    stderr = explain.stderr.read().decode()
    assert explain.wait(timeout=60) == 0
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
