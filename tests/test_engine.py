"""The engine's promises: positions, suppression, byte fidelity, one binding, idempotence."""

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from torchdevice_lint import Linter, Settings, fix_source, lint_source
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.rules import ALL_RULES


def codes(source, **settings):
    return [(f.line, f.column, f.code) for f in lint_source(source, Settings(**settings))]


def test_position_is_the_start_of_the_offending_call():
    assert codes("import torch\nif ok:\n    y = model.layer(x).cuda()\n") == [(3, 8, "TDL001")]


@pytest.mark.parametrize(
    "comment, reported",
    [
        ("", True),
        ("  # noqa", False),
        ("  # noqa: TDL001", False),
        ("  # noqa:TDL001,TDL004", False),
        ("  # NOQA: TDL", False),
        ("  # noqa: TDL002", True),
        ("  # noqa: E501", True),
    ],
)
def test_noqa_forms(comment, reported):
    assert bool(codes(f"import torch\nx = y.cuda(){comment}\n")) is reported


def test_noqa_on_any_line_of_a_multiline_statement():
    source = "import torch\nx = foo(\n    y.cuda(),\n    z,\n)  # noqa: TDL001\n"
    assert codes(source) == []
    assert fix_source(source) == source


def test_suppressed_findings_are_not_fixed():
    source = "import torch\na = x.cuda()  # noqa\nb = y.cuda()\n"
    fixed = fix_source(source)
    assert "a = x.cuda()  # noqa" in fixed and "b = y.to(device)" in fixed


def test_fix_only_the_chosen_finding():
    """An editor's quick fix: one finding fixed (with the device line it needs), the others left."""
    source = "import torch\na = x.cuda()\nb = y.cuda()\n"
    fixed = Linter().fix(source, only=lambda finding: finding.line == 3).source
    assert isinstance(fixed, str)
    assert "a = x.cuda()" in fixed and "b = y.to(device)" in fixed and "device = torch.device(" in fixed
    assert [(f.code, f.line) for f in lint_source(fixed)] == [("TDL001", fixed.splitlines().index("a = x.cuda()") + 1)]


def test_select_all_and_ignore():
    source = 'import torch\nx = y.cuda()\nz = w.to("cuda")\n'
    assert {c for *_, c in codes(source)} == {"TDL001", "TDL002"}
    assert {c for *_, c in codes(source, ignore=("TDL001",))} == {"TDL002"}
    assert {c for *_, c in codes(source, select=("TDL001",))} == {"TDL001"}
    assert codes(source, select=("TDL",), ignore=("TDL00",)) == []
    assert codes(source, select=("TDL001",), ignore=("TDL",)) != []  # the longer prefix wins


@pytest.mark.parametrize(
    "source",
    [
        b"import torch\r\nmodel = Net().cuda()\r\n",
        b"\xef\xbb\xbfimport torch\nmodel = Net().cuda()\n",
        b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9'\nmodel = Net().cuda()",
        b"import torch\n\tif x:\n\t\tmodel = Net().cuda()\n".replace(b"\n\tif", b"\nif"),
        b"import torch\n\x0cmodel = Net().cuda()\n",
    ],
    ids=["crlf", "bom", "latin1-no-final-newline", "tabs", "form-feed"],
)
def test_untouched_bytes_stay_identical(source):
    fixed = fix_source(source)
    assert isinstance(fixed, bytes)
    assert fixed != source
    cst.parse_module(fixed)
    before, after = source.splitlines(keepends=True), fixed.splitlines(keepends=True)
    inserted = [line for line in after if b"is_available()" in line]
    assert len(inserted) == 1
    if b"\r\n" in source:
        assert inserted[0].endswith(b"\r\n")
    changed = [line for line in before if line not in after]
    assert all(b".cuda()" in line for line in changed)
    assert fix_source(fixed) == fixed


def test_binding_is_inserted_once_after_the_imports_and_reused():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport torch\nimport os\n\na = x.cuda()\n\ndef f(y):\n    return y.cuda()\n'
    fixed = fix_source(source)
    assert fixed == (
        '"""Doc."""\nfrom __future__ import annotations\nimport torch\nimport os\n\n'
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
        "a = x.to(device)\n\ndef f(y):\n    return y.to(device)\n"
    )


def test_binding_adds_import_torch_and_avoids_taken_names():
    fixed = fix_source("def device():\n    return 0\n\ndef run(m):\n    return m.cuda()\n")
    assert fixed.startswith("import torch\n\ntorch_device = torch.device(")
    assert '"cpu")\n\n\ndef device():' in fixed  # two blank lines before a def (PEP 8)
    assert "return m.to(torch_device)" in fixed


def test_binding_uses_the_files_torch_alias_and_accelerator_style():
    fixed = fix_source("import torch as t\nm = M().cuda()\n", settings=Settings(device_style="accelerator"))
    # past 88 columns, laid out as Black lays it out (no line length configured: 88)
    assert fixed.startswith(
        "import torch as t\n\ndevice = (\n    t.accelerator.current_accelerator()\n"
        "    if t.accelerator.is_available()\n    else t.device(\"cpu\")\n)\n"
    )


def test_an_existing_device_is_reused_not_duplicated():
    source = (
        "import torch\n\ndef train(model, loader, device):\n"
        "    for x, y in loader:\n        x = x.cuda()\n"
    )
    assert fix_source(source) == source.replace("x.cuda()", "x.to(device)")


def test_overlapping_fixes_are_applied_over_rounds():
    source = "import torch\nx = torch.zeros(3)\nx.cuda()\n"
    fixed = fix_source(source)
    assert "x = x.to(device)" in fixed
    assert fix_source(fixed) == fixed


def test_a_fix_that_needs_import_torch_is_offered_in_check_mode_and_done_in_one_run():
    """A file importing only from torch: the pinned-memory fix adds ``import torch`` itself, so
    check mode offers it and one run finishes (it waited for another fix's import before, and a
    second run changed the file again)."""
    source = (
        "from torch.utils.data import DataLoader\n\nmodel = make_model()\nmodel.cuda()\n"
        "loader = DataLoader(ds, pin_memory=True)\n"
    )
    assert all(finding.fix_safety is not None for finding in lint_source(source))
    fixed = fix_source(source)
    assert fixed.startswith("import torch\nfrom torch.utils.data import DataLoader\n\ndevice = torch.device(")
    assert "loader = DataLoader(ds, pin_memory=torch.cuda.is_available())" in fixed
    assert not lint_source(fixed)
    assert fix_source(fixed) == fixed


@pytest.mark.parametrize("bad", [b"import torch\ndef f(:\n", b"import torch\x00", b"import torch\nx = '\xff'\n"])
def test_bad_input_raises_one_line_source_error(bad):
    with pytest.raises(SourceError) as error:
        lint_source(bad)
    assert "\n" not in str(error.value)


def test_every_rule_documents_itself_in_one_place():
    for rule in ALL_RULES:
        assert rule.code.startswith("TDL") and rule.name and rule.message and rule.needles


@pytest.mark.parametrize(
    ("source", "lines_after_imports"),
    [
        ("import torch\n\nx = y.cuda()\n", -1),
        ("import torch\n\n\nlogger = get_logger()\nx = y.cuda()\n", 2),
        ("import torch\n\n\n# the model\nx = y.cuda()\n", 2),
        ("import torch\n\n\nclass A:\n    pass\n\n\nx = y.cuda()\n", -1),
        ('"""Doc."""\n\nimport os\n\nimport torch\n\n\ndef f(y):\n    return y.cuda()\n', -1),
        # ``import torch`` added to a file that imports only from torch joins its import block
        ("from torch.utils.data import DataLoader\n\nx = y.cuda()\n", -1),
        ("import os\n\n# third party\nimport numpy as np\nfrom torch import nn\n\nx = y.cuda()\n", -1),
        ("import os\n\nimport numpy as np\nimport yaml\nfrom numpy import ndarray\nfrom torch import nn\n\n\nx = y.cuda()\n", 2),
        # ... or the block of torch's family (EDVR's scripts import torchvision, never torch)
        ("import glob\nimport os.path as osp\n\nimport numpy as np\nfrom torchvision import transforms\n\nx = y.cuda()\n", -1),
        ("import os\n\nimport torchvision\nimport yaml\n\nx = y.cuda()\n", -1),
        # ... or else the block of the third-party packages PyTorch code imports most
        ("import os\n\nimport cv2\nimport numpy as np\nimport yaml\n\n\ndef f(y):\n    return y.cuda()\n", -1),
    ],
)
def test_the_device_line_keeps_the_files_own_isort_check_clean(source, lines_after_imports, tmp_path):
    """Ruff's isort check (I001) stays clean on the fixed file: the device line gets the blank
    lines the file already puts after its imports (a repository's ``lines-after-imports = 2``
    shows as two blank lines before its first code)."""
    settings = [f"lint.isort.lines-after-imports={lines_after_imports}"]
    assert _isort_clean(source, tmp_path, settings)
    fixed = fix_source(source)
    assert "device = torch.device(" in fixed
    assert _isort_clean(fixed, tmp_path, settings), fixed


def test_import_torch_joins_a_block_sorted_by_module_whatever_the_kind(tmp_path):
    """isort's ``force_sort_within_sections``: ``from`` lines sorted among the plain ones."""
    settings = ["lint.isort.force-sort-within-sections=true"]
    source = "import numpy as np\nfrom scipy import io\nfrom torchvision import models\nimport yaml\n\nx = y.cuda()\n"
    assert _isort_clean(source, tmp_path, settings)
    fixed = fix_source(source)
    assert fixed.startswith("import numpy as np\nfrom scipy import io\nimport torch\nfrom torchvision import models\n")
    assert _isort_clean(fixed, tmp_path, settings), fixed


def _isort_clean(text: str, folder: Path, settings: list[str]) -> bool:
    path = folder / "module.py"
    path.write_text(text)
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I001", "-q", str(path)]
    for setting in settings:
        command += ["--config", setting]
    return subprocess.run(command, capture_output=True).returncode == 0


def test_device_literals_assigned_to_names_cost_one_read_of_their_scope(monkeypatch):
    # Whether `dev = torch.device("cuda")` only serves as a key is judged from the uses of `dev`
    # in its scope; they are read once per scope, not once per literal (a module of 160 such
    # lines took 5 s, the scope walked once for each).
    from torchdevice_lint.rules import tdl002_cuda_literal

    walked: list[object] = []
    real_walk = tdl002_cuda_literal.walk
    monkeypatch.setattr(tdl002_cuda_literal, "walk", lambda node: walked.append(node) or real_walk(node))
    walks = {}
    for count in (10, 40):
        walked.clear()
        source = "import torch\n" + "".join(f'v{i} = torch.device("cuda")\n' for i in range(count))
        assert [f.code for f in Linter().lint(source)].count("TDL002") == count
        walks[count] = sum(isinstance(node, cst.Module) for node in walked)
    assert walks[10] == walks[40] <= 2


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (  # the script chooses its GPU at the top: the device line goes after that choice
            'import os\n\nimport torch\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n\n\ndef main(net):\n    return net.cuda()\n',
            'import os\n\nimport torch\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n\n'
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def main(net):\n    return net.to(device)\n",
        ),
        (  # chosen in the main block, after the module's own code ran: no line can go after it
            'import os\n\nimport torch\n\n\ndef main(net):\n    return net.cuda()\n\n\n'
            'if __name__ == "__main__":\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n    main(None)\n',
            None,
        ),
    ],
)
def test_the_device_line_never_starts_cuda_before_the_script_chooses_its_gpus(source, expected):
    """``torch.cuda.is_available()`` initialises CUDA, which reads CUDA_VISIBLE_DEVICES once
    (pytorch/pytorch#23544): a device line above the script's choice would undo it on a
    machine with several GPUs."""
    assert [finding.code for finding in lint_source(source)] == ["TDL001"]
    assert fix_source(source) == (source if expected is None else expected)



def test_a_device_is_never_read_off_an_argument_the_body_takes_items_of():
    """Pose estimation's ``get_loss(saved_for_loss, heat_temp, vec_temp)``: the model returns a
    list of stage outputs, which the body indexes (``saved_for_loss[2 * j]``), and the fix wrote
    ``.to(saved_for_loss.device)``: AttributeError on every step. Positional items say sequence
    as often as tensor, so such an argument's device is not read; a tensor-only use still says
    tensor. (The whole file's caller chain is needed to reach the binder's choice; this checks
    the evidence it reads.)"""
    from torchdevice_lint.analysis.binding import _strict_tensor_evidence
    from torchdevice_lint.analysis.evidence import FunctionBody
    from torchdevice_lint.analysis.imports import ImportTable

    function = cst.parse_module(
        "def get_loss(outputs, target, steps, x):\n"
        "    for j in range(6):\n        total = criterion(outputs[2 * j], target) + x[0].sum()\n"
        "    return total + steps[-1] + x.view(-1).sum()\n"
    ).body[0]
    assert isinstance(function, cst.FunctionDef)
    evidence = _strict_tensor_evidence(FunctionBody(function), ImportTable())
    assert evidence.sequences >= {"outputs", "steps"} and "target" not in evidence.sequences
    assert "x" in evidence.tensors  # .view(): a tensor, whatever its items


@pytest.mark.parametrize(
    ("use", "device"),
    [
        ("x.cpu().numpy()", "x.device"),  # only a tensor's host copy has .numpy()
        ("x.cpu().tolist()", "x.device"),
        ("x.cpu()", "device"),  # a module has .cpu() too
        ("x.cpu().state_dict()", "device"),
        ("x.data.numpy()", "device"),  # a dataset's .data is a tensor (torchvision's MNIST)
        ("len(x)", "device"),
    ],
)
def test_a_parameter_copied_to_the_host_as_a_tensor_gives_its_device(use, device):
    """#17 class 2 (pytorch-segmentation get_weights): a parameter the body shows to be a tensor
    by ``x.cpu().numpy()`` is the device in scope, as an annotated one is."""
    source = f"import torch\n\n\ndef f(inp, x):\n    n = {use}\n    g = torch.ones(3).cuda()\n    return g + x, n\n"
    assert f"    g = torch.ones(3).to({device})\n" in fix_source(source)


def test_a_helper_given_its_inputs_by_keyword_takes_their_device():
    """#17 class 2 (pytorch-pwc backwarp(tenInput=..., tenFlow=...) called from a forward): a
    keyword argument seeds the parameter it names, so the helper's input is the device in scope."""
    source = (
        "import torch\nfrom torch import nn\n\ncache = {}\n\n\ndef backwarp(inp, flow):\n"
        "    if str(flow.shape) not in cache:\n        cache[str(flow.shape)] = torch.ones(3).cuda()\n"
        "    return inp + cache[str(flow.shape)] * flow\n\n\n"
        "class Net(nn.Module):\n    def forward(self, x):\n        return backwarp(inp=x, flow=x * 2)\n"
    )
    assert fix_source(source) == source.replace(".cuda()", ".to(inp.device)")


def test_a_switch_device_needed_twice_is_bound_once_per_function_and_only_where_free():
    """#17 class T (TimeCycle train()): one `device = torch.device(...)` line per function, right
    before the first statement that reads it, the sites naming it; a second run changes nothing; a function that already uses the
    name, or whose switch is a local, keeps the inline device (one per statement)."""
    source = (
        "import torch\n\n\n"
        "def train(loader, model, use_cuda):\n"
        "    # one epoch\n"
        "    if use_cuda:\n        model.cuda()\n"
        "    for a, b in loader:\n        a, b = a.cuda(), b.cuda()\n\n\n"
        "def taken(x, model, use_cuda, device=None):\n"
        "    if use_cuda:\n        model.cuda()\n"
        "    y = x.cuda()\n    return y, x.cuda()\n\n\n"
        "def local(x, model):\n    use_cuda = model.on_gpu()\n"
        "    if use_cuda:\n        model.cuda()\n"
        "    y = x.cuda()\n    return y, x.cuda()\n"
    )
    linter = Linter(Settings())
    fixed = linter.fix(source)
    assert fixed.source.count("device = torch.device(") == 1
    assert (
        "def train(loader, model, use_cuda):\n    # one epoch\n    if use_cuda:\n        model.cuda()\n"
        "    device = torch.device(\"cuda\" if use_cuda else \"cpu\")\n    for a, b in loader:\n"
    ) in fixed.source
    assert "a, b = a.to(device), b.to(device)\n" in fixed.source
    assert fixed.source.count('torch.device("cuda" if use_cuda else "cpu")') == 5
    assert linter.fix(fixed.source).applied == 0


def test_the_bound_device_line_keeps_the_comments_and_blank_lines_where_they_were_written():
    """The device line goes right before the first statement that reads it: under a docstring, a
    blank line and the comment lines that open a function (they describe the function); above the
    comment lines written on that statement (they describe it)."""
    moves = "    for a, b in loader:\n        a = a.cuda()\n        b = b.cuda()\n"
    line = '    device = torch.device("cuda" if use_cuda else "cpu")\n'
    cases = {
        "    # one epoch on the GPU\n": "    # one epoch on the GPU\n" + line,
        '    """One epoch."""\n    # batches to the GPU\n': '    """One epoch."""\n' + line + "    # batches to the GPU\n",
        '    """One epoch."""\n\n': '    """One epoch."""\n\n' + line,
        "\n    # batches to the GPU\n": "\n" + line + "    # batches to the GPU\n",
        "    n = 0\n\n    # batches to the GPU\n": "    n = 0\n\n" + line + "    # batches to the GPU\n",
        "    # counts\n    n = 0\n    # batches\n": "    # counts\n    n = 0\n" + line + "    # batches\n",
    }
    linter = Linter(Settings())
    for head, fixed_head in cases.items():
        source = "import torch\n\n\ndef train(loader, use_cuda):\n" + head + moves
        fixed = linter.fix(source).source
        assert fixed == "import torch\n\n\ndef train(loader, use_cuda):\n" + fixed_head + moves.replace(".cuda()", ".to(device)"), head
        assert linter.fix(fixed).applied == 0


def test_a_site_in_a_def_line_reads_the_scope_around_the_def():
    """A parameter's default runs when the ``def`` runs, in the scope around it: it takes the
    module's device line, never the function's own switch or parameters (a NameError, or a
    different device, at import), and is left unfixed where the function names a device of its
    own (``device`` would read as that one)."""
    linter = Linter(Settings())
    plain = "import torch\n\n\ndef f(x, y=torch.zeros(2).cuda()):\n    return x + y\n"
    assert "def f(x, y=torch.zeros(2).to(device)):\n" in linter.fix(plain).source
    assert 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n' in linter.fix(plain).source
    for own in ("def f(x, use_cuda, y=torch.zeros(2).cuda()):\n    z = x.cuda() if use_cuda else x\n",
                "def f(x, device, y=torch.zeros(2).cuda()):\n    z = x.to(device)\n"):
        source = "import torch\n\n\n" + own + "    return z + y\n"
        assert own.splitlines()[0] in linter.fix(source).source.splitlines(), own


def test_a_self_switch_device_needed_twice_in_a_method_is_bound_once():
    """pix2pixHD encode_input: ``self.gpu_ids`` (set in ``__init__``) at several sites of a method."""
    source = (
        "import torch\n\n\nclass Model:\n    def __init__(self, gpu_ids):\n        self.gpu_ids = gpu_ids\n"
        "        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor\n\n"
        "    def encode(self, a, b):\n        a = self.prep(a.cuda())\n        return a, b.cuda()\n"
    )
    fixed = Linter(Settings()).fix(source).source
    assert (
        "    def encode(self, a, b):\n        device = torch.device(\"cuda\" if self.gpu_ids else \"cpu\")\n"
        "        a = self.prep(a.to(device))\n        return a, b.to(device)\n"
    ) in fixed


@pytest.mark.parametrize(
    ("shift", "device"),
    [
        ("flipped[:, 1:] = flipped.clone()[:, :-1]", "output.device"),  # its own items: meets nothing
        ("flipped[:, 1:] = other[:, :-1]", "device"),  # another's items: the tensor it meets is unknown
    ],
)
def test_a_model_output_round_tripped_through_numpy_takes_the_device_of_the_output_it_meets(shift, device):
    """#17 class A(c) (human-pose-estimation/HRNet flip test): ``output = model(input)``, used
    as a tensor (``output.cpu().numpy()``), is the device the flipped output moved back from
    NumPy meets in ``(output + flipped) * 0.5``, past an ``if`` that only shifts the flipped
    output's own items."""
    source = (
        "import numpy as np\nimport torch\n\n\ndef validate(model, loader, shift, other):\n    for x in loader:\n"
        "        output = model(x)\n        flipped = np.flip(model(x.flip(3)).cpu().numpy(), 3)\n"
        "        flipped = torch.from_numpy(flipped.copy()).cuda()\n"
        f"        if shift:\n            {shift}\n"
        "        output = (output + flipped) * 0.5\n        print(output.cpu().numpy())\n"
    )
    assert f"        flipped = torch.from_numpy(flipped.copy()).to({device})\n" in fix_source(source)


@pytest.mark.parametrize(
    ("cpu_label", "gpu_label", "kept"),
    [
        ("    print('=> Testing CPU...')\n", "    print('=> Testing GPU...')\n", True),
        ("    # test on CPU\n", "    # test on CUDA\n", True),
        ("", "    print('=> Testing GPU...')\n", False),  # no CPU run before it: an ordinary script
        ("    print('=> Testing CPU...')\n", "    print('CPU vs GPU')\n", False),  # no one device named
    ],
)
def test_a_gpu_section_after_a_cpu_one_keeps_its_cuda_calls(cpu_label, gpu_label, kept):
    """#17 class 12 (temporal-shift-module's self-test): a section labelled as the GPU run after
    one labelled as the CPU run is reported, not moved to the portable device (which would run
    the CPU test again under the GPU label)."""
    source = (
        "import torch\nfrom torch import nn\n\nif __name__ == '__main__':\n    net = nn.Linear(4, 4)\n"
        f"{cpu_label}    y1 = net(torch.rand(2, 4))\n{gpu_label}"
        "    with torch.no_grad():\n        y2 = net.cuda()(torch.rand(2, 4).cuda())\n"
    )
    assert (fix_source(source) == source) is kept
    assert len([f for f in lint_source(source) if f.code == "TDL001"]) == 2


@pytest.mark.parametrize(
    ("shown", "device"),
    [
        ("torch.rand(images.size(0), 1).cuda().expand_as(images)", "images.device"),
        ("torch.rand(images.size(0), 1).cuda().view_as(images)", "images.device"),
        # a .size(0) is no proof: other objects (torch_sparse's SparseTensor) have one, and no .device
        ("torch.rand(images.size(0), 1).cuda()", "device"),
    ],
)
@pytest.mark.parametrize("met", ["alpha * images", "Variable(alpha * images.data, requires_grad=True)"])
def test_a_local_given_to_expand_as_is_a_tensor_whose_device_a_fix_reads(shown, device, met):
    """#17 class 2(b) (Self-Attention-GAN): ``expand_as`` takes only a tensor, so ``images`` (a
    helper's result the flow cannot type) holds one; the moved value meets it in the next line."""
    source = (
        "import torch\nfrom torch.autograd import Variable\n\n\ndef tensor2var(x):\n    return x\n\n\n"
        "def step(loader):\n    images, _ = next(iter(loader))\n    images = tensor2var(images)\n"
        f"    alpha = {shown}\n    return {met}\n"
    )
    assert f"    alpha = {shown.replace('.cuda()', f'.to({device})')}\n" in fix_source(source)


@pytest.mark.parametrize(
    ("call", "device"),
    [
        ("torch.autograd.grad(outputs=out, inputs=x, grad_outputs=torch.ones(out.size()).cuda())", "out.device"),
        ("torch.autograd.grad(out, x, torch.ones(out.size()).cuda())", "out.device"),
        ("torch.autograd.backward(out, torch.ones(out.size()).cuda())", "out.device"),
        ("torch.autograd.grad(out, torch.ones(out.size()).cuda())", "device"),  # there: the inputs, met by no value
    ],
)
@pytest.mark.parametrize("made", ["model(x)", "out, _ = discriminate(x)"])
def test_a_gradient_given_to_autograd_takes_its_outputs_device(call, device, made):
    """#17 class 2(b): autograd raises "invalid gradient at index 0 - expected device" for a
    gradient off its output's device, so the output's device is the gradient's."""
    made = made if "," in made else f"out = {made}"  # a helper's output, sized in the call: a tensor
    source = f"import torch\n\n\ndef penalty(model, x):\n    {made}\n    return {call}\n"
    assert f"    return {call.replace('.cuda()', f'.to({device})')}\n" in fix_source(source)


_GRAPH_FEATURE = "import torch\n\n\ndef graph_feature(x, k=20):\n    n = x.size(0)\n    idx = x.topk(k=k, dim=-1)[1]\n"


@pytest.mark.parametrize(
    ("body", "device"),
    [
        ("    b = torch.arange(0, n, device=device)\n    return idx + b\n", "x.device"),
        # x moved to the device, or bound again after it: the literal's device is not x's
        ("    x = x.to(device)\n    b = torch.arange(0, n, device=device)\n    return idx + b\n", None),
        ("    x = x.cuda()\n    b = torch.arange(0, n, device=device)\n    return idx + b\n", None),
        # the device given elsewhere, or read where the function does not run it
        ("    b = torch.arange(0, n, device=device)\n    return idx + b, device\n", None),
        ("    make = lambda: torch.arange(0, n, device=device)\n    return idx + make()\n", None),
        ("    return torch.zeros(n, device=device), torch.zeros(k, device=device)\n", None),
        # x bound again after the last use (dgcnn: x = x.transpose(2, 1) further down): no matter
        ("    b = torch.arange(0, n, device=device)\n    x = x.cuda()\n    return idx + b + x\n", "x.device"),
    ],
)
def test_a_local_cuda_device_only_placing_what_a_tensor_parameter_sizes_is_its_device(body, device):
    """#17 class 2(a) (dgcnn's get_graph_feature): ``device = torch.device('cuda')`` used only as
    ``device=`` of torch factories computed with the tensor parameter ``x`` is ``x.device``, as the
    literal written in each factory would be; anything else keeps the guarded idiom."""
    fixed = fix_source(_GRAPH_FEATURE + "    device = torch.device('cuda')\n" + body)
    expected = device or "torch.device('cuda' if torch.cuda.is_available() else 'cpu')"
    assert f"    device = {expected}\n" in fixed


_EVALUATE = (
    "import torch\nimport torch.nn as nn\n\n\ndef run(model, inp, args):\n"
    "    for b in range(inp.shape[0] // args.bs + 1):\n        model(inp[b * args.bs:(b + 1) * args.bs].cuda())\n\n\n"
    "def evaluate(inp, args):\n    {binding}\n    model = nn.Linear(4, 4).cuda()\n    run(model, inp, args)\n"
    "    return [model(inp[b * bs:(b + 1) * bs].cuda()) for b in range(inp.shape[0] // bs + 1)]\n\n\n"
    "def train(inp):\n    return nn.Linear(4, 4).cuda()(inp.cuda())\n\n\n"
    "if __name__ == '__main__':\n    train(torch.randn(10, 4))\n    evaluate(torch.randn(10, 4), parse())\n"
)


@pytest.mark.parametrize(
    ("binding", "kept"),
    [
        ("bs = 6 * torch.cuda.device_count()", 3),  # evaluate's own two moves, and run's (only evaluate calls it)
        ("bs = args.bs = torch.cuda.device_count() * 6", 3),
        ("args.bs = 6 * torch.cuda.device_count(); bs = 6", 3),
        ("bs = 6 * max(1, torch.cuda.device_count())", 0),
        ("bs = 6 if torch.cuda.device_count() > 1 else 4", 0),
    ],
)
def test_a_function_dividing_by_the_number_of_gpus_keeps_its_moves(binding, kept):
    """#17 class 3 (dgcnn's evaluate()): a batch size of ``6 * torch.cuda.device_count()`` is 0
    without CUDA, a ZeroDivisionError where it divides: the function and those only it calls are
    CUDA-only, their moves reported without a fix; train()'s are fixed."""
    source = _EVALUATE.replace("{binding}", binding)
    fixed = fix_source(source)
    assert fixed.count(".cuda()") == kept
    assert "    return nn.Linear(4, 4).to(device)(inp.to(device))\n" in fixed
    assert len([f for f in lint_source(source) if f.code == "TDL001"]) == 5


def test_a_cuda_call_taken_only_with_cuda_is_not_said_to_fail_without_a_gpu():
    """a2c-ppo-acktr-gail's ``if x.is_cuda: zeros = zeros.cuda()`` runs fine on a laptop: its
    finding says what is wrong there (a CPU path kept apart), not that it fails."""
    source = (
        "import torch\n\n\ndef noise(values, model):\n    model.cuda()\n    value_noise = torch.randn(values.size())\n"
        "    if values.is_cuda:\n        value_noise = value_noise.cuda()\n    return values + value_noise\n"
    )
    messages = [(finding.line, finding.message, finding.fixable) for finding in lint_source(source, Settings(select=("TDL001",)))]
    assert messages == [
        (5, "`.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`", True),
        (8, "`.cuda()` on a path taken only with CUDA keeps a separate CPU path; use one `.to(device)` for both", False),
    ]
