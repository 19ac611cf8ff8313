"""The Python API (``lint_source``, ``fix_source``, ``Finding``) as documented, and the front ends on it."""

import ast
import doctest
import json

import pytest

import torchdevice_lint
from torchdevice_lint import Finding, FixResult, Linter, Safety, Settings, SourceError, fix_source, lint_source
from torchdevice_lint.config import resolve_config

SOURCE = "import torch\nmodel = Net().cuda()\nbatch = batch.cuda(0)\n"


def test_lint_source_returns_sorted_findings_with_documented_fields():
    first, second = lint_source(SOURCE)
    assert isinstance(first, Finding)
    assert (first.code, first.line, first.column, first.end_line, first.end_column) == ("TDL001", 2, 8, 2, 20)
    assert first.message.startswith("`.cuda()` hardcodes CUDA")
    assert first.fix_safety is Safety.SAFE and first.fixable
    assert second.fix_safety is Safety.UNSAFE and second.line == 3
    assert first.cell is None
    assert lint_source(SOURCE.encode()) == [first, second]  # bytes give the same findings


def test_fix_source_returns_the_type_it_is_given_and_honours_unsafe():
    fixed = fix_source(SOURCE)
    assert isinstance(fixed, str)
    assert "model = Net().to(device)" in fixed and "batch.cuda(0)" in fixed
    assert "batch = batch.to(device)" in fix_source(SOURCE, unsafe=True)
    assert isinstance(fix_source(SOURCE.encode()), bytes)


def test_settings_choose_rules_and_shape_fixes():
    assert lint_source(SOURCE, Settings(ignore=("TDL001",))) == []
    fixed = fix_source(SOURCE, settings=Settings(device_name="dev", device_style="accelerator"))
    assert "dev = (\n    torch.accelerator.current_accelerator()\n" in fixed


def test_settings_from_a_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchdevice-lint]\nignore = ["TDL001"]\n')
    settings = resolve_config([str(tmp_path)]).settings()
    assert lint_source(SOURCE, settings) == []


def test_noqa_switch_and_source_errors():
    assert lint_source("import torch\nx = y.cuda()  # noqa\n") == []
    assert len(lint_source("import torch\nx = y.cuda()  # noqa\n", noqa=False)) == 1
    with pytest.raises(SourceError):
        lint_source("import torch\ndef f(:\n")


def test_notebooks_through_the_api():
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": ["import torch\n", "m = M().cuda()\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    text = json.dumps(notebook, indent=1)
    (finding,) = lint_source(text, filename="analysis.ipynb")
    assert (finding.cell, finding.line, finding.column) == (1, 2, 4)
    fixed = fix_source(text, filename="analysis.ipynb")
    assert json.loads(fixed)["cells"][0]["source"][-1] == "m = M().to(device)\n"


def test_linter_is_the_reusable_form():
    linter = Linter(Settings())
    result = linter.fix(SOURCE)
    assert isinstance(result, FixResult)
    # the remaining finding moved down by the device line and the blank lines around it
    assert result.applied == 1 and [f.line for f in result.remaining] == [6]
    assert linter.lint(SOURCE) == lint_source(SOURCE)


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for function in (lint_source, fix_source):
        (test,) = finder.find(function, globs={"lint_source": lint_source, "fix_source": fix_source})
        assert test.examples
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_public_names_are_documented():
    for name in torchdevice_lint.__all__:
        if name != "__version__":
            assert getattr(torchdevice_lint, name).__doc__, name
    assert "lint_source" in torchdevice_lint.__doc__ and "fix_source" in torchdevice_lint.__doc__


def test_the_flake8_plugin_lints_through_the_api_with_its_one_engine(monkeypatch):
    from torchdevice_lint import api, flake8_plugin

    calls = []

    def spy(source, linter, **options):
        calls.append((source, linter, options))
        return api.lint_file(source, linter, **options)

    monkeypatch.setattr(flake8_plugin, "lint_file", spy)
    plugin = flake8_plugin.TorchDevicePlugin(ast.parse(SOURCE), SOURCE.splitlines(keepends=True))
    reported = list(plugin.run())
    assert calls and calls[0][0] == SOURCE and calls[0][1] is flake8_plugin.TorchDevicePlugin.linter
    assert [(line, column, text.split()[0]) for line, column, text, _ in reported] == [(2, 8, "TDL001"), (3, 8, "TDL001")]


def test_the_cli_runs_on_the_public_linter():
    from torchdevice_lint import runner

    assert runner.Linter is torchdevice_lint.Linter


def test_importing_the_package_does_not_load_libcst():
    """The verifier's pytest plugin imports the package in every pytest run of its users."""
    import subprocess
    import sys

    code = "import sys, torchdevice_lint.verify.pytest_plugin; print('libcst' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    assert __import__("torchdevice_lint").lint_source is not None
