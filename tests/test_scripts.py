"""The measurement scripts under scripts/: what they print on a small, known input."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

BUGGY = """import torch
from torch import nn


class Positions(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.embedding = nn.Embedding(n, 8)

    def forward(self, x):
        positions = torch.arange(x.size(1))
        return x + self.embedding(positions)


def build(device):
    return Positions(16).to(device)
"""


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True, capture_output=True,
    )


@pytest.fixture
def history(tmp_path):
    """A repository whose second commit fixes a CPU factory in ``forward``."""
    fixed = BUGGY.replace("x.size(1))", "x.size(1), device=x.device)")
    return three_commits(
        tmp_path / "repo", "model.py",
        (BUGGY, "Positional embedding"),
        (fixed, "Fix GPU: positions on the input's device"),
        (fixed + "# docs\n", "Document the module"),
    )


def three_commits(repo: Path, name: str, *versions: tuple[str, str]) -> Path:
    """A repository with one commit per (text of ``name``, message); its git directory."""
    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q")
    for text, message in versions:
        (repo / name).write_text(text)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", message)
    return repo / ".git"


def test_mining_finds_the_bug_a_device_commit_fixed(history, capsys):
    mine = load("mine_fix_commits")
    assert mine.main([str(history), "--show"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 device commits, 1 modified files")
    assert "TDL003: 1 findings on parents, 1 caught (fixed by the commit); fixes of its shape: 1 of 1 caught" in out
    assert "TDL003: leaving out ports (a device the parent did not have) and mixes PyTorch allows: 1 of 1 caught" in out
    assert "TDL003 caught" in out and "model.py:11" in out
    assert re.search(r"TDL003 \S+\s+1 / 1\s+1 / 1", out)  # the per-repository table


def test_mining_names_a_repository_git_cannot_read_and_goes_on(history, tmp_path, capsys):
    mine = load("mine_fix_commits")
    assert mine.main([str(tmp_path / "missing"), str(history)]) == 1
    captured = capsys.readouterr()
    assert re.fullmatch(r".*missing: error: git failed \(.*\), exit \d+; skipped\n", captured.err)
    assert captured.out.startswith("1 device commits, 1 modified files")


def test_pickaxe_mines_a_discarded_conversion_whatever_the_commit_message(tmp_path, capsys):
    source = "import torch\n\n\ndef step(model, loader, device):\n    for x, y in loader:\n        y.to(device)\n"
    fixed = source.replace("y.to(device)", "y = y.to(device)")
    repo = three_commits(
        tmp_path / "repo", "train.py",
        (source, "Training loop"), (fixed, "Fix the labels"), (fixed + "# the end\n", "Note the end of the labels"),
    )
    mine = load("mine_fix_commits")
    mine.main([str(repo), "--select", "TDL004"])
    assert capsys.readouterr().out.startswith("0 device commits")  # the message names no device
    mine.main([str(repo), "--select", "TDL004", "--pickaxe", "--grep", "."])
    out = capsys.readouterr().out
    assert out.startswith("1 device commits, 1 modified files")  # the last commit changes no bare conversion
    assert "fixes of its shape: 1 of 1 caught" in out


def test_mining_skips_commits_whose_message_is_not_about_devices(history, capsys):
    mine = load("mine_fix_commits")
    mine.main([str(history), "--grep", "document"])
    assert capsys.readouterr().out.startswith("0 device commits")


@pytest.mark.parametrize(
    ("old", "new", "shaped"),
    [
        ("pos = torch.arange(n)", "pos = torch.arange(n, device=x.device)", True),
        ("pos = torch.arange(n).to(device)", "pos = torch.arange(n, device=device)", False),
        ("off = torch.arange(b).type_as(tokens)", "off = torch.arange(b, device=tokens.device).type_as(tokens)", False),
        ('u = torch.rand(size=(n,), device="cpu")', "u = torch.rand(size=(n,), device=device, generator=g)", False),
        (">>> t = torch.tensor([rank])", ">>> t = torch.tensor([rank], device=accelerator.device)", False),
        ("pos = torch.arange(n).cuda()", "pos = torch.arange(n).to(device)", False),
        ("if x is None:", "pos = torch.arange(n, device=device)", False),
    ],
)
def test_a_tdl003_fix_is_a_factory_that_gains_a_device(old, new, shaped):
    assert load("mine_fix_commits").FIX_SHAPES["TDL003"](old, new) is shaped


PARENT = """import torch

DEVICE = torch.device("cuda")


class Net(torch.nn.Module):
    def forward(self, x):
        n = x.size(1)
        pos = torch.arange(n)
        return x + pos


def test_forward():
    x = torch.randn(2, 3)
    return Net()(x)
"""


@pytest.mark.parametrize(
    ("line", "new", "port"),
    [
        (9, "        pos = torch.arange(n, device=x.device)", False),  # the input was there: a mismatch fixed
        (9, "        pos = torch.arange(n, device=DEVICE)", False),  # a module-level device
        (14, "    x = torch.randn(2, 3, device=device)", True),  # the commit added the device parameter
        (9, "        pos = torch.arange(n, device=self.device)", True),  # an attribute the file never set
        (9, '        pos = torch.arange(n, device="cpu")', True),  # pinned to a literal device
        (9, "        pos = torch.arange(n).to(x.device)", False),
        (14, "    x = torch.randn(2, 3, device=torch.cuda.current_device())", True),  # a call the file never made
        (9, "        pos = torch.arange(n, device=x.get_device())", False),  # the input's device, read by a call
    ],
)
def test_a_port_gives_a_factory_a_device_the_parent_did_not_have(line, new, port):
    lines = PARENT.splitlines()
    assert load("mine_fix_commits").is_port(lines[line - 1], new, lines, line) is port


TEST_PARENT = """import torch
from tests.common import device


class TestRotation:
    def test_identity(self, batch_size):
        matrix = torch.eye(3)
        assert rotate(matrix).shape == (3, 3)

    def test_on_device(self, dtype):
        image = torch.rand(3, 4, 4).to(device)
        expected = torch.zeros(3, 4, 4)
        assert (rotate(image) == expected).all()

    def test_gradcheck(self, device):
        image = torch.rand(3, 4, 4)
        assert gradcheck(rotate, (image,))
"""


@pytest.mark.parametrize(
    ("line", "new", "port"),
    [
        # a test that names no device has all its tensors on the CPU: the fix ports it
        (7, "        matrix = torch.eye(3, device=device)", True),
        # the parent test had moved its image to the device: the expected tensor missed it
        (12, "        expected = torch.zeros(3, 4, 4, device=device)", False),
        # a device fixture the parent test took and never read
        (16, "        image = torch.rand(3, 4, 4, device=device)", True),
    ],
)
def test_a_fix_in_a_test_that_named_no_device_is_a_port(line, new, port):
    lines = TEST_PARENT.splitlines()
    assert load("mine_fix_commits").is_port(lines[line - 1], new, lines, line) is port


@pytest.mark.parametrize(
    ("old", "allowed"),
    [
        ("p = v * (torch.tensor(1.) - s)", True),  # a 0-dim CPU tensor meets any device
        ("limit = torch.tensor(-0.5, dtype=x.dtype)", True),
        ("return input[..., torch.arange(w - 1, -1, -1)]", True),  # a CPU index into a device tensor
        ("mask = torch.tensor([1.0, 2.0])", False),
        ("lut = torch.cat([torch.zeros(1), lut[:-1]])", False),
        ("bits = torch.tensor(bits)", False),
    ],
)
def test_a_fix_of_a_mix_pytorch_allows_is_no_bug(old, allowed):
    assert load("mine_fix_commits").mixes_as_pytorch_allows(old) is allowed


def test_a_factory_placed_on_a_later_line_is_no_site():
    script = load("mine_fix_commits")
    lines = [
        "tokens = (", "    torch.zeros(n)", "    .to(device)", "    .long()", ")",
        "index = torch.arange(", "    n, device=d", ").unsqueeze(1)",
        "x = torch.cat([torch.zeros(n),", "    torch.ones(n, device=d)])",
        "y = torch.zeros(n)",
    ]
    assert script._already_placed(lines, 2)  # chained to a move
    assert script._already_placed(lines, 6)  # device= inside its own parentheses
    assert not script._already_placed(lines, 9)  # another call's device
    assert not script._already_placed(lines, 11)


def test_a_fix_whose_commit_rebound_the_tensor_it_reads_is_a_port():
    lines = PARENT.splitlines()
    # the same commit changed line 8, ``n = x.size(1)``, and line 7's signature: neither binds x
    new = "        pos = torch.arange(n, device=x.device)"
    assert not load("mine_fix_commits").is_port(lines[8], new, lines, 9, frozenset({7, 8, 9}))
    rebound = [*lines[:7], "        x = unwrap_to_cpu(x)", *lines[8:]]
    assert load("mine_fix_commits").is_port(rebound[8], new, rebound, 9, frozenset({8, 9}))


def test_measure_counts_findings_per_rule():
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "measure.py"), str(FIXTURES / "tdl004"), "--select", "TDL004"],
        capture_output=True, text=True, check=True,
    ).stdout
    stored = sum(
        (case / "findings.txt").read_text().count(" TDL004\n") for case in (FIXTURES / "tdl004").iterdir()
    )
    assert f"TDL004: {stored}\n" in out
    assert "crashes 0" in out


@pytest.mark.parametrize(
    ("old", "new", "shaped"),
    [
        ("scores = out.numpy()", "scores = out.cpu().numpy()", True),
        ("scores = out.detach().numpy()", "scores = out.detach().cpu().numpy()", True),
        ("scores = out.cpu().numpy()", "scores = out.detach().cpu().numpy()", False),
    ],
)
def test_a_tdl008_fix_copies_to_the_host_before_numpy(old, new, shaped):
    assert load("mine_fix_commits").FIX_SHAPES["TDL008"](old, new) is shaped


@pytest.mark.parametrize(
    ("old", "new", "shaped"),
    [
        ("    hook_result.cpu()", "    hook_result = hook_result.cpu()", True),
        ("    x[0].to(device)", "    x[0] = x[0].to(device, non_blocking=True)", True),
        ("    embeddings.float()", "    embeddings = embeddings.float()", True),
        # The last line of a statement over several lines (pyg's sampler.py): no bare conversion.
        ("        self.e_id.to(*args, **kwargs), self.size)", "    e_id = self.e_id.to(*args, **kwargs)", False),
        # difflib pairs unrelated lines of a replaced block: not a fix of the statement.
        ("    self._model.to(xm.xla_device())", "    self.device = xm.xla_device()", False),
        ("    model.cuda(ids[0])", "    root_gpu = 0", False),
        ("    x = x.to(device)", "    x = x.to(device, non_blocking=True)", False),
    ],
)
def test_a_tdl004_fix_assigns_the_same_conversion(old, new, shaped):
    assert load("mine_fix_commits").FIX_SHAPES["TDL004"](old, new) is shaped


def test_mining_with_the_project_index_sees_classes_of_other_files(tmp_path, capsys):
    """``t.cuda()`` on a class of another file whose ``to`` returns a copy (pytorch3d's
    Transform3d): only the index of the commit's tree tells that it is no in-place move."""
    repo = tmp_path / "repo"
    (repo / "geo").mkdir(parents=True)
    (repo / "geo" / "transforms.py").write_text(
        "class Transform3d:\n    def to(self, device):\n        other = self.clone()\n        return other\n"
    )
    source = "import torch\nfrom geo.transforms import Transform3d\n\n\ndef test_cuda():\n    t = Transform3d()\n    t.cuda()\n"
    fixed = source.replace("    t.cuda()", "    t = t.cuda()")
    three_commits(repo, "test_geo.py", (source, "Transforms"), (fixed, "Fix the test"), (fixed + "# end\n", "End"))
    mine = load("mine_fix_commits")
    mine.main([str(repo / ".git"), "--select", "TDL004", "--pickaxe", "--grep", "."])
    assert "fixes of its shape: 0 of 1 caught" in capsys.readouterr().out
    mine.main([str(repo / ".git"), "--select", "TDL004", "--pickaxe", "--grep", ".", "--project"])
    assert "fixes of its shape: 1 of 1 caught" in capsys.readouterr().out
