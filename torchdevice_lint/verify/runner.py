"""Verify fixture cases: the codemod output, and the programs' outputs on each device.

A case is a folder holding ``original.py`` and ``fixed.py`` (the codemod's
output), each defining ``run()``. A rule that reports without fixing has
``suggested.py`` instead: the change its message suggests, made by hand, which
stands in for the fixed form. For each case the verifier

1. checks ``fix_source(original, unsafe=True) == fixed`` (for a suggested form:
   that the codemod leaves the original as it is);
2. runs the fixed program on the CPU with CUDA hidden (the reference), under
   the simulated CUDA device, and on real CUDA when this machine has it;
3. runs the original the same ways and compares every output that exists with
   the reference (``torch.testing.assert_close`` tolerances);
4. reports an original that fails where its fixed form runs as the bug the
   fix removed, and any failing fixed program as a failure.

Every program runs in a process of its own with a timeout, forked from a server that
imported torch once (`forkserver`). torch is imported lazily so that the pytest plugin
can import this package cheaply.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from torchdevice_lint.verify.forkserver import shared_server

REFERENCE = ("fixed", "cpu")
GENERATED = "no fixed.py stored: verified the codemod's output"
REPORT_ONLY = "leaves the original (report only): verified suggested.py"
DEVICE_LABELS = {"cpu": "cpu", "simulated": "sim", "cuda": "cuda"}


@dataclass
class Case:
    """One original program and its fixed form, with the function to call."""

    name: str
    original: Path
    fixed: Optional[Path]
    entry: str = "run"
    module: Optional[str] = None  # import the entry from this module instead
    search_path: tuple[str, ...] = ()
    codemod: str = "not checked"  # filled in when the fixed form is checked or made
    #: ``fixed`` is a hand-made ``suggested.py``: the codemod must not change the original.
    report_only: bool = False
    #: The rules the codemod runs on this case; None: those on by default.
    select: Optional[tuple[str, ...]] = None
    codemod_diff: str = ""


@dataclass
class ProgramRun:
    """What one program did on one device."""

    program: str  # "original" or "fixed"
    device: str  # "cpu", "simulated" or "cuda"
    status: str  # "ok", "error", "timeout" or "crash"
    error: str = ""  # one line: "RuntimeError: Expected all tensors ..."
    details: str = ""  # traceback or the child's stderr
    devices: list[str] = field(default_factory=list)  # where the returned tensors lived
    seconds: float = 0.0
    outputs: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def label(self) -> str:
        return f"{self.program}@{DEVICE_LABELS[self.device]}"


@dataclass
class Comparison:
    """One program run's outputs against the reference."""

    run: str
    same: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    message: str = ""


@dataclass
class CaseResult:
    case: Case
    runs: list[ProgramRun]
    comparisons: list[Comparison]
    result: str  # "ok", "outputs differ", "fixed fails", "codemod differs", "no fixed form"
    bugs_removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.result in ("ok", "no fixed form")

    @property
    def devices_run(self) -> str:
        seen = dict.fromkeys(DEVICE_LABELS[r.device] for r in self.runs)
        return ", ".join(seen)

    def max_diff(self, kind: str) -> Optional[float]:
        values = [getattr(c, kind) for c in self.comparisons]
        return max(values) if values else None

    def to_json(self) -> dict:
        return {
            "case": self.case.name,
            "original": str(self.case.original),
            "fixed": str(self.case.fixed) if self.case.fixed else None,
            "result": self.result,
            "passed": self.passed,
            "codemod": self.case.codemod,
            "codemod_diff": self.case.codemod_diff or None,
            "devices": self.devices_run,
            "max_abs_diff": self.max_diff("max_abs"),
            "max_rel_diff": self.max_diff("max_rel"),
            "bugs_removed": self.bugs_removed,
            "notes": self.notes,
            "runs": [
                {
                    "program": r.program,
                    "device": r.device,
                    "status": r.status,
                    "error": r.error or None,
                    "output_devices": r.devices,
                    "seconds": round(r.seconds, 3),
                }
                for r in self.runs
            ],
            "comparisons": [c.__dict__ for c in self.comparisons],
        }


# -- cases --------------------------------------------------------------------


def discover_cases(path: Path) -> list[Case]:
    """Every folder at or under ``path`` holding an ``original.py``, sorted."""
    path = Path(path).resolve()  # the children run in the case's folder
    folders = [path] if (path / "original.py").is_file() else sorted(
        p.parent for p in path.rglob("original.py")
    )
    root = path.parent if folders == [path] else path
    cases = []
    for folder in folders:
        fixed, suggested = folder / "fixed.py", folder / "suggested.py"
        report_only = suggested.is_file() and not fixed.is_file()
        cases.append(
            Case(
                name=folder.relative_to(root).as_posix(),
                original=folder / "original.py",
                fixed=suggested if report_only else fixed if fixed.is_file() else None,
                report_only=report_only,
                select=fixture_selection(folder),
            )
        )
    return cases


def fixture_selection(folder: Path) -> Optional[tuple[str, ...]]:
    """A case of a rule in preview (``fixtures/tdl013/...``) runs that rule alone; any other
    case runs the rules that are on by default."""
    try:
        from torchdevice_lint.rules import ALL_RULES
    except Exception:  # an engine that fails to import: check_codemod reports it
        return None
    code = Path(folder).parent.name.upper()
    return (code,) if any(rule.code == code and rule.preview for rule in ALL_RULES) else None


def fixture_settings(folder: Path) -> Any:
    """The `Settings` the case in ``folder`` is linted and fixed with (`fixture_selection`)."""
    from torchdevice_lint import Settings

    return Settings(select=fixture_selection(folder))


def _codemod_options(case: Case) -> dict[str, Any]:
    if case.select is None:
        return {}
    from torchdevice_lint import Settings

    return {"settings": Settings(select=case.select)}


def load_fix_source() -> tuple[Optional[Callable[..., str]], str]:
    """The codemod, or None and why it cannot be used."""
    try:
        from torchdevice_lint import fix_source
    except Exception as error:  # ImportError, or an engine that fails to import
        return None, f"codemod unavailable ({type(error).__name__}: {error})"
    return fix_source, ""


def check_codemod(case: Case, fix_source: Optional[Callable[..., str]], why: str = "") -> None:
    """Record whether the codemod turns the original into the stored fixed form."""
    if fix_source is None:
        case.codemod = why or "codemod unavailable"
        return
    original = case.original.read_text(encoding="utf-8")
    try:
        produced = fix_source(original, unsafe=True, **_codemod_options(case))
    except Exception as error:
        case.codemod = f"codemod crashed ({type(error).__name__}: {error})"
        return
    if case.fixed is None:
        case.codemod = GENERATED
        return
    if case.report_only:
        stored, target = original, "original.py"
    else:
        stored, target = case.fixed.read_text(encoding="utf-8"), "fixed.py"
    if produced == stored:
        case.codemod = REPORT_ONLY if case.report_only else "matches"
        return
    case.codemod = "differs"
    case.codemod_diff = "".join(
        difflib.unified_diff(
            stored.splitlines(keepends=True),
            produced.splitlines(keepends=True),
            fromfile=f"{case.name}/{target} (stored)",
            tofile=f"{case.name}/{target} (codemod)",
        )
    )


def fixed_copy(script: Path, directory: Path, fix_source: Callable[..., str]) -> Path:
    """Write the codemod's output for ``script`` under ``directory``, same file name."""
    target = directory / script.name
    target.write_text(fix_source(script.read_text(encoding="utf-8"), unsafe=True), encoding="utf-8")
    return target


# -- running ------------------------------------------------------------------


def real_cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _child_environment(device: str) -> dict[str, str]:
    env = _server_environment()
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # hide a real GPU from torch itself
    return env


def _server_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    env.setdefault("PYTHONHASHSEED", "0")
    # The programs run side by side, one per core: each on one thread. A thread pool per program
    # oversubscribes the cores, and its idle threads spin: 7x the CPU of the fixtures' programs.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def run_program(case: Case, program: str, device: str, timeout: float) -> ProgramRun:
    """Run ``case``'s original or fixed program on ``device`` in a process of its own."""
    import torch

    path = case.original if program == "original" else case.fixed
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="torchdevice-verify-") as scratch:
        files = Path(scratch)
        out, report, stderr_file = files / "outputs.pt", files / "report.json", files / "stderr"
        argv = [
            "--device", device, "--file", str(path), "--entry", case.entry,
            "--out", str(out), "--report", str(report),
        ]
        argv += ["--module", case.module] if case.module else []
        for entry in case.search_path:
            argv += ["--path", entry]
        ended = shared_server(_server_environment()).run(
            argv, cwd=case.original.parent, env=_child_environment(device),
            stdout=files / "stdout", stderr=stderr_file, timeout=timeout,
        )
        seconds = time.monotonic() - started
        if ended.timed_out:
            return ProgramRun(program, device, "timeout", f"no result after {timeout:g} s",
                              seconds=seconds)
        stderr = stderr_file.read_text(errors="replace") if stderr_file.is_file() else ""
        if ended.server_died:
            return ProgramRun(program, device, "crash", f"process died: {ended.server_died}",
                              details=stderr[-4000:], seconds=seconds)
        if not report.is_file():
            error = _last_line(stderr) or f"exit status {ended.returncode}"
            return ProgramRun(program, device, "crash", f"process died: {error}",
                              details=stderr[-4000:], seconds=seconds)
        result = json.loads(report.read_text())
        if result["status"] != "ok":
            message = _last_line(result["message"]) if result["message"] else ""
            return ProgramRun(program, device, "error",
                              f"{result['error_type']}: {message}".rstrip(": "),
                              details=result["traceback"], seconds=seconds)
        try:
            outputs = torch.load(out, weights_only=True)
        except Exception as error:
            return ProgramRun(program, device, "error", f"unreadable outputs: {error}",
                              seconds=seconds)
        return ProgramRun(program, device, "ok", devices=result["devices"],
                          seconds=seconds, outputs=outputs)


def _plan(case: Case, real_cuda: bool) -> list[tuple[str, str]]:
    devices = ["cpu", "simulated"] + (["cuda"] if real_cuda else [])
    programs = ["fixed", "original"] if case.fixed else ["original"]
    return [(program, device) for program in programs for device in devices]


# -- comparing ----------------------------------------------------------------


def _differences(actual: Any, expected: Any) -> tuple[float, float]:
    """Largest absolute and relative element differences over matching tensors."""
    import torch
    from torch.utils._pytree import tree_leaves

    max_abs = max_rel = 0.0
    pairs = zip(tree_leaves(actual), tree_leaves(expected))
    for a, e in pairs:
        if not (isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor)):
            continue
        if a.shape != e.shape or a.numel() == 0 or a.is_complex() != e.is_complex():
            continue
        a, e = a.to(torch.float64), e.to(torch.float64)
        both_nan = a.isnan() & e.isnan()
        diff = (a - e).abs().masked_fill(both_nan, 0.0)
        rel = diff / e.abs()
        rel = rel.masked_fill(diff == 0, 0.0)  # 0/0 where both are zero
        max_abs = max(max_abs, diff.max().item())
        max_rel = max(max_rel, rel.max().item())
    return max_abs, max_rel


def compare_outputs(label: str, actual: Any, expected: Any) -> Comparison:
    """``assert_close`` with its per-dtype default tolerances; NaN equals NaN."""
    import torch

    max_abs, max_rel = _differences(actual, expected)
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
    except (AssertionError, TypeError, ValueError) as error:
        message = " ".join(str(error).split())
        return Comparison(label, False, max_abs, max_rel, message[:500])
    return Comparison(label, True, max_abs, max_rel)


# -- judging ------------------------------------------------------------------

_WHERE = {
    "cpu": "on a CPU-only machine",
    "simulated": "on the simulated CUDA device",
    "cuda": "on real CUDA",
}


def judge(case: Case, runs: list[ProgramRun]) -> CaseResult:
    """Turn the runs of one case into a verdict."""
    by_key = {(r.program, r.device): r for r in runs}
    reference = by_key.get(REFERENCE)
    comparisons: list[Comparison] = []
    bugs: list[str] = []
    notes: list[str] = []
    if case.codemod not in ("matches", "not checked", "applied", GENERATED, REPORT_ONLY):
        notes.append(f"codemod: {case.codemod}")

    if case.fixed is None:
        for run in runs:
            if not run.ok:
                notes.append(f"original {_WHERE[run.device]}: {run.error}")
        notes.append("no fixed.py: nothing compared")
        return CaseResult(case, runs, comparisons, "no fixed form", bugs, notes)

    failing_fixed = [r for r in runs if r.program == "fixed" and not r.ok]
    for run in runs:
        if run.program == "original" and not run.ok:
            fixed_run = by_key.get(("fixed", run.device))
            if fixed_run is not None and fixed_run.ok:
                bugs.append(f"{_WHERE[run.device]} the original raises {run.error}")
            else:
                notes.append(f"original {_WHERE[run.device]}: {run.error}")
    if reference is not None and reference.ok:
        for run in runs:
            if run is not reference and run.ok:
                comparisons.append(compare_outputs(run.label, run.outputs, reference.outputs))
        if not any(r.program == "original" and r.ok for r in runs):
            notes.append("the original ran nowhere: only the fixed form's devices were compared")

    if failing_fixed:
        result = "fixed fails"
        notes[:0] = [f"fixed {_WHERE[r.device]}: {r.error}" for r in failing_fixed]
    elif not all(c.same for c in comparisons):
        result = "outputs differ"
        notes[:0] = [f"{c.run} vs fixed@cpu: {c.message}" for c in comparisons if not c.same]
    elif case.codemod == "differs" or case.codemod.startswith("codemod crashed"):
        result = "codemod differs" if case.codemod == "differs" else "codemod crashed"
    else:
        result = "ok"
    return CaseResult(case, runs, comparisons, result, bugs, notes)


def verify_cases(
    cases: list[Case],
    *,
    timeout: float = 60.0,
    jobs: int = 0,
    check_fix: bool = True,
    finished: Optional[Callable[[CaseResult], None]] = None,
) -> list[CaseResult]:
    """Verify every case, running all their programs in parallel, each in a process of its own.

    ``finished(result)`` is called as each case is judged, once its last program has ended (a
    run over many cases takes minutes: the CLI prints each verdict as it comes)."""
    with tempfile.TemporaryDirectory(prefix="torchdevice-verify-generated-") as scratch:
        if check_fix:
            fix_source, why = load_fix_source()
            for number, case in enumerate(cases):
                check_codemod(case, fix_source, why)
                if case.fixed is None and fix_source is not None and case.codemod == GENERATED:
                    # No stored fixed form yet: verify what the codemod makes now.
                    folder = Path(scratch) / str(number)
                    folder.mkdir()
                    case.fixed = fixed_copy(case.original, folder, fix_source)
                    case.search_path += (str(case.original.parent),)
        real_cuda = real_cuda_available()
        tasks = [(case, program, device)
                 for case in cases for program, device in _plan(case, real_cuda)]
        workers = jobs or max(1, min(len(tasks), os.cpu_count() or 1))
        runs: list[Optional[ProgramRun]] = [None] * len(tasks)
        left = {id(case): len(_plan(case, real_cuda)) for case in cases}
        judged: dict[int, CaseResult] = {}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_program, *task, timeout): number for number, task in enumerate(tasks)}
            for future in as_completed(futures):
                number = futures[future]
                case = tasks[number][0]
                runs[number] = future.result()
                left[id(case)] -= 1
                if not left[id(case)]:
                    case_runs = [run for (owner, _, _), run in zip(tasks, runs) if owner is case and run is not None]
                    judged[id(case)] = judge(case, case_runs)
                    if finished is not None:
                        finished(judged[id(case)])
    return [judged[id(case)] for case in cases]


def verify_case(path: Path, *, timeout: float = 60.0) -> CaseResult:
    """Verify the single case in folder ``path``."""
    cases = discover_cases(Path(path))
    if len(cases) != 1:
        raise ValueError(f"{path} holds {len(cases)} cases, expected one")
    return verify_cases(cases, timeout=timeout)[0]


def verify_script(
    script: Path,
    entry: str = "run",
    *,
    timeout: float = 60.0,
    fix_source: Optional[Callable[..., str]] = None,
) -> CaseResult:
    """Fix a temporary copy of ``script`` and verify it against the original.

    ``entry`` is ``function`` or ``module:function``; without a module the
    function is taken from the script itself.
    """
    script = Path(script).resolve()
    if fix_source is None:
        fix_source, why = load_fix_source()
        if fix_source is None:
            raise RuntimeError(why)
    module, _, function = entry.rpartition(":")
    with tempfile.TemporaryDirectory(prefix="torchdevice-verify-fixed-") as scratch:
        fixed = fixed_copy(script, Path(scratch), fix_source)
        case = Case(
            name=script.name,
            original=script,
            fixed=fixed,
            entry=function,
            module=module or None,
            search_path=(str(script.parent),),
            codemod="applied",
        )
        unchanged = fixed.read_text(encoding="utf-8") == script.read_text(encoding="utf-8")
        result = verify_cases([case], timeout=timeout, check_fix=False)[0]
    if unchanged:
        result.notes.append("the codemod changed nothing")
    return result
