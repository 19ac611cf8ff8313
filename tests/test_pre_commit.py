"""The pre-commit hooks, run for real by pre-commit in subprocesses: this repository named in a
config (at HEAD: a fresh clone, as CI and users get it), and the README's local snippet.

Each hook environment is a virtualenv with this package pip-installed (~10 s of CPU): the tests
share one (``hook_cache``). ``pre-commit try-repo`` builds a new one on every call, so it is not
run here; it tests the same hooks file."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*command, cwd=None, env=None):
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def pre_commit_workspace(tmp_path: Path, home: Optional[Path] = None, **extra_env: str) -> tuple[str, Path, dict]:
    """pre-commit's executable (the test is skipped without it), an empty work folder, and an
    environment with a pre-commit cache (``home``, else a private one) and a git identity."""
    pre_commit = shutil.which("pre-commit") or os.path.join(os.path.dirname(sys.executable), "pre-commit")
    if not os.path.exists(pre_commit):
        pytest.skip("pre-commit is not installed")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(home or tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           **extra_env}
    return pre_commit, work, env


@pytest.fixture(scope="module")
def hook_cache(tmp_path_factory) -> Path:
    """One pre-commit cache for the tests that name this repository at HEAD in their config:
    the hooks' environment (a virtualenv and a pip install, ~8 s of CPU) is built once."""
    return tmp_path_factory.mktemp("pre-commit-cache")


def config_of_this_repo(*hook_ids: str) -> str:
    rev = run("git", "rev-parse", "HEAD", cwd=ROOT).stdout.strip()
    return f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n" + "".join(f"      - id: {hook}\n" for hook in hook_ids)


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_hooks_one_at_a_time(tmp_path, hook_cache):
    pre_commit, work, env = pre_commit_workspace(tmp_path, hook_cache)
    (work / ".pre-commit-config.yaml").write_text(config_of_this_repo("torchdevice-lint", "torchdevice-fix"))
    run("git", "init", "-q", cwd=work, env=env)
    script = work / "train.py"
    script.write_text("import torch\nmodel = Net().cuda()\n")
    run("git", "add", "train.py", cwd=work, env=env)

    check = run(pre_commit, "run", "torchdevice-lint", "--files", "train.py", cwd=work, env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:2:9: TDL001" in check.stdout
    assert script.read_text() == "import torch\nmodel = Net().cuda()\n"

    fix = run(pre_commit, "run", "torchdevice-fix", "--files", "train.py", cwd=work, env=env)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert "model = Net().to(device)" in script.read_text()

    again = run(pre_commit, "run", "torchdevice-fix", "--files", "train.py", cwd=work, env=env)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_run_all_files_with_both_hooks(tmp_path, hook_cache):
    pre_commit, work, env = pre_commit_workspace(tmp_path, hook_cache)
    (work / ".pre-commit-config.yaml").write_text(config_of_this_repo("torchdevice-fix", "torchdevice-lint"))
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
