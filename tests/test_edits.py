"""rules/_edits.py: the argument a fix appends sits where a person would write it."""

import libcst as cst
import pytest

from tests.test_wrapping import formats_unchanged
from torchdevice_lint import fix_source
from torchdevice_lint.rules._edits import append_argument, argument, expression


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("f(a)", 'f(a, map_location="cpu")'),
        ("f(a,)", 'f(a, map_location="cpu",)'),
        ("f(\n    a\n)", 'f(\n    a,\n    map_location="cpu",\n)'),
        ("f(\n    a,\n)", 'f(\n    a,\n    map_location="cpu",\n)'),
        ("f(\n    [\n        1,\n    ]\n)", 'f(\n    [\n        1,\n    ],\n    map_location="cpu",\n)'),
        ("f(a,\n  b)", 'f(a,\n  b,\n  map_location="cpu")'),
        ("f(\n    a, b\n)", 'f(\n    a, b, map_location="cpu"\n)'),
    ],
    ids=[
        "one-line",
        "trailing-comma",
        "one-per-line",
        "one-per-line-trailing-comma",
        "exploded-list",
        "hanging",
        "hugging-brackets",
    ],
)
def test_appended_argument_follows_the_calls_layout(call, expected):
    module = cst.parse_module(call + "\n")
    node = cst.ensure_type(cst.ensure_type(module.body[0], cst.SimpleStatementLine).body[0], cst.Expr).value
    appended = append_argument(cst.ensure_type(node, cst.Call), argument(expression('"cpu"'), "map_location"))
    assert module.code_for_node(appended) == expected


def test_no_trailing_whitespace_after_a_fix_on_an_exploded_call(tmp_path):
    """MONAI's tests: torch.Tensor( [ ...rows... ] ) got '],' with a trailing space (ruff W291)."""
    source = "import torch\n\nKERNEL = torch.Tensor(\n    [\n        [a, b],\n        [c, d],\n    ]\n)\n"
    fixed = fix_source(source)
    assert fixed == (
        "import torch\n\nKERNEL = torch.tensor(\n    [\n        [a, b],\n        [c, d],\n    ],\n"
        "    dtype=torch.get_default_dtype(),\n)\n"
    )
    assert all(line == line.rstrip() for line in fixed.splitlines())
    assert formats_unchanged(fixed, 88, tmp_path)  # the trailing comma Black and Ruff write one per line


def test_arguments_on_one_line_between_the_brackets_get_the_new_one_on_that_line(tmp_path):
    """speechbrain's TTS.py: torch.LongTensor(\n    len(texts), max_seq_len\n).to(self.device) got
    'dtype=torch.int64,' on a line of its own, a magic trailing comma ruff format then exploded."""
    source = (
        "import torch\n\n\ndef pad(texts, max_seq_len, device):\n"
        "    tokens_with_spn_tensor_padded = torch.LongTensor(\n        len(texts), max_seq_len\n    ).to(device)\n"
        "    return tokens_with_spn_tensor_padded\n"
    )
    assert formats_unchanged(source, 80, tmp_path)
    fixed = fix_source(source)
    assert "        len(texts), max_seq_len, dtype=torch.int64, device=device\n    )\n" in fixed  # moved at once: device=
    assert formats_unchanged(fixed, 80, tmp_path)
