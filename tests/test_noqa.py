"""Suppression comments: every ``# noqa`` form with flake8's meaning, and ``# torchdevice: skip-file``."""

import subprocess
import sys

import pytest

from torchdevice_lint import fix_source, lint_source
from torchdevice_lint.cli import main

CUDA = "import torch\nx = y.cuda(){comment}\n"


def reported(source):
    return [(f.line, f.code) for f in lint_source(source)]


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        pytest.param("", False, id="no-comment"),
        pytest.param("  # noqa", True, id="blanket"),
        pytest.param("  # NOQA", True, id="blanket-upper"),
        pytest.param("  # NoQA", True, id="blanket-mixed"),
        pytest.param("  # noqa: TDL001", True, id="code"),
        pytest.param("  # noqa:TDL001", True, id="code-no-space"),
        pytest.param("  # noqa: TDL001,TDL003", True, id="codes-comma"),
        pytest.param("  # noqa: TDL003, TDL001", True, id="codes-comma-space"),
        pytest.param("  # noqa: TDL003 TDL001", True, id="codes-space"),
        pytest.param("  # noqa: TDL00", True, id="prefix"),
        pytest.param("  # noqa: TDL", True, id="letters-only-is-blanket-as-in-flake8"),
        pytest.param("  # noqa: TDL002", False, id="other-code"),
        pytest.param("  # noqa: E501", False, id="other-tool"),
        pytest.param("  # noqa: E501,TDL001", True, id="mixed-tools"),
        pytest.param("  # noqa: tdl001", False, id="lower-case-code-as-in-flake8"),
        pytest.param("  # noqa : TDL002", True, id="space-before-colon-is-blanket-as-in-flake8"),
        pytest.param("  # noqa:", True, id="empty-list-is-blanket"),
        pytest.param("  #noqa", False, id="no-space-after-hash-as-in-flake8"),
        pytest.param("  # type: ignore  # noqa: TDL001", True, id="after-another-comment"),
        pytest.param("  # noqa: TDL001 explanation follows", True, id="trailing-words"),
    ],
)
def test_inline_forms(comment, suppressed):
    assert (reported(CUDA.format(comment=comment)) == []) is suppressed


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("import torch\nx = foo(  # noqa: TDL001\n    y.cuda(),\n    z,\n)\n", id="first-line"),
        pytest.param("import torch\nx = foo(\n    y.cuda(),  # noqa: TDL001\n    z,\n)\n", id="same-line"),
        pytest.param("import torch\nx = foo(\n    y.cuda(),\n    z,  # noqa\n)\n", id="middle-line"),
        pytest.param("import torch\nx = foo(\n    y.cuda(),\n    z,\n)  # noqa: TDL001\n", id="last-line"),
        pytest.param("import torch\nx = y \\\n    .cuda()  # noqa\n", id="backslash"),
        pytest.param('import torch\nx = f("""\n""", y.cuda())  # noqa\n', id="after-multiline-string"),
        pytest.param("import torch\nif y.cuda():  # noqa: TDL001\n    pass\n", id="if-header"),
        pytest.param("import torch\nwhile (\n    y.cuda()\n):  # noqa\n    pass\n", id="multiline-while-header"),
        pytest.param("import torch\nfor a in [\n    y.cuda(),  # noqa\n]:\n    pass\n", id="for-header"),
        pytest.param("import torch\nwith ctx(y.cuda()):  # noqa\n    pass\n", id="with-header"),
        pytest.param("import torch\ndef f(a=y.cuda()):  # noqa\n    pass\n", id="def-header"),
        pytest.param("import torch\n@deco(\n    y.cuda(),\n)  # noqa\ndef f():\n    pass\n", id="decorator"),
    ],
)
def test_noqa_on_any_line_of_the_statement(source):
    assert reported(source) == []
    assert fix_source(source) == source  # suppressed findings are never fixed


def test_header_noqa_does_not_cover_the_body():
    source = "import torch\nif ok:  # noqa\n    x = y.cuda()\n"
    assert reported(source) == [(3, "TDL001")]


def test_noqa_on_one_statement_leaves_its_neighbours():
    source = "import torch\na = x.cuda()  # noqa\nb = y.cuda()\nc = (\n    z.cuda()\n)\n"
    assert reported(source) == [(3, "TDL001"), (5, "TDL001")]


def test_noqa_inside_a_string_counts_as_in_flake8():
    source = 'import torch\nx = y.cuda("# noqa")\n'
    assert reported(source) == []


@pytest.mark.parametrize(
    "header, skipped",
    [
        pytest.param("# torchdevice: skip-file\n", True, id="ours"),
        pytest.param("#torchdevice:skip-file\n", True, id="ours-tight"),
        pytest.param("    # TorchDevice: Skip-File\n", True, id="ours-indented-any-case"),
        pytest.param("# flake8: noqa\n", True, id="flake8-file-level"),
        pytest.param("# flake8= noqa\n", True, id="flake8-equals"),
        pytest.param("x = 1  # torchdevice: skip-file\n", False, id="ours-after-code"),
        pytest.param("# torchdevice: skip-files-later\n", False, id="other-word"),
        pytest.param("# some text\n", False, id="unrelated"),
    ],
)
def test_skip_file(header, skipped):
    source = "import torch\n" + header + "model = Net().cuda()\n"
    assert (reported(source) == []) is skipped
    assert (fix_source(source) == source) is skipped


def test_cli_honours_noqa_and_skip_file(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import torch\nx = foo(\n    y.cuda(),\n)  # noqa: TDL001\nz = w.cuda()  # noqa: TDL002\n")
    (tmp_path / "b.py").write_text("# torchdevice: skip-file\nimport torch\nm = M().cuda()\n")
    assert main(["--output-format", "concise", "-q", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path / 'a.py'}:5:5: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)` [*]"
    ]
    assert main(["--fix", "-q", str(tmp_path)]) == 1
    assert "y.cuda()" in (tmp_path / "a.py").read_text()
    assert "w.to(device)" in (tmp_path / "a.py").read_text()
    assert (tmp_path / "b.py").read_text().endswith("m = M().cuda()\n")


ALL_FORMS = """import torch
a = x.cuda()  # noqa
b = x.cuda()  # noqa: TDL001
c = x.cuda()  # noqa:TDL002
d = x.cuda()  # noqa: E501,TDL00
e = x.cuda()  # noqa: tdl001
f = x.cuda()  #noqa
g = foo(
    x.cuda(),
)  # noqa: TDL001
if x.cuda():  # noqa
    h = x.cuda()
i = x.cuda()
"""


def test_cli_and_flake8_suppress_the_same_findings(tmp_path):
    path = tmp_path / "forms.py"
    path.write_text(ALL_FORMS)
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TDL", str(path)], capture_output=True, text=True, timeout=300
    )
    cli = subprocess.run(
        [sys.executable, "-m", "torchdevice_lint.cli", "--output-format", "concise", "-q", str(path)],
        capture_output=True, text=True, timeout=300,
    )
    cli_lines = [line.replace(" [*]", "") for line in cli.stdout.splitlines()]
    assert flake8.stdout.splitlines() == cli_lines, flake8.stderr + cli.stderr
    assert [int(line.split(":")[1]) for line in cli_lines] == [4, 6, 7, 12, 13]
