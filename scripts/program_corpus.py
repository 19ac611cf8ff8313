"""Real programs that only run on a GPU, fixed by the codemod and run on the CPU and the simulated GPU (#12).

    python scripts/program_corpus.py [--markdown] [--keep DIR] [NAME ...]

Each program of ``tests/programs/manifest.toml`` is a few top-level definitions of a file of a
public repository, at a pinned commit. None of that code is stored here: it is read from the
local bare mirrors (``TORCHDEVICE_MIRRORS``, default ``/work/.mirror``; ``<owner>+<name>/repo``,
as the ``fetch`` tool makes them) into a temporary folder, together with the imports those
definitions use. A driver of our own (``tests/programs/drivers/drive_<name>.py``) builds small
inputs with a fixed seed and calls them; its ``run()`` returns what they compute.

The corpus then does what a user would: ``torchdevice-fix --fix`` on the extracted files, then
``torchdevice-fix --fix --unsafe-fixes``, and hands each original and fixed pair to the runtime
verifier (`torchdevice_lint.verify.runner.verify_cases`), which runs both on the CPU with CUDA
hidden and on the simulated GPU, in children forked from one torch process, and compares every
output that exists with the fixed program's on the CPU. Prints one line per program (or, with
``--markdown``, the table of the closing note) and exits 1 if any fixed program fails or differs.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package's own dependency there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
MANIFEST = PROGRAMS / "manifest.toml"
DRIVERS = PROGRAMS / "drivers"
MIRRORS_ENV = "TORCHDEVICE_MIRRORS"
DEFAULT_MIRRORS = Path("/work/.mirror")
#: What an excerpt may import: torch and the standard library pieces small programs use.
ALLOWED_IMPORT_ROOTS = frozenset(
    {"torch", "numpy", "math", "itertools", "collections", "typing", "functools", "copy", "random", "warnings", "os"}
)
#: Where an original is expected to break: a CPU-only machine, or the (simulated) GPU.
BREAKS = ("cpu", "simulated")


class ExtractionError(Exception):
    """The manifest names something the file at that commit does not hold as written."""


@dataclass(frozen=True)
class Program:
    name: str
    repo: str  # owner/name
    commit: str
    path: str
    objects: tuple[str, ...]  # top-level names to extract, in any order
    licence: str
    breaks: str  # "cpu" or "simulated"
    wrong: str  # what is wrong, in a sentence of ours
    #: Names the excerpt reads as globals that its file binds in a script block: the driver sets them.
    provided: tuple[str, ...] = ()

    @property
    def mirror(self) -> Path:
        return mirrors_root() / self.repo.replace("/", "+") / "repo"

    @property
    def driver(self) -> Path:
        return DRIVERS / f"drive_{self.name}.py"


@dataclass
class Outcome:
    """One program through the codemod and the verifier."""

    program: Program
    original: str
    safe: str  # after ``torchdevice-fix --fix``
    fixed: str  # after ``--fix --unsafe-fixes`` on that
    refixed: str  # the codemod run once more on the fixed text (must be unchanged)
    result: Any = None  # the verifier's CaseResult
    runs: dict[tuple[str, str], Any] = field(default_factory=dict)  # (program, device) -> ProgramRun

    def diff(self, before: str, after: str) -> list[str]:
        return [
            line.rstrip("\n")
            for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
        ]


def mirrors_root() -> Path:
    return Path(os.environ.get(MIRRORS_ENV) or DEFAULT_MIRRORS)


def load_manifest(path: Path = MANIFEST) -> list[Program]:
    entries = tomllib.loads(path.read_text(encoding="utf-8"))["program"]
    programs = []
    for entry in entries:
        entry["objects"] = tuple(entry["objects"])
        entry["provided"] = tuple(entry.get("provided", ()))
        program = Program(**entry)
        if program.breaks not in BREAKS:
            raise ValueError(f"{program.name}: breaks = {program.breaks!r}, expected one of {BREAKS}")
        programs.append(program)
    return programs


def missing_mirrors(programs: list[Program]) -> list[str]:
    """The repositories whose mirror is absent, or lacks a program's file at its commit."""
    return sorted({p.repo for p in programs if not p.mirror.is_dir() or not _has_file(p)})


def _has_file(program: Program) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(program.mirror), "cat-file", "-e", f"{program.commit}:{program.path}"],
        capture_output=True,
    )
    return done.returncode == 0


# -- extraction ----------------------------------------------------------------------------


def upstream_source(program: Program) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(program.mirror), "show", f"{program.commit}:{program.path}"],
        check=True, capture_output=True, text=True,
    ).stdout


def extract(program: Program, source: Optional[str] = None) -> str:
    """The named top-level definitions of the file, in file order, after the top-level imports
    they use; every other name they read must be a builtin or one the driver provides."""
    source = upstream_source(program) if source is None else source
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    wanted, imports = [], []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            imports.append(statement)
        elif set(_bound_names(statement)) & set(program.objects):
            wanted.append(statement)
    found = {name for statement in wanted for name in _bound_names(statement)}
    if set(program.objects) - found:
        raise ExtractionError(f"{program.name}: not top-level in {program.path}: {sorted(set(program.objects) - found)}")
    used = set().union(*(_free_names(statement) for statement in wanted)) - found
    kept_imports = [i for i in imports if set(_bound_names(i)) & used]
    for statement in kept_imports:
        if isinstance(statement, ast.ImportFrom):
            root = "." * statement.level + (statement.module or "").split(".")[0]
        else:
            root = statement.names[0].name.split(".")[0]
        if root not in ALLOWED_IMPORT_ROOTS:
            raise ExtractionError(f"{program.name}: imports {root!r}, which an excerpt may not need")
    unresolved = used - {n for i in kept_imports for n in _bound_names(i)} - set(dir(builtins)) - set(program.provided)
    if unresolved:
        raise ExtractionError(f"{program.name}: reads names the excerpt does not bind: {sorted(unresolved)}")
    future = [i for i in imports if isinstance(i, ast.ImportFrom) and i.module == "__future__"]
    header = f"# {program.repo}@{program.commit[:12]}:{program.path} ({program.licence}), extracted for a test; not ours.\n"
    chunks = ["".join(lines[s.lineno - 1 : s.end_lineno]) for s in [*future, *kept_imports]]
    body = ["".join(lines[_first_line(s) - 1 : s.end_lineno]) for s in wanted]
    return header + "".join(dict.fromkeys(chunks)) + "\n\n" + "\n\n".join(body)


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _bound_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _free_names(statement: ast.stmt) -> set[str]:
    """Names read in ``statement`` and bound nowhere inside it (a coarse, scope-blind view:
    enough to find the imports and module globals an excerpt needs)."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            loaded.update(node.names)
    return loaded - bound | {n for n in loaded if _is_global(statement, n)}


def _is_global(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(node, ast.Global) and name in node.names for node in ast.walk(statement))


# -- fixing --------------------------------------------------------------------------------


def _codemod(folder: Path, *flags: str) -> None:
    """``torchdevice-fix FLAGS folder``, as a user runs it (exit 1: it changed something)."""
    command = [sys.executable, "-c", "import sys; from torchdevice_lint.cli import main; sys.exit(main())"]
    done = subprocess.run([*command, *flags, "--no-cache", "--quiet", "-j", "1", str(folder)], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"torchdevice-fix {' '.join(flags)} failed:\n{done.stdout}{done.stderr}")


def prepare(programs: list[Program], workdir: Path) -> list[Outcome]:
    """Extract every program into ``workdir/original``, then fix copies in ``workdir/fixed``:
    safe fixes first, then the unsafe ones on top, then once more to show nothing is left."""
    original_dir, fixed_dir = workdir / "original", workdir / "fixed"
    original_dir.mkdir(parents=True)
    originals = {}
    for program in programs:
        originals[program.name] = extract(program)
        (original_dir / f"{program.name}.py").write_text(originals[program.name], encoding="utf-8")
    shutil.copytree(original_dir, fixed_dir)
    _codemod(fixed_dir, "--fix")
    safe = {p.name: (fixed_dir / f"{p.name}.py").read_text(encoding="utf-8") for p in programs}
    _codemod(fixed_dir, "--fix", "--unsafe-fixes")
    fixed = {p.name: (fixed_dir / f"{p.name}.py").read_text(encoding="utf-8") for p in programs}
    from torchdevice_lint import fix_source

    return [
        Outcome(p, originals[p.name], safe[p.name], fixed[p.name], fix_source(fixed[p.name], unsafe=True))
        for p in programs
    ]


# -- running -------------------------------------------------------------------------------


def verify(outcomes: list[Outcome], workdir: Path, timeout: float = 120.0) -> None:
    """Run each original and fixed program on the CPU and the simulated GPU (one forked child
    each) through the verifier, and attach its verdict and runs to each outcome."""
    from torchdevice_lint.verify.runner import Case, verify_cases

    cases = [
        Case(
            name=o.program.name,
            original=workdir / "original" / f"{o.program.name}.py",
            fixed=workdir / "fixed" / f"{o.program.name}.py",
            module=o.program.driver.stem,
            search_path=(str(DRIVERS),),
            codemod="applied",
        )
        for o in outcomes
    ]
    results = verify_cases(cases, timeout=timeout, check_fix=False)
    for outcome, result in zip(outcomes, results):
        outcome.result = result
        outcome.runs = {(run.program, run.device): run for run in result.runs}


def run_corpus(programs: list[Program], workdir: Path) -> list[Outcome]:
    outcomes = prepare(programs, workdir)
    verify(outcomes, workdir)
    return outcomes


# -- reporting -----------------------------------------------------------------------------


def verdict(outcome: Outcome, device: str) -> str:
    fixed = outcome.runs.get(("fixed", device))
    original = outcome.runs.get(("original", device))
    if fixed is None:
        return "not run"
    if not fixed.ok:
        return f"FIXED FAILS: {fixed.error}"
    compared = {c.run: c for c in outcome.result.comparisons}
    parts = []
    if device != "cpu":
        same = compared.get(f"fixed@{'sim' if device == 'simulated' else device}")
        parts.append("runs, same outputs" if same is None or same.same else f"runs, OUTPUTS DIFFER ({same.message})")
    else:
        parts.append("runs (the reference)")
    if original is not None and original.ok:
        same = compared.get(f"original@{'sim' if device == 'simulated' else device}")
        if same is None:
            parts.append("original runs (not compared: no reference)")
        else:
            parts.append("original runs too, same outputs" if same.same else f"original DIFFERS ({same.message})")
    elif original is not None:
        parts.append(f"original fails: {original.error[:90]}")
    return "; ".join(parts)


def problems(outcome: Outcome) -> list[str]:
    """What keeps a program from counting as fixed (empty: it does)."""
    found = []
    if outcome.fixed == outcome.original:
        found.append("the codemod changed nothing")
    if outcome.refixed != outcome.fixed:
        found.append("a second codemod run changes the fixed program again")
    expected = outcome.runs.get(("original", outcome.program.breaks))
    if expected is None or expected.ok:
        found.append(f"the original does not break on {outcome.program.breaks} as the manifest says")
    for device in ("cpu", "simulated"):
        run = outcome.runs.get(("fixed", device))
        if run is None or not run.ok:
            found.append(f"fixed on {device}: {run.error if run else 'not run'}")
    found += [f"{c.run} differs from fixed@cpu: {c.message}" for c in outcome.result.comparisons if not c.same]
    return found


def markdown(outcomes: list[Outcome]) -> str:
    lines = [
        "| # | Program | repo@commit:path `objects` | What was wrong | Breaks as written on | Fix kind"
        " | Fix applied (safe, then unsafe) | CPU | Simulated GPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for number, o in enumerate(outcomes, 1):
        p = o.program
        where = f"{p.repo}@{p.commit[:10]}:{p.path} `{', '.join(p.objects)}`"
        safe = o.diff(o.original, o.safe)
        unsafe = o.diff(o.safe, o.fixed)
        kind = " + ".join(label for label, diff in (("safe", safe), ("unsafe", unsafe)) if diff) or "none"
        fix = "<br>".join(
            f"{label}:<br>" + "<br>".join(f"`{_cell(line)}`" for line in diff)
            for label, diff in (("safe", safe), ("unsafe", unsafe))
            if diff
        )
        breaks = "CPU" if p.breaks == "cpu" else "simulated GPU (runs on CPU)"
        lines.append(
            f"| {number} | {p.name} | {where} | {_cell(p.wrong)} | {breaks} | {kind} | {fix or '(none)'}"
            f" | {_cell(verdict(o, 'cpu'))} | {_cell(verdict(o, 'simulated'))} |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only these programs")
    parser.add_argument("--markdown", action="store_true", help="print the closing note's table")
    parser.add_argument("--keep", type=Path, help="extract and fix into this folder and keep it")
    options = parser.parse_args(argv)
    programs = [p for p in load_manifest() if not options.names or p.name in options.names]
    absent = missing_mirrors(programs)
    if absent:
        print(f"mirrors absent (or without the pinned commit) under {mirrors_root()}: {', '.join(absent)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="torchdevice-programs-") as scratch:
        workdir = options.keep or Path(scratch)
        outcomes = run_corpus(programs, workdir)
    failing = 0
    for o in outcomes:
        found = problems(o)
        failing += bool(found)
        if not options.markdown:
            print(f"{o.program.name}: {'ok' if not found else 'FAILS: ' + '; '.join(found)}")
            print(f"    cpu: {verdict(o, 'cpu')}\n    sim: {verdict(o, 'simulated')}")
    if options.markdown:
        print(markdown(outcomes), end="")
    repos = len({p.repo for p in programs})
    print(f"{len(programs) - failing} of {len(programs)} programs from {repos} repositories fixed", file=sys.stderr)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
