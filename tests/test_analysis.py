"""The shared analysis: what each name is and where it lives, at the point of use."""

import importlib

import libcst as cst
import pytest

from torchdevice_lint.analysis import FileAnalysis, Kind, Place, torch_api


def value_of_last_use(source, name):
    """The analysis' value for the last occurrence of ``name`` as a plain name."""
    module = cst.parse_module(source)
    analysis = FileAnalysis(module)
    found = [node for node in analysis.flow.values if isinstance(node, cst.Name) and node.value == name]
    assert found, f"{name} was never evaluated"
    return analysis.value_of(found[-1])


@pytest.mark.parametrize(
    "source, name, kind, place",
    [
        ("import torch as t\nx = t.zeros(3)\nx\n", "x", Kind.TENSOR, Place.CPU),
        ("from torch import zeros\nx = zeros(3, device='cuda')\nx\n", "x", Kind.TENSOR, Place.DEVICE),
        ("import torch\nx = torch.zeros(3).to(device)\nx\n", "x", Kind.TENSOR, Place.DEVICE),
        ("import torch\nx = torch.zeros(3).cuda().cpu()\nx\n", "x", Kind.TENSOR, Place.CPU),
        ("import torch\nx = torch.zeros(3).to(torch.float16)\nx\n", "x", Kind.TENSOR, Place.CPU),
        ("import torch.nn as nn\nm = nn.Linear(2, 2)\nm.to(device)\nm\n", "m", Kind.MODULE, Place.DEVICE),
        ("from torch import nn\nm = nn.Sequential()\nm\n", "m", Kind.MODULE, Place.CPU),
        ("import torch\nfrom torch.utils.data import DataLoader\nfor a, b in DataLoader(ds):\n    a\n", "a", Kind.TENSOR, Place.CPU),
        ("import torch\nfor batch in DataLoader(ds):\n    batch\n", "batch", Kind.UNKNOWN, Place.UNKNOWN),
        ("import torch\ndef f(x: torch.Tensor):\n    x\n", "x", Kind.TENSOR, Place.UNKNOWN),
        ("import torch\ndevice = torch.device('cuda' if ok else 'cpu')\ndevice\n", "device", Kind.DEVICE, Place.UNKNOWN),
        ("from transformers import BatchEncoding\nb = BatchEncoding({})\nb\n", "b", Kind.IN_PLACE, Place.UNKNOWN),
        ("import torch\nx = torch.zeros(3)\nif c:\n    x = x.to(device)\nx\n", "x", Kind.TENSOR, Place.UNKNOWN),
        ("import torch\nx = torch.zeros(3)\ny = torch.ones(3, device=x.device)\ny\n", "y", Kind.TENSOR, Place.CPU),
    ],
)
def test_kind_and_place(source, name, kind, place):
    value = value_of_last_use(source, name)
    assert (value.kind, value.place) == (kind, place)


MODULE_FILE = """
import torch
from torch import nn

class Base(nn.Module):
    pass

class Encoder(Base):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))
        self.plain = torch.zeros(4)
        self.device = torch.device("cpu")

    def forward(self, x):
        x.size(0)
        return self.helper(x)

    def helper(self, h):
        return h

class Storage:
    def to(self, device):
        pass

class Unknown(SomeBase):
    pass
"""


def test_classes_modules_and_attributes():
    analysis = FileAnalysis(cst.parse_module(MODULE_FILE))
    classes = analysis.flow.classes
    assert classes["Base"].is_module and classes["Encoder"].is_module
    assert classes["Storage"].is_module is False and classes["Storage"].converts_in_place
    assert classes["Unknown"].is_module is None
    attributes = classes["Encoder"].attributes
    assert (attributes["proj"].kind, attributes["proj"].place) == (Kind.MODULE, Place.DEVICE)
    assert (attributes["scale"].kind, attributes["scale"].place) == (Kind.TENSOR, Place.DEVICE)
    assert (attributes["plain"].kind, attributes["plain"].place) == (Kind.TENSOR, Place.UNKNOWN)
    assert attributes["device"].kind is Kind.DEVICE
    assert classes["Encoder"].running_methods == {"forward", "helper"}


def test_forward_inputs_reach_helpers_on_the_device():
    analysis = FileAnalysis(cst.parse_module(MODULE_FILE))
    helper = next(f for f in analysis.flow.scopes if isinstance(f, cst.FunctionDef) and f.name.value == "helper")
    assert analysis.flow.scopes[helper].env["h"].place is Place.DEVICE


@pytest.mark.parametrize(
    "source, elsewhere",
    [
        # CPU on one path, on the device on the other: both facts kept.
        ("import torch\nx = torch.ones(3) if c else torch.ones(3, device='cuda')\nx\n", Place.DEVICE),
        # On the caller's device on the other path (an argument).
        ("import torch\ndef f(m: torch.Tensor):\n    m = torch.ones(3) if m is None else m\n    m\n", Place.UNKNOWN),
        # Carried through arithmetic and reshaping.
        ("import torch\nx = torch.ones(3) if c else torch.ones(3, device='cuda')\ny = (x * 2).expand(3)\ny\n", Place.DEVICE),
        # Moved on the other path: the factory does not reach the device.
        ("import torch\nx = torch.ones(3)\nif c:\n    x = x.cuda()\nx\n", None),
        # Two CPU factories: the CPU on both paths.
        ("import torch\nx = torch.ones(3) if c else torch.zeros(3)\nx\n", None),
        # `.cpu()` pins it.
        ("import torch\nx = torch.ones(3) if c else torch.ones(3, device='cuda')\ny = x.cpu()\ny\n", None),
    ],
)
def test_a_factory_reached_on_one_path_remembers_the_device_of_the_others(source, elsewhere):
    assert value_of_last_use(source, source.rsplit("\n", 2)[-2].strip()).elsewhere is elsewhere


def test_a_device_parameter_defaulting_to_none_stays_so_after_a_branch():
    source = (
        "import torch\ndef f(x: torch.Tensor, device=None):\n"
        "    if x.dim() > 1:\n        device = device\n    else:\n        device = device or x.device\n    device\n"
    )
    assert value_of_last_use(source, "device").defaults_to_cpu


STRING_LITERALS = [
    '"cuda"', "'cuda:0'", 'u"cpu"', 'r"cuda"', 'R"a\\b"', 'r"\\""', 'b"cuda"', 'Rb"x"',
    '"a\\nb"', '"\\x63uda"', "'it\\'s'", '"""doc\nstring"""', "'''one\\\ntwo'''", 'r"""x\\y"""',
    '"\\N{BULLET}"', '""', "''''''",
]


@pytest.mark.parametrize("literal", STRING_LITERALS)
def test_string_value_agrees_with_python(literal):
    from torchdevice_lint.analysis.tree import string_value

    value = eval(literal)  # noqa: S307 - the literals above, Python's reading of them
    assert string_value(cst.parse_expression(literal)) == (value if isinstance(value, str) else None)


def _fixture_modules():
    """Every fixture and corpus file that LibCST parses, with its path."""
    from pathlib import Path

    root = Path(__file__).parent.parent
    for path in sorted([*(root / "fixtures").rglob("*.py"), *(root / "tests" / "corpus").rglob("*.py")]):
        try:
            yield path, cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue


def test_string_value_agrees_with_libcst_on_every_literal_of_the_fixtures():
    """The shortcut that skips ``ast.literal_eval`` for plain strings reads what LibCST reads."""
    from torchdevice_lint.analysis.tree import string_value, walk

    checked = 0
    for path, module in _fixture_modules():
        for node in walk(module):
            if isinstance(node, cst.SimpleString):
                expected = node.evaluated_value
                assert string_value(node) == (expected if isinstance(expected, str) else None), (path, node.value)
                checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    ("index", "scalar"),
    [("n - 1", True), ("n", True), ("-n", True), ("1 - n", True), ("1", True), ("m - 1", False), ("n - m", False), ("x[n]", False)],
)
def test_a_scalar_index_is_built_from_slice_bounds(index, scalar):
    from torchdevice_lint.analysis.evidence import body_nodes, is_scalar_index, slice_bound_names

    function = cst.parse_module(f"def f(x, n, m):\n    y = x[:n]\n    return x[{index}]\n").body[0]
    assert isinstance(function, cst.FunctionDef)
    assert slice_bound_names(body_nodes(function)) == {"n"}
    assert is_scalar_index(cst.parse_expression(index), {"n"}) is scalar


@pytest.mark.parametrize(
    ("call", "given"),
    [
        ("self.m(a, b)", "b"),
        ("self.m(a, t=b)", "b"),
        ("self.m(*a, t=b)", "b"),  # by keyword: whatever *a holds
        ("self.m(*a)", None),
        ("self.m(a, **k)", None),
        ("self.m(a)", None),
    ],
)
def test_the_argument_a_method_call_gives_for_a_parameter(call, given):
    """`_arguments_given`, read by `_given_cpu_factories` and `_given_only_own_state`."""
    from torchdevice_lint.analysis import _arguments_given

    owner = cst.parse_module(f"class C:\n    def m(self, s, t):\n        pass\n\n    def n(self, a, b):\n        {call}\n").body[0]
    assert isinstance(owner, cst.ClassDef)
    method = owner.body.body[0]
    assert isinstance(method, cst.FunctionDef)
    found = _arguments_given(owner, method, "t")
    assert (None if found is None else [cst.Module([]).code_for_node(value) for _, value in found]) == (
        None if given is None else [given]
    )
    assert _arguments_given(owner, method, "self") is None and _arguments_given(owner, method, "x") is None


@pytest.mark.parametrize(
    "text",
    ["x.cuda()", "torch.cuda.synchronize()", "cudart", "_cuda", "my_cuda_flag", "import mps\n", "mpsx", "use_xpu = 1",
     "x.xpu()", "device", "devices", "x.to(y)", "x.to (y)", "accelerator", "cudaé", "é cuda", "", "nothing here"],
)
def test_mentions_device_reads_what_the_regular_expression_it_replaces_reads(text):
    import re

    from torchdevice_lint.analysis.devices import mentions_device

    assert mentions_device(text) == bool(re.search(r"\bcuda\b|device|\.to\(|\bmps\b|accelerator|\bxpu\b", text))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("model = Net()  # select device\nrun(model)\n", False),
        ("# runs on cuda when there is one\n", False),
        ("x = x.to(device)  # move it\n", True),
        ("print('# not a comment: cuda')\n", True),  # the text after # in a string still counts
        ("print('#') or x.cuda()\n", True),
    ],
)
def test_mentions_device_leaves_out_comments(text, names):
    from torchdevice_lint.analysis.devices import mentions_device

    assert mentions_device(text) is names


def test_walk_leaves_out_whitespace_and_nothing_else():
    """`walk` (and so every walk of the analysis and the rules) does not descend into the
    whitespace and comments between the tokens of a statement (fields named ``whitespace...``, a
    one-line suite's ``leading_whitespace``): a fifth of the nodes of torch/nn. Every other node
    the fields of LibCST's nodes hold it yields, in the same order."""
    import dataclasses

    from torchdevice_lint.analysis.tree import _FORMATTING_FIELDS, walk

    formatting = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline, cst.EmptyLine, cst.Comment)

    def every_node(node: cst.CSTNode):
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            children = []
            for field in dataclasses.fields(current):
                if field.name not in _FORMATTING_FIELDS or field.name == "leading_whitespace":
                    value = getattr(current, field.name)
                    children += [item for item in (value if isinstance(value, (list, tuple)) else (value,)) if isinstance(item, cst.CSTNode)]
            stack.extend(reversed([child for child in children if not isinstance(child, formatting)]))

    checked = 0
    for path, module in _fixture_modules():
        assert [id(node) for node in walk(module)] == [id(node) for node in every_node(module)], path
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("imported", "test_code"),
    [
        ("from model.test import im_detect", False),
        ("from lib.testbed import run", False),
        ("import pytest", True),
        ("from unittest import mock", True),
        ("from torch.testing import assert_close", True),
        ("from tests.helpers import tiny_model", True),
        ("from test_utils import seed", True),
        ("from common.test_utils import seed", True),
    ],
)
def test_only_test_frameworks_utilities_and_leading_test_packages_make_test_code(imported, test_code):
    from torchdevice_lint import lint_source

    source = f"import torch\n{imported}\n\nnet = torch.nn.Linear(2, 2)\nnet.load_state_dict(torch.load('x.pth'))\n"
    reported = any(f.code == "TDL005" for f in lint_source(source))
    assert reported is not test_code


@pytest.mark.parametrize("qualified", sorted(torch_api.TENSOR_OPERAND_FUNCTIONS))
def test_a_tensor_operand_function_refuses_anything_but_a_tensor_first(qualified):
    """What makes ``torch.mean(corr)`` evidence that ``corr`` is a tensor: the installed torch
    refuses a NumPy array, a number, a list of numbers and a list of tensors there."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    module_name, _, name = qualified.rpartition(".")
    function = getattr(importlib.import_module(module_name), name)
    t = torch.ones(2, 3)
    for given in (np.ones((2, 3), dtype=np.float32), 2.0, 3, [1.0, 2.0], [t, t]):
        for rest in ((), (t,), (1,), (t, t), (1, t)):
            with pytest.raises(Exception):
                function(given, *rest)


def test_tensor_members_are_those_of_the_installed_torch():
    """`torch_api.TENSOR_MEMBERS` decides that ``prior.n_ctx`` shows no tensor: every public
    member of the installed ``torch.Tensor`` must be in it (a newer torch may add some)."""
    torch = pytest.importorskip("torch")
    public = {name for name in dir(torch.Tensor) if not name.startswith("_")}
    assert public <= torch_api.TENSOR_MEMBERS
    assert {"n_ctx", "decode", "parameters", "eval"}.isdisjoint(torch_api.TENSOR_MEMBERS)


@pytest.mark.parametrize("qualified", sorted(torch_api.TENSOR_SEQUENCE_FUNCTIONS))
def test_a_tensor_sequence_function_refuses_anything_but_tensors_as_parts(qualified):
    """What makes ``torch.stack((idx[:, 0], idx[:, 1]))`` evidence that ``idx`` is a tensor: a
    NumPy array (what ``[:, 0]`` of one gives), a number or a list in the sequence is refused."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    function = getattr(torch, qualified.rpartition(".")[2])
    t = torch.ones(2, 3)
    for part in (np.ones((2, 3), dtype=np.float32), 2.0, [1.0, 2.0, 3.0]):
        for sequence in ((part, t), [t, part], (part,)):
            with pytest.raises(Exception):
                function(sequence)


@pytest.mark.parametrize(
    ("guard", "ends_without_a_gpu"),
    [
        ("if not torch.cuda.is_available():\n        sys.exit(1)", True),
        ("if not torch.cuda.is_available():\n        log('no GPU')\n        exit()", True),
        ("if not torch.cuda.is_available():\n        raise RuntimeError('needs a GPU')", True),
        ("if torch.cuda.device_count() == 0:\n        sys.exit(1)", True),
        ("if torch.cuda.device_count() < 1:\n        os._exit(1)", True),
        ("if not torch.cuda.is_available():\n        return", False),
        ("if not torch.cuda.is_available():\n        log('running on the CPU')", False),
        ("if args.cuda and not torch.cuda.is_available():\n        sys.exit(1)", False),
        ("if torch.cuda.device_count() < 2:\n        sys.exit(1)", False),
    ],
)
def test_a_main_that_ends_without_a_gpu_makes_the_script_cuda_only(guard, ends_without_a_gpu):
    """The loop ``main()`` calls keeps its ``.cuda()`` (reported, no fix) only where ``main()``
    ends the program on a machine without a GPU."""
    from torchdevice_lint import lint_source

    source = (
        "import os\nimport sys\nimport torch\n\n\ndef train(loader, model):\n    for x in loader:\n"
        f"        model(x.cuda())\n\n\ndef main(args):\n    {guard}\n    train(args.loader, args.model)\n\n\n"
        "if __name__ == '__main__':\n    main(parse())\n"
    )
    (finding,) = [f for f in lint_source(source) if f.code == "TDL001"]
    assert finding.fixable is not ends_without_a_gpu


def test_names_made_on_a_device_of_their_own_are_not_the_callers_tensors():
    """What a function computes from its tensor arguments lives on the caller's device, except
    what goes through ``.cpu()`` (pytracking's ``ltrb = bbox_preds[0].cpu() * scale``) or a legacy
    constructor (``filler = torch.FloatTensor(filler)``, after which the name is rebound)."""
    source = (
        "import torch\n\n\ndef f(bbox_preds, filler, scale):\n    ltrb = bbox_preds.permute(0, 2, 1)[0].cpu() * scale\n"
        "    kept = bbox_preds.permute(0, 2, 1)[0] * scale\n    filler = torch.FloatTensor(filler)\n"
        "    return ltrb, kept, filler.unsqueeze(0)\n"
    )
    analysis = FileAnalysis(cst.parse_module(source))
    function = analysis.flow.functions["f"]
    derived = analysis.argument_derived_names(function)
    assert derived.get("kept") == "bbox_preds"
    assert "ltrb" not in derived and "filler" not in derived
    assert "filler" in analysis.rebound_parameters(function)
