"""``-j N``: the same output as one process, in the same order, whatever finishes first."""

import pytest

from torchdevice_lint import parallel
from torchdevice_lint.cli import main
from torchdevice_lint.engine import Linter
from torchdevice_lint.parallel import default_jobs, map_as_completed, map_in_order


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHDEVICE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    # Sizes differ so that workers (largest first) finish out of order.
    for index in range(12):
        body = "import torch\n" + "y = 1\n" * (index * 40 % 170) + f"m{index} = Net().cuda()\n"
        (root / f"f{index:02d}.py").write_text(body)
    (root / "big.py").write_text("import torch\n" + "z = torch.zeros(3)\n" * 400 + "w = z.cuda()\n")
    (root / "broken.py").write_text("import torch\nif True\n")
    (root / "clean.py").write_text("x = 1\n")
    (root / "sub").mkdir()
    (root / "sub" / "nested.py").write_text("import torch\nt = torch.device('cuda')\n")
    return root


def run(capsys, *args):
    code = main(["--quiet", "--isolated", "--output-format", "concise", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["uncached", "cached"])
def test_two_jobs_give_the_output_of_one(project, tmp_path, capsys, cache):
    missing = tmp_path / "missing.py"
    one = run(capsys, "-j", "1", *cache, project, missing)
    two = run(capsys, "-j", "2", *cache, project, missing)
    assert one == two
    assert one[0] == 2
    assert "broken.py:2:8: error: syntax error: expected ':'" in one[2]
    assert "missing.py: error: no such file or directory" in one[2]
    assert one[1].count("TDL001") == 13


def test_jobs_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        main(["-j", "0", "x.py"])
    assert "positive number of jobs" in capsys.readouterr().err


def test_results_come_back_in_the_order_given(tmp_path):
    paths = []
    for index, size in enumerate([1, 5000, 10, 20000, 3, 800, 0, 12000]):
        path = tmp_path / f"{index}.txt"
        path.write_bytes(b"x" * size)
        paths.append(str(path))
    assert [path for path, _ in map_in_order(_size_of, paths, 2)] == paths
    assert [result for _, result in map_in_order(_size_of, paths, 2)] == [_size_of(p) for p in paths]
    assert list(map_in_order(_size_of, paths, 1)) == list(map_in_order(_size_of, paths, 3))


def test_finished_is_told_as_files_finish_and_as_completed_hands_them_over_then(tmp_path):
    paths = []
    for index, size in enumerate([30000, 1, 2, 3, 4, 5]):  # the first file is the slowest to read
        path = tmp_path / f"{index}.txt"
        path.write_bytes(b"x" * size)
        paths.append(str(path))
    told = []
    results = map_in_order(_slow_if_large, paths, 2, finished=told.append)
    first = next(results)
    # When the first file in path order is released, every other file has finished already.
    assert first == (paths[0], 30000) and sorted(told) == sorted(paths) and told[-1] == paths[0]
    assert [path for path, _ in results] == paths[1:]
    completed = list(map_as_completed(_slow_if_large, paths, 2))
    assert completed[-1] == (paths[0], 30000) and sorted(completed) == sorted(map_in_order(_size_of, paths, 1))
    assert list(map_as_completed(_size_of, paths, 1)) == list(map_in_order(_size_of, paths, 1))


def _slow_if_large(path):
    import time

    size = _size_of(path)
    if size > 1000:
        time.sleep(1.5)
    return size


def test_answers_ready_in_this_process_start_no_workers(tmp_path, monkeypatch):
    paths = [str(tmp_path / f"{index}.py") for index in range(5)]

    def no_pool():
        raise AssertionError("a pool was started although every answer was ready")

    monkeypatch.setattr(parallel, "_context", no_pool)
    results = list(map_in_order(_size_of, paths, 2, ready=lambda path: f"cached {path}"))
    assert results == [(path, f"cached {path}") for path in paths]


def test_some_answers_ready_the_rest_from_workers(tmp_path):
    paths = [str(tmp_path / f"{index}.py") for index in range(6)]
    for path in paths:
        open(path, "w").close()
    ready = lambda path: "cached" if path.endswith(("0.py", "3.py")) else None  # noqa: E731
    results = dict(map_in_order(_size_of, paths, 2, ready=ready))
    assert list(results) == paths
    assert [results[p] for p in paths] == ["cached", 0, 0, "cached", 0, 0]


def test_a_crash_in_a_worker_is_an_error_for_that_file_only(project, capsys, monkeypatch):
    original = Linter.lint

    def lint(self, source, *context):
        if b"m3 = " in source:
            raise ValueError("boom")
        return original(self, source, *context)

    monkeypatch.setattr(Linter, "lint", lint)  # workers are forked: they see it too
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "-j", jobs, "--no-cache", project)
        assert code == 2
        assert "f03.py: error: internal error (ValueError: boom); please report it" in err
        assert out.count("TDL001") == 12


def test_default_jobs_is_the_usable_cores():
    assert default_jobs() >= 1


def _size_of(path):
    import os

    return os.path.getsize(path)
