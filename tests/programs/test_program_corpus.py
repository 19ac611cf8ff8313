"""#12: real GPU-only programs (tests/programs/manifest.toml) run after the codemod, on the CPU
and on the simulated GPU, with the original's outputs where it can run at all.

The excerpts are read from local mirrors of their repositories (scripts/program_corpus.py);
without those mirrors the corpus test is skipped, saying which are missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("program_corpus", ROOT / "scripts" / "program_corpus.py")
corpus = importlib.util.module_from_spec(spec)
sys.modules["program_corpus"] = corpus  # dataclasses look their module up there
spec.loader.exec_module(corpus)

PROGRAMS = corpus.load_manifest()


def test_the_corpus_is_large_and_varied_enough():
    assert len(PROGRAMS) >= 15
    assert len({p.repo for p in PROGRAMS}) >= 10
    assert len({p.name for p in PROGRAMS}) == len(PROGRAMS)
    for program in PROGRAMS:
        assert program.driver.is_file(), f"{program.name}: no driver {program.driver.name}"
        assert len(program.commit) == 40


def test_a_missing_mirror_or_commit_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv(corpus.MIRRORS_ENV, str(tmp_path))
    assert corpus.missing_mirrors(PROGRAMS[:1]) == [PROGRAMS[0].repo]
    program = PROGRAMS[0]
    mirror = tmp_path / program.repo.replace("/", "+") / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(mirror)], check=True)
    assert corpus.missing_mirrors([program]) == [program.repo]  # the mirror lacks the pinned commit


def test_extraction_takes_the_named_definitions_and_their_imports_only():
    source = (
        "import os\nimport torch\nfrom scipy.io import wavfile\n\nSCALE = 2\n\n\n"
        "@torch.no_grad()\ndef mask(n):\n    return torch.ones(n, device='cuda') * SCALE\n\n\n"
        "def unrelated():\n    return wavfile\n"
    )
    program = corpus.Program("p", "o/r", "0" * 40, "f.py", ("mask", "SCALE"), "MIT", "cpu", "")
    excerpt = corpus.extract(program, source)
    assert "import torch\n" in excerpt and "scipy" not in excerpt and "import os" not in excerpt
    assert "@torch.no_grad()\ndef mask(n):" in excerpt and "SCALE = 2" in excerpt and "unrelated" not in excerpt
    with pytest.raises(corpus.ExtractionError, match="SCALE"):
        corpus.extract(corpus.Program("p", "o/r", "0" * 40, "f.py", ("mask",), "MIT", "cpu", ""), source)
    with pytest.raises(corpus.ExtractionError, match="scipy"):
        corpus.extract(corpus.Program("p", "o/r", "0" * 40, "f.py", ("unrelated",), "MIT", "cpu", ""), source)


def test_the_closing_note_table_says_the_fix_kind_and_how_the_original_failed():
    """--markdown: one row a program, with where the original breaks, whether the fixes were safe or
    unsafe (each diff under its label), and each device's verdict, saying how the original failed."""
    from types import SimpleNamespace as Run

    program = corpus.Program("p", "o/r", "0" * 40, "f.py", ("load",), "MIT", "cpu", "torch.load without map_location")
    outcome = corpus.Outcome(
        program,
        original="import torch\nx = torch.load(p)\n",
        safe="import torch\nx = torch.load(p)\n",
        fixed="import torch\nx = torch.load(p, map_location='cpu')\n",
        refixed="",
        result=Run(comparisons=[Run(run="fixed@sim", same=True, message="")]),
        runs={
            ("original", "cpu"): Run(ok=False, error="RuntimeError: Attempting to deserialize"),
            ("fixed", "cpu"): Run(ok=True, error=""),
            ("fixed", "simulated"): Run(ok=True, error=""),
        },
    )
    row = corpus.markdown([outcome]).splitlines()[2]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:3] == ["p", f"o/r@{'0' * 10}:f.py `load`"]
    assert cells[4:7] == ["CPU", "unsafe", "unsafe:<br>`-x = torch.load(p)`<br>`+x = torch.load(p, map_location='cpu')`"]
    assert cells[7] == "runs (the reference); original fails: RuntimeError: Attempting to deserialize"
    assert cells[8] == "runs, same outputs"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    pytest.importorskip("torch")
    absent = corpus.missing_mirrors(PROGRAMS)
    if absent:
        pytest.skip(
            f"mirrors of {', '.join(absent)} absent, or without the pinned commit, under {corpus.mirrors_root()}"
            f" (set {corpus.MIRRORS_ENV})"
        )
    return {o.program.name: o for o in corpus.run_corpus(PROGRAMS, tmp_path_factory.mktemp("programs"))}


@pytest.mark.parametrize("name", [p.name for p in PROGRAMS])
def test_program_runs_after_the_fix_on_cpu_and_simulated_gpu(outcomes, name):
    outcome = outcomes[name]
    assert not corpus.problems(outcome), "\n".join(corpus.problems(outcome))
    # Every run of the original that got through was compared with the fixed program's output.
    compared = {c.run for c in outcome.result.comparisons}
    for (program, device), run in outcome.runs.items():
        if run.ok and (program, device) != ("fixed", "cpu"):
            assert f"{program}@{'sim' if device == 'simulated' else device}" in compared
