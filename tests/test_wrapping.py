"""A fix never pushes a line past the project's line length: the line is laid out as the
formatter lays it out (torchdevice_lint/wrapping.py), and the limit comes from the project's
Ruff, Black or flake8 configuration (config.project_line_length)."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchdevice_lint import fix_source
from torchdevice_lint.cli import main
from torchdevice_lint.config import project_layout, project_line_length
from torchdevice_lint.engine import Linter
from torchdevice_lint.settings import Settings

RUFF = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))


def fixed(source: str, line_length: int = 88) -> str:
    return fix_source(textwrap.dedent(source), settings=Settings(line_length=line_length))


def formats_unchanged(source: str, line_length: int, tmp_path: Path) -> bool:
    """Ruff's formatter (Black's style) leaves ``source`` as it is at ``line_length``."""
    path = tmp_path / "formatted.py"
    path.write_text(source)
    command = [RUFF, "format", "--isolated", "--no-cache", "--check", "--line-length", str(line_length), str(path)]
    return subprocess.run(command, capture_output=True).returncode == 0


# The lines before each case are formatted at 88 and fit; the fix makes one of them too long.
CASES = [
    pytest.param(
        """\
        import torch


        def sample(model, x, t, noise, conditioning):
            if True:
                out = model(
                    x, timesteps=torch.Tensor((t,)).to(noise.device), context=conditioning
                )
            return out
        """,
        """\
        import torch


        def sample(model, x, t, noise, conditioning):
            if True:
                out = model(
                    x,
                    timesteps=torch.tensor(
                        (t,), dtype=torch.get_default_dtype(), device=noise.device
                    ),
                    context=conditioning,
                )
            return out
        """,
        id="arguments-of-an-exploded-call-one-per-line",
    ),
    pytest.param(
        """\
        import torch


        def gelu(x):
            return 0.5 * x * (1.0 + torch.tanh(torch.Tensor([2.0 / math.pi]).to(x.device)))
        """,
        """\
        import torch


        def gelu(x):
            return (
                0.5
                * x
                * (
                    1.0
                    + torch.tanh(
                        torch.tensor(
                            [2.0 / math.pi], dtype=torch.get_default_dtype(), device=x.device
                        )
                    )
                )
            )
        """,
        id="operators-in-parentheses",
    ),
    pytest.param(
        """\
        import torch

        CASES = [
            torch.Tensor([1 / 3]).unsqueeze(0).unsqueeze(0),  # window 3, polyorder 1
        ]
        """,
        """\
        import torch

        CASES = [
            torch.tensor([1 / 3], dtype=torch.get_default_dtype())
            .unsqueeze(0)
            .unsqueeze(0),  # window 3, polyorder 1
        ]
        """,
        id="method-chain-keeps-its-comment",
    ),
    pytest.param(
        """\
        import torch


        def make(batch, hidden_features, layers):
            state = torch.FloatTensor(batch, hidden_features, layers, 2 * layers + 1)
            return state
        """,
        """\
        import torch


        def make(batch, hidden_features, layers):
            state = torch.empty(
                batch, hidden_features, layers, 2 * layers + 1, dtype=torch.float32
            )
            return state
        """,
        id="statement-split-at-its-last-bracket",
    ),
    pytest.param(
        """\
        import torch


        def place(inputs, weights, height_in_pixels, width_px):
            return torch.ones(len(inputs), len(weights), height_in_pixels, width_px, 3).cuda()
        """,
        """\
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


        def place(inputs, weights, height_in_pixels, width_px):
            return torch.ones(len(inputs), len(weights), height_in_pixels, width_px, 3).to(
                device
            )
        """,
        id="moved-result-split-at-the-move",
    ),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_a_line_the_fix_makes_too_long_is_laid_out_as_the_formatter_does(source, expected, tmp_path):
    source, expected = textwrap.dedent(source), textwrap.dedent(expected)
    assert formats_unchanged(source, 88, tmp_path)
    result = fixed(source)
    assert result == expected
    assert formats_unchanged(result, 88, tmp_path)
    assert all(len(line) <= 88 for line in result.splitlines())
    assert fixed(result) == result


def test_without_a_configured_line_length_lines_keep_within_88():
    """No configuration states a limit: a fix keeps the lines it lengthens within 88 columns
    (Black's and Ruff's default; the unsafe TDL002 string idiom for ctranslate2 went to 117);
    a line longer already is tolerated there and stays as the fix writes it."""
    source, expected = CASES[0].values
    assert fix_source(textwrap.dedent(source)) == textwrap.dedent(expected)
    probe = "import torch\nimport ctranslate2\n\n\ndef f(path):\n" + (
        "    return ctranslate2.Generator(path, device='cuda', compute_type='float16')\n"
    )
    assert fix_source(probe, unsafe=True).endswith(
        "    return ctranslate2.Generator(\n        path,\n"
        "        device='cuda' if torch.cuda.is_available() else 'cpu',\n        compute_type='float16',\n    )\n"
    )
    long = probe.replace("'float16')", "'float16', inter_threads=4, intra_threads=1)")
    assert "compute_type='float16', inter_threads=4, intra_threads=1)\n" in fix_source(long, unsafe=True)


def test_a_line_already_too_long_is_not_rewrapped():
    """The project tolerates that line (a noqa, an URL, a table): the fix leaves its layout alone."""
    source = "import torch\n\nTABLE = torch.Tensor([[0.5, 1.5], [2.5, 3.5]]).to(x)  # " + "c" * 80 + "\n"
    result = fixed(source, 60)
    assert result == source.replace("torch.Tensor(", "torch.tensor(")


def test_lines_a_fix_joins_into_one_too_long_are_laid_out():
    """pytracking: a constructor moved at once over two lines, the first already past 88, became
    one line of 170 columns when the move went into ``device=``; it is laid out instead."""
    source = (
        "import torch\n\n\ndef f(self, step_length):\n    if self.refine:\n"
        "        init_step_length = torch.Tensor([step_length[0], step_length[0], step_length[1], step_length[1]]).to(\n"
        "            self.params.device).view(1, 1, 4)\n    return init_step_length\n"
    )
    assert fix_source(source) == (
        "import torch\n\n\ndef f(self, step_length):\n    if self.refine:\n"
        "        init_step_length = torch.tensor(\n"
        "            [step_length[0], step_length[0], step_length[1], step_length[1]],\n"
        "            dtype=torch.get_default_dtype(),\n            device=self.params.device,\n"
        "        ).view(1, 1, 4)\n    return init_step_length\n"
    )


def test_untouched_lines_keep_their_bytes_and_layout():
    """Only the lengthened line changes; a long line elsewhere and odd spacing stay as written."""
    source = (
        "import torch\n"
        "LONG = 'this line is longer than the limit and no fix touches it at all'\n"
        "x  =  f( 1 )\n"
        "y = torch.IntTensor([1, 2, 3, 4]).view(1, 4).to(x)\n"
    )
    result = fixed(source, 55)
    assert result.splitlines()[:3] == source.splitlines()[:3]
    assert result.splitlines()[3:] == [
        "y = (", "    torch.tensor([1, 2, 3, 4], dtype=torch.int32)", "    .view(1, 4)", "    .to(x)", ")"
    ]


def test_a_layout_that_cannot_fit_is_not_written():
    """A name longer than the limit cannot be split: the fixed line stays one line."""
    source = "import torch\nx = torch.Tensor([0.5]).to(" + "n" * 70 + ")\n"
    assert fixed(source, 60) == source.replace("Tensor", "tensor")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "[tool.ruff]\nline-length = 119\n"}, 119),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 133\n[tool.black]\nline-length = 120\n"}, 120),
        ({"pyproject.toml": "[tool.black]\ntarget-version = ['py39']\n"}, 88),
        ({"pyproject.toml": "[tool.ruff.lint.pycodestyle]\nmax-line-length = 100\n"}, 100),
        ({"ruff.toml": "line-length = 99\n"}, 99),
        ({"setup.cfg": "[flake8]\nmax-line-length = 120\n"}, 120),
        ({"tox.ini": "[flake8]\nmax_line_length = 110\n"}, 110),
        ({".flake8": "[flake8]\nmax-line-length = 100\n"}, 100),
        ({"setup.cfg": "[pycodestyle]\nmax-line-length = 90\n", "pyproject.toml": "[tool.isort]\nline_length = 120\n"}, 90),
        ({"pyproject.toml": "[tool.isort]\nline_length = 120\n", "setup.cfg": "[metadata]\nname = x\n"}, None),
        ({".style.yapf": "[style]\nbased_on_style = pep8\n"}, 79),
        ({"setup.cfg": "[yapf]\nbased_on_style = facebook\n"}, 80),
        ({"pyproject.toml": "[tool.yapf]\nbased_on_style = 'google'\ncolumn_limit = 100\n"}, 100),
    ],
    ids=["ruff", "smallest-of-ruff-and-black", "black-default", "pycodestyle", "ruff-toml", "setup-cfg", "tox-ini",
         "dot-flake8", "pycodestyle-section", "isort-only", "yapf-pep8", "yapf-facebook", "yapf-column-limit"],
)
def test_project_line_length_is_read_from_the_projects_config(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    folder = tmp_path / "pkg" / "sub"
    folder.mkdir(parents=True)
    assert project_line_length(str(folder)) == expected


def test_the_nearest_configured_folder_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "setup.cfg").write_text("[flake8]\nmax-line-length = 79\n")
    assert project_line_length(str(tmp_path / "sub")) == 79
    assert project_line_length(str(tmp_path)) == 120


def test_fix_command_wraps_at_the_projects_line_length(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 60\n")
    module = tmp_path / "model.py"
    module.write_text("import torch\n\n\ndef f(x):\n    return g(x, scale=torch.FloatTensor([0.5, 0.25]).to(x))\n")
    main(["-q", "--fix", "--no-cache", str(module)])
    assert module.read_text() == (
        "import torch\n\n\ndef f(x):\n    return g(\n        x,\n        scale=torch.tensor(\n"
        "            [0.5, 0.25], dtype=torch.float32\n        ).to(x),\n    )\n"
    )
    assert formats_unchanged(module.read_text(), 60, tmp_path)


MOVED_AFTER_A_SPLIT_CALL = '''\
import torch


def main(device):
    grounding_dino_model = AutoModelForZeroShotObjectDetection.from_pretrained(
        "IDEA-Research/grounding-dino-base"
    ).cuda()
    return grounding_dino_model
'''


def test_a_statement_the_fix_gives_another_layout_is_laid_out_again(tmp_path):
    """diffusers' gligen script: `.cuda()` has no bracket to split at, `.to(device)` has, and the
    formatter then splits there; the fix leaves the statement as the formatter would."""
    assert formats_unchanged(MOVED_AFTER_A_SPLIT_CALL, 119, tmp_path)
    result = fixed(MOVED_AFTER_A_SPLIT_CALL, 119)
    assert result == MOVED_AFTER_A_SPLIT_CALL.replace(
        '(\n        "IDEA-Research/grounding-dino-base"\n    ).cuda()',
        '("IDEA-Research/grounding-dino-base").to(\n        device\n    )',
    )
    assert formats_unchanged(result, 119, tmp_path)
    assert fixed(result, 119) == result


def test_a_statement_laid_out_by_hand_keeps_its_layout():
    """Where the formatter would not have written the statement so, its author did: the fix
    edits it in place."""
    source = MOVED_AFTER_A_SPLIT_CALL.replace('(\n        "IDEA', '(\n            "IDEA')
    assert fixed(source, 119) == source.replace(".cuda()", ".to(device)")


def test_without_a_configured_line_length_a_commented_line_stays_on_one_line():
    """Person_reID's ``ff = torch.FloatTensor(n, 2048, 6).zero_().cuda() # six parts``: laid out,
    the comment would trail a lone closing bracket."""
    source = (
        "import torch\n\n\ndef f(batch_size, feature_dim, num_parts, device):\n"
        "    ff = torch.FloatTensor(batch_size, feature_dim, num_parts).zero_().to(device)  # we have six parts here\n"
    )
    assert "dtype=torch.float32, device=device)  # we have six parts here\n" in fix_source(source)


FOR_HEADER = '''\
import torch


def test():
    for model, ids in [
            (get_model(monotonic=False), None),
            (get_model(monotonic=False, n_speakers=32, speaker_embed_dim=16), torch.IntTensor([1]))]:
        print(model, ids)
'''


def test_a_line_that_cannot_be_laid_out_within_the_limit_keeps_its_finding_unfixed():
    """deepvoice3 (tox.ini: 120): an element of the list in a ``for`` header, which the layout
    cannot split on its own line, went from 117 to 133 columns (here 101 to 117, limit 110).
    The fix is not applied there; the finding stays reported, the file's other fixes are made."""
    source = FOR_HEADER + "y = torch.FloatTensor(2)\n"
    result = fix_source(source, settings=Settings(line_length=110))
    assert result == FOR_HEADER + "y = torch.empty(2, dtype=torch.float32)\n"
    assert max(len(line) for line in result.splitlines()) <= 110
    assert "dtype=torch.int32" in fixed(FOR_HEADER, 130)
    remaining = Linter(Settings(line_length=110)).fix(source).remaining
    assert [(finding.line, finding.fix_safety) for finding in remaining] == [(7, None)]  # not offered again


def test_fix_says_why_it_left_a_fix_check_mode_offered(tmp_path, capsys):
    """EDVR (flake8 max-line-length 79): ``lpips.LPIPS(net='vgg').cuda()  # RGB, ...`` is offered
    in check mode, but its fixed line does not fit; --fix says so rather than "no automatic fix"."""
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 110\n")
    path = tmp_path / "header.py"
    path.write_text(FOR_HEADER)
    assert main(["--no-cache", str(path)]) == 1
    assert "fix available: run with --fix" in capsys.readouterr().out
    assert main(["--fix", "--no-cache", str(path)]) == 1
    assert "fix not applied: the fixed line would not fit in 110 columns (the project's line length)" in capsys.readouterr().out
    assert path.read_text() == FOR_HEADER



@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "[tool.black]\n"}, None),
        ({".style.yapf": "[style]\nbased_on_style = pep8\n"}, "yapf-aligned"),
        ({"setup.cfg": "[yapf]\nbased_on_style = pep8\nsplit_before_expression_after_opening_paren = true\n"}, "yapf-hanging"),
        ({"pyproject.toml": "[tool.yapf]\nbased_on_style = 'facebook'\n"}, "yapf-dedent"),
        ({"setup.cfg": "[yapf]\nbased_on_style = google\ndedent_closing_brackets = True\n"}, "yapf-dedent"),
        ({"setup.cfg": "[yapf]\nbased_on_style = pep8\nindent_closing_brackets = true\n"}, "yapf"),
    ],
    ids=["black", "pep8", "split-before-expression", "facebook", "dedent-option", "unknown-layout"],
)
def test_the_projects_yapf_style_is_read(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert project_layout(str(tmp_path)) == expected


YAPF_SOURCE = """\
import torch


def imresize(in_c, in_h, in_w, sym_len_hs, sym_len_he):
    img_aug = torch.FloatTensor(in_c, in_h + sym_len_hs + sym_len_he, in_w)
    return img_aug
"""


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        (
            "yapf-hanging",
            "    img_aug = torch.empty(\n        in_c, in_h + sym_len_hs + sym_len_he, in_w, dtype=torch.float32)\n",
        ),
        (
            "yapf-aligned",
            "    img_aug = torch.empty(in_c,\n                          in_h + sym_len_hs + sym_len_he,\n"
            "                          in_w,\n                          dtype=torch.float32)\n",
        ),
        (
            "yapf-dedent",
            "    img_aug = torch.empty(\n        in_c, in_h + sym_len_hs + sym_len_he, in_w, dtype=torch.float32\n    )\n",
        ),
    ],
)
def test_a_line_is_laid_out_as_the_projects_yapf_style_lays_it_out(layout, expected):
    """NAFNet's setup.cfg (yapf, pep8, split_before_expression_after_opening_paren): Black's
    layout put the closing bracket on a line of its own, which yapf joins back (class G). Each
    expected text is yapf 0.32's output for that style."""
    result = fix_source(YAPF_SOURCE, settings=Settings(line_length=79, layout=layout))
    assert result == YAPF_SOURCE.replace(
        "    img_aug = torch.FloatTensor(in_c, in_h + sym_len_hs + sym_len_he, in_w)\n", expected
    )


def test_a_yapf_layout_not_known_here_leaves_the_finding_unfixed():
    """A display among the arguments (yapf then weighs other splits) or a style whose layout is
    not known: the fix that would need the line laid out is not applied."""
    source = "import torch\n\nweights_of_layer = torch.FloatTensor([0.25, 0.5, 0.75, 1.0, 1.25, 1.5])\n"
    assert fix_source(source, settings=Settings(line_length=79, layout="yapf-aligned")) == source
    assert fix_source(YAPF_SOURCE, settings=Settings(line_length=79, layout="yapf")) == YAPF_SOURCE


def test_fix_command_reads_the_yapf_style(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\nmax-line-length=79\n\n[yapf]\nbased_on_style = pep8\n"
        "split_before_expression_after_opening_paren = true\n"
    )
    module = tmp_path / "matlab_functions.py"
    module.write_text(YAPF_SOURCE)
    main(["-q", "--fix", "--no-cache", str(module)])
    assert "torch.empty(\n        in_c, in_h + sym_len_hs + sym_len_he, in_w, dtype=torch.float32)\n" in module.read_text()


ALIGNED = """\
import torch
from torch.nn import Parameter


class Layer(torch.nn.Module):
    def __init__(self, in_channels, heads, out_channels):
        self.weight = Parameter(torch.Tensor(in_channels,
                                             heads * out_channels))


def forward(x, b, c):
    return torch.cuda.FloatTensor(b, c,
                                  x.size(1)).fill_(0)
"""


def test_lines_aligned_with_a_bracket_the_fix_moves_move_with_it():
    """GraphGym's ``Parameter(torch.Tensor(a,`` over ``b))`` aligned with its bracket, and
    fast-autoaugment's ``torch.cuda.FloatTensor(b, c,`` over ``x.size(1))`` (the new arguments
    follow the last one): the continuation lines follow the bracket (pycodestyle E127/E128)."""
    result = fix_source(ALIGNED, unsafe=True)
    assert "Parameter(torch.empty(in_channels,\n                                            heads * out_channels))\n" in result
    assert (
        "    return torch.zeros(b, c,\n                       x.size(1),\n                       dtype=torch.float32,\n"
        "                       device=x.device)\n"
    ) in result


def test_lines_not_aligned_with_the_moved_bracket_keep_their_indentation():
    source = ALIGNED.replace("                                             heads", "            heads")
    assert "Parameter(torch.empty(in_channels,\n            heads * out_channels))\n" in fix_source(source)


def test_rows_aligned_with_the_data_of_a_rewritten_constructor_move_with_it():
    """#17 class F (crnn.pytorch checkOneHot): ``torch.FloatTensor([[...],`` over rows aligned
    with its ``[`` becomes ``torch.tensor(``, five columns to the left: the rows follow."""
    source = (
        "import torch\n\n\ndef f():\n    target = torch.FloatTensor([[[0, 1, 0, 0], [0, 0, 1, 0]],\n"
        "                                [[0, 1, 0, 0], [0, 0, 1, 0]]])\n    return target\n"
    )
    assert fix_source(source) == (
        "import torch\n\n\ndef f():\n    target = torch.tensor([[[0, 1, 0, 0], [0, 0, 1, 0]],\n"
        "                           [[0, 1, 0, 0], [0, 0, 1, 0]]], dtype=torch.float32)\n    return target\n"
    )


def test_whole_numbers_that_would_push_the_line_past_88_keep_their_form_with_a_dtype():
    """#17 8a note (reid-strong-baseline center_loss.py): ``torch.Tensor([16 whole numbers])``
    written as floats went past 88 columns, and the layout put one number per line (20 lines);
    with ``dtype=torch.get_default_dtype()`` the layout splits the arguments. A short list
    still becomes floats."""
    numbers = "0, 1, 2, 3, 2, 3, 1, 4, 5, 3, 2, 1, 0, 0, 5, 4"
    source = f"import torch\n\n\ndef f():\n    if True:\n        return torch.Tensor([{numbers}]).sum()\n"
    assert fix_source(source) == (
        "import torch\n\n\ndef f():\n    if True:\n        return torch.tensor(\n"
        f"            [{numbers}],\n            dtype=torch.get_default_dtype(),\n        ).sum()\n"
    )
    short = "import torch\n\n\ndef f():\n    return torch.Tensor([0, 1]).sum()\n"
    assert fix_source(short) == short.replace("torch.Tensor([0, 1])", "torch.tensor([0.0, 1.0])")


def test_without_a_configured_line_length_an_argument_aligned_with_its_bracket_stays_on_one_line():
    """Self-Attention-GAN's gradient penalty: ``grad(outputs=out,`` with each argument aligned
    under the first. Laid out as Black lays out a hanging line, the fixed argument came out as
    ``.to(\\n    out.device\\n)`` at that column; unconfigured, it keeps its one line."""
    source = (
        "import torch\n\n\nclass Trainer:\n    def penalty(self, out, interpolated):\n"
        "        gradient = torch.autograd.grad(outputs=out,\n"
        "                                       inputs=interpolated,\n"
        "                                       grad_outputs=torch.ones(out.size()).cuda(),\n"
        "                                       retain_graph=True)[0]\n        return gradient\n"
    )
    assert "                                       grad_outputs=torch.ones(out.size()).to(out.device),\n" in fix_source(source)
