"""The check cache: same output with and without it, misses on any change, never trusted blindly."""

import os

import pytest

from torchdevice_lint import cache as cache_module
from torchdevice_lint.cache import ResultCache, tool_fingerprint
from torchdevice_lint.cli import main
from torchdevice_lint.engine import Linter
from torchdevice_lint.findings import Finding, Safety

BUGGY = "import torch\nmodel = Net().cuda()\nx = torch.zeros(3).cuda()\n"
CLEAN = "import torch\nmodel = Net().to(device)\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "buggy.py").write_text(BUGGY)
    (root / "clean.py").write_text(CLEAN)
    (root / "broken.py").write_text("import torch\ndef f(:\n")
    return root


def run(capsys, *args):
    code = main(["--quiet", "--isolated", "-j", "1", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def entries(folder):
    return sorted(path for path in folder.rglob("*.json"))


def test_cached_run_gives_the_same_output_as_an_uncached_one(project, cache_dir, capsys, monkeypatch):
    uncached = run(capsys, "--no-cache", project)
    assert not cache_dir.exists()
    cold = run(capsys, project)
    assert entries(cache_dir), "the cold run fills the cache"
    monkeypatch.setattr(Linter, "lint", lambda *a, **k: pytest.fail("linted although cached"))
    warm = run(capsys, project)
    assert uncached == cold == warm
    assert warm[0] == 2  # broken.py is an error, answered from the cache too
    assert "broken.py:2:7: error: syntax error: invalid syntax" in warm[2]
    assert "TDL001" in warm[1]


def test_output_formats_quote_source_lines_from_cached_results(project, cache_dir, capsys):
    first = run(capsys, "--output-format", "full", project)
    second = run(capsys, "--output-format", "full", project)
    assert first == second
    assert "model = Net().cuda()" in second[1]


def test_a_changed_file_misses(project, cache_dir, capsys):
    run(capsys, project)
    (project / "clean.py").write_text(BUGGY)
    _, out, _ = run(capsys, project)
    assert out.count("clean.py:") == 2


def test_a_changed_setting_misses(project, cache_dir, capsys):
    _, everything, _ = run(capsys, project)
    _, ignored, _ = run(capsys, "--ignore", "TDL001", project)
    assert "TDL001" in everything
    assert "TDL001" not in ignored
    _, again, _ = run(capsys, project)
    assert again == everything


def test_a_changed_tool_misses(project, cache_dir, capsys, monkeypatch):
    run(capsys, project)
    count = len(entries(cache_dir))
    monkeypatch.setattr(cache_module, "tool_fingerprint", lambda: "another build")
    run(capsys, project)
    assert len(entries(cache_dir)) == 2 * count


def test_a_corrupt_entry_is_ignored_and_replaced(project, cache_dir, capsys):
    expected = run(capsys, project)
    garbage = [b"", b"{", b"\x00\xff" * 10, b'{"key": "other", "findings": []}', b'{"key": 1}', b"[]"]
    for index, entry in enumerate(entries(cache_dir)):
        entry.write_bytes(garbage[index % len(garbage)])
    assert run(capsys, project) == expected
    assert run(capsys, project) == expected


def test_corrupt_entries_of_every_shape_read_as_misses(tmp_path):
    store = ResultCache(str(tmp_path))
    data = BUGGY.encode()
    key = store.key(data)
    finding = {"code": "TDL001", "message": "m", "line": 1, "column": 0, "end_line": 1, "end_column": 3,
               "fix_safety": "safe", "cell": None, "fix_withheld": ""}
    shapes = [
        {"key": key, "findings": [dict(finding, line="1")]},
        {"key": key, "findings": [dict(finding, fix_safety="maybe")]},
        {"key": key, "findings": [dict(finding, extra=1)]},
        {"key": key, "findings": [dict(finding, fix_withheld=None)]},
        {"key": key, "findings": [[1, 2]]},
        {"key": key, "findings": None},
        {"key": key, "error": 3},
        {"key": key},
    ]
    import json

    entry = store._entry(key)
    entry.parent.mkdir(parents=True)
    for shape in shapes:
        entry.write_text(json.dumps(shape))
        assert store.get(data) is None, shape
    entry.write_text(json.dumps({"key": key, "findings": [finding]}))
    assert store.get(data) == [Finding("TDL001", "m", 1, 0, 1, 3, Safety.SAFE)]


def test_round_trip_of_findings_and_errors(tmp_path):
    store = ResultCache(str(tmp_path))
    findings = [Finding("TDL003", "msg `x`", 3, 4, 3, 9, None, cell=2), Finding("TDL001", "m", 1, 0, 1, 3, Safety.UNSAFE)]
    store.put(b"a", findings)
    store.put(b"b", "syntax error at line 1, column 7: nope")
    assert store.get(b"a") == findings
    assert store.get(b"b") == "syntax error at line 1, column 7: nope"
    assert store.get(b"a", kind="ipynb") is None, "the same bytes read as a notebook are another entry"
    assert (tmp_path / ".gitignore").read_text().strip().endswith("*")
    assert (tmp_path / "CACHEDIR.TAG").exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]


def test_overlapping_runs_write_whole_entries(tmp_path):
    first, second = ResultCache(str(tmp_path)), ResultCache(str(tmp_path))
    findings = [Finding("TDL001", "m", 1, 0, 1, 3, Safety.SAFE)]
    for _ in range(20):
        first.put(b"x", findings)
        second.put(b"x", findings)
        assert first.get(b"x") == second.get(b"x") == findings
    assert len(list(tmp_path.rglob("*.json"))) == 1


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else False, reason="root writes anywhere")
def test_an_unwritable_cache_folder_only_turns_the_cache_off(project, tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(locked / "cache"))
    try:
        code, out, err = run(capsys, project)
    finally:
        locked.chmod(0o700)
    assert code == 2 and "TDL001" in out and "cache" not in err


def test_a_cache_path_that_is_a_file_only_turns_the_cache_off(project, tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(blocker))
    expected = run(capsys, "--no-cache", project)
    assert run(capsys, project) == expected


def test_fixing_never_uses_the_cache(project, cache_dir, capsys):
    run(capsys, "--fix", project)
    run(capsys, "--diff", project)
    assert not cache_dir.exists()


def test_the_default_folder_is_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHDEVICE_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert ResultCache().directory == tmp_path / ".torchdevice_cache"


def test_the_key_covers_the_tool_build():
    fingerprint = tool_fingerprint()
    assert "libcst" in fingerprint and "+" in fingerprint
