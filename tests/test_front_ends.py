"""The flake8 plugin and the pre-commit hooks, run for real in subprocesses."""

import os
import re
import shutil
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


def pre_commit_workspace(tmp_path: Path, **extra_env: str) -> tuple[str, Path, dict]:
    """pre-commit's executable (the test is skipped without it), an empty work folder, and an
    environment with a private pre-commit cache and a git identity."""
    pre_commit = shutil.which("pre-commit") or os.path.join(os.path.dirname(sys.executable), "pre-commit")
    if not os.path.exists(pre_commit):
        pytest.skip("pre-commit is not installed")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           **extra_env}
    return pre_commit, work, env


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_hooks_with_try_repo(tmp_path):
    pre_commit, work, env = pre_commit_workspace(tmp_path)
    run("git", "init", "-q", cwd=work, env=env)
    script = work / "train.py"
    script.write_text("import torch\nmodel = Net().cuda()\n")
    run("git", "add", "train.py", cwd=work, env=env)

    check = run(pre_commit, "try-repo", str(ROOT), "torchdevice-lint", "--files", "train.py", cwd=work, env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:2:9: TDL001" in check.stdout
    assert script.read_text() == "import torch\nmodel = Net().cuda()\n"

    fix = run(pre_commit, "try-repo", str(ROOT), "torchdevice-fix", "--files", "train.py", cwd=work, env=env)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert "model = Net().to(device)" in script.read_text()

    again = run(pre_commit, "try-repo", str(ROOT), "torchdevice-fix", "--files", "train.py", cwd=work, env=env)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_run_all_files_with_both_hooks(tmp_path):
    pre_commit, work, env = pre_commit_workspace(tmp_path)
    rev = run("git", "rev-parse", "HEAD", cwd=ROOT).stdout.strip()
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n"
        "      - id: torchdevice-fix\n      - id: torchdevice-lint\n"
    )
    (work / "train.py").write_text("import torch\nmodel = Net().cuda()\nx = y.cuda(1)\n")
    (work / "clean.py").write_text("import torch\nmodel = Net().to(device)\n")
    run("git", "init", "-q", cwd=work, env=env)
    run("git", "add", ".", cwd=work, env=env)

    first = run(pre_commit, "run", "--all-files", cwd=work, env=env)
    assert first.returncode == 1, first.stdout + first.stderr
    fixed = (work / "train.py").read_text()
    assert "model = Net().to(device)" in fixed and "y.cuda(1)" in fixed  # the unsafe fix is not applied
    assert "TDL001" in first.stdout  # the check hook still reports what is left
    assert (work / "clean.py").read_text() == "import torch\nmodel = Net().to(device)\n"


def readme_pre_commit_snippets():
    """The YAML blocks of the README's pre-commit section: the local one, then the tagged one."""
    import yaml

    readme = (ROOT / "README.md").read_text()
    section = readme.split("### pre-commit\n", 1)[1].split("\n### ", 1)[0]
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]


def test_readme_pre_commit_snippets_agree_with_the_hooks_file():
    import yaml

    from torchdevice_lint import __version__

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    local, tagged = readme_pre_commit_snippets()
    [local_repo] = local["repos"]
    assert local_repo["repo"] == "local"
    for hook in local_repo["hooks"]:
        published = hooks[hook["id"]]
        assert hook["language"] == "system"  # the torchdevice-fix on PATH, as the README says
        for key in ("name", "entry", "types_or"):
            assert hook[key] == published[key], (hook["id"], key)
    [tagged_repo] = tagged["repos"]
    assert tagged_repo["rev"] == f"v{__version__}"
    assert [hook["id"] for hook in tagged_repo["hooks"]] == [hook["id"] for hook in local_repo["hooks"]]
    assert set(hooks) == {hook["id"] for hook in local_repo["hooks"]}


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_readme_local_pre_commit_snippet_runs(tmp_path):
    import yaml

    pre_commit, work, env = pre_commit_workspace(
        tmp_path, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    )
    local, _ = readme_pre_commit_snippets()
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(local))
    (work / "train.py").write_text("import torch\nmodel = Net().cuda()\nx = y.cuda(1)\n")
    run("git", "init", "-q", cwd=work, env=env)
    run("git", "add", ".", cwd=work, env=env)
    first = run(pre_commit, "run", "--all-files", cwd=work, env=env)
    assert first.returncode == 1, first.stdout + first.stderr
    fixed = (work / "train.py").read_text()
    assert "model = Net().to(device)" in fixed and "y.cuda(1)" in fixed  # the safe fix only
    assert re.search(r"^train.py:\d+:5: TDL001 ", first.stdout, re.M)  # the check reports what is left
