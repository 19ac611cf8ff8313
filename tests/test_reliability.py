"""Never corrupt a file, never stop a run for one bad file.

Byte fidelity (line endings, BOM, tabs, form feeds, final newline, PEP 263 cookies), bad input
through the CLI (one line per file, exit 2, the rest of the run completes, with one job or
two) and safe writes (read-only, vanished or changed files; interrupted writes).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import threading
import time

import libcst as cst
import pytest

from torchdevice_lint import fix_source
from torchdevice_lint import runner
from torchdevice_lint.cli import main
from torchdevice_lint.runner import write_atomically

BINDING = b'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'
_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))


def lines(data: bytes) -> list[bytes]:
    return _LINE.findall(data)


# ---------------------------------------------------------------- byte fidelity
FIDELITY = {
    "lf": (b"import torch\nx = 1\nmodel = Net().cuda()\ny = 2\n", b"\n"),
    "crlf": (b"import torch\r\nx = 1\r\nmodel = Net().cuda()\r\ny = 2\r\n", b"\r\n"),
    "cr": (b"import torch\rx = 1\rmodel = Net().cuda()\ry = 2\r", b"\r"),
    "mixed-lf-first": (b"import torch\nx = 1\r\nmodel = Net().cuda()\r\ny = 2\n", b"\n"),
    "mixed-crlf-first": (b"import torch\r\nx = 1\nmodel = Net().cuda()\ny = 2\r\n", b"\r\n"),
    "bom": (b"\xef\xbb\xbfimport torch\nx = 1\nmodel = Net().cuda()\ny = 2\n", b"\n"),
    "bom-crlf": (b"\xef\xbb\xbfimport torch\r\nx = 1\r\nmodel = Net().cuda()\r\ny = 2\r\n", b"\r\n"),
    "tabs": (b"import torch\nif x:\n\tmodel = Net().cuda()\n\ty = '\t'\n", b"\n"),
    "form-feed-line": (b"import torch\n\x0c\nx = 1\nmodel = Net().cuda()\n", b"\n"),
    "form-feed-indent": (b"import torch\n\x0cx = 1\n\x0cmodel = Net().cuda()\nif a:\n\x0c    y = 2\n", b"\n"),
    "no-final-newline": (b"import torch\nx = 1\nmodel = Net().cuda()", b"\n"),
    "no-final-newline-crlf": (b"import torch\r\nx = 1\r\nmodel = Net().cuda()", b"\r\n"),
    "latin-1-cookie": (b"# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nmodel = Net().cuda()\n", b"\n"),
    "cp1252-cookie-crlf": (b"# vim: set fileencoding=cp1252 :\r\nimport torch\r\nq = '\x93quoted\x94'\r\nm = Net().cuda()\r\n",
                           b"\r\n"),
    "trailing-whitespace": (b"import torch  \nx = 1 \t\nmodel = Net().cuda()   \n\n\n", b"\n"),
    "backslash-continuation": (b"import torch\nx = 1 + \\\n    2\nmodel = Net().cuda()\n", b"\n"),
}


@pytest.mark.parametrize("source, newline", list(FIDELITY.values()), ids=list(FIDELITY))
def test_fixing_keeps_every_other_byte(source, newline):
    fixed = fix_source(source)
    assert isinstance(fixed, bytes) and fixed != source
    cst.parse_module(fixed)
    before, after = lines(source), lines(fixed)
    # One line inserted (the binding, with up to two blank lines around it, in the file's own
    # line ending), one edited (the .cuda() call), every other one identical.
    # (in the file's quotes: 'tabs' and the cookie files write their one string with single quotes)
    inserted = [line for line in after if BINDING in line.replace(b"'", b'"')]
    assert [line.replace(b"'", b'"') for line in inserted] == [BINDING + newline]
    edited = [line for line in before if b".cuda()" in line]
    kept = [line for line in before if line not in edited]
    remaining = list(after)
    remaining.remove(inserted[0])
    new_blank_lines = remaining.count(newline) - before.count(newline)
    assert 0 <= new_blank_lines <= 2
    for _ in range(new_blank_lines):
        remaining.remove(newline)
    for line in kept:
        assert line in remaining, f"{line!r} changed"
        remaining.remove(line)
    assert len(remaining) == len(edited) == 1
    assert remaining[0].replace(b".to(device)", b".cuda()") == edited[0]
    assert fixed.startswith(b"\xef\xbb\xbf") == source.startswith(b"\xef\xbb\xbf")
    assert fix_source(fixed) == fixed


@pytest.mark.parametrize("source, newline", list(FIDELITY.values()), ids=list(FIDELITY))
def test_the_cli_writes_the_same_bytes(tmp_path, capsys, source, newline):
    path = tmp_path / "module.py"
    path.write_bytes(source)
    assert main(["--quiet", "--isolated", "--fix", str(path)]) == 1  # 1: files changed
    assert path.read_bytes() == fix_source(source)
    assert main(["--quiet", "--isolated", str(path)]) == 0


def test_a_file_without_findings_is_never_rewritten(tmp_path, capsys):
    path = tmp_path / "clean.py"
    path.write_bytes(b"import torch\r\n\x0cx = torch.ones(3)\r")
    before = os.stat(path)
    assert main(["--quiet", "--isolated", "--fix", str(path)]) == 0
    assert os.stat(path).st_ino == before.st_ino and os.stat(path).st_mtime_ns == before.st_mtime_ns


# ------------------------------------------------------------------- bad input
def bad_project(root):
    """A folder where every kind of bad input sits next to a good file with a finding."""
    root.mkdir()
    (root / "a_good.py").write_text("import torch\nmodel = Net().cuda()\n")
    (root / "syntax.py").write_text("import torch\ndef f(:\n    pass\n")
    (root / "undecodable.py").write_bytes(b"import torch\nname = '\xff\xfe\xfa'\n")
    (root / "bad_cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\nimport torch\n")
    (root / "binary.py").write_bytes(b"\x7fELF\x02\x01torch\x00\x00\x00\x01\x02")
    (root / "huge.py").write_bytes(b"import torch\n" + b"x = torch.zeros(3)  # padding padding padding\n" * 110_000)
    (root / "loop.py").symlink_to(root / "loop.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)  # a folder loop: never followed
    (root / "dir.py").mkdir()  # a folder named like a module is a folder: walked
    (root / "dir.py" / "inner.py").write_text("import torch\nt = torch.ones(2).cuda()\n")
    os.mkfifo(root / "fifo.py")
    (root / "z_good.py").write_text("import torch\nother = Net().cuda()\n")
    return root


EXPECTED_ERRORS = {
    "syntax.py": ":2:7: error: syntax error: invalid syntax",  # flake8's position, for editors
    "undecodable.py": "cannot decode",
    "bad_cookie.py": "cannot decode",
    "binary.py": "binary file",
    "huge.py": "file too large to check (5.1 MB; the limit is 2.0 MB)",
    "loop.py": "too many levels of symbolic links",
    "dangling.py": "no such file or directory",
    "fifo.py": "not a regular file",
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bad_input_is_one_line_each_and_the_run_completes(tmp_path, capsys, jobs):
    root = bad_project(tmp_path / "project")
    code = main(["--quiet", "--isolated", "--output-format", "concise", "-j", jobs, str(root)])
    captured = capsys.readouterr()
    assert code == 2
    errors = captured.err.splitlines()
    assert len(errors) == len(EXPECTED_ERRORS), errors
    for name, message in EXPECTED_ERRORS.items():
        [line] = [line for line in errors if line.startswith(f"{root / name}:")]
        assert message in line
    reported = [line.split(":")[0] for line in captured.out.splitlines()]
    # A folder's files come before its subfolders', as os.walk gives them.
    assert reported == [str(root / "a_good.py"), str(root / "z_good.py"), str(root / "dir.py" / "inner.py")]


def test_bad_input_named_on_the_command_line(tmp_path, capsys):
    root = bad_project(tmp_path / "project")
    named = [str(root / name) for name in EXPECTED_ERRORS] + [str(root / "missing.py"), str(root / "a_good.py")]
    code = main(["--quiet", "--isolated", "--output-format", "concise", *named])
    captured = capsys.readouterr()
    assert code == 2
    assert len(captured.err.splitlines()) == len(EXPECTED_ERRORS) + 1
    assert f"{root / 'missing.py'}: error: no such file or directory" in captured.err
    assert captured.out.startswith(f"{root / 'a_good.py'}:2:")


def test_a_folder_named_like_a_module_reads_as_one_line(tmp_path):
    folder = tmp_path / "x.py"
    folder.mkdir()
    result = runner.process_file(str(folder), runner.Linter(), fix=False, unsafe=False)
    assert result.error == "is a directory"


def test_bad_input_is_left_alone_by_fix(tmp_path, capsys):
    root = bad_project(tmp_path / "project")
    before = {path: path.read_bytes() for path in root.rglob("*.py") if path.is_file() and not path.is_symlink()
              and stat.S_ISREG(path.stat().st_mode)}
    assert main(["--quiet", "--isolated", "--fix", str(root)]) == 2
    for path, data in before.items():
        if path.name not in ("a_good.py", "z_good.py", "inner.py"):
            assert path.read_bytes() == data, path


# ------------------------------------------------------------------ safe writes
@pytest.fixture
def fixable(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (root / name).write_text("import torch\nmodel = Net().cuda()\n")
    return root


def fixed_text():
    return fix_source(b"import torch\nmodel = Net().cuda()\n")


def test_a_read_only_file_is_an_error_for_that_file_only(fixable, capsys):
    (fixable / "b.py").chmod(0o444)
    try:
        code = main(["--quiet", "--isolated", "--fix", str(fixable)])
    finally:
        (fixable / "b.py").chmod(0o644)
    assert code == 2
    assert f"{fixable / 'b.py'}: error: cannot write: file is read-only" in capsys.readouterr().err
    assert (fixable / "b.py").read_bytes() == b"import torch\nmodel = Net().cuda()\n"
    assert (fixable / "a.py").read_bytes() == (fixable / "c.py").read_bytes() == fixed_text()


@pytest.mark.parametrize("what", ["vanished", "changed"])
def test_a_file_that_vanished_or_changed_after_reading_is_left_alone(fixable, capsys, monkeypatch, what):
    real = runner.process_file

    def process_then_disturb(path, *args, **kwargs):
        result = real(path, *args, **kwargs)
        if path.endswith("b.py"):
            if what == "vanished":
                os.unlink(path)
            else:
                with open(path, "a") as handle:
                    handle.write("# edited meanwhile\n")
        return result

    monkeypatch.setattr(runner, "process_file", process_then_disturb)
    code = main(["--quiet", "--isolated", "-j", "1", "--fix", str(fixable)])
    err = capsys.readouterr().err
    assert code == 2
    if what == "vanished":
        assert f"{fixable / 'b.py'}: error: cannot write: no such file or directory" in err
        assert not (fixable / "b.py").exists()
    else:
        assert f"{fixable / 'b.py'}: error: cannot write: file changed since it was read; run again" in err
        assert (fixable / "b.py").read_text().endswith("# edited meanwhile\n")
    assert (fixable / "a.py").read_bytes() == (fixable / "c.py").read_bytes() == fixed_text()


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "interrupt"])
def test_an_interrupted_write_leaves_the_old_file_and_no_debris(tmp_path, monkeypatch, failure):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")

    def fail(*args):
        raise failure

    monkeypatch.setattr(runner.os, "replace", fail)
    with pytest.raises(type(failure)):
        write_atomically(str(path), b"new\n")
    assert path.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["m.py"]


def test_ctrl_c_during_a_write_waits_until_the_file_is_whole(tmp_path, monkeypatch, ctrl_c_as_a_terminal_sends_it):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    real_mkstemp = tempfile.mkstemp

    def interrupted_mkstemp(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # between creating the temporary file and the try
        return made

    monkeypatch.setattr(runner.tempfile, "mkstemp", interrupted_mkstemp)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(path), b"new\n")
    assert path.read_bytes() == b"new\n"
    assert os.listdir(tmp_path) == ["m.py"]


def test_ctrl_c_that_reaches_another_thread_also_waits_until_the_file_is_whole(
    tmp_path, monkeypatch, ctrl_c_as_a_terminal_sends_it
):
    # The kernel hands a process's signal to any thread that does not block it (the CLI's guard
    # threads, a test runner's I/O thread); Python then raises it on the main thread at once.
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    real_mkstemp = tempfile.mkstemp

    def interrupted_mkstemp(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        signal.pthread_kill(other.ident, signal.SIGINT)
        time.sleep(0.05)  # the main thread runs the handler between two instructions
        return made

    monkeypatch.setattr(runner.tempfile, "mkstemp", interrupted_mkstemp)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_atomically(str(path), b"new\n")
    finally:
        stop.set()
        other.join()
    assert path.read_bytes() == b"new\n"
    assert os.listdir(tmp_path) == ["m.py"]


def test_ctrl_c_during_a_write_counts_the_file_it_lets_finish(fixable, capsys, monkeypatch, ctrl_c_as_a_terminal_sends_it):
    real_replace = os.replace
    calls = []

    def replace_then_ctrl_c(source, target):
        real_replace(source, target)
        calls.append(target)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(runner.os, "replace", replace_then_ctrl_c)
    assert main(["--quiet", "--isolated", "-j", "1", "--fix", str(fixable)]) == 130
    assert capsys.readouterr().err == "interrupted: 2 files written, 1 untouched\n"
    old, new = b"import torch\nmodel = Net().cuda()\n", fixed_text()
    assert [(fixable / name).read_bytes() for name in ("a.py", "b.py", "c.py")] == [new, new, old]


def test_a_write_that_fails_midway_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    real_fsync = os.fsync

    def fail(descriptor):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(runner.os, "fsync", fail)
    with pytest.raises(OSError):
        write_atomically(str(path), b"new content\n")
    monkeypatch.setattr(runner.os, "fsync", real_fsync)
    assert path.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["m.py"]


def test_an_interrupted_run_leaves_every_file_old_or_new(fixable, capsys, monkeypatch):
    real_replace = os.replace
    calls = []

    def replace_then_interrupt(source, target):
        calls.append(target)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(runner.os, "replace", replace_then_interrupt)
    assert main(["--quiet", "--isolated", "-j", "1", "--fix", str(fixable)]) == 130
    assert capsys.readouterr().err == "interrupted: 1 files written, 2 untouched\n"
    old, new = b"import torch\nmodel = Net().cuda()\n", fixed_text()
    contents = [(fixable / name).read_bytes() for name in ("a.py", "b.py", "c.py")]
    assert contents == [new, old, old]
    assert sorted(os.listdir(fixable)) == ["a.py", "b.py", "c.py"]


def test_the_mode_is_kept_and_a_symlink_stays_a_symlink(tmp_path):
    target = tmp_path / "real.py"
    target.write_bytes(b"old\n")
    target.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomically(str(link), b"new\n")
    assert link.is_symlink()
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
