"""What a stress run over real repositories and hostile inputs turned up: fixes touch only the
lines check mode reports, files are checked once by real path, bad files are named in one line
by both front ends, and diff headers and messages read the same everywhere."""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_fuzz import check_invariants
from torchdevice_lint.cli import main
from torchdevice_lint.engine import Linter
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.settings import Settings

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "torchdevice_lint.cli"]
TWO_RULES = (
    "import torch\n"
    "model = torch.nn.Linear(1, 1).cuda()\n"
    "loader = torch.utils.data.DataLoader([1], pin_memory=True)\n"
)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI run from ``cwd`` in this process, as a subprocess would run it, without the start of a
    new interpreter (~0.6 s of CPU; this module runs the CLI some thirty times). What needs a process
    of its own (signals, a killed parent) starts one with `_start_fix_run`."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            returncode = main(["--no-cache", *args])
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(args, returncode, _written(out), _written(err))


def _written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


# ------------------------------------------------ 1. fixes change only reported lines
def test_check_reports_what_the_device_line_a_fix_inserts_brings_and_one_run_fixes_all():
    linter = Linter()
    assert [f.code for f in linter.lint(TWO_RULES)] == ["TDL001", "TDL012"]
    fixed = linter.fix(TWO_RULES)
    assert ".to(device)" in fixed.source and "pin_memory=torch.cuda.is_available()" in fixed.source
    assert fixed.remaining == [] and linter.fix(fixed.source).source == fixed.source


def test_without_the_fix_that_brings_the_device_line_pinning_is_not_reported():
    linter = Linter(Settings(ignore=("TDL001",)))
    assert linter.lint(TWO_RULES) == [] and linter.fix(TWO_RULES).source == TWO_RULES


def test_check_and_diff_agree_on_what_changes(tmp_path):
    (tmp_path / "train.py").write_text(TWO_RULES)
    check = run("--output-format", "concise", "train.py", cwd=tmp_path)
    diff = run("--diff", "train.py", cwd=tmp_path)
    assert sorted(line.split()[1] for line in check.stdout.splitlines()) == ["TDL001", "TDL012"]
    removed = [line for line in diff.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == [
        "-model = torch.nn.Linear(1, 1).cuda()",
        "-loader = torch.utils.data.DataLoader([1], pin_memory=True)",
    ]


CORPUS_FILES = sorted(
    [*(REPO / "tests" / "corpus").glob("*.py"), *(REPO / "fixtures").glob("*/*/original.py")]
)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_fix_changes_only_lines_check_reports_fixable(path):
    # check_invariants: unsafe fixes included, every changed line is a fixable finding's, at
    # most the device line and its import added (the fuzz corpus runs the same property).
    check_invariants(path.read_bytes())


# ----------------------------------------------------- 2, 3. symlinks, real paths
@pytest.mark.parametrize("first", [True, False])
def test_a_symlink_loop_is_named_in_one_line_whatever_its_place(tmp_path, first):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "ok.py").write_text("import torch\n")
    result = run(*(["loop", "ok.py"] if first else ["ok.py", "loop"]), cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert "loop: error: too many levels of symbolic links" in result.stderr
    assert result.returncode == 2


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_reached_twice_is_checked_and_fixed_once(tmp_path, jobs):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TWO_RULES)
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "train.py")
    check = run("-j", jobs, "pkg", "pkg/train.py", cwd=tmp_path)
    assert check.stdout.count("TDL001") == 1
    fix = run("-j", jobs, "--fix", "pkg", "pkg/train.py", "pkg/alias.py", cwd=tmp_path)
    assert "changed since it was read" not in fix.stderr
    assert "Checked 1 file:" in fix.stderr and "0 errors" in fix.stderr
    assert ".to(device)" in (tmp_path / "pkg" / "train.py").read_text()


def test_a_link_leaving_the_walked_folder_is_left_alone_unless_named(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text(TWO_RULES)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "vendored.py").symlink_to(outside)
    walked = run("--fix", "project", cwd=tmp_path)
    assert outside.read_text() == TWO_RULES, walked.stderr
    run("--fix", "project/vendored.py", cwd=tmp_path)
    assert ".to(device)" in outside.read_text()
    assert (tmp_path / "project" / "vendored.py").is_symlink()


# ------------------------------------------------------------- 4. interrupts
def _start_fix_run(folder: Path, count: int = 300) -> tuple[subprocess.Popen, Path]:
    for index in range(count):
        (folder / f"train_{index:03d}.py").write_text(TWO_RULES)
    log = folder.parent / "stderr.txt"
    process = subprocess.Popen(
        [*CLI, "--fix", "-j", "2", "--no-cache", str(folder)],
        stdout=subprocess.DEVNULL, stderr=log.open("w"), start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while (folder / "train_000.py").read_text() == TWO_RULES:  # the first file is written first
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.01)
    return process, log


def test_ctrl_c_prints_one_line_and_leaves_every_file_whole(tmp_path, ctrl_c_as_a_terminal_sends_it):
    folder = tmp_path / "src"
    folder.mkdir()
    process, log = _start_fix_run(folder)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole process group
    assert process.wait(60) == 130, log.read_text()
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), lines
    written, untouched = (int(word) for word in re.findall(r"\d+", lines[0]))
    assert written + untouched == 300
    fixed = [path for path in folder.iterdir() if path.read_text() != TWO_RULES]
    assert len(fixed) == written
    for path in fixed:
        compile(path.read_text(), str(path), "exec")
    assert not list(folder.glob(".torchdevice-*"))


def test_workers_end_quietly_when_their_parent_is_killed(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    process, log = _start_fix_run(folder)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(60)
    deadline = time.monotonic() + 30
    while True:  # the workers are in the same session (process group) as their parent
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "workers outlived their parent"
        time.sleep(0.1)
    assert log.read_text() == ""


def test_the_next_run_removes_temporary_files_a_killed_run_left(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    stale, fresh = tmp_path / ".torchdevice-abc123.tmp", tmp_path / ".torchdevice-def456.tmp"
    stale.write_text(TWO_RULES)
    fresh.write_text(TWO_RULES)  # perhaps a concurrent run's, about to be renamed
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    assert run(".", cwd=tmp_path).returncode == 0
    assert not stale.exists() and fresh.exists()


# ---------------------------------------------------------------- 5. notebooks
def notebook(*sources: str, **top) -> bytes:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s.splitlines(keepends=True)} for s in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}, indent=1).encode()


def test_a_cell_that_does_not_parse_no_longer_hides_the_others(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(notebook("import torch\n", "def broken(:\n", "model = Net().cuda()\n"))
    check = run("--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert "nb.ipynb:cell_3:1:9: TDL001" in check.stdout
    assert check.stderr.count("nb.ipynb:cell_2:1:12: error: syntax error") == 1 and check.returncode == 2
    run("--fix", "nb.ipynb", cwd=tmp_path)
    cells = [cell["source"] for cell in json.loads(path.read_text())["cells"]]
    assert cells[1] == ["def broken(:\n"] and cells[2][-1] == "model = Net().to(device)\n"


def test_an_empty_notebook_is_named_in_plain_words(tmp_path):
    (tmp_path / "empty.ipynb").write_bytes(b"")
    result = run("empty.ipynb", cwd=tmp_path)
    assert "empty.ipynb: error: not a valid notebook (JSON): the file is empty" in result.stderr


#: Version 3 keeps its cells under ``worksheets``, code in ``input``.
V3_NOTEBOOK = json.dumps({
    "metadata": {"name": ""}, "nbformat": 3, "nbformat_minor": 0,
    "worksheets": [{"metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
        {"cell_type": "code", "collapsed": False, "input": ["import torch\n", "model = Net().cuda()"],
         "language": "python", "metadata": {}, "outputs": []},
    ]}],
}).encode()


def test_a_version_3_notebook_is_checked(tmp_path):
    (tmp_path / "old.ipynb").write_bytes(V3_NOTEBOOK)
    assert "old.ipynb:cell_2:2:9: TDL001" in run("--output-format", "concise", "old.ipynb", cwd=tmp_path).stdout


def test_untouched_lines_of_a_fixed_cell_keep_their_json_spelling(tmp_path):
    text = notebook("import torch\nmodel = Net().cuda()\nname = 'é'\n").decode()
    text = text.replace('"name = \'\\u00e9\'\\n"', '"name = \'é\' + \'\\u00e9\'\\n"')
    assert "\\u00e9" in text and "é" in text
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    run("--fix", "nb.ipynb", cwd=tmp_path)
    fixed = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert '"name = \'é\' + \'\\u00e9\'\\n"' in fixed and ".to(device)" in fixed


def test_the_notebook_size_limit_counts_code_not_outputs(tmp_path):
    document = json.loads(notebook("import torch\nmodel = Net().cuda()\n"))
    document["cells"][0]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                        "data": {"image/png": "A" * 3_000_000}}]
    (tmp_path / "plots.ipynb").write_text(json.dumps(document))
    assert "TDL001" in run("plots.ipynb", cwd=tmp_path).stdout


# ------------------------------------------- 6. encodings, the same in both front ends
BAD_FILES = {
    "utf16.py": "import torch\nx = y.cuda()\n".encode("utf-16"),
    "cookie.py": b"# -*- coding: klingon -*-\nimport torch\nx = y.cuda()\n",
    "latin.py": b"s = '\xe9'\n",  # no torch in it: still named
    "binary.py": b"\x7fELF\x00\x00\x01",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_an_unreadable_file_raises_whatever_its_text(name):
    with pytest.raises(SourceError):
        Linter().lint(BAD_FILES[name])


def hostile_folder(folder: Path) -> dict[str, bytes]:
    """Every input of the stress run beside the older bad-input cases; returns the plain files."""
    folder.mkdir()
    files = {
        **BAD_FILES,
        "good.py": TWO_RULES.encode(),
        "syntax.py": b"import torch\ndef f(:\n    x.cuda()\n",
        "empty.ipynb": b"",
        "broken_cell.ipynb": notebook("import torch\n", "def broken(:\n", "model = Net().cuda()\n"),
        "old.ipynb": V3_NOTEBOOK,
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "loop.py").symlink_to(folder / "loop.py")
    (folder / "twin.py").symlink_to(folder / "good.py")  # the same file reached twice
    return files


#: One error line each, in every mode and at any -j (the notebook's names its broken cell).
HOSTILE_ERRORS = sorted(
    ["missing.py", "loop.py", "syntax.py", "empty.ipynb", "broken_cell.ipynb", *BAD_FILES]
)
FIXABLE = {"good.py", "broken_cell.ipynb", "old.ipynb"}


@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"]])
def test_hostile_folder_one_line_per_bad_file_same_at_any_jobs(tmp_path, mode):
    reports = {}
    for jobs in ("1", "2"):
        folder = tmp_path / f"jobs{jobs}"
        files = hostile_folder(folder)
        result = run("-j", jobs, *mode, ".", "missing.py", cwd=folder)
        errors = [line for line in result.stderr.splitlines() if ": error: " in line]
        assert sorted(Path(line.split(":")[0]).name for line in errors) == HOSTILE_ERRORS  # path[:line:col]: error
        assert "missing.py: error: no such file or directory" in errors
        assert "Traceback" not in result.stderr and result.returncode == 2
        changed = {name for name, data in files.items() if (folder / name).read_bytes() != data}
        assert changed == (FIXABLE if mode == ["--fix"] else set())
        assert (folder / "twin.py").is_symlink() and sorted(os.listdir(folder)) == sorted([*files, "loop.py", "twin.py"])
        assert "twin.py" not in result.stdout  # checked once, by real path
        summary = re.sub(r" in [0-9.]+s$", "", result.stderr.splitlines()[-1])
        reports[jobs] = (result.stdout, errors, summary)
    assert reports["1"] == reports["2"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_flake8_gives_one_line_per_bad_file_of_the_hostile_folder(tmp_path, jobs):
    hostile_folder(tmp_path / "src")
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TDL,E9", "-j", jobs, "."],
        cwd=tmp_path / "src", capture_output=True, text=True, timeout=120,
    )
    assert "Traceback" not in flake8.stderr and flake8.returncode == 1, flake8.stderr
    lines = collections.defaultdict(list)
    for line in flake8.stdout.splitlines():
        path, _, _, message = line.split(":", 3)
        lines[Path(path).name].append(message.split()[0])
    bad = {"binary.py", "cookie.py", "latin.py", "loop.py", "syntax.py", "utf16.py"}
    assert {name: len(codes) for name, codes in lines.items() if name in bad} == dict.fromkeys(bad, 1)
    assert lines["cookie.py"] == lines["latin.py"] == ["TDL999"]  # undecodable: named as torchdevice-fix names it
    assert sorted(lines["good.py"]) == ["TDL001", "TDL012"]


def test_flake8_names_a_file_the_cli_cannot_decode_and_checks_nothing_in_it(tmp_path):
    (tmp_path / "cookie.py").write_bytes(BAD_FILES["cookie.py"])
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TDL", "cookie.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert flake8.stdout.splitlines() == ["cookie.py:1:1: TDL999 cannot decode: unknown encoding: klingon"]
    assert "cookie.py: error: cannot decode: unknown encoding: klingon" in run("cookie.py", cwd=tmp_path).stderr


# ------------------------------------------ 7. --select TDL and preview, both front ends
PREVIEW_CASE = (
    "import torch\n\nfrom .features import encode\n\n\n"
    "def score(batch, device=None):\n"
    "    feats = encode(batch).unsqueeze(0)\n"
    "    return feats * torch.ones(feats.shape[-1])\n"
)


def test_a_prefix_never_turns_a_preview_rule_on_and_its_full_code_does():
    assert Settings(select=("TDL",)).enabled_rules() == Settings().enabled_rules()
    assert "TDL013" in [rule.code for rule in Settings(select=("TDL013",)).enabled_rules()]


@pytest.mark.parametrize("select", [["--select", "TDL"], ["--select", "TDL013"], ["--extend-select", "TDL013"]])
def test_cli_and_flake8_agree_on_preview_rules(tmp_path, select):
    (tmp_path / "helpers.py").write_text(PREVIEW_CASE)
    cli = run("--output-format", "concise", *select, "helpers.py", cwd=tmp_path) if select[0] == "--select" else None
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *select, "helpers.py"], cwd=tmp_path, capture_output=True, text=True
    )
    flake8_codes = sorted(line.split()[1] for line in flake8.stdout.splitlines() if " TDL" in line)
    assert flake8_codes == (["TDL013"] if "TDL013" in select else [])
    if cli is not None:
        assert sorted(line.split()[1] for line in cli.stdout.splitlines() if " TDL" in line) == flake8_codes


# ----------------------------------------------------- 8. diff headers, messages
def test_diff_headers_of_an_absolute_path_read_as_git_writes_them(tmp_path):
    (tmp_path / "train.py").write_text(TWO_RULES)
    diff = run("--diff", str(tmp_path / "train.py"), cwd=tmp_path).stdout
    assert f"--- a{tmp_path}/train.py" in diff and f"+++ b{tmp_path}/train.py" in diff
    assert "a//" not in diff


def test_one_spelling_of_no_such_file(tmp_path):
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    result = run("missing.py", "dangling.py", cwd=tmp_path)
    assert "No such file" not in result.stderr
    assert result.stderr.count("no such file or directory") == 2


def test_cells_ipython_accepts_parse(tmp_path):
    (tmp_path / "nb.ipynb").write_bytes(notebook(
        "import torch\n",
        "!python prepare.py \\\n  --data_root data/ \\\n  --workers=4\n",
        "pip install sagemaker\nls ./embeddings/\nconfig = {\n    'a': 1,\n}\n",
        "model = Net().cuda()\n",
    ))
    result = run("--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert ": error:" not in result.stderr and "nb.ipynb:cell_4:1:9: TDL001" in result.stdout


def test_a_finding_one_fix_brings_on_its_own_line_is_fixed_in_the_same_run():
    # TDL006 turns the legacy constructor into torch.empty, which then meets a caller's tensor (TDL003).
    source = (
        "import torch\n\n\n"
        "def project(vec: torch.Tensor, target_dim: int):\n"
        "    proj = torch.Tensor(vec.size(-1), target_dim).normal_()\n"
        "    return vec @ proj\n"
    )
    once = Linter().fix(source, unsafe=True)
    assert once.applied >= 1 and Linter().fix(once.source, unsafe=True).source == once.source
