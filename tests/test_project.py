"""The project index: classes of other files, seen through a file's imports, in every front end."""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchdevice_lint import Linter, Settings, lint_source
from torchdevice_lint.analysis.project import FileFacts, ProjectIndex, ProjectView, index_for_run, project_root, scan
from torchdevice_lint.cli import main


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def view_of(root: Path, name: str) -> ProjectView:
    index = ProjectIndex.build(str(path) for path in sorted(root.rglob("*.py")))
    path = root / name
    return ProjectView(index, str(path), path.read_text())


# ------------------------------------------------------------------ scanning
def test_scan_reads_class_headers_methods_imports_and_returns():
    facts = scan(
        textwrap.dedent(
            """\
            import torch.nn as nn, os
            from .base import (
                Base,  # the root
                Mixin as M,
            )
            from ..utils import helpers
            import numpy

            class Net(
                Base,
                M, metaclass=Meta,
            ):
                def to(self, device):
                    return self

            class Plain:
                x = 1
                def cuda(self):
                    return self

            def build(cfg):
                if cfg:
                    return Net()
                return Plain(cfg)

            def compute(x):
                return x + 1
            """
        )
    )
    assert facts.classes == {"Net": (("Base", "M"), frozenset({"to"})), "Plain": ((), frozenset({"cuda"}))}
    assert facts.imports == {
        "nn": "torch.nn", "os": "os", "Base": ".base.Base", "M": ".base.Mixin", "helpers": "..utils.helpers",
        "numpy": "numpy",
    }
    assert facts.returns == {"build": ("Net", "Plain")}


# ---------------------------------------------------------------- resolution
@pytest.fixture
def project(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "pkg/__init__.py": "from .models import Net\n",
            "pkg/base.py": """\
                from torch import nn
                import lightning

                class Base(nn.Module):
                    pass

                class Lit(lightning.LightningModule):
                    pass

                class Foreign(some.Thing):
                    pass

                class Storage:
                    def cuda(self):
                        return self

                class Container(Storage):
                    def to(self, device):
                        return self
                """,
            "pkg/models.py": """\
                from .base import Base, Container, Storage as Store

                class Net(Base):
                    pass

                class Loop(Loop2):
                    pass

                class Loop2(Loop):
                    pass

                def build_model(cfg):
                    return Net()

                def build_store():
                    return Store()

                def either(flag):
                    if flag:
                        return Net()
                    return Container()
                """,
            "pkg/train.py": """\
                import pkg
                from pkg.models import Net, build_model, build_store, either
                from pkg.base import Lit, Foreign, Container
                from . import models
                from .models import Loop
                """,
        },
    )
    return tmp_path


def test_bases_are_followed_from_file_to_file(project):
    view = view_of(project, "pkg/train.py")
    net = view.class_named("Net")
    assert (net.name, net.is_module, net.converts_in_place) == ("Net", True, True)
    assert view.class_named("models.Net") == net
    assert view.class_named("pkg.Net") == net  # re-exported by the package's __init__
    assert view.class_named("Lit").is_module is True
    assert view.class_named("Foreign").is_module is None  # a base from outside the project
    assert view.class_named("Loop").is_module is None  # a cycle of bases ends, undecided


def test_own_to_and_cuda_are_inherited_within_the_project(project):
    view = view_of(project, "pkg/train.py")
    container = view.class_named("Container")
    assert (container.is_module, container.defines_to, container.defines_cuda) == (False, True, True)
    assert container.converts_in_place and not container.cuda_without_to
    store = view.instance_of("build_store")
    assert (store.name, store.cuda_without_to, store.converts_in_place) == ("Storage", True, False)


def test_helpers_return_kinds(project):
    view = view_of(project, "pkg/train.py")
    assert view.instance_of("build_model").name == "Net"
    assert view.instance_of("either") is None  # two classes: no single answer
    assert view.instance_of("Net").name == "Net"
    assert view.class_named("build_model") is None  # a function, not a class
    assert view.instance_of("os.path.join") is None


def test_a_file_being_linted_is_judged_by_its_text_not_its_copy_on_disk(tmp_path):
    write(tmp_path, {"net.py": "import torch\nclass Net(torch.nn.Module):\n    pass\n"})
    path = os.path.realpath(tmp_path / "net.py")
    index = ProjectIndex.build([path])
    on_disk = (tmp_path / "net.py").read_text()
    assert index.facts_of(path, on_disk) is index.files[path]  # the same text: scanned once
    edited = on_disk.replace("class Net", "class Other")
    assert set(index.facts_of(path, edited).classes) == {"Other"}


PACKAGE_IMPORTING_TORCH = {"models/__init__.py": "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    pass\n"}
#: pytorch-semantic-segmentation: ``models/__init__.py`` only star-imports its modules.
PACKAGE_PASSING_TORCH_ON = {
    "models/__init__.py": "from .fcn8s import *\nfrom .psp import *\n",
    "models/psp.py": "from .layers import *\n",
    "models/layers.py": "from .psp import *\n",  # a cycle ends the search
    "models/fcn8s.py": "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    pass\n",
}


@pytest.mark.parametrize("package", [PACKAGE_IMPORTING_TORCH, PACKAGE_PASSING_TORCH_ON])
@pytest.mark.parametrize("star", ["from models import *", "from .models import *"])
def test_torch_from_a_star_import_of_the_project_is_torch(tmp_path, star, package):
    """A script that gets torch only through ``from models import *``: its ``torch.load`` is
    reported in check mode, so one --fix run finishes (a second run added map_location before)."""
    write(tmp_path, {
        **package,
        "train.py": f"import os\n\n{star}\n\nnet = Net().cuda()\nnet.load_state_dict(torch.load('x.pth'))\n",
    })
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    path = str(tmp_path / "train.py")
    source = (tmp_path / "train.py").read_text()
    linter = Linter(Settings())
    assert [finding.code for finding in linter.lint(source, index, path)] == ["TDL001", "TDL005"]
    fixed = linter.fix(source, project=index, path=path)
    assert "map_location='cpu'" in fixed.source and "import torch\n" in fixed.source
    assert linter.fix(fixed.source, project=index, path=path).applied == 0


def test_a_subclass_places_with_self_device_where_its_imported_base_does(tmp_path):
    """BasicSR (EDVR): ``VideoBaseModel(SRModel)`` writes ``device='cuda'`` and never names
    ``self.device``; ``SRModel``, in another module, moves every batch there."""
    write(tmp_path, {
        "models/__init__.py": "",
        "models/base.py": (
            "import torch\n\n\nclass BaseModel:\n    def __init__(self, opt):\n"
            "        self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')\n"
        ),
        "models/sr.py": (
            "from .base import BaseModel\n\n\nclass SRModel(BaseModel):\n"
            "    def feed_data(self, data):\n        self.lq = data['lq'].to(self.device)\n"
        ),
        "models/video.py": (
            "import torch\nfrom .sr import SRModel\n\n\nclass VideoBaseModel(SRModel):\n"
            "    def validation(self, n):\n        self.results = torch.zeros(n, dtype=torch.float32, device='cuda')\n"
        ),
        "models/plain.py": (
            "import torch\nfrom .base import BaseModel\n\n\nclass Plain(BaseModel):\n"
            "    def grow(self):\n        self.w = torch.ones(3).cuda()\n"
        ),
    })
    fixed = fixed_in_project(tmp_path, "models/video.py")
    assert "torch.zeros(n, dtype=torch.float32, device=self.device)\n" in fixed
    assert "is_available" not in fixed
    # a base that sets self.device but places nothing with it: the module line, as before
    fixed = fixed_in_project(tmp_path, "models/plain.py")
    assert "torch.cuda.is_available()" in fixed and ".to(device)" in fixed


def fixed_in_project(root: Path, name: str) -> str:
    """The file ``name`` of the project at ``root`` as one --fix run leaves it (a second changes nothing)."""
    index = ProjectIndex.build(str(path) for path in sorted(root.rglob("*.py")))
    linter, path = Linter(Settings()), str(root / name)
    fixed = linter.fix((root / name).read_text(), project=index, path=path).source
    assert linter.fix(fixed, project=index, path=path).applied == 0
    return fixed


def test_a_subclass_reads_the_switch_its_imported_base_guards_moves_with(tmp_path):
    """Attention-Gated-Networks: ``AggregatedClassifier(FeedForwardClassifier)`` never names
    ``use_cuda``; its base, in another module that itself subclasses a third, guards with it."""
    write(tmp_path, {
        "models/__init__.py": "",
        "models/base.py": "class BaseModel:\n    def __init__(self):\n        self.use_cuda = True\n",
        "models/feedforward.py": (
            "from .base import BaseModel\n\n\nclass FeedForward(BaseModel):\n"
            "    def initialize(self, net):\n        self.net = net\n"
            "        if self.use_cuda:\n            self.net = self.net.cuda()\n"
        ),
        "models/aggregated.py": (
            "import torch\nfrom .feedforward import FeedForward\n\n\nclass Aggregated(FeedForward):\n"
            "    def initialize(self, net, w):\n        FeedForward.initialize(self, net)\n"
            "        self.w = torch.tensor(w).cuda()\n"
        ),
        "models/other.py": (
            "import torch\nfrom .base import BaseModel\n\n\nclass Other(BaseModel):\n"
            "    def grow(self):\n        self.w = torch.ones(3).cuda()\n"
        ),
    })
    fixed = fixed_in_project(tmp_path, "models/aggregated.py")
    assert 'self.w = torch.tensor(w).to(torch.device("cuda" if self.use_cuda else "cpu"))\n' in fixed
    assert "is_available" not in fixed
    # a base that sets the switch but guards nothing with it: the module line, as before
    fixed = fixed_in_project(tmp_path, "models/other.py")
    assert "torch.cuda.is_available()" in fixed and ".to(device)" in fixed


def test_a_name_bound_in_branches_to_a_class_with_its_own_cuda_keeps_cuda(tmp_path):
    """CloserLookFewShot train.py: ``model`` is a ProtoNet or a MatchingNet, whose own ``cuda()``
    also moves a plain tensor attribute; ``model.to(device)`` would skip it (was rewritten)."""
    write(tmp_path, {
        "methods/__init__.py": "",
        "methods/protonet.py": "import torch.nn as nn\n\n\nclass ProtoNet(nn.Module):\n    pass\n",
        "methods/matchingnet.py": (
            "import torch\nimport torch.nn as nn\n\n\nclass MatchingNet(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.c_0 = torch.zeros(1, 2)\n\n"
            "    def cuda(self):\n        super().cuda()\n        self.c_0 = self.c_0.cuda()\n        return self\n"
        ),
        "train.py": (
            "import sys\nimport torch\nfrom methods.protonet import ProtoNet\nfrom methods.matchingnet import MatchingNet\n\n"
            "if sys.argv[1] == 'protonet':\n    model = ProtoNet()\nelif sys.argv[1] == 'matchingnet':\n"
            "    model = MatchingNet()\nelse:\n    raise ValueError(sys.argv[1])\nmodel = model.cuda()\n"
        ),
    })
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    linter = Linter(Settings())
    path = str(tmp_path / "train.py")
    source = (tmp_path / "train.py").read_text()
    assert [finding.code for finding in linter.lint(source, index, path)] == ["TDL001"]
    assert linter.fix(source, project=index, path=path).source == source
    # the same branches over classes that all convert with .to(): fixed as before
    plain = source.replace("MatchingNet", "ProtoNet")
    assert "model = model.to(device)" in linter.fix(plain, project=index, path=path).source


def test_a_file_alone_still_sees_its_own_classes():
    source = "import torch\n\nclass Box:\n    def cuda(self):\n        return self\n"
    view = ProjectView(ProjectIndex({}), None, source)
    assert view.class_named("Box").cuda_without_to
    assert view.class_named("Other") is None


def test_the_fingerprint_changes_with_the_facts_only(project):
    first = ProjectIndex.build(str(path) for path in project.rglob("*.py")).fingerprint
    base = project / "pkg/base.py"
    base.write_text(base.read_text() + "\n\ndef helper():\n    x = 1\n")
    assert ProjectIndex.build(str(path) for path in project.rglob("*.py")).fingerprint == first
    base.write_text(base.read_text().replace("class Base(nn.Module)", "class Base"))
    assert ProjectIndex.build(str(path) for path in project.rglob("*.py")).fingerprint != first


def test_a_lone_file_brings_its_whole_project(project):
    assert project_root(str(project / "pkg/train.py")) == str(project.resolve())
    index = index_for_run(
        [str(project / "pkg/train.py")], [str(project / "pkg/train.py")],
        lambda root: [str(path) for path in Path(root).rglob("*.py")],
    )
    assert str((project / "pkg/base.py").resolve()) in index.files


def test_a_lone_file_outside_any_project_brings_its_folder_and_packages_only(tmp_path):
    # A script in a home or temporary folder: the other folders below it are not its project (a
    # script in /tmp once took a minute to check, indexing every repository unpacked there).
    write(tmp_path, {"train.py": "", "utils.py": "", "models/__init__.py": "", "models/net.py": "", "other/repo/big.py": ""})
    walked: list[str] = []
    index = index_for_run([str(tmp_path / "train.py")], [str(tmp_path / "train.py")], walked.append)
    assert walked == []
    assert sorted(os.path.relpath(path, tmp_path.resolve()) for path in index.files) == [
        "models/__init__.py", "models/net.py", "train.py", "utils.py",
    ]


# ---------------------------------------------------------------- front ends
#: A forward of a module whose nn.Module base lives in another file: only the project index
#: tells that its inputs live on the device, so that the mask made without a device meets them.
CROSS_FILE = {
    "setup.py": "",
    "pkg/__init__.py": "",
    "pkg/base.py": "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
    "pkg/model.py": """\
        import torch
        from .base import Base


        class Net(Base):
            def forward(self, x):
                mask = torch.ones(x.shape[0], x.shape[1])
                return x * mask


        net = Net().to("cuda" if torch.cuda.is_available() else "cpu")
        """,
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_sees_across_files(tmp_path, capsys, jobs, monkeypatch):
    write(tmp_path, CROSS_FILE)
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["-j", jobs, "--output-format", "concise", str(tmp_path)]) == 1
    assert "model.py:7:16: TDL003" in capsys.readouterr().out


def test_cli_given_one_file_indexes_its_project(tmp_path, capsys, monkeypatch):
    write(tmp_path, CROSS_FILE)
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--output-format", "concise", str(tmp_path / "pkg/model.py")]) == 1
    assert "model.py:7:16: TDL003" in capsys.readouterr().out


def test_stdin_is_judged_alone(tmp_path, capsys, monkeypatch):
    write(tmp_path, CROSS_FILE)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((tmp_path / "pkg/model.py").read_bytes())))
    assert main(["--no-cache", "-"]) == 0
    assert lint_source((tmp_path / "pkg/model.py").read_text(), Settings()) == []


def test_cached_results_follow_the_other_files(tmp_path, capsys, monkeypatch):
    write(tmp_path, CROSS_FILE)
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--output-format", "concise", str(tmp_path / "pkg")]) == 1
    capsys.readouterr()
    (tmp_path / "pkg/base.py").write_text("class Base:\n    pass\n")  # no longer a module
    assert main(["--output-format", "concise", str(tmp_path / "pkg")]) == 0
    assert "TDL003" not in capsys.readouterr().out


def test_flake8_plugin_sees_across_files(tmp_path):
    write(tmp_path, CROSS_FILE)
    run = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TDL", "pkg/model.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert "pkg/model.py:7:16: TDL003" in run.stdout, run.stdout + run.stderr
    alone = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TDL", "-"],
        cwd=tmp_path, capture_output=True, text=True, input=(tmp_path / "pkg/model.py").read_text(),
    )
    assert alone.stdout == ""


def test_pre_commit_hook_names_changed_files_only(tmp_path, capsys, monkeypatch):
    """pre-commit passes only the changed files; their project's classes still count."""
    write(tmp_path, CROSS_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--output-format", "concise", os.path.join("pkg", "model.py")]) == 1
    assert "pkg/model.py:7:16: TDL003" in capsys.readouterr().out


def test_the_index_skips_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")  # opening it would wait for a writer
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "ok.py").write_text("class A:\n    pass\n")
    index = ProjectIndex.build(str(tmp_path / name) for name in ("fifo.py", "loop.py", "ok.py"))
    assert list(index.files) == [str((tmp_path / "ok.py").resolve())]


def test_a_class_whose_to_returns_a_new_object_converts_into_a_copy(tmp_path):
    """pytorch3d's Transform3d: ``to`` returns ``other = self.clone()`` when the device differs,
    so ``t.cuda()`` on its own line (fixed in pytorch3d d60c52df) does nothing."""
    write(
        tmp_path,
        {
            "geo/transforms.py": """\
                class Transform3d:
                    def to(self, device, copy=False):
                        if not copy and self.device == device:
                            return self
                        other = self.clone()
                        other.device = device
                        return other  # a new object

                    def cuda(self):
                        return self.to("cuda")

                    def compose(self, *others):
                        out = Transform3d(device=self.device)
                        out.others = others
                        return out

                    def inverse(self):
                        if self.cached:
                            return self  # not always a new object
                        return self.clone()


                class Translate(Transform3d):
                    pass


                class Points:
                    def to(self, device):
                        '''Move the points.

                        return other  (a docstring, no code)
                        '''

                        def offloaded(module):  # diffusers' DiffusionPipeline.to
                            if module is None:
                                return False
                            return offloaded

                        self.xyz = self.xyz.to(device)
                        return self


                class Grid:
                    def to(self, device):
                        return type(self)(self.cells.to(device))


                class Operator(Transform3d):
                    def to(self, dest):
                        out = super().to(dest)  # torchrl's SafeModule: the object itself
                        return out


                class Wrapped(ExternalModule):
                    def to(self, dest):
                        return Wrapped(self.inner.to(dest))  # perhaps an nn.Module: undecided
                """,
            "tests/test_transforms.py": """\
                import torch
                from geo.transforms import Grid, Operator, Points, Transform3d, Translate, Wrapped


                def test_devices():
                    t = Transform3d()
                    t.cuda()
                    shift = Translate()
                    shift.to("cuda:1")
                    points = Points()
                    points.to("cuda")
                    grid = Grid()
                    grid.to("cuda")
                    operator = Operator()
                    operator.to("cuda")
                    composed = Transform3d().compose(shift)
                    composed.cpu()
                    shift.compose(t).cuda()
                    inverted = t.inverse()
                    inverted.cuda()
                    wrapped = Wrapped()
                    wrapped.to("cuda")
                """,
        },
    )
    view = view_of(tmp_path, "tests/test_transforms.py")
    names = ("Transform3d", "Translate", "Points", "Grid", "Operator", "Wrapped")
    assert [view.class_named(name).copies_on_to for name in names] == [True, True, False, True, False, True]
    assert [view.class_named(name).is_module for name in names] == [False, False, False, False, False, None]
    assert not view.class_named("Translate").converts_in_place
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    path = tmp_path / "tests/test_transforms.py"
    found = lint_source(path.read_text(), Settings(select=("TDL004",)), project=index, filename=str(path))
    assert [(f.line, f.message.split(" returns ")[1][:12]) for f in found] == [
        (7, "a new object"), (9, "a new object"), (13, "a new object"),  # not Operator, nor Wrapped
        (17, "a new object"), (18, "a new object"),  # what compose() makes, also of the subclass
    ]
    assert view.class_named("Translate").makers == frozenset({"compose"})  # inverse() may return self


def test_a_module_importing_a_cuda_only_module_of_the_project_is_cuda_only(tmp_path):
    """unsloth's MoE tests, benchmark and autotuner import the tuning module of its Triton
    kernels (which imports Triton at module level): their device literals are CUDA-only by
    construction, no finding. One step only, and only imports at module level outside blocks."""
    write(
        tmp_path,
        {
            "grouped_gemm/kernels/tuning.py": """\
                import torch
                import triton


                class KernelConfig:
                    pass
                """,
            "grouped_gemm/__init__.py": "from .kernels.tuning import KernelConfig\n",
            "tests/common.py": """\
                import torch
                from grouped_gemm.kernels.tuning import KernelConfig


                def make_inputs(n):
                    return torch.randn(n, device="cuda")
                """,
            "tests/uses_the_package.py": """\
                import torch
                from grouped_gemm import KernelConfig


                def make_inputs(n):
                    return torch.randn(n, device="cuda")
                """,
            "tests/lazily.py": """\
                import torch


                def make_inputs(n):
                    from grouped_gemm.kernels.tuning import KernelConfig

                    return torch.randn(n, device="cuda")
                """,
            "tests/optional.py": """\
                import torch

                try:
                    import triton
                except ImportError:
                    triton = None


                def make_inputs(n):
                    return torch.randn(n, device="cuda")
                """,
        },
    )
    assert view_of(tmp_path, "tests/common.py").needs_cuda
    assert view_of(tmp_path, "grouped_gemm/__init__.py").needs_cuda
    assert not view_of(tmp_path, "tests/uses_the_package.py").needs_cuda  # two steps from Triton
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    flagged = {}
    for name in ("tests/common.py", "tests/uses_the_package.py", "tests/lazily.py", "tests/optional.py"):
        path = tmp_path / name
        found = lint_source(path.read_text(), Settings(select=("TDL002",)), project=index, filename=str(path))
        flagged[name] = len(found)
    assert flagged == {"tests/common.py": 0, "tests/uses_the_package.py": 1, "tests/lazily.py": 1, "tests/optional.py": 1}


def test_a_module_building_a_cuda_extension_on_import_makes_every_importer_cuda_only(tmp_path):
    """rosinality's stylegan2 ``op/upfirdn2d.py`` (copied into alias-free-gan-pytorch, held-out read
    12L) compiles its ``.cu`` kernel with ``cpp_extension.load`` when imported: without nvcc the import
    fails, so ``generate.py`` -> ``model`` -> ``op`` -> ``op/upfirdn2d.py`` is CUDA-only at any depth
    (its ``device = "cuda"`` rewritten for nothing). A ``load`` inside a function (StyleGAN3's
    plugins, built on first use with a fallback) and one of C++ sources only are not."""
    write(
        tmp_path,
        {
            "op/upfirdn2d.py": """\
                import os

                from torch.utils.cpp_extension import load

                module_path = os.path.dirname(__file__)
                upfirdn2d_op = load(
                    "upfirdn2d",
                    sources=[
                        os.path.join(module_path, "upfirdn2d.cpp"),
                        os.path.join(module_path, "upfirdn2d_kernel.cu"),
                    ],
                )


                def upfirdn2d(x):
                    return upfirdn2d_op.run(x)
                """,
            "op/__init__.py": "from .upfirdn2d import upfirdn2d\n",
            "model.py": """\
                from torch import nn

                from op import upfirdn2d


                class Generator(nn.Module):
                    def forward(self, x):
                        return upfirdn2d(x)
                """,
            "generate.py": """\
                import torch

                from model import Generator

                if __name__ == "__main__":
                    device = "cuda"
                    g = Generator().to(device)
                """,
            "plugins/lazy.py": """\
                from torch.utils.cpp_extension import load


                def plugin():
                    return load("bias_act", sources=["bias_act.cpp", "bias_act.cu"])
                """,
            "plugins/cpu_only.py": """\
                from torch.utils.cpp_extension import load

                ext = load("fast", sources=["fast.cpp"])
                """,
            "uses_plugins.py": """\
                import torch

                from plugins import lazy, cpu_only

                device = "cuda"
                """,
        },
    )
    facts = scan((tmp_path / "op/upfirdn2d.py").read_text())
    assert facts.as_json()[_position_of("compiles_cuda_on_import")] is True  # in the cache key
    assert view_of(tmp_path, "generate.py").needs_cuda
    assert view_of(tmp_path, "model.py").needs_cuda
    assert not view_of(tmp_path, "uses_plugins.py").needs_cuda
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    flagged = {}
    for name in ("generate.py", "uses_plugins.py"):
        path = tmp_path / name
        found = lint_source(path.read_text(), Settings(select=("TDL002",)), project=index, filename=str(path))
        flagged[name] = len(found)
    assert flagged == {"generate.py": 0, "uses_plugins.py": 1}


def test_a_star_import_of_a_module_building_cuda_sources_loads_it_too(tmp_path):
    """BiSeNet's old/model.py imports ``InPlaceABNSync`` from ``modules/bn.py``, which does
    ``from .functions import *``; ``functions.py`` JIT-builds ``inplace_abn_cuda.cu`` on import.
    The star import binds no name the index follows, but it loads the module all the same."""
    write(
        tmp_path,
        {
            "modules/__init__.py": "",
            "modules/functions.py": """\
                from os import path

                from torch.utils.cpp_extension import load

                _backend = load(name="inplace_abn", sources=[path.join("src", f) for f in ["abn.cpp", "abn_cuda.cu"]])
                """,
            "modules/bn.py": """\
                from .functions import *


                class InPlaceABNSync:
                    pass
                """,
            "model.py": """\
                import torch

                from modules.bn import InPlaceABNSync as BatchNorm2d

                if __name__ == "__main__":
                    net = BatchNorm2d()
                    x = torch.randn(2, 3).cuda()
                """,
        },
    )
    assert view_of(tmp_path, "model.py").needs_cuda
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))
    path = tmp_path / "model.py"
    assert lint_source(path.read_text(), Settings(select=("TDL001",)), project=index, filename=str(path)) == []


def test_a_project_function_returning_a_device_serves_a_module_running_method(tmp_path, monkeypatch):
    """tianshou's ``torch_device(module)`` (tianshou/utils/torch_utils.py), imported and used by
    common.py: a module's forward moves its input with it, not with a new module-level line. The
    imported function is no device itself (never ``.to(torch_device)``), and ``__init__`` (the
    parameters not moved yet) does not use it."""
    write(
        tmp_path,
        {
            "setup.py": "",
            "pkg/__init__.py": "",
            "pkg/torch_utils.py": """\
                import torch


                def torch_device(module: torch.nn.Module) -> torch.device:
                    \"\"\"The device of the module's parameters.\"\"\"
                    try:
                        return next(module.parameters()).device
                    except StopIteration:
                        return torch.device("cpu")


                def two(module, other):
                    return other.device
                """,
            "pkg/net.py": """\
                import torch
                from torch import nn

                from pkg.torch_utils import torch_device


                class Wrapper(nn.Module):
                    def __init__(self, net):
                        super().__init__()
                        self.net = nn.DataParallel(net)
                        self.scale = torch.ones(1).cuda()

                    def forward(self, obs):
                        if not isinstance(obs, torch.Tensor):
                            obs = torch.as_tensor(obs, dtype=torch.float32)
                        obs = obs.cuda()
                        return self.net(obs)
                """,
        },
    )
    view = view_of(tmp_path, "pkg/net.py")
    assert view.returns_a_device("torch_device")
    assert not view_of(tmp_path, "pkg/torch_utils.py").returns_a_device("two")  # two parameters
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    main(["--fix", "--no-cache", str(tmp_path / "pkg/net.py")])
    fixed = (tmp_path / "pkg/net.py").read_text()
    assert "        obs = obs.to(torch_device(self))\n" in fixed
    assert "self.scale = torch.ones(1).to(device)\n" in fixed
    assert ".to(torch_device)" not in fixed


def test_an_extension_switched_to_cuda_by_a_setup_that_refuses_the_cpu_is_cuda_only(tmp_path):
    """yolact's DCNv2: setup.py binds ``extension = CppExtension``, switches to ``CUDAExtension``
    when CUDA is there and raises otherwise, then builds ``extension("_ext", ...)``; dcn_v2.py
    imports ``_ext`` and test.py imports dcn_v2 (one step): both CUDA-only. Without the raise the
    C++ build may run on the CPU, and nothing is CUDA-only."""
    setup = """\
        import torch
        from torch.utils.cpp_extension import CppExtension, CUDAExtension

        def get_extensions():
            extension = CppExtension
            if torch.cuda.is_available():
                extension = CUDAExtension
            else:
                raise NotImplementedError('Cuda is not available')
            return [extension("_ext", ["src/vision.cpp"])]
        """
    files = {
        "DCNv2/dcn_v2.py": "import torch\nimport _ext as _backend\n",
        "DCNv2/test.py": "import torch\nfrom dcn_v2 import DCN\n\nx = torch.randn(2, 3).cuda()\n",
    }
    write(tmp_path, {"DCNv2/setup.py": setup, **files})
    assert view_of(tmp_path, "DCNv2/dcn_v2.py").needs_cuda
    assert view_of(tmp_path, "DCNv2/test.py").needs_cuda
    write(tmp_path, {"DCNv2/setup.py": setup.replace("raise NotImplementedError('Cuda is not available')", "pass")})
    assert not view_of(tmp_path, "DCNv2/dcn_v2.py").needs_cuda
    assert not view_of(tmp_path, "DCNv2/test.py").needs_cuda


def test_a_module_importing_a_compiled_cuda_extension_of_the_project_is_cuda_only(tmp_path):
    """Occupancy Networks' marching-cubes ops: setup.py builds ``im2mesh.dmc.ops._cuda_ext`` with
    ``CUDAExtension`` from ``.cu`` sources; the autograd wrappers import it (relatively) and the
    encoder imports a wrapper. Their CUDA code is CUDA-only by construction: left alone, and a
    legacy CUDA constructor there keeps ``device="cuda"``. A C++-only extension says nothing."""
    write(
        tmp_path,
        {
            "setup.py": """\
                from setuptools import setup
                from torch.utils.cpp_extension import CppExtension, CUDAExtension

                cuda_module = CUDAExtension(
                    'im2mesh.dmc.ops._cuda_ext',
                    sources=['im2mesh/dmc/ops/src/extension.cpp', 'im2mesh/dmc/ops/src/kernel.cu'],
                )
                cpp_module = CppExtension(name='im2mesh.utils._cpp_ext', sources=['im2mesh/utils/ext.cpp'])
                setup(name='im2mesh', ext_modules=[cuda_module, cpp_module])
                """,
            "im2mesh/dmc/ops/grid_pooling.py": """\
                import torch
                from ._cuda_ext import grid_pooling_forward


                def pool(feats, n):
                    out = torch.zeros((n, 8), device='cuda')
                    grid_pooling_forward(feats, out)
                    return out
                """,
            "im2mesh/dmc/models/encoder.py": """\
                import torch
                from im2mesh.dmc.ops.grid_pooling import pool


                def grid_shape(w, h, d):
                    return torch.cuda.LongTensor([w, h, d])
                """,
            "im2mesh/utils/voxels.py": """\
                import torch
                from ._cpp_ext import voxelize


                def grid(n):
                    return torch.zeros(n, device='cuda')
                """,
        },
    )
    assert view_of(tmp_path, "im2mesh/dmc/ops/grid_pooling.py").needs_cuda
    assert view_of(tmp_path, "im2mesh/dmc/models/encoder.py").needs_cuda  # one step
    assert not view_of(tmp_path, "im2mesh/utils/voxels.py").needs_cuda
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))

    def fixed(name):
        path = tmp_path / name
        return Linter().fix(path.read_text(), project=index, path=str(path)).source

    assert fixed("im2mesh/dmc/ops/grid_pooling.py") == (tmp_path / "im2mesh/dmc/ops/grid_pooling.py").read_text()
    assert 'return torch.tensor([w, h, d], dtype=torch.int64, device="cuda")' in fixed("im2mesh/dmc/models/encoder.py")
    assert "torch.zeros(n, device=device)" in fixed("im2mesh/utils/voxels.py")


def _findings(root: Path) -> list[str]:
    index = ProjectIndex.build(str(path) for path in sorted(root.rglob("*.py")))
    return [
        f"{path.relative_to(root)}:{finding.line}"
        for path in sorted(root.rglob("*.py"))
        for finding in lint_source(path.read_text(), Settings(select=("TDL003",)), filename=str(path), project=index)
    ]


def test_a_function_asserting_a_cpu_tensor_type_runs_on_the_cpu(tmp_path):
    """pytorch_geometric's IBMB loader: ``assert isinstance(edge_index, (torch.LongTensor,
    SparseTensor))`` (``torch.LongTensor`` is only the CPU's), METIS node weights made on the CPU
    and indexed by ``indices``; with ``SparseTensor`` a class of the project it was reported."""
    body = """\
        def {name}(edge_index, num_parts: int, indices: Tensor, num_nodes: int):
            assert isinstance(edge_index, ({kind}, SparseTensor))
            if isinstance(edge_index, {kind}):
                edge_index = SparseTensor.from_edge_index(edge_index, sparse_sizes=(num_nodes, num_nodes))
            node_weight = torch.ones(num_nodes)
            node_weight[indices] = 2.0
            return edge_index.partition(num_parts, node_weight=node_weight)
        """
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/typing.py": """\
            class SparseTensor:
                @classmethod
                def from_edge_index(cls, edge_index, sparse_sizes=None):
                    raise ImportError("'SparseTensor' requires 'torch-sparse'")

                def partition(self, num_parts, node_weight=None):
                    raise ImportError("'SparseTensor' requires 'torch-sparse'")
            """,
        "pkg/loader.py": "import torch\nfrom torch import Tensor\n\nfrom pkg.typing import SparseTensor\n\n\n"
        + textwrap.dedent(body).format(name="get_partitions", kind="torch.LongTensor")
        + "\n\n"
        + textwrap.dedent(body).format(name="get_cuda_partitions", kind="torch.cuda.LongTensor"),
    })
    assert _findings(tmp_path) == ["pkg/loader.py:20"]  # the CUDA type's only


TEST_HELPERS = """\
    import torch


    def _fake_probs(idx, count):
        result = torch.zeros(count)
        result[idx] = 2.0
        return result.softmax(-1)


    def _batch_fake_probs(indexes, count):
        probs = torch.zeros(indexes.shape + (count,))
        for row in range(len(indexes)):
            for column in range(indexes.size(1)):
                probs[row, column, :] = _fake_probs(indexes[row, column], count)
        return probs


    def {name}():
        from pkg.losses import SequenceLoss

        targets = torch.tensor([[1, 2, 3], [3, 2, 1]])
        probs = _batch_fake_probs(targets, 4)
        assert SequenceLoss().forward(targets, probs.log()) > 0
    """


def test_helpers_only_tests_use_are_test_code(tmp_path):
    """speechbrain tests/unittests/test_g2p.py: ``_fake_probs`` is called by ``_batch_fake_probs``,
    called by ``test_subsequence_loss`` only (the module imports no test framework). The same
    helpers used by library code are still reported."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/losses.py": """\
            from torch import nn


            class SequenceLoss(nn.Module):
                def forward(self, targets, log_probs):
                    return -log_probs.gather(-1, targets.unsqueeze(-1)).mean()
            """,
        "tests/test_scores.py": TEST_HELPERS.format(name="test_sequence_loss"),
        "pkg/scores.py": TEST_HELPERS.format(name="sequence_loss"),
    })
    assert _findings(tmp_path) == ["pkg/scores.py:5"]


def test_a_slice_bound_used_as_an_index_is_0_dim(tmp_path):
    """NeMo k2 utils (get_uniform_rnnt_prune_ranges): ``encoded_len = encoded_lengths[i]`` bounds
    a slice (``ranges_begin[i, :encoded_len]``), so it is an integer or a 0-dim tensor, and
    ``ranges_begin[i, encoded_len - 1]`` selects with its ``item()`` on any device. A 1-dim device
    index into the CPU tensor is still reported. (Reported only with k2 imported through a
    module of the project, as NeMo's guard does.)"""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/k2_guard.py": "import k2  # noqa: E402\n",
        "pkg/ranges.py": """\
            import torch

            from pkg.k2_guard import k2


            def prune_ranges(encoded_lengths: torch.Tensor, target_lengths: torch.Tensor, window: int):
                ranges_begin = torch.zeros((len(encoded_lengths), encoded_lengths.max()), dtype=torch.long)
                for i in (target_lengths >= window).nonzero(as_tuple=True)[0]:
                    encoded_len = encoded_lengths[i]
                    ranges_begin[i, :encoded_len] = torch.arange(3).repeat(4)[:encoded_len]
                    ranges_begin[i, encoded_len:] = ranges_begin[i, encoded_len - 1]
                return ranges_begin


            def last_steps(encoded_lengths: torch.Tensor, target_lengths: torch.Tensor, window: int):
                ranges_begin = torch.zeros((len(encoded_lengths), encoded_lengths.max()), dtype=torch.long)
                for i in (target_lengths >= window).nonzero(as_tuple=True)[0]:
                    ranges_begin[i, encoded_lengths - 1] = 1
                return ranges_begin
            """,
    })
    assert _findings(tmp_path) == ["pkg/ranges.py:16"]


def test_scan_reads_the_forward_parameters_only_converted_to_python_values():
    text = textwrap.dedent('''\
        class Wrapper(nn.Module):
            def forward(self, feats, labels: "Tensor", gts, gt_indices, steps=None, *rest, flag=False):
                """gt_indices: the rows kept."""
                gts = [gts[_] for _ in gt_indices.tolist()]  # not gt_indices + 1
                n = len(labels) + int(steps)
                return self.model(feats, labels.detach().cpu().numpy()), gts, n

            def other(self, x):
                return x.tolist()


        class Passed(nn.Module):
            def forward(self, x, index):
                def inner():
                    return x[index]
                return inner(), index.item()

            def forward_hook(self, x, index):
                return index.item()


        class Branches(nn.Module):
            if flag:
                def forward(self, x, index):
                    return index.item()
            else:
                def forward(self, x, index):
                    return x[index]
        ''')
    assert scan(text).host_only_inputs == {"Wrapper": (1, 3, 4)}
    assert scan(text).as_json() != scan(text.replace("gt_indices.tolist()", "gt_indices")).as_json()


LOSS_WRAPPER = """\
    import torch


    class LossWrapper(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, fc_feats, labels, gts, gt_indices):
            gts = [gts[_] for _ in gt_indices.tolist()]
            return self.model(fc_feats, labels), gts{extra}
    """
LIT_MODEL = """\
    import torch
    import pytorch_lightning as pl

    from pkg.loss_wrapper import LossWrapper


    class LitModel(pl.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.lw_model = LossWrapper(model)

        def training_step(self, data, batch_idx):
            fc_feats, labels = data['fc_feats'], data['labels']
            out = self.lw_model(fc_feats, labels, data['gts'], torch.arange(0, len(data['gts'])))
            return out[0].mean()
    """


@pytest.mark.parametrize(("extra", "expected"), [("", []), (", fc_feats[gt_indices]", ["train_pl.py:14"])])
def test_an_argument_a_project_module_only_converts_to_python_values_meets_nothing(tmp_path, extra, expected):
    """self-critical.pytorch's tools/train_pl.py: ``torch.arange`` given to ``LossWrapper.forward``
    (another file), which only reads ``gt_indices.tolist()``: the tensor meets no device tensor.
    Still reported where forward also indexes a tensor with it."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/loss_wrapper.py": LOSS_WRAPPER.format(extra=extra),
        "train_pl.py": LIT_MODEL,
    })
    assert _findings(tmp_path) == expected


REFERENCE_LOSS = """\
    import torch


    class ReferenceLoss(torch.nn.Module):
        def __init__(self, cuda=False):
            super().__init__()
            self.cuda_ = cuda

        def forward(self, features, classes):
            if self.cuda_:
                return features
            return {body}


    def compare(device):
        loss = ReferenceLoss(cuda=False)
        embeddings = torch.randn(32, 4).to(device)
        labels = torch.randint(0, 5, size=(32,))
        return loss(embeddings, labels)
    """


@pytest.mark.parametrize(
    ("body", "expected"),
    [("classes", []), ("features, classes", []), ("features * classes[:, None]", ["loss.py:18"])],
)
def test_an_argument_a_project_module_returns_as_given_meets_nothing(tmp_path, body, expected):
    """A module of the file whose ``forward`` returns a parameter as it came (shape from a
    held-out read: a test's reference loss, not moved, given CPU labels next to device
    embeddings): the labels meet nothing there. Still reported where forward combines them."""
    write(tmp_path, {"loss.py": REFERENCE_LOSS.format(body=body)})
    assert _findings(tmp_path) == expected
    returned = scan(textwrap.dedent(REFERENCE_LOSS.format(body=body))).host_only_inputs
    assert returned == ({} if expected else {"ReferenceLoss": (0, 1)})


def test_scan_reads_what_refuses_tensors_off_cuda():
    """A function, or a class's ``forward``, that asserts ``x.is_cuda`` or raises when it is not
    (a CuPy kernel's autograd Function) refuses the CPU, and so do the file's functions and
    classes that call one without choosing by device; a check that keeps a CPU path does not."""
    facts = scan(textwrap.dedent("""\
        import torch


        class _Corr(torch.autograd.Function):
            @staticmethod
            def forward(ctx, one, two):
                assert(one.is_cuda == True)
                return one * two


        def corr(one, two):
            return _Corr.apply(one, two)


        corr_function = _Corr.apply
        other = torch.add


        class Corr(torch.nn.Module):
            def forward(self, one, two):
                return corr(one, two)


        def shift(x):
            if not x.is_cuda:
                raise NotImplementedError("CUDA only")
            return x


        def pick(one, two):
            if one.is_cuda:
                return corr(one, two)
            return one * two


        def checked(x):
            assert not x.is_cuda
            assert x.is_cuda == False
            return x


        class Helper:
            def cuda_path(self, x):
                assert x.is_cuda
                return x

            def forward(self, x):
                return self.cuda_path(x) if x.is_cuda else x
        """))
    assert facts.refuses_cpu == frozenset({"_Corr", "corr", "corr_function", "Corr", "shift"})
    assert facts.as_json()[_position_of("refuses_cpu")] == ["Corr", "_Corr", "corr", "corr_function", "shift"]  # in the cache key


def test_a_script_using_a_project_function_that_refuses_the_cpu_is_cuda_only(tmp_path):
    """pytorch-pwc: run.py imports the correlation module in ``try: from .correlation import
    correlation`` / ``except: sys.path.insert(0, './correlation'); import correlation`` (the same
    module either way), whose autograd Function imports CuPy and asserts ``one.is_cuda``; the
    network calls it. Its moves are CUDA-only: not rewritten (left alone when the module imports
    CuPy, reported without a fix when only its asserts say so). An import with a real CPU twin, one
    that may fail (``= None``), and a function of the module that does not refuse the CPU are not."""
    corr = """\
        import torch


        class _Corr(torch.autograd.Function):
            @staticmethod
            def forward(ctx, one, two):
                assert one.is_cuda == True
                return one * two


        def corr(one, two):
            return _Corr.apply(one, two)


        def scale(x):
            return x * 2
        """
    user = """\
        import sys
        import torch

        {imports}


        class Net(torch.nn.Module):
            def forward(self, a, b):
                return {call}(a, b)


        def estimate(a, b):
            net = Net().cuda()
            return net(a.cuda(), b.cuda()).cpu()
        """
    user = textwrap.dedent(user)
    write(tmp_path, {
        "setup.py": "",
        "corr.py": corr,
        "cupy_corr/corr.py": "import cupy\n" + textwrap.dedent(corr).replace("assert one.is_cuda == True\n", ""),
        "cpu_corr.py": "def corr(one, two):\n    return one * two\n",
        "module_import.py": user.format(imports="import corr", call="corr.corr"),
        "name_import.py": user.format(imports="from corr import corr", call="corr"),
        "same_module_either_way.py": user.format(
            imports="try:\n    from .cupy_corr import corr\nexcept:\n    sys.path.insert(0, './cupy_corr'); import corr",
            call="corr.corr",
        ),
        "module_either_way.py": user.format(
            imports="try:\n    from . import corr\nexcept ImportError:\n    import corr", call="corr.corr"
        ),
        "cpu_twin.py": user.format(
            imports="try:\n    from cupy_corr.corr import corr\nexcept ImportError:\n    from cpu_corr import corr",
            call="corr",
        ),
        "optional.py": user.format(imports="try:\n    from corr import corr\nexcept ImportError:\n    corr = None", call="corr"),
        "other_function.py": user.format(imports="import corr", call="corr.scale"),
    })
    index = ProjectIndex.build(str(path) for path in sorted(tmp_path.rglob("*.py")))

    def fixed(name):
        path = tmp_path / name
        return Linter().fix(path.read_text(), project=index, path=str(path)).source

    def moves(name):
        path = tmp_path / name
        found = lint_source(path.read_text(), Settings(select=("TDL001",)), project=index, filename=str(path))
        return [finding.fixable for finding in found]

    assert view_of(tmp_path, "same_module_either_way.py").needs_cuda  # imports the CuPy module: left alone
    assert moves("same_module_either_way.py") == []
    for name in ("module_import.py", "name_import.py", "module_either_way.py"):  # read from an assert: reported, no fix
        assert view_of(tmp_path, name).uses_cuda_only_code and not view_of(tmp_path, name).needs_cuda, name
        assert moves(name) == [False, False, False], name
    for name in ("module_import.py", "name_import.py", "same_module_either_way.py"):
        assert fixed(name) == (tmp_path / name).read_text(), name
    for name in ("cpu_twin.py", "optional.py", "other_function.py"):
        assert not view_of(tmp_path, name).needs_cuda and not view_of(tmp_path, name).uses_cuda_only_code, name
        assert "net = Net().to(device)" in fixed(name), name


def test_a_module_level_try_without_except_is_scanned_in_linear_time(tmp_path):
    """pytorch/rl examples/replay-buffers/recurrent_slice_sampler_pipeline.py: a top-level
    ``try:`` ... ``finally:`` whose body is indented deeper held the scan for minutes (the block
    pattern tried every split of each line's indentation before failing)."""
    from torchdevice_lint.analysis.project import _imports_with_fallback

    body = "".join(f"    for i in range({n}):\n            x = i  # deep\n\n" for n in range(40))
    script = tmp_path / "script.py"
    script.write_text(f"import torch\n\ntry:\n{body}finally:\n    pass\n")
    code = f"from pathlib import Path\nfrom torchdevice_lint.analysis.project import scan\nscan(Path({str(script)!r}).read_text())\n"
    root = Path(__file__).resolve().parent.parent
    assert subprocess.run([sys.executable, "-c", code], timeout=30, cwd=root).returncode == 0
    # the blank line inside a block still belongs to it
    fallback = "try:\n    from . import corr\n\n    import util\nexcept ImportError:\n\n    import corr\n    import util\n"
    assert _imports_with_fallback(fallback) == {"corr": ".corr", "util": "util"}


def test_indexes_sharing_scanned_facts_scan_a_file_again_only_when_its_text_changed(project):
    paths = [str(path) for path in sorted(project.rglob("*.py"))]
    scanned: dict = {}
    first = ProjectIndex.build(paths, scanned)
    again = ProjectIndex.build(paths, scanned)
    assert all(again.files[path] is first.files[path] for path in first.files)
    base = project / "pkg/base.py"
    base.write_text(base.read_text().replace("class Base(nn.Module)", "class Base"))
    changed = ProjectIndex.build(paths, scanned)
    real = str(base.resolve())
    assert changed.files[real] is not first.files[real]
    assert changed.fingerprint == ProjectIndex.build(paths).fingerprint != first.fingerprint


def test_a_module_importing_an_ffi_cuda_extension_of_the_project_is_cuda_only(tmp_path):
    """fpn.pytorch's RoI crop (#17, pass 10a class 3): build.py builds ``_ext.roi_crop`` with the old
    ``torch.utils.ffi.create_extension(..., with_cuda=with_cuda)`` after ``with_cuda = True``; the
    function imports ``from .._ext import roi_crop`` and calls its ``*_cuda`` kernel, so its
    ``.cuda()`` is left alone. A CPU-only ffi build (``with_cuda=False``) says nothing."""
    build = """\
        import os
        import torch
        from torch.utils.ffi import create_extension

        sources = ['src/roi_crop.c']
        with_cuda = False
        if torch.cuda.is_available():
            sources += ['src/roi_crop_cuda.c']
            with_cuda = True
        ffi = create_extension(
            '_ext.roi_crop',
            sources=sources,
            relative_to=__file__,
            with_cuda=with_cuda,
        )
        """
    crop = """\
        import torch
        from .._ext import roi_crop


        def compare(a, b):
            a = a.cuda()
            roi_crop.BilinearSamplerBHWD_updateOutput_cuda(a, b, b)
            return a
        """
    write(tmp_path, {"lib/roi_crop/build.py": build, "lib/roi_crop/functions/crop.py": crop})
    assert view_of(tmp_path, "lib/roi_crop/functions/crop.py").needs_cuda
    write(tmp_path, {"lib/roi_crop/build.py": build.replace("    with_cuda = True\n", "    pass\n")})
    assert not view_of(tmp_path, "lib/roi_crop/functions/crop.py").needs_cuda


def test_a_module_importing_a_cython_extension_built_with_a_cuda_source_is_cuda_only(tmp_path):
    """faster_rcnn_pytorch's NMS (#17, pass 10a class 3): setup.py builds ``nms.gpu_nms`` with a plain
    ``Extension('nms.gpu_nms', ['nms/nms_kernel.cu', 'nms/gpu_nms.pyx'], ...)`` (its ``.cu`` compiled
    with nvcc); a module importing it at module level is CUDA-only. ``nms.cpu_nms``, built from a
    ``.pyx`` alone, is not, and nor is an extension whose sources are not written out."""
    setup = """\
        from distutils.extension import Extension

        ext_modules = [
            Extension(
                "nms.cpu_nms",
                ["nms/cpu_nms.pyx"],
            ),
            Extension('nms.gpu_nms',
                      ['nms/nms_kernel.cu', 'nms/gpu_nms.pyx'],
                      libraries=['cudart']),
            Extension(name="utils.cython_bbox", sources=["utils/bbox.pyx"]),
            Extension("ops.lazy", sources=sources),
        ]
        """
    wrapper = """\
        from faster_rcnn.nms.cpu_nms import cpu_nms
        from faster_rcnn.nms.gpu_nms import gpu_nms


        def nms(dets, thresh):
            return gpu_nms(dets, thresh)
        """
    write(tmp_path, {"faster_rcnn/setup.py": setup, "faster_rcnn/fast_rcnn/nms_wrapper.py": wrapper})
    assert view_of(tmp_path, "faster_rcnn/fast_rcnn/nms_wrapper.py").needs_cuda
    for other in ("from faster_rcnn.nms.cpu_nms import cpu_nms\n", "from faster_rcnn.utils.cython_bbox import overlaps\n",
                  "from faster_rcnn.ops.lazy import f\n"):
        write(tmp_path, {"faster_rcnn/fast_rcnn/nms_wrapper.py": other})
        assert not view_of(tmp_path, "faster_rcnn/fast_rcnn/nms_wrapper.py").needs_cuda, other


def test_scan_reads_the_backends_of_init_process_group():
    def backends(text):
        return scan(textwrap.dedent(text)).process_group_backends

    assert backends('dist.init_process_group(backend="NCCL", init_method=os.environ["URL"])') == {"nccl"}
    assert backends("torch.distributed.init_process_group(\n    'nccl', rank=rank, world_size=2\n)") == {"nccl"}
    assert backends('dist.init_process_group(init_method=url("x"), backend="gloo")') == {"gloo"}
    for unknown in (
        'dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")',
        "dist.init_process_group(backend=args.dist_backend)",
        "dist.init_process_group()",
        "dist.init_process_group(init_method='env://')",
    ):
        assert backends(unknown) == {"?"}, unknown
    assert backends('def init_process_group(backend="nccl"):\n    pass\n# init_process_group(backend="gloo")\n') == set()
    assert ["gloo"] in scan('dist.init_process_group("gloo")').as_json()  # in the cache key


def test_collectives_of_a_project_whose_process_groups_are_all_nccl_are_cuda_only(tmp_path):
    """vq-vae-2's distributed/distributed.py (#17, pass 11b class 3b): ``all_gather`` returns early
    on one process, then moves its buffers ``.to("cuda")`` for ``dist.all_gather``; the only process
    group (distributed/launch.py) is ``backend="NCCL"``, whose collectives take CUDA tensors only. Its
    moves are no longer rewritten (reported or left alone as other CUDA-only code). A collective
    under a condition keeps the function's other moves rewritten, and so does a project that may
    start a gloo group."""
    launch = """\
        import torch.distributed as dist


        def worker(local_rank, fn, args):
            dist.init_process_group(backend="NCCL", init_method="tcp://127.0.0.1:23456", world_size=2, rank=local_rank)
            fn(*args)
        """
    helpers = """\
        import torch
        from torch import distributed as dist


        def all_gather(tensor):
            if dist.get_world_size() == 1:
                return [tensor]
            local = tensor.cuda()
            gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
            dist.all_gather(gathered, local)
            return gathered


        def evaluate(model, x):
            y = model(x.cuda())
            if dist.is_initialized():
                dist.all_reduce(y)
            return y
        """
    write(tmp_path, {"distributed/launch.py": launch, "distributed/helpers.py": helpers})

    def moves():
        path = tmp_path / "distributed/helpers.py"
        index = ProjectIndex.build(str(p) for p in sorted(tmp_path.rglob("*.py")))
        found = lint_source(path.read_text(), Settings(select=("TDL001",)), project=index, filename=str(path))
        return [(finding.line, finding.fixable) for finding in found]

    assert view_of(tmp_path, "distributed/helpers.py").nccl_only
    assert moves() == [(8, False), (15, True)]
    write(tmp_path, {"distributed/launch.py": launch.replace('"NCCL"', '"nccl" if torch.cuda.is_available() else "gloo"')})
    assert not view_of(tmp_path, "distributed/helpers.py").nccl_only
    assert moves() == [(8, True), (15, True)]


def _position_of(fact: str) -> int:
    """Where `FileFacts.as_json` (which lists the facts in their declared order) puts ``fact``."""
    return [field.name for field in dataclasses.fields(FileFacts)].index(fact)


def test_what_a_module_of_another_file_computes_on_the_device_stays_there_taken_apart(tmp_path):
    """kornia 749bd0254e: ``out_image, out_label = RandomMixUp()(images, labels)`` with the
    inputs on the test's device; the labels compared with ``torch.tensor([0, 1])`` met them."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/mix.py": """\
            import torch.nn as nn


            class RandomMixUp(nn.Module):
                def forward(self, images, labels):
                    return images, labels
            """,
        "tests/test_mix.py": """\
            import torch
            from mylib.mix import RandomMixUp


            def test_mixup(device):
                images = torch.rand(2, 3, 4, device=device)
                labels = torch.tensor([1, 0], device=device)
                out_images, out_labels = RandomMixUp()(images, labels)
                assert (out_labels[:, 1] == torch.tensor([0, 1])).all()


            def test_mixup_on_the_host():
                images, labels = torch.rand(2, 3, 4), torch.tensor([1, 0])
                out_images, out_labels = RandomMixUp()(images, labels)
                assert (out_labels[:, 1] == torch.tensor([0, 1])).all()
            """,
    })
    assert _findings(tmp_path) == ["tests/test_mix.py:9"]


def test_scan_reads_the_arguments_a_function_keeps_where_they_are():
    text = textwrap.dedent('''\
        def draw_polygon(images: Tensor, polygons: Union[Tensor, List[Tensor]], colors: Tensor) -> Tensor:
            b, c, device = *images.shape, images.device
            grid = torch.arange(images.shape[-1], device=device, dtype=polygons.dtype)
            return images * colors + (grid < polygons[..., :1])


        def draw_line(image, p1, p2, color):
            p1 = p1.to(image.device).long()  # a move
            color = torch.as_tensor(color, device=image.device)
            return image + p1 + p2 + color


        def pad(x, width, *rest, value=0):
            return torch.cat([x, width])


        def one(x):
            return x
        ''')
    # draw_line keeps ``image`` and ``p2`` (``image.device`` reads its place only); ``pad`` its two
    # positional parameters; ``one`` has a single one, which meets nothing.
    assert scan(text).kept_arguments == {"draw_polygon": (0, 1, 2), "draw_line": (0, 2), "pad": (0, 1)}
    assert scan(text).as_json() != scan(text.replace("p1 = p1.to(image.device).long()", "p1 = p1.long()")).as_json()
    assert scan(text).as_json()[_position_of("kept_arguments")] == {"draw_line": [0, 2], "draw_polygon": [0, 1, 2], "pad": [0, 1]}


DRAWING = """\
    import torch


    def draw_polygon(images, polygons, colors):
        if images.device != polygons.device:
            raise ValueError("images and polygons must share a device")
        return images * colors + polygons.sum()


    def draw_line(image, points, color):
        points = points.to(image.device)
        return image + points.sum() + color
    """


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("draw_polygon(images, points, colors)", ["tests/test_draw.py:8"]),
        ("draw_line(images, points, colors)", []),  # it moves the points to the image's device
        ("draw_polygon(images, points, colors).cpu()", ["tests/test_draw.py:8"]),
        ("draw_polygon(images.cpu(), points, colors.cpu()).to(device)", []),  # made off the device, then moved
    ],
)
def test_a_factory_given_with_device_tensors_to_a_project_function_that_keeps_them_meets_them(tmp_path, call, expected):
    """kornia ac7c4f6139: test points from ``torch.linspace`` on the CPU, given with an image on
    the test's device to ``draw_convex_polygons``, which never moves them (and refuses the mix)."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/draw.py": DRAWING,
        "tests/test_draw.py": f"""\
            import torch
            from mylib.draw import draw_line, draw_polygon


            def test_draw(device):
                images = torch.zeros(1, 3, 8, 8, device=device)
                colors = torch.ones(1, 3, 1, 1, device=device)
                points = torch.linspace(0, 1, steps=8)[None]
                out = {call}
                assert out.shape == images.shape
            """,
    })
    assert _findings(tmp_path) == expected


def test_scan_reads_the_names_called_where_they_work_off_the_device():
    text = textwrap.dedent('''\
        from util import box_ops
        from pytracking import dcf


        class Panoptic(Dataset):
            def __getitem__(self, index):
                masks = torch.as_tensor(np.load(self.paths[index]))
                return box_ops.masks_to_boxes(masks), self.target(index), len(masks)


        def collate_fn(batch):
            return pad_batch(batch)


        def initialize(self, sz):
            self.window = dcf.hann2d(sz).to(self.params.device)
            self.reg = dcf.get_reg_filter(sz, self.target_sz(2)).view(1, -1)[0].cuda()
            self.label = dcf.label_function(sz).to(torch.float32)  # a cast: no move
            self.kept = dcf.gauss(sz)
        ''')
    assert scan(text).cpu_callees == {
        "box_ops.masks_to_boxes", "torch.as_tensor", "np.load", "pad_batch", "dcf.hann2d", "dcf.get_reg_filter"
    }


BOX_OPS = """\
    import torch


    def masks_to_boxes(masks):
        if masks.numel() == 0:
            return torch.zeros((0, 4), device=masks.device)
        h, w = masks.shape[-2:]
        y = torch.arange(0, h, dtype=torch.float)
        return (masks * y.unsqueeze(-1)).flatten(1).max(-1)[0]
    """


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        ("    return masks_to_boxes(masks)\n", ["util/box_ops.py:8"]),
        ("    return masks_to_boxes(masks).to(device)\n", []),
    ],
)
def test_a_function_the_project_calls_off_the_device_works_on_the_cpu(tmp_path, caller, expected):
    """Deformable-DETR's ``masks_to_boxes`` is called in a Dataset's ``__getitem__`` only, on masks
    from NumPy: its ``torch.arange`` meets CPU masks. pytracking's trackers move what
    ``dcf.get_reg_filter(...)`` returns at once. Called otherwise, it works on the caller's device."""
    write(tmp_path, {
        "util/__init__.py": "",
        "util/box_ops.py": BOX_OPS,
        "datasets/panoptic.py": """\
            import numpy as np
            import torch
            from util.box_ops import masks_to_boxes


            class Panoptic(torch.utils.data.Dataset):
                def __getitem__(self, index):
                    masks = torch.as_tensor(np.load(self.paths[index]))
                    return masks_to_boxes(masks)
            """,
        "engine.py": "from util.box_ops import masks_to_boxes\n\n\ndef boxes(masks, device):\n" + caller,
    })
    findings = _findings(tmp_path)
    assert [f for f in findings if f.startswith("util/")] == []
    (tmp_path / "datasets/panoptic.py").unlink()
    assert _findings(tmp_path) == expected


STACKED_BLOCKS = """\
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.linear = nn.Linear(width, width)

        def forward(self, x):
            return self.linear(x)


    class Stack(nn.Module):
        def __init__(self, width, depth):
            super().__init__()
            self.width = width
            self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])

        def forward(self, x):
            total = torch.zeros(x.shape[0], self.width)
            for block in self.blocks:
                total = total + block(x)
            return total


    def build_stack(width):
        return Stack(width, depth=2)
    """


@pytest.mark.parametrize(
    ("trainer", "script", "expected"),
    [
        ("def fit(model, batch, device):\n    return model.to(device)(batch.to(device))\n", "", ["mylib/stack.py:21"]),
        ("def fit(model, batch):\n    return model(batch)\n", "", []),  # no file names a device: the host
        (
            "def fit(model, batch, device):\n    return model.to(device)(batch.to(device))\n",
            "\n\n    if __name__ == '__main__':\n        print(Stack(4, 2)(torch.ones(2, 4)))\n",
            [],  # the file runs its own modules: a script on the host
        ),
    ],
)
def test_a_library_file_that_names_no_device_is_device_code_where_the_project_names_one(tmp_path, trainer, script, expected):
    """darts cc70f34ae4: N-BEATS' stack sums its blocks' outputs into ``torch.zeros(n, width)``;
    the file builds its modules (``build_stack``) and names no device, the library's trainer
    moves them."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/stack.py": STACKED_BLOCKS + script,
        "mylib/train.py": trainer,
    })
    assert _findings(tmp_path) == expected


def test_a_library_file_that_runs_its_own_modules_is_host_code(tmp_path):
    """torchmetrics' NISQA: the metric function loads the model the file defines and runs it on
    NumPy features, on the CPU, whatever the rest of the library does with devices."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/stack.py": STACKED_BLOCKS + """
    def _load_model(width):
        model = build_stack(width)
        return model, width


    def score(features):
        model, width = _load_model(features.shape[1])
        return model(torch.from_numpy(features))
    """,
        "mylib/train.py": "def fit(model, batch, device):\n    return model.to(device)(batch.to(device))\n",
    })
    assert _findings(tmp_path) == []


def test_scan_reads_the_names_every_method_of_a_dataset_calls():
    """torchgeo: the datasets' ``plot`` methods draw masks with a helper of ``datasets/utils.py``;
    a Dataset's methods work on the samples it loads, on the CPU, as ``__getitem__`` does."""
    text = textwrap.dedent('''\
        from .utils import draw_masks, percentile_normalization


        class LandCover(NonGeoDataset):
            def plot(self, sample):
                image = percentile_normalization(sample["image"])
                return draw_masks(image, sample["mask"])


        class Trainer(LightningModule):
            def validation_step(self, batch):
                return overlay(batch["image"], self(batch["image"]))
        ''')
    assert scan(text).cpu_callees == {"percentile_normalization", "draw_masks"}


@pytest.mark.parametrize("losses", ["[PairLoss(), PairLoss(margin=0.2)]", "[PairLoss(), TripletLoss()]"])
def test_modules_of_another_file_run_from_a_list_may_move_what_they_are_given(tmp_path, losses):
    """pytorch-metric-learning's tests: ``for loss_func in [loss_a, loss_b]:`` then
    ``loss_func(embeddings, labels)`` with CPU labels; the library's losses move the labels to
    the embeddings' device, as a module of another file called directly is taken to."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/losses.py": """\
            import torch


            class PairLoss(torch.nn.Module):
                def __init__(self, margin=0.1):
                    super().__init__()
                    self.margin = margin

                def forward(self, embeddings, labels):
                    labels = labels.to(embeddings.device)
                    return (embeddings.sum(1) * labels).mean() + self.margin


            class TripletLoss(PairLoss):
                pass
            """,
        "tests/test_losses.py": f"""\
            import torch
            from mylib.losses import PairLoss, TripletLoss


            def test_losses(device):
                embeddings = torch.randn(8, 4, device=device)
                labels = torch.randint(0, 3, (8,))
                for loss_func in {losses}:
                    assert loss_func(embeddings, labels) > 0
            """,
    })
    assert _findings(tmp_path) == []


def test_a_test_that_builds_a_module_of_its_own_and_runs_it_is_host_code(tmp_path):
    """torchtnt's FLOP counter test: a module class defined in the test, given CPU input by the
    test itself, in a project whose other files name a device."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/train.py": "def fit(model, batch, device):\n    return model.to(device)(batch.to(device))\n",
        "tests/test_counts.py": """\
            import unittest

            import torch


            class CountTest(unittest.TestCase):
                def test_matmul(self):
                    class Twice(torch.nn.Module):
                        def forward(self, x):
                            return x.matmul(torch.randn(5, 3))

                    module = Twice()
                    self.assertEqual(module(torch.randn(4, 5)).shape[1], 3)
            """,
    })
    assert _findings(tmp_path) == []


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("torch.set_default_tensor_type('torch.cuda.FloatTensor')", []),
        ("torch.set_default_device('cuda')", []),
        ("torch.set_default_tensor_type('torch.FloatTensor')", ["mylib/render.py:5"]),
    ],
)
def test_a_default_cuda_tensor_type_set_in_another_file_puts_factories_on_the_gpu(tmp_path, entry, expected):
    """NeuS: ``exp_runner.py`` makes CUDA the default tensor type under ``__main__``; the
    renderer's device-less factories are then on the GPU with the rays they meet."""
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/render.py": """\
            import torch


            def sample(rays_o: torch.Tensor, n: int) -> torch.Tensor:
                steps = torch.linspace(0.0, 1.0, n)
                return rays_o[..., None, :] * steps[None, :, None]


            def to_device(rays, device):
                return rays.to(device)
            """,
        "exp_runner.py": f"""\
            import torch
            from mylib.render import sample

            if __name__ == "__main__":
                {entry}
                print(sample(torch.rand(4, 3), 8).shape)
            """,
    })
    assert _findings(tmp_path) == expected


@pytest.mark.parametrize(
    ("text", "sets"),
    [
        ("torch.set_default_tensor_type('torch.cuda.FloatTensor')\n", True),
        ("if __name__ == '__main__':\n    torch.set_default_device('cuda')\n", True),
        ('def f():\n    """Example::\n\n        torch.set_default_tensor_type(torch.cuda.FloatTensor)\n    """\n', False),
        ("CASES = [\"torch.set_default_tensor_type('torch.cuda.FloatTensor')\"]\n", False),
        ("torch.set_default_device(device)\n", False),  # which device: not read
    ],
)
def test_scan_reads_a_cuda_default_set_in_code_only(text, sets):
    """A docstring's example (TDL006's own docs) or a test's string sets no default: read as
    such, they silenced TDL003 in every file of this repository under flake8."""
    assert scan(text).sets_cuda_default is sets


def test_a_cuda_default_set_by_a_test_leaves_the_library_alone(tmp_path):
    write(tmp_path, {
        "mylib/__init__.py": "",
        "mylib/render.py": "import torch\n\n\ndef sample(rays: torch.Tensor, n: int, device=None):\n"
                           "    return rays[..., None, :] * torch.linspace(0.0, 1.0, n)[None, :, None]\n",
        "tests/conftest.py": "import torch\n\ntorch.set_default_device('cuda')\n",
    })
    assert _findings(tmp_path) == ["mylib/render.py:5"]
