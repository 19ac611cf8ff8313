"""``torchdevice-fix`` as users run it: exit codes, modes, stdin, and bad input."""

import io
import os
import stat
import sys

import pytest

from torchdevice_lint.cli import main

BUGGY = "import torch\nmodel = Net().cuda()\n"
FIXED = (
    "import torch\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
    "model = Net().to(device)\n"
)
CLEAN = "import torch\nmodel = Net().to(device)\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "nested.py").write_text("x = y.cuda(0)\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "ignored.py").write_text(BUGGY)
    return tmp_path


def test_check_mode_reports_in_flake8_format_and_exits_1(project, capsys):
    assert main(["--output-format", "concise", str(project)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{project / 'buggy.py'}:2:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)` [*]",
        f"{project / 'pkg' / 'nested.py'}:1:5: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; "
        "use `.to(device)` [unsafe fix]",
    ]
    assert (project / "buggy.py").read_text() == BUGGY


def test_clean_file_exits_0(project, capsys):
    assert main([str(project / "clean.py")]) == 0
    assert capsys.readouterr().out == ""


def test_diff_prints_and_writes_nothing(project, capsys):
    assert main(["--diff", str(project / "buggy.py")]) == 1
    out = capsys.readouterr().out
    assert "-model = Net().cuda()\n" in out
    assert "+model = Net().to(device)\n" in out
    assert '+device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n' in out
    assert (project / "buggy.py").read_text() == BUGGY


def test_fix_writes_safe_fixes_only_then_is_idempotent(project, capsys):
    assert main(["--fix", str(project)]) == 1
    assert (project / "buggy.py").read_text() == FIXED
    assert (project / "pkg" / "nested.py").read_text() == "x = y.cuda(0)\n"  # unsafe: left alone
    capsys.readouterr()
    assert main(["--fix", str(project / "buggy.py")]) == 0
    assert (project / "buggy.py").read_text() == FIXED


def test_unsafe_fixes_apply_unsafe_ones(project):
    assert main(["--fix", "--unsafe-fixes", str(project / "pkg")]) == 1
    assert "x = y.to(device)" in (project / "pkg" / "nested.py").read_text()


def test_fix_keeps_file_mode(project):
    path = project / "buggy.py"
    os.chmod(path, 0o640)
    main(["--fix", str(path)])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_select_and_ignore_prefixes(project, capsys):
    assert main(["--select", "TDL00", "--ignore", "TDL001", str(project)]) == 0
    assert main(["--select", "TDL002", str(project)]) == 0
    assert main(["--ignore", "tdl", str(project)]) == 0
    assert main(["--select", "TDL001", str(project / "buggy.py")]) == 1


def test_stdin_reads_and_writes_streams(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BUGGY.encode())))
    assert main(["--fix", "-"]) == 1
    assert capsys.readouterr().out == FIXED


def test_bad_inputs_are_reported_one_line_each_and_the_run_goes_on(tmp_path, capsys):
    (tmp_path / "a_syntax.py").write_text("import torch\ndef broken(:\n")
    (tmp_path / "b_binary.py").write_bytes(b"\x00\x01\x02cuda(")
    (tmp_path / "c_latin1.py").write_bytes(b"x = '\xe9'\nmodel.cuda()\n")
    (tmp_path / "d_good.py").write_text(BUGGY)
    assert main([str(tmp_path), str(tmp_path / "missing.py")]) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if not line.startswith("Checked ")]  # summary line
    assert len(errors) == 4
    assert all(": error: " in line for line in errors)
    for name in ("a_syntax.py", "b_binary.py", "c_latin1.py", "missing.py"):
        assert sum(name in line for line in errors) == 1
    assert "d_good.py:2:9: TDL001" in captured.out


def test_unwritable_file_is_an_error_for_that_file_only(project, capsys):
    if os.geteuid() == 0:
        pytest.skip("root can write read-only files")
    path = project / "buggy.py"
    os.chmod(path, 0o444)
    assert main(["--fix", str(project)]) == 2


def test_files_that_cannot_match_are_not_parsed(tmp_path, capsys):
    (tmp_path / "notes.py").write_text("def broken(:\n")  # no torch, no cuda: never parsed
    assert main([str(tmp_path)]) == 0


def test_explain_prints_rule_docs(capsys):
    assert main(["--explain", "TDL004"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TDL004 (discarded-conversion)")
    assert "## Fix safety" in out
    assert main(["--explain", "TDL999"]) == 2


def test_no_paths_is_a_usage_error(capsys):
    assert main([]) == 2


def test_paths_print_without_a_leading_dot_slash(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    for given in (".", "./", "./buggy.py", "././pkg"):
        main(["--quiet", "--output-format", "concise", given])
        lines = capsys.readouterr().out.splitlines()
        assert lines and not any(line.startswith(".") for line in lines), (given, lines)
    main(["--quiet", "--output-format", "concise", "."])
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == ["buggy.py", "pkg/nested.py"]
