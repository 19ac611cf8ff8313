"""Each ``--output-format`` checked against what reads it: flake8's line, a JSON schema, the
SARIF 2.1.0 schema (vendored in tests/data), GitHub's workflow-command syntax; and --statistics."""

import json
import re
from pathlib import Path

import jsonschema
import pytest

from torchdevice_lint.cli import main
from torchdevice_lint.output import Entry
from torchdevice_lint.output.github import escape_property, format_entry
from torchdevice_lint.output.text import format_full, unified_diff
from torchdevice_lint.findings import Finding, Safety
from torchdevice_lint.rules import ALL_RULES

DATA = Path(__file__).parent / "data"
SOURCE = "import torch\nmodel = Net().cuda()\nx = torch.zeros(3).to('cuda:0')\n"
NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Notes\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["import torch\n", "%matplotlib inline\n", "model = Net().cuda()\n"]},
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(SOURCE)
    (tmp_path / "src" / "clean.py").write_text("import torch\n")
    (tmp_path / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    code = main(["-q", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------- full text
def test_full_is_the_default_with_source_caret_and_fix_note(project, capsys):
    code, out, _ = run(capsys, "src/train.py")
    assert code == 1
    assert out == (
        "src/train.py:2:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`\n"
        "   |\n"
        " 2 | model = Net().cuda()\n"
        "   |         ^^^^^^^^^^^^\n"
        "   = fix available: run with --fix\n"
        "\n"
        "src/train.py:3:23: TDL002 hardcoded CUDA device 'cuda:0' has no CPU fallback\n"
        "   |\n"
        " 3 | x = torch.zeros(3).to('cuda:0')\n"
        "   |                       ^^^^^^^^\n"
        "   = unsafe fix available: run with --fix --unsafe-fixes (review the change)\n"
        "\n"
    )


def test_full_keeps_tabs_under_the_caret_and_marks_multiline_spans_to_the_line_end():
    finding = Finding("TDL001", "m", line=3, column=2, end_line=4, end_column=3)
    text = format_full(Entry("a.py", finding, "\t\tfoo(x,"))
    assert "\t\tfoo(x,\n" in text
    assert "|" + " \t\t^^^^^^\n" in text
    assert "no automatic fix" in text


def test_full_in_a_notebook_names_the_cell(project, capsys):
    _, out, _ = run(capsys, "nb.ipynb")
    assert out.startswith("nb.ipynb:cell_2:3:9: TDL001 ")
    assert " 3 | model = Net().cuda()\n" in out


# ------------------------------------------------------------------- concise
def test_concise_is_flake8s_line(project, capsys):
    code, out, _ = run(capsys, "--output-format", "concise", "src", "nb.ipynb")
    assert code == 1
    assert out.splitlines() == [
        "src/train.py:2:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)` [*]",
        "src/train.py:3:23: TDL002 hardcoded CUDA device 'cuda:0' has no CPU fallback [unsafe fix]",
        "nb.ipynb:cell_2:3:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)` [*]",
    ]


# ---------------------------------------------------------------------- json
JSON_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["path", "cell", "line", "column", "end_line", "end_column", "code", "name", "message", "fix"],
        "properties": {
            "path": {"type": "string"},
            "cell": {"type": ["integer", "null"], "minimum": 1},
            "line": {"type": "integer", "minimum": 1},
            "column": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
            "end_column": {"type": "integer", "minimum": 1},
            "code": {"type": "string", "pattern": "^TDL[0-9]{3}$"},
            "name": {"type": "string"},
            "message": {"type": "string"},
            "fix": {
                "type": "object",
                "additionalProperties": False,
                "required": ["available", "safety"],
                "properties": {"available": {"type": "boolean"}, "safety": {"enum": ["safe", "unsafe", None]}},
            },
        },
    },
}


def test_json_matches_its_schema(project, capsys):
    code, out, _ = run(capsys, "--output-format", "json", "src", "nb.ipynb")
    assert code == 1
    document = json.loads(out)
    jsonschema.validate(document, JSON_SCHEMA)
    assert [(d["path"], d["cell"], d["line"], d["column"], d["code"]) for d in document] == [
        ("src/train.py", None, 2, 9, "TDL001"),
        ("src/train.py", None, 3, 23, "TDL002"),
        ("nb.ipynb", 2, 3, 9, "TDL001"),
    ]
    assert document[0]["fix"] == {"available": True, "safety": "safe"}
    assert document[0]["end_column"] == 21


def test_json_with_no_findings_is_an_empty_array(project, capsys):
    assert run(capsys, "--output-format", "json", "src/clean.py")[:2] == (0, "[]\n")


# --------------------------------------------------------------------- sarif
def sarif_validator():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema, format_checker=validator.FORMAT_CHECKER)


def test_sarif_is_valid_2_1_0_as_github_code_scanning_reads_it(project, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", str(project / "src"), "nb.ipynb")
    assert code == 1
    log = json.loads(out)
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert not errors, errors[0]
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "torchdevice-lint"
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in ALL_RULES]
    for descriptor, rule in zip(driver["rules"], ALL_RULES):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] and descriptor["fullDescription"]["text"]
        assert descriptor["help"]["markdown"] == rule.documentation()
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"

    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["TDL001", "TDL002", "TDL001"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith(("/", "file:"))  # repository-relative, even for an absolute path
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "src/train.py"
    assert first["region"] == {"startLine": 2, "startColumn": 9, "endLine": 2, "endColumn": 21}
    notebook = results[2]
    assert notebook["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nb.ipynb"
    line = notebook["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert '"model = Net().cuda()\\n"' in (project / "nb.ipynb").read_text().splitlines()[line - 1]
    assert notebook["message"]["text"].startswith("cell 2, line 3, column 9: ")


def test_the_schema_check_catches_a_broken_log(project, capsys):
    _, out, _ = run(capsys, "--output-format", "sarif", "src")
    log = json.loads(out)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del log["runs"][0]["tool"]["driver"]["name"]
    assert len(list(sarif_validator().iter_errors(log))) == 2


def test_sarif_without_findings_is_still_valid(project, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", "src/clean.py")
    assert code == 0
    log = json.loads(out)
    assert log["runs"][0]["results"] == []
    assert not list(sarif_validator().iter_errors(log))


# -------------------------------------------------------------------- github
COMMAND = re.compile(
    r"^::warning file=(?P<file>[^,:]+),line=(?P<line>\d+)(?:,col=\d+,endLine=\d+,endColumn=\d+)?"
    r",title=(?P<title>TDL\d{3})::(?P<message>[^\r\n]+)$"
)


def test_github_workflow_commands(project, capsys):
    code, out, _ = run(capsys, "--output-format", "github", "src", "nb.ipynb")
    assert code == 1
    lines = out.splitlines()
    assert all(COMMAND.match(line) for line in lines), lines
    assert lines[0] == (
        "::warning file=src/train.py,line=2,col=9,endLine=2,endColumn=21,title=TDL001::"
        "`.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`"
    )
    assert lines[2].startswith("::warning file=nb.ipynb,line=")
    assert "::cell 2, line 3, column 9: `.cuda()`" in lines[2]


def test_github_escapes_what_the_runner_would_misread():
    finding = Finding("TDL002", "100% wrong\nnext", 1, 0, 1, 1)
    line = format_entry(Entry("dir,with:odd%name.py", finding))
    assert line == (
        "::warning file=dir%2Cwith%3Aodd%25name.py,line=1,col=1,endLine=1,endColumn=2,title=TDL002::100%25 wrong%0Anext"
    )
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


# ---------------------------------------------------------------- statistics
def test_statistics_count_per_code_with_fixability(project, capsys):
    (project / "src" / "more.py").write_text("y = z.cuda(0)\nw = v.cuda(1)\nimport torch\n")
    code, out, _ = run(capsys, "--statistics", "--select", "TDL001,TDL002", "src")
    assert code == 1
    assert out.splitlines() == [
        "3  TDL001  cuda-call     3 fixable (1 safe, 2 unsafe)",
        "1  TDL002  cuda-literal  1 fixable (1 unsafe)",
    ]
    _, out, _ = run(capsys, "--statistics", "--select", "TDL001,TDL002", "--output-format", "json", "src")
    assert json.loads(out)[0] == {
        "code": "TDL001", "name": "cuda-call", "count": 3, "fixable": 3, "safe_fixes": 1, "unsafe_fixes": 2,
    }


def test_statistics_columns_line_up_whatever_the_widths(project, capsys):
    # TDL005's name is the longest (25 characters) and ten findings need a two-digit count.
    (project / "src" / "load.py").write_text("import torch\nstate = torch.load('m.pt')\n" + "x = y.cuda()\n" * 10)
    _, out, _ = run(capsys, "--statistics", "--select", "TDL001,TDL005", "src")
    rows = out.splitlines()
    assert [row.split()[:3] for row in rows] == [["11", "TDL001", "cuda-call"], ["1", "TDL005", "load-without-map-location"]]
    for column in ("TDL", rows[1].split()[2]):
        starts = {row.index(row.split()[1] if column == "TDL" else row.split()[2]) for row in rows}
        assert len(starts) == 1, rows
    fixability = {len(row) - len(row.split("  ")[-1].lstrip()) for row in rows}
    assert len(fixability) == 1, rows


def test_statistics_without_a_path_checks_the_current_directory(project, capsys):
    code, out, _ = run(capsys, "--statistics")  # like `ruff check --statistics`
    assert code == 1
    assert [row.split()[:2] for row in out.splitlines()] == [["2", "TDL001"], ["1", "TDL002"]]


# --------------------------------------------------------------------- color
def test_diff_colour_follows_the_flag(project, capsys):
    _, plain, _ = run(capsys, "--diff", "--color", "never", "src/train.py")
    _, painted, _ = run(capsys, "--diff", "--color", "always", "src/train.py")
    _, auto, _ = run(capsys, "--diff", "src/train.py")  # captured stdout is not a terminal
    assert "\033[" not in plain and auto == plain
    assert "\033[31m-model = Net().cuda()\033[0m\n" in painted
    assert "\033[32m+model = Net().to(device)\033[0m\n" in painted
    assert re.sub(r"\033\[[0-9;]*m", "", painted) == plain


def test_no_color_disables_auto(monkeypatch):
    from torchdevice_lint.cli import color_wanted

    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert color_wanted("auto", Terminal()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert color_wanted("auto", Terminal()) is False
    assert color_wanted("always", Terminal()) is True


def test_unified_diff_shows_only_the_changed_line_in_a_file_of_repeated_lines():
    """semseg's resnet.py (229 lines, ``    return model`` in 1% of them): difflib's junk heuristic
    left such a line unmatched, so the unchanged last line showed as removed and added again."""
    blocks = [f"def resnet{n}():\n    model = build({n})\n    load(model)\n    return model\n\n\n" for n in range(40)]
    before = "".join(blocks)
    after = before[: before.rindex("    load(model)")] + "    load(model, strict=False)\n    return model\n\n\n"
    diff = unified_diff("r.py", before.encode(), after.encode())
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    assert changed == ["-    load(model)", "+    load(model, strict=False)"]
    assert diff.count("\n@@ ") == 1  # one hunk


def test_unified_diff_marks_a_last_line_without_a_newline():
    """pytorch-generative-model-collections' GAN files end without a newline: the removed last
    line ran on into the added one, and ``patch`` could not read the diff."""
    assert unified_diff("a.py", b"a\nx", b"a\ny") == (
        "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n a\n-x\n\\ No newline at end of file\n"
        "+y\n\\ No newline at end of file\n"
    )
    painted = unified_diff("a.py", b"a\nx", b"a\ny", color=True)
    assert "\\ No newline at end of file\n" in painted.replace("\x1b[0m", "")


def test_unified_diff_plain_is_unchanged():
    assert unified_diff("a.py", b"x\n", b"y\n") == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"


def test_safety_markers_in_concise():
    from torchdevice_lint.output.text import format_finding

    base = Finding("TDL001", "msg", 1, 0, 1, 1)
    assert format_finding("p.py", base) == "p.py:1:1: TDL001 msg"
    assert format_finding("p.py", Finding("TDL001", "msg", 1, 0, 1, 1, Safety.SAFE)).endswith(" [*]")
