"""Jupyter notebooks: findings per cell, magics untouched, and a fix that changes nothing but sources."""

import json

import pytest

from torchdevice_lint import Settings, fix_source, lint_source
from torchdevice_lint.cli import main
from torchdevice_lint.engine import Linter
from torchdevice_lint.notebook import (
    Notebook,
    NotebookError,
    fix_notebook,
    lint_notebook,
    mask,
    restore_margin,
    strip_margin,
)


def cell(source, kind="code", **extra):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=extra.pop("execution_count", None), outputs=extra.pop("outputs", []))
    cell.update(extra)
    return cell


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.0"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def lines(text):
    return text.splitlines(keepends=True)


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["loss 0.25 — ok\n"]}
EXAMPLE = notebook(
    cell(["# Training ✓\n", "Uses `.cuda()` in prose."], kind="markdown"),
    cell(lines("%matplotlib inline\nimport torch\n!pip install -q tqdm"), execution_count=1),
    cell(
        lines(
            "x = torch.randn(4)\n"
            "model = Net().cuda()\n"
            "files = !ls data\n"
            "for name in files:\n"
            "    %time load(name)\n"
            "torch.cuda?\n"
            'print("%d done" % 3)'
        ),
        execution_count=2,
        outputs=[OUTPUT],
    ),
    cell(lines("%%time\nslow = x.cuda()\n"), execution_count=3),
    cell("y = model(x.cuda())", execution_count=4),
    cell(["raw x.cuda()"], kind="raw"),
)


def dump(document, **options):
    return json.dumps(document, **{"indent": 1, "ensure_ascii": False, **options}) + "\n"


def test_findings_name_the_cell_and_the_line_in_it():
    found = [(f.cell, f.line, f.column, f.code) for f in lint_notebook(dump(EXAMPLE).encode(), Linter())]
    assert found == [(3, 2, 8, "TDL001"), (5, 1, 10, "TDL001")]


def test_cli_discovers_notebooks_and_prints_cell_locations(tmp_path, capsys):
    (tmp_path / "nb.ipynb").write_text(dump(EXAMPLE))
    (tmp_path / "notes.txt").write_text("x.cuda()")
    assert main(["-q", "--output-format", "concise", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{tmp_path / 'nb.ipynb'}:cell_3:2:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; "
        "use `.to(device)` [*]",
        f"{tmp_path / 'nb.ipynb'}:cell_5:1:11: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; "
        "use `.to(device)` [*]",
    ]


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"indent": 1, "ensure_ascii": False}, id="nbformat-style"),
        pytest.param({"indent": 2, "ensure_ascii": True}, id="indent-2-ascii-escapes"),
        pytest.param({"indent": "\t", "ensure_ascii": False}, id="tabs"),
        pytest.param({"indent": None, "separators": (",", ":")}, id="one-line"),
    ],
)
@pytest.mark.parametrize("final_newline", [True, False])
def test_round_trip_changes_only_the_fixed_cell_sources(tmp_path, options, final_newline):
    text = json.dumps(EXAMPLE, **options) + ("\n" if final_newline else "")
    path = tmp_path / "nb.ipynb"
    path.write_text(text, encoding="utf-8")
    assert main(["-q", "--fix", str(path)]) == 1
    fixed_text = path.read_text(encoding="utf-8")

    # The same document with only the two code cells' sources replaced, written the same way.
    expected = json.loads(text)
    expected["cells"][2]["source"] = lines(  # a cell without imports: the binding on its first line
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "x = torch.randn(4)\n"
        "model = Net().to(device)\n"
        "files = !ls data\n"
        "for name in files:\n"
        "    %time load(name)\n"
        "torch.cuda?\n"
        'print("%d done" % 3)'
    )
    expected["cells"][4]["source"] = "y = model(x.to(device))"
    assert fixed_text == json.dumps(expected, **options) + ("\n" if final_newline else "")

    # Fixing again changes nothing, and nothing is left to report.
    assert main(["-q", "--fix", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == fixed_text


def test_untouched_notebook_is_byte_identical(tmp_path):
    text = dump(notebook(cell(["import torch\n", "x = torch.ones(2)\n"], outputs=[OUTPUT])))
    path = tmp_path / "clean.ipynb"
    path.write_bytes(text.encode())
    assert main(["-q", "--fix", str(path)]) == 0
    assert path.read_bytes() == text.encode()


def test_unusual_layout_key_order_and_crlf_are_kept():
    text = (
        '{\r\n  "nbformat": 4, "nbformat_minor": 2,\r\n  "metadata": {},\r\n  "cells": [\r\n'
        '    {"source": ["import torch\\n",   "m = M().cuda()"], "outputs": [], "cell_type": "code",'
        ' "metadata": {"tags": ["x"]}, "execution_count": null}\r\n  ]\r\n}'
    )
    fixed = fix_source(text, filename="nb.ipynb")
    assert fixed == text.replace(
        '["import torch\\n",   "m = M().cuda()"]',
        '["import torch\\n",   "\\n",   "device = torch.device(\\"cuda\\" if torch.cuda.is_available() else \\"cpu\\")\\n",'
        '   "\\n",   "m = M().to(device)"]',
    )


def test_binding_goes_into_the_first_cell_that_needs_it():
    document = notebook(
        cell(["import torch\n", "import numpy as np\n"]),
        cell(["data = np.ones(3)\n"]),
        cell(["import os\n", "model = Net().cuda()\n"]),
        cell(["batch = batch.cuda()\n"]),
    )
    fixed = json.loads(fix_source(dump(document), filename="nb.ipynb"))
    sources = ["".join(c["source"]) for c in fixed["cells"]]
    assert sources[0] == "import torch\nimport numpy as np\n"  # the set-up cell is left alone
    assert sources[1] == "data = np.ones(3)\n"
    assert sources[2] == (
        'import os\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
        "model = Net().to(device)\n"
    )
    assert sources[3] == "batch = batch.to(device)\n"  # later cells reuse it


def test_a_device_bound_in_an_earlier_cell_is_reused():
    document = notebook(
        cell(["import torch\n", 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n']),
        cell(["model = Net().cuda()\n"]),
    )
    fixed = json.loads(fix_source(dump(document), filename="nb.ipynb"))
    assert fixed["cells"][1]["source"] == ["model = Net().to(device)\n"]
    assert fixed["cells"][0] == document["cells"][0]


def test_device_settings_reach_notebook_fixes():
    document = notebook(cell(["import torch\n", "m = M().cuda()\n"]))
    fixed = fix_source(dump(document), filename="x.ipynb", settings=Settings(device_name="dev"))
    assert "m = M().to(dev)" in fixed


@pytest.mark.parametrize(
    "source, masked_lines",
    [
        ("%load_ext autoreload\n", [0]),
        ("  !nvidia-smi\n", [0]),
        ("files = !ls\n", [0]),
        ("a, b = %who_ls\n", [0]),
        ("torch.zeros?\n", [0]),
        ("?torch.zeros\n", [0]),
        ("x = 1  # why?\n", []),
        ('s = """\n%not a magic\n"""\n', []),
        ("%timeit f(a, \\\n   b)\nx = 1\n", [0, 1]),
        ("y = a % b\n", []),
        ("z = x != 1\n", []),
        ('print("epoch %d, loss %.3f"\n      % (epoch, loss))\n', []),
        ("total = (a +\n  !b)\n%matplotlib inline\n", [2]),
        ("value = 1 + \\\n%2\n", []),
        ("s = 'unterminated\n%time f()\n", [1]),
        ("torch.cuda?\nx = 1\n", [0]),
        ("text = '''Can I train a model? \n    Sure you can.'''\n", []),
    ],
)
def test_masking(source, masked_lines):
    saved = {}
    masked = mask(source, saved)
    assert len(saved) == len(masked_lines)
    assert [i for i, line in enumerate(masked.splitlines()) if "_tdl_masked_" in line] == masked_lines
    assert len(masked.splitlines()) == len(source.splitlines())


def test_noqa_and_skip_file_work_in_cells():
    document = notebook(
        cell(["import torch\n", "a = x.cuda()  # noqa: TDL001\n"]),
        cell(["b = y.cuda()\n"]),
    )
    assert [(f.cell, f.line) for f in lint_source(dump(document), filename="n.ipynb")] == [(2, 1)]
    document["cells"].append(cell(["# torchdevice: skip-file\n"]))
    assert lint_source(dump(document), filename="n.ipynb") == []


def test_non_python_notebooks_and_empty_ones_are_skipped():
    assert lint_source(dump(notebook(cell(["x.cuda()\n"]), language="R")), filename="r.ipynb") == []
    assert lint_source(dump(notebook()), filename="e.ipynb") == []


def test_bad_notebooks_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "a_broken.ipynb").write_text('{"cells": [')
    (tmp_path / "b_syntax.ipynb").write_text(
        dump(notebook(cell(["import torch\n"]), cell(["def f(:\n", "    x.cuda()\n"])))
    )
    (tmp_path / "c_good.ipynb").write_text(dump(notebook(cell(["import torch\n", "m = M().cuda()\n"]))))
    assert main(["-q", "--output-format", "concise", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    errors = captured.err.splitlines()
    assert len(errors) == 2
    assert "a_broken.ipynb: error: not a valid notebook (JSON)" in errors[0]
    assert "b_syntax.ipynb:cell_2:1:7: error: syntax error: invalid syntax (the other cells were checked)" in errors[1]
    assert "c_good.ipynb:cell_1:2:5: TDL001" in captured.out
    with pytest.raises(NotebookError):
        Notebook.parse(b"\xff\xfe")


def test_diff_shows_cells(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    path.write_text(dump(EXAMPLE))
    assert main(["-q", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"--- a{path}:cell_3\n+++ b{path}:cell_3\n" in out  # absolute: a/tmp/..., as git writes it
    assert "-y = model(x.cuda())\n+y = model(x.to(device))\n" in out
    assert path.read_text() == dump(EXAMPLE)


def test_stdin_notebook_by_stdin_filename(monkeypatch, capsys):
    import io
    import sys

    data = dump(notebook(cell(["import torch\n", "m = M().cuda()\n"]))).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["-q", "--output-format", "concise", "--stdin-filename", "in.ipynb", "-"]) == 1
    assert capsys.readouterr().out.startswith("in.ipynb:cell_1:2:5: TDL001")


def test_fix_notebook_reports_what_remains():
    document = notebook(cell(["import torch\n", "a = x.cuda(0)\n", "b = y.cuda()\n"]))
    result = fix_notebook(dump(document).encode(), Linter())
    assert result.applied == 1
    assert [(f.cell, f.line) for f in result.remaining] == [(1, 5)]  # the unsafe one, after the new binding line and its blank lines


# Cells IPython cleans up before it runs them, each with its findings (cell, line, column,
# end column), its fixed source, the lines of the file the fix writes anew and what remains.
# - A cell copied from inside a function: the first line's indentation goes from every line
#   that starts with it (the blank line and the less indented comment keep theirs).
# - A cell pasted from a docstring (its first line starts with ``>>>``): the ``>>> `` /
#   ``... `` prompts go, bare ones too; the output line keeps what it has.
MARGIN_CASES = {
    "indented": (
        "    model = Net()\n"
        "\n"
        "# a note at the margin\n"
        "    for batch in loader:\n"
        "        %time step(batch)\n"
        "        out = model(batch.cuda())\n"
        "    y = torch.zeros(3).cuda(0)",
        [(6, 20, 32), (7, 8, 30)],
        '    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "    model = Net()\n"
        "\n"
        "# a note at the margin\n"
        "    for batch in loader:\n"
        "        %time step(batch)\n"
        "        out = model(batch.to(device))\n"
        "    y = torch.zeros(3).cuda(0)",
        [
            '    "    device = torch.device(\\"cuda\\" if torch.cuda.is_available() else \\"cpu\\")\\n",\n',
            '    "        out = model(batch.to(device))\\n",\n',
        ],
        (8, 8),  # the unsafe one, still indented
    ),
    "doctest": (
        ">>> model = Net()\n"
        ">>> !nvidia-smi\n"
        ">>> for batch in loader:\n"
        "...     out = model(batch.cuda())\n"
        "...\n"
        ">>> y = torch.zeros(3).cuda(0)\n"
        "tensor([0., 0., 0.])",
        [(4, 20, 32), (6, 8, 30)],
        '>>> device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        ">>> model = Net()\n"
        ">>> !nvidia-smi\n"
        ">>> for batch in loader:\n"
        "...     out = model(batch.to(device))\n"
        "...\n"
        ">>> y = torch.zeros(3).cuda(0)\n"
        "tensor([0., 0., 0.])",
        [
            '    ">>> device = torch.device(\\"cuda\\" if torch.cuda.is_available() else \\"cpu\\")\\n",\n',
            '    "...     out = model(batch.to(device))\\n",\n',
        ],
        (7, 8),  # the unsafe one, after its prompt
    ),
}


@pytest.mark.parametrize("case", MARGIN_CASES)
def test_a_cell_ipython_cleans_up_parses_with_its_own_columns(case):
    source, expected, *_ = MARGIN_CASES[case]
    document = notebook(cell(["import torch\n"]), cell(lines(source)))
    found = [(f.cell, f.line, f.column, f.end_column, f.code) for f in lint_notebook(dump(document).encode(), Linter())]
    assert found == [(2, *place, "TDL001") for place in expected]


@pytest.mark.parametrize("case", MARGIN_CASES)
def test_a_cell_ipython_cleans_up_is_fixed_in_its_own_margin(case):
    source, _, fixed_source, new_lines, remaining = MARGIN_CASES[case]
    document = notebook(cell(["import torch\n"]), cell(lines(source)))
    result = fix_notebook(dump(document).encode(), Linter())
    assert result.applied == 1
    fixed = json.loads(result.data)["cells"][1]["source"]
    assert fixed == lines(fixed_source)
    original = dump(document).splitlines(keepends=True)
    written = result.data.decode().splitlines(keepends=True)
    assert [line for line in written if line not in original] == new_lines
    assert len(written) == len(original) + 1
    assert [(f.cell, f.line, f.column) for f in result.remaining] == [(2, *remaining)]
    assert fix_notebook(result.data, Linter()).data == result.data
    with pytest.raises(SyntaxError):
        compile("".join(fixed), "<cell>", "exec")  # still as written ...
    compile(mask(strip_margin("".join(fixed)).source, {}), "<cell>", "exec")  # ... and runs as IPython runs it


def test_a_doctest_cell_with_its_own_imports_gets_prompted_blank_lines():
    document = notebook(cell(lines(">>> import torch\n>>> m = torch.nn.Linear(2, 2).cuda()\n>>> def f(x):\n...     return x.cuda()\n")))
    result = fix_notebook(dump(document).encode(), Linter())
    assert json.loads(result.data)["cells"][0]["source"] == lines(
        ">>> import torch\n"
        ">>>\n"
        '>>> device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        ">>>\n"
        ">>> m = torch.nn.Linear(2, 2).to(device)\n"
        ">>> def f(x):\n"
        "...     return x.to(device)\n"
    )
    assert fix_notebook(result.data, Linter()).data == result.data


def test_a_real_syntax_error_in_a_doctest_cell_is_named_in_the_cell_as_written():
    document = notebook(cell(["import torch\n"]), cell(lines(">>> x = torch.ones(2,\n...         3)\n>>> y = 'unclosed\n")))
    errors: list[str] = []
    assert lint_notebook(dump(document).encode(), Linter(), errors) == []
    assert errors == ["cell_2:3:9: syntax error: unterminated string literal (detected at line 3)"]
    with pytest.raises(NotebookError, match="cell_2:3:9: syntax error"):
        lint_notebook(dump(document).encode(), Linter())


@pytest.mark.parametrize(
    "source, cleaned, removed",
    [
        (">>> a = 1\n... \n>>>\nb\n", "a = 1\n\n\nb\n", {1: ">>> ", 2: "... ", 3: ">>>"}),
        ("\n>>> a = (1,\n...      2)\n", "\na = (1,\n     2)\n", {2: ">>> ", 3: "... "}),
        ("    >>> a = 1\n    ...\n", "a = 1\n\n", {1: "    >>> ", 2: "    ..."}),
        # A prompt pasted one column in (huggingface/notebooks diffusers_doc): IPython 9 removes it too.
        (">>> import os\n\n >>> a = 1\n", "import os\n\na = 1\n", {1: ">>> ", 3: " >>> "}),
        # Not a pasted doctest: the first line has no prompt (IPython leaves ``...`` alone: it is Python).
        ("def f():\n    ...\n>>> x\n", "def f():\n    ...\n>>> x\n", {}),
        (">>>x = 1\n", ">>>x = 1\n", {}),
        ("    a = 1\n  b\n", "a = 1\n  b\n", {1: "    "}),
    ],
)
def test_strip_margin_is_ipython_cleanup(source, cleaned, removed):
    margin = strip_margin(source)
    assert (margin.source, dict(margin.removed)) == (cleaned, removed)


def test_new_lines_get_the_doctest_prompt_for_where_they_start():
    margin = strip_margin(">>> a = 1\n")
    fixed = "a = 1\nb = f(\n    1,\n)\nif b:\n\n    c = 2\n"
    written, after = restore_margin(margin, fixed)
    assert written == ">>> a = 1\n>>> b = f(\n...     1,\n... )\n>>> if b:\n>>>\n...     c = 2\n"
    assert strip_margin(written).source == fixed == after.source


def test_fix_only_the_chosen_finding_of_a_notebook():
    """An editor's quick fix in a notebook: the finding is chosen as the cell shows it (an indented cell too)."""
    data = json.dumps(notebook(cell("import torch\na = x.cuda()\n"), cell("    b = y.cuda()\n"))).encode()
    assert [(f.cell, f.line, f.column) for f in lint_notebook(data, Linter())] == [(1, 2, 4), (2, 1, 8)]
    fixed = fix_notebook(data, Linter(), only=lambda finding: (finding.cell, finding.line, finding.column) == (2, 1, 8))
    sources = ["".join(c["source"]) for c in json.loads(fixed.data)["cells"]]
    assert "a = x.cuda()" in sources[0] and sources[1].endswith("    b = y.to(device)\n")
    assert [(f.cell, f.line) for f in fixed.remaining] == [(1, 2)]
