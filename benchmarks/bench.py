"""Speed and memory of torchdevice-lint on a folder, against LibCST's bare parse and peers.

    python benchmarks/bench.py FOLDER [--jobs N] [--repeat R] [--torchfix PYTHON] [--skip-torchfix]
    python benchmarks/bench.py FOLDER --flake8-only [--repeat R]    the flake8 rows and their target

Every measurement runs in a fresh process, so each one pays its own start-up and its peak
resident memory (``ru_maxrss`` of that process and the workers it waited for) is its own:

floor          a Python process that imports LibCST, reads and parses every ``.py`` file
index          the same process shape building the project index of the files (the CLI does it once per run)
engine         the same process shape building the index, then ``Linter.lint`` on every file (no CLI)
cli -j 1       ``torchdevice-fix --no-cache -j 1 FOLDER`` (check mode)
cli -j N       the same with ``-j N``
cache cold     ``torchdevice-fix -j 1`` with an empty cache folder (fills it)
cache re-run   the same again, nothing changed
flake8         ``flake8 --isolated --jobs 1`` with the default checks, our plugin not loaded
flake8 + TDL   the same with our plugin loaded (its TDL codes are on by default)
flake8 --select TDL   the same, showing our codes only (flake8 still runs every plugin)
torchfix       ``torchfix -j 1 FOLDER`` (TorchFix's own CLI, check mode), when installed:
               in this interpreter or in the one ``--torchfix`` names (TorchFix pins an
               older LibCST, so it is best kept in a virtual environment of its own)
memory         ``cli -j 1`` on half of the files (every other one) and on the folder given
               twice: peak memory must not grow with the number of files

CPU time (user + system, workers included) is what the single-process ratios use: it stays
meaningful on a shared, busy machine where wall time does not. Measurements compared in a
ratio run in turn (floor, index, engine, cli, floor, ...; the flake8 rows likewise), so that
both sides of a ratio meet the same load. Speed-up with ``-j`` can only
be wall time; the load average is printed next to it. ``--repeat`` keeps the fastest run.

``-j N`` is also run with each worker noting its CPU time: the busiest worker's share bounds
the speed-up idle cores would give. On a machine that other programs keep busy (Linux shares
the CPU between sessions, so more workers get no more of it) the wall speed-up means little;
the report then judges the target on that bound and says so.

Targets (from issue 7): cli -j 1 <= 2x the floor; >= 10x TorchFix's throughput;
flake8 --select TDL <= 2x flake8; -j 2 >= 1.7x faster than -j 1 on 2 cores; an unchanged re-run
<= 10% of a cold run; peak memory flat as the folder grows. No test runs this: timings
belong in this report, never in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

HERE = Path(__file__).resolve()

#: Runs plain flake8 with our plugin filtered out of plugin discovery (flake8 runs every
#: installed plugin whatever ``--select`` says, so selecting other codes is not enough).
FLAKE8_WITHOUT_US = (
    "import sys, flake8.plugins.finder as finder\n"
    "found = finder.find_plugins\n"
    "finder.find_plugins = lambda *a, **k: [p for p in found(*a, **k) if p.package != 'torchdevice-lint']\n"
    "from flake8.main.cli import main\n"
    "sys.exit(main())\n"
)
FLAKE8_WITH_US = "import sys\nfrom flake8.main.cli import main\nsys.exit(main())\n"


@dataclass
class Measure:
    name: str
    wall: float
    cpu: float
    peak_mb: float
    files: int
    lines: int
    note: str = ""

    @property
    def files_per_s(self) -> float:
        return self.files / self.cpu if self.cpu else float("inf")

    @property
    def lines_per_s(self) -> float:
        return self.lines / self.cpu if self.cpu else float("inf")


# ------------------------------------------------------------------ children
def child_main(mode: str, list_file: str) -> int:
    """Inside a fresh process: parse or lint the listed files and print what it cost."""
    paths = Path(list_file).read_text().splitlines()
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    if mode == "parse":
        import libcst

        for path in paths:
            try:
                libcst.parse_module(Path(path).read_bytes())
            except Exception:
                pass
    elif mode == "index":
        from torchdevice_lint.analysis.project import ProjectIndex

        ProjectIndex.build(paths)
    elif mode == "engine":
        from torchdevice_lint.analysis.project import ProjectIndex
        from torchdevice_lint.engine import Linter
        from torchdevice_lint.parsing import SourceError
        from torchdevice_lint.settings import Settings

        linter = Linter(Settings())
        project = ProjectIndex.build(paths)  # what the CLI builds once per run
        for path in paths:
            try:
                linter.lint(Path(path).read_bytes(), project, path)
            except (SourceError, RecursionError):
                pass
    elif mode.startswith("jobs="):
        # The CLI's own pool: each worker notes its CPU time, so the critical path (the
        # busiest worker) is known even when other programs share the cores.
        from torchdevice_lint.parallel import map_in_order
        from torchdevice_lint.runner import FileJob

        timed = _TimedJob(FileJob(_default_settings, False, False, None))
        workers: dict[int, float] = {}
        for _, (pid, cpu) in map_in_order(timed, paths, int(mode[len("jobs="):])):
            workers[pid] = max(workers.get(pid, 0.0), cpu)
        print(json.dumps({"workers": sorted(workers.values()), "main": time.process_time() - started_cpu}))
        return 0
    else:
        raise SystemExit(f"unknown mode {mode}")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "wall": time.perf_counter() - started_wall,
        "inner_cpu": time.process_time() - started_cpu,
        "peak_kb": usage.ru_maxrss,
    }))
    return 0


def _default_settings(name: str):
    from torchdevice_lint.settings import Settings

    return Settings()


class _TimedJob:
    def __init__(self, job) -> None:
        self.job = job

    def __call__(self, path: str) -> tuple[int, float]:
        self.job(path)
        return os.getpid(), time.process_time()


# ---------------------------------------------------------------- measuring
def run_process(command: Sequence[str], env: Optional[dict] = None, cwd: Optional[str] = None) -> tuple[float, float, float, str, str]:
    """Wall s, CPU s (user + system, its waited-for children included), peak MB, stdout, stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout, stderr


def best_of(repeat: int, command: Sequence[str], env: Optional[dict] = None, cwd: Optional[str] = None,
            prepare=None) -> tuple[float, float, float, str, str]:
    runs = []
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        runs.append(run_process(command, env, cwd))
    return _fastest(runs)


def best_of_interleaved(repeat: int, commands: dict[str, Sequence[str]], env: dict, cwd: Optional[str] = None) -> dict:
    """``best_of`` for commands compared with one another, run in turn (a, b, c, a, b, c, ...):
    a ratio's two sides then meet the same load on a shared machine, not two moments of it."""
    runs: dict[str, list] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(run_process(command, env, cwd))
    return {name: _fastest(found) for name, found in runs.items()}


def _fastest(runs: list) -> tuple[float, float, float, str, str]:
    wall = min(run[0] for run in runs)
    cpu = min(run[1] for run in runs)
    peak = max(run[2] for run in runs)
    return wall, cpu, peak, runs[-1][3], runs[-1][4]


def python_files(folder: str) -> list[str]:
    """The ``.py`` files ``torchdevice-fix`` checks in ``folder`` (its own discovery)."""
    from torchdevice_lint.config import resolve_config
    from torchdevice_lint.files import MissingPath, iter_python_files

    config = resolve_config([folder], None, False)
    return [p for p in iter_python_files([folder], config) if not isinstance(p, MissingPath) and p.endswith(".py")]


def count_lines(paths: Sequence[str]) -> int:
    total = 0
    for path in paths:
        try:
            total += Path(path).read_bytes().count(b"\n")
        except OSError:
            pass
    return total


def find_cli() -> list[str]:
    found = shutil.which("torchdevice-fix", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return [found] if found else [sys.executable, "-m", "torchdevice_lint.cli"]


def find_torchfix(option: Optional[str]) -> Optional[list[str]]:
    if option:
        python = Path(option)
        if python.is_dir():  # a virtual environment
            python = python / "bin" / "python"
        return [str(python), "-c", "import sys; from torchfix.__main__ import main; sys.exit(main())"]
    try:
        import torchfix  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-c", "import sys; from torchfix.__main__ import main; sys.exit(main())"]


# ------------------------------------------------------------------- report
def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child_main(argv[1], argv[2])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="jobs for the parallel run (default 2)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--torchfix", metavar="PYTHON_OR_VENV", help="interpreter (or venv) that has TorchFix")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--skip-flake8", action="store_true")
    parser.add_argument("--flake8-only", action="store_true", help="measure only the flake8 rows")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args(argv)

    folder = os.path.abspath(args.folder)
    files = python_files(folder)
    lines = count_lines(files)
    size_mb = sum(os.path.getsize(p) for p in files) / 1e6
    work = Path(tempfile.mkdtemp(prefix="tdl-bench-"))
    list_file = work / "files.txt"
    list_file.write_text("\n".join(files))
    env = dict(os.environ, TORCHDEVICE_CACHE_DIR=str(work / "cache"), NO_COLOR="1")
    cli = find_cli()
    measures: dict[str, Measure] = {}

    def record(name: str, result, count: int = len(files), line_count: int = lines, note: str = "") -> Measure:
        wall, cpu, peak = result[:3]
        measures[name] = Measure(name, wall, cpu, peak, count, line_count, note)
        print(f"  measured {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MB", file=sys.stderr, flush=True)
        return measures[name]

    print(f"benchmarking {folder}: {len(files)} files, {lines} lines ({size_mb:.1f} MB)", file=sys.stderr)
    if args.flake8_only:
        measure_flake8(folder, args.repeat, env, record)
        print_flake8_report(folder, files, measures)
        shutil.rmtree(work, ignore_errors=True)
        return 0
    child = [sys.executable, str(HERE), "--child"]
    base = cli + ["--quiet", "--isolated", "--output-format", "concise"]
    compared = best_of_interleaved(
        args.repeat,
        {
            "floor: libcst parse": child + ["parse", str(list_file)],
            "index: ProjectIndex.build": child + ["index", str(list_file)],
            "engine: Linter.lint": child + ["engine", str(list_file)],
            "cli -j 1": base + ["--no-cache", "-j", "1", folder],
            f"cli -j {args.jobs}": base + ["--no-cache", "-j", str(args.jobs), folder],
        },
        env,
        cwd=str(work),
    )
    for name, result in compared.items():
        record(name, result)
    one = compared["cli -j 1"]
    outputs_agree = one[3] == run_process(base + ["--no-cache", "-j", str(args.jobs), folder], env, str(work))[3]
    split = json.loads(run_process(child + [f"jobs={args.jobs}", str(list_file)], env)[3])

    def clear_cache() -> None:
        shutil.rmtree(work / "cache", ignore_errors=True)

    record("cache: cold run", best_of(args.repeat, base + ["-j", "1", folder], env, cwd=str(work), prepare=clear_cache))
    warm = best_of(args.repeat, base + ["-j", "1", folder], env, cwd=str(work))
    record("cache: unchanged re-run", warm)
    cached_agrees = warm[3] == one[3]

    if not args.skip_flake8:
        measure_flake8(folder, args.repeat, env, record)

    torchfix = None if args.skip_torchfix else find_torchfix(args.torchfix)
    if torchfix is not None:
        record("torchfix -j 1", best_of(args.repeat, torchfix + ["-j", "1", folder], env, cwd=str(work)))

    if not args.skip_memory:
        half = files[::2]
        half_list = work / "half.txt"
        half_list.write_text("\n".join(half))
        # Paths given explicitly: the CLI checks a file named twice twice.
        record("memory: cli on half the files", run_process(base + ["--no-cache", "-j", "1", *half], env, str(work)),
               len(half), count_lines(half))
        record("memory: cli on the folder twice", run_process(base + ["--no-cache", "-j", "1", folder, folder], env, str(work)),
               2 * len(files), 2 * lines)

    print_report(folder, files, lines, size_mb, measures, args.jobs, outputs_agree, cached_agrees, split)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def measure_flake8(folder: str, repeat: int, env: dict, record) -> None:
    flake8 = ["--isolated", "--jobs", "1", folder]
    compared = best_of_interleaved(
        repeat,
        {
            "flake8 (default checks)": [sys.executable, "-c", FLAKE8_WITHOUT_US, *flake8],
            "flake8 + TDL plugin": [sys.executable, "-c", FLAKE8_WITH_US, *flake8],
            "flake8 --select TDL": [sys.executable, "-c", FLAKE8_WITH_US, "--select", "TDL", *flake8],
        },
        env,
    )
    for name, result in compared.items():
        record(name, result)


def flake8_target(measures: dict) -> Optional[tuple[bool, str]]:
    """Whether ``flake8 --select TDL`` costs at most 2x plain flake8, and the figures."""
    plain, plugin, selected = (measures.get(name) for name in ("flake8 (default checks)", "flake8 + TDL plugin",
                                                               "flake8 --select TDL"))
    if not (plain and plugin and selected):
        return None
    return selected.cpu <= 2 * plain.cpu, (
        f"flake8 --select TDL <= 2x plain flake8: {selected.cpu / plain.cpu:.2f}x "
        f"(every code with the plugin: {plugin.cpu / plain.cpu:.2f}x)")


def print_flake8_report(folder, files, measures) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"\nfolder {folder}\n{len(files)} .py files; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for m in measures.values():
        print(f"{m.name:34} {m.wall:8.2f} s wall {m.cpu:8.2f} s CPU {m.peak_mb:6.0f} MB")
    target = flake8_target(measures)
    if target is not None:
        print(f"  [{'MET ' if target[0] else 'GAP '}] {target[1]}")


def print_report(folder, files, lines, size_mb, measures, jobs, outputs_agree, cached_agrees, split) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    floor = measures["floor: libcst parse"]
    print(f"\nfolder {folder}")
    print(f"{len(files)} .py files, {lines:,} lines, {size_mb:.1f} MB; {os.cpu_count()} cores; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; Python {sys.version.split()[0]}")
    header = f"{'measurement':34} {'wall s':>8} {'CPU s':>8} {'files/s':>9} {'lines/s':>9} {'peak MB':>8} {'CPU/floor':>9}"
    print(header)
    print("-" * len(header))
    for m in measures.values():
        print(f"{m.name:34} {m.wall:8.2f} {m.cpu:8.2f} {m.files_per_s:9.0f} {m.lines_per_s:9.0f} {m.peak_mb:8.0f} "
              f"{m.cpu / floor.cpu:9.2f}")
    print("(files/s and lines/s are per CPU second)")

    print("\ntargets")

    def flag(ok: Optional[bool], text: str) -> None:
        mark = "n/a " if ok is None else ("MET " if ok else "GAP ")
        print(f"  [{mark}] {text}")

    one = measures["cli -j 1"]
    engine = measures["engine: Linter.lint"]
    flag(one.cpu <= 2 * floor.cpu,
         f"single process <= 2x parse floor: cli -j 1 {one.cpu / floor.cpu:.2f}x (engine alone {engine.cpu / floor.cpu:.2f}x)")
    torchfix = measures.get("torchfix -j 1")
    if torchfix is not None:
        flag(torchfix.cpu >= 10 * one.cpu, f">= 10x TorchFix throughput: {torchfix.cpu / one.cpu:.1f}x "
             f"(wall {torchfix.wall / one.wall:.1f}x)")
    else:
        flag(None, ">= 10x TorchFix throughput: TorchFix not installed (pass --torchfix VENV)")
    target = flake8_target(measures)
    if target is not None:
        flag(*target)
    parallel = measures[f"cli -j {jobs}"]
    speedup = one.wall / parallel.wall
    # The busiest worker (plus the parent's own work) bounds the wall time on idle cores.
    # One process would do the parent's work plus every worker's; N do the parent's plus the busiest's.
    critical = max(split["workers"]) + split["main"]
    bound = (sum(split["workers"]) + split["main"]) / critical if critical else float("nan")
    busy = load[0] >= 0.5 * (os.cpu_count() or 1)
    verdict = (bound if busy else speedup) >= 1.7 if jobs == 2 else None
    flag(verdict,
         f"-j {jobs} >= 1.7x faster: wall {speedup:.2f}x; on idle cores {bound:.2f}x (busiest worker "
         f"{max(split['workers']):.2f} s of {sum(split['workers']):.2f} s CPU){' <- judged, machine busy' if busy else ''}; "
         f"CPU -j {jobs}/-j 1 {parallel.cpu / one.cpu:.2f}; output identical to -j 1: {'yes' if outputs_agree else 'NO'}")
    cold, warm = measures["cache: cold run"], measures["cache: unchanged re-run"]
    flag(warm.wall <= 0.1 * cold.wall, f"unchanged re-run <= 10% of cold: {100 * warm.wall / cold.wall:.1f}% wall, "
         f"{100 * warm.cpu / cold.cpu:.1f}% CPU; output identical: {'yes' if cached_agrees else 'NO'}")
    half, twice = measures.get("memory: cli on half the files"), measures.get("memory: cli on the folder twice")
    if half and twice:
        flag(twice.peak_mb <= 1.15 * one.peak_mb,
             f"peak memory flat: half {half.peak_mb:.0f} MB, whole {one.peak_mb:.0f} MB, twice {twice.peak_mb:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
