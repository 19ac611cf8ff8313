"""Run the linter on the code that real device-fix commits changed, before and after the fix.

    python scripts/mine_fix_commits.py GIT_DIR [GIT_DIR ...] [--select TDL003,TDL004]
        [--grep REGEX] [--since DATE] [--max-commits N] [--budget SECONDS] [--pickaxe [REGEX]] [--project]
        [--show] [--shaped-only]

A repository's history is a labelled corpus nobody on the team wrote: a commit whose message
speaks of devices and whose diff touches device code is a developer saying "this line was a
device bug". For every such commit and every Python file it modifies, the script lints the
file as it was before the commit (the parent) and after it, and sorts each finding on the
parent into

caught     on a line the commit changed, and gone after it: the linter points at the bug the
           developer fixed;
kept       on a line the commit did not change, or still reported after it: to be read by
           hand (a bug nobody fixed yet, or a false positive).

It also counts the fixes of each rule's shape the commit made (``device=`` added to a
factory call for TDL003 (and TDL013); a bare ``x.to(...)`` statement turned into an assignment
for TDL004; ``.cpu()`` added before ``.numpy()`` for TDL008) and how many of those the linter caught: the recall on real bugs. Fixes in test
files count too, though many of them only make a CPU test run on a GPU as well. Nothing is
written to disk; the repositories are read with ``git`` and never checked out.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import functools
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

from torchdevice_lint.analysis.project import ProjectIndex, scan
from torchdevice_lint.engine import Linter
from torchdevice_lint.findings import Finding
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.settings import Settings

#: A commit message about device placement (matched case-insensitively).
DEVICE_MESSAGE = r"device|cuda|gpu|cpu"
#: A changed line that touches device code; commits without one are skipped.
_DEVICE_CODE = re.compile(r"device|\.cuda\(|\.to\(|\.cpu\(")
#: The shapes of fix each rule is about, recognised on a pair of old and new lines.
_FACTORY_CALL = re.compile(
    r"torch\.(zeros|ones|empty|full|arange|linspace|logspace|eye|tensor|as_tensor|rand|randn"
    r"|randint|randperm|tril_indices|triu_indices|from_numpy)\("
)
_GIVEN_DEVICE = re.compile(r"\bdevice\s*=")
_BARE_TO = re.compile(
    r"^\s*(?P<receiver>[\w.\[\]]+)\.(?P<method>to|cuda|cpu|float|half|double|bfloat16)\(.*\)\s*$"
)
#: For ``--pickaxe`` with TDL004: a line that is a bare conversion statement (git's ERE).
BARE_CONVERSION_LINE = r"^\s*[A-Za-z_][A-Za-z0-9_.]*(\[[^]=]*\])?\.(to|cuda|cpu|float|half|double|bfloat16)\(.*\)\s*$"


def _adds_device_to_factory(old: str, new: str) -> bool:
    """The same factory call, now given a device it lacked (``.cuda()`` turned ``.to()`` is TDL001's)."""
    factories = {match.group(1) for match in _FACTORY_CALL.finditer(old)}
    return (
        bool(factories & {match.group(1) for match in _FACTORY_CALL.finditer(new)})
        and ".cuda(" not in old
        and ".to(" not in old  # already moved: a style change, not a bug fix
        and ".type_as(" not in old  # moved to the other tensor's device, with its dtype
        and not _GIVEN_DEVICE.search(old)  # it had a device: the commit chose another one
        and not old.lstrip().startswith((">>>", "..."))  # an example in a docstring
        and (new.count("device") > old.count("device") or new.count(".to(") > old.count(".to("))
    )


def _already_placed(lines: list[str], number: int) -> bool:
    """The factory call starting on the 1-based line ``number`` already has its device, on a
    later line: inside its own parentheses (``torch.arange(`` and then ``n, device=d)``) or
    chained to a move on the line after the call (``.to(device)``)."""
    line = lines[number - 1]
    factory = _FACTORY_CALL.search(line)
    text = line[factory.start():] if factory else line
    depth, index = text.count("(") - text.count(")"), number
    while depth > 0 and index < len(lines):
        text += lines[index]
        depth += lines[index].count("(") - lines[index].count(")")
        index += 1
    following = lines[index].lstrip() if index < len(lines) else ""
    return bool(_GIVEN_DEVICE.search(text)) or following.startswith((".to(", ".cuda(", ".type_as("))


def _assigns_bare_conversion(old: str, new: str) -> bool:
    """The bare statement kept, its result now assigned (difflib also pairs unrelated lines)."""
    bare = _BARE_TO.match(old)
    if not bare or "=" in old.split("(", 1)[0] or old.count("(") != old.count(")"):
        return False  # an assignment, or the end of a longer statement (``x.to(d), size)``)
    target, equals, value = new.partition("=")
    call = f"{bare['receiver']}.{bare['method']}("
    return bool(equals) and "(" not in target and value.strip().startswith(call)


def _copies_to_host_before_numpy(old: str, new: str) -> bool:
    return ".numpy()" in old and new.count(".cpu()") > old.count(".cpu()") and ".numpy()" in new


FIX_SHAPES = {
    "TDL003": _adds_device_to_factory,
    "TDL004": _assigns_bare_conversion,
    "TDL008": _copies_to_host_before_numpy,
    "TDL013": _adds_device_to_factory,
}
#: The rules whose fixes give a factory a device.
FACTORY_RULES = ("TDL003", "TDL013")


@dataclass
class Sighting:
    repo: str
    commit: str
    subject: str
    path: str
    finding: Finding
    line_text: str
    caught: bool


@dataclass
class Tally:
    commits: int = 0
    files: int = 0
    unparsable: int = 0
    sightings: list[Sighting] = field(default_factory=list)
    #: rule -> [fixes of its shape seen, of those caught]
    shaped: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))
    #: (repository, rule) -> [fixes of the rule's shape seen, of those caught]
    by_repo: dict[tuple[str, str], list[int]] = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))
    #: the same, leaving out ports (see `is_port`) and mixes PyTorch allows
    #: (`mixes_as_pytorch_allows`): fixes of a mismatch the parent had
    shaped_bugs: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))
    bugs_by_repo: dict[tuple[str, str], list[int]] = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))
    #: fixes of a rule's shape the linter did not point at: (rule, where, old line, new line)
    missed: list[tuple[str, str, str, str]] = field(default_factory=list)


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], capture_output=True, text=True, errors="replace", check=True
    ).stdout


def blob(repo: str, commit: str, path: str) -> Optional[str]:
    result = subprocess.run(
        ["git", "--git-dir", repo, "show", f"{commit}:{path}"], capture_output=True, text=True, errors="replace"
    )
    return result.stdout if result.returncode == 0 else None


#: Where the files of a commit's tree are placed for the project index (never on disk).
TREE_ROOT = "/mined-tree"


@functools.lru_cache(maxsize=4)
def tree_index(repo: str, commit: str) -> ProjectIndex:
    """The project index of a commit's whole tree, read with ``git cat-file --batch``: what the
    linter sees of the other files of the project when it is run on a checkout."""
    paths = [path for path in git(repo, "ls-tree", "-r", "--name-only", commit).splitlines() if path.endswith(".py")]
    request = "".join(f"{commit}:{path}\n" for path in paths).encode()
    output = subprocess.run(
        ["git", "--git-dir", repo, "cat-file", "--batch"], input=request, capture_output=True, check=True
    ).stdout
    files, position = {}, 0
    for path in paths:
        header_end = output.index(b"\n", position)
        header = output[position:header_end].split()
        position = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing (a submodule) or not a file
        size = int(header[2])
        files[f"{TREE_ROOT}/{path}"] = scan(output[position : position + size].decode("utf-8", "replace"))
        position += size + 1
    return ProjectIndex(files)


def device_commits(
    repo: str, grep: str, since: Optional[str], limit: int, pickaxe: Optional[str] = None
) -> Iterator[tuple[str, str]]:
    args = ["log", "--no-merges", "-i", "-E", f"--grep={grep}", "--format=%H%x09%s", f"--max-count={limit}"]
    args += [f"--since={since}"] if since else []
    args += [f"-G{pickaxe}"] if pickaxe else []
    for line in git(repo, *args, "--", "*.py").splitlines():
        commit, _, subject = line.partition("\t")
        yield commit, subject


def modified_python_files(repo: str, commit: str) -> list[str]:
    listing = git(repo, "diff-tree", "-r", "--no-commit-id", "--name-status", "--diff-filter=M", f"{commit}^", commit)
    return [line.split("\t", 1)[1] for line in listing.splitlines() if line.endswith(".py")]


def changed_lines(before: list[str], after: list[str]) -> tuple[set[int], list[str], list[tuple[str, str, int]]]:
    """1-based numbers of the parent's lines the commit replaced or deleted, the lines it
    wrote, and the (old, new, 1-based number of the new line) triples of its replacements."""
    changed, written, pairs = set(), [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            changed.update(range(i1 + 1, i2 + 1))
        written.extend(after[j1:j2] if tag in ("replace", "insert") else ())
        if tag == "replace":
            pairs.extend(zip(before[i1:i2], after[j1:j2], range(j1 + 1, j2 + 1)))
    return changed, written, pairs


def miss_context(path: str, before: str) -> str:
    """What kind of code a missed fix was in: a test, code that never named a device before
    the commit (a CPU program ported to the GPU, not a bug), or other code."""
    parts = path.lower().split("/")
    if any(part in ("test", "tests", "testing") for part in parts[:-1]) or parts[-1].startswith("test_") \
            or parts[-1].endswith("_test.py") or parts[-1] == "conftest.py":
        return "test"
    return "other" if _DEVICE_CODE.search(before) or "cuda" in before else "no device before"


#: The device a fix wrote: ``device=<expr>`` or ``.to(<expr>)``, up to the next comma or bracket.
_ADDED_DEVICE = re.compile(r"(?:\bdevice\s*=\s*|\.to\()([^,()]+)")
_DEVICE_ROOT = re.compile(r"self\.\w+|\w+")


def is_port(old: str, new: str, before_lines: list[str], old_number: int, changed: frozenset[int] = frozenset()) -> bool:
    """Whether a factory fix gave the factory a device the parent did not have at that line: a
    name the commit introduced (``def test_x(device)``), an attribute the file never set, a
    literal device, a library's device call the file never made (``F.ctx()``), or a tensor the
    same commit rebound (``preds = self.unwrap(preds)`` that copied to the host became one that
    keeps the device; ``changed``: the parent's 1-based lines the commit replaced). The parent
    then had no second device for the factory to meet: the commit ports CPU code to the GPU
    (or pins it), it does not fix a mismatch.
    """
    added = [match.group(1).strip() for match in _ADDED_DEVICE.finditer(new)]
    added = [expression for expression in added if expression not in old]
    if not added:
        return False
    expression = added[0]
    if expression[:1] in "'\"":
        return True
    root = _DEVICE_ROOT.match(expression)
    if root is None:
        return False
    name = root.group()
    if _reads_a_new_library_device(name, expression, new, before_lines):
        return True
    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    binds = re.compile(rf"^\s*[\w\s,.*()\[\]]*(?<![\w.]){re.escape(name)}\b[\w\s,.*()\[\]]*=(?!=)")
    if any(binds.match(before_lines[number - 1]) for number in changed if number != old_number):
        return True
    if name.startswith("self."):
        return not any(word.search(line) for line in before_lines)
    body = _enclosing_test_body(before_lines, old_number)
    if body is not None and not any(_DEVICE_CODE.search(line) or "cuda" in line for line in body):
        return True
    return not any(word.search(line) for line in _visible_lines(before_lines, old_number))


def _enclosing_test_body(lines: list[str], number: int) -> Optional[list[str]]:
    """The body of the ``test_*`` function around the 1-based line ``number``, or None. pytest
    hands a test no tensors: all it has, it makes; one whose body names no device (a ``device``
    fixture it takes and never reads included) has them all on the CPU, and a fix placing them
    there makes a CPU test run on the GPU as well."""
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for index in range(number - 1, -1, -1):
        stripped = lines[index].lstrip()
        depth = len(lines[index]) - len(stripped)
        if not stripped or depth >= indent:
            continue
        if not stripped.startswith(("def ", "async def ")):
            indent = depth
            continue
        if not re.match(r"(?:async\s+)?def\s+test", stripped):
            return None
        end = next(
            (
                later
                for later in range(number, len(lines))
                if lines[later].strip() and len(lines[later]) - len(lines[later].lstrip()) <= depth
            ),
            len(lines),
        )
        signature_end = next(
            (line for line in range(index, end) if lines[line].split("#")[0].rstrip().endswith(":")), index
        )
        return lines[signature_end + 1 : end]
    return None


#: ``torch.tensor(1.)``, ``torch.tensor(-0.5, dtype=...)``: a 0-dim tensor of a number.
_SCALAR_FACTORY = re.compile(r"torch\.(?:tensor|as_tensor)\(\s*-?[\d.]+(?:e-?\d+)?\s*[,)]")
#: ``x[..., torch.arange(w - 1, -1, -1)]``: a factory written as an index.
_FACTORY_INDEX = re.compile(r"[\w)\]]\[[^\]]*?" + _FACTORY_CALL.pattern)


def mixes_as_pytorch_allows(old: str) -> bool:
    """Whether the parent's factory was one PyTorch lets meet device tensors: a 0-dim tensor of
    a number (``v * (torch.tensor(1.) - s)``), or an index into a tensor
    (``x[..., torch.arange(w - 1, -1, -1)]``). The fix changed nothing a GPU run would see."""
    return bool(_SCALAR_FACTORY.search(old) or _FACTORY_INDEX.search(old))


def _reads_a_new_library_device(root: str, expression: str, new: str, before_lines: list[str]) -> bool:
    """``device=F.ctx()`` or ``torch.cuda.current_device()``: a device a library call gives,
    which the parent file never asked for. Nothing in the parent was placed there."""
    imported = re.compile(rf"^\s*(?:import|from)\b.*(?<![\w.]){re.escape(root)}\b")
    if root != "torch" and not any(imported.match(line) for line in before_lines):
        return False
    call = f"{expression}("
    return call in new and not any(call in line for line in before_lines)


def _visible_lines(lines: list[str], number: int) -> list[str]:
    """The lines whose names the 1-based line ``number`` may read: those of the functions
    around it up to that line (their signatures included) and the module's own lines."""
    visible = [line for line in lines if line[:1] not in " \t#" and line.strip()]
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for index in range(number - 1, -1, -1):
        line = lines[index]
        stripped = line.lstrip()
        if not stripped:
            continue
        depth = len(line) - len(stripped)
        if depth < indent and stripped.startswith(("def ", "async def ")):
            visible.extend(lines[index:number])
            indent = depth
        if depth == 0:
            break
    return visible


def _signature(finding: Finding, lines: list[str]) -> tuple[str, str]:
    return finding.code, lines[finding.line - 1].strip() if finding.line <= len(lines) else ""


def mine(repo: str, linter: Linter, rules: tuple[str, ...], args: argparse.Namespace, tally: Tally) -> None:
    name = repo.rstrip("/").removesuffix("/.git").removesuffix("/repo").rsplit("/", 1)[-1]
    deadline = time.monotonic() + args.budget if args.budget else None
    for commit, subject in device_commits(repo, args.grep, args.since, args.max_commits, args.pickaxe):
        if deadline is not None and time.monotonic() > deadline:
            print(f"{name}: budget spent, newer commits only", file=sys.stderr)
            break
        try:
            paths = modified_python_files(repo, commit)
        except subprocess.CalledProcessError:  # a root commit
            continue
        counted = False
        for path in paths:
            before, after = blob(repo, f"{commit}^", path), blob(repo, commit, path)
            if before is None or after is None:
                continue
            old_lines, new_lines = before.splitlines(), after.splitlines()
            changed, written, pairs = changed_lines(old_lines, new_lines)
            touched = [old_lines[n - 1] for n in changed] + written
            if not any(_DEVICE_CODE.search(line) for line in touched):
                continue
            if args.shaped_only and not any(
                FIX_SHAPES[rule](old, new) for rule in rules if rule in FIX_SHAPES for old, new, _ in pairs
            ):
                continue
            try:
                if args.project:
                    where = f"{TREE_ROOT}/{path}"
                    found_before = linter.lint(before, tree_index(repo, f"{commit}^"), where)
                    found_after = linter.lint(after, tree_index(repo, commit), where)
                else:
                    found_before = linter.lint(before)
                    found_after = linter.lint(after)
            except SourceError:
                tally.unparsable += 1
                continue
            counted = True
            tally.files += 1
            remaining = collections.Counter(_signature(f, new_lines) for f in found_after)
            for finding in found_before:
                signature = _signature(finding, old_lines)
                still_there = remaining[signature] > 0
                remaining[signature] -= 1
                tally.sightings.append(
                    Sighting(name, commit[:10], subject, path, finding, signature[1],
                             finding.line in changed and not still_there)
                )
            for rule in rules:
                shape = FIX_SHAPES.get(rule)
                if shape is None:
                    continue
                for old, new, new_number in pairs:
                    if shape(old, new):
                        old_number = next(n for n in sorted(changed) if old_lines[n - 1] == old)
                        if rule in FACTORY_RULES and _already_placed(old_lines, old_number):
                            continue  # the device was on the next line: a style change
                        # Caught: reported on the line the commit fixed, and silent on its fixed form.
                        hit = any(
                            f.code == rule and old_lines[f.line - 1] == old and f.line in changed
                            for f in found_before
                        ) and not any(f.code == rule and f.line == new_number for f in found_after)
                        port = is_port(old, new, old_lines, old_number, frozenset(changed))
                        allowed = rule in FACTORY_RULES and not port and mixes_as_pytorch_allows(old)
                        for counts in (tally.shaped[rule], tally.by_repo[name, rule]):
                            counts[0] += 1
                            counts[1] += hit
                        if not port and not allowed:
                            for counts in (tally.shaped_bugs[rule], tally.bugs_by_repo[name, rule]):
                                counts[0] += 1
                                counts[1] += hit
                        if not hit:
                            context = "port" if port else "allowed" if allowed else miss_context(path, before)
                            where = f"{name} {commit[:10]} {path} [{context}]"
                            tally.missed.append((rule, where, old.strip(), new.strip()))
        tally.commits += counted


def report(tally: Tally, rules: tuple[str, ...], show: bool) -> None:
    print(f"{tally.commits} device commits, {tally.files} modified files linted before and after"
          f" ({tally.unparsable} unparsable skipped)")
    for rule in rules:
        mine_ = [s for s in tally.sightings if s.finding.code == rule]
        caught = sum(s.caught for s in mine_)
        seen, hit = tally.shaped.get(rule, (0, 0))
        shape = f"; fixes of its shape: {hit} of {seen} caught" if rule in FIX_SHAPES else ""
        print(f"{rule}: {len(mine_)} findings on parents, {caught} caught (fixed by the commit){shape}")
        if rule in FIX_SHAPES:
            bugs, bugs_hit = tally.shaped_bugs.get(rule, (0, 0))
            print(
                f"{rule}: leaving out ports (a device the parent did not have) and mixes PyTorch allows:"
                f" {bugs_hit} of {bugs} caught"
            )
    print("per repository (fixes of the rule's shape: caught / seen; leaving out ports and allowed mixes: caught / seen):")
    for (repo, rule), (seen, hit) in sorted(tally.by_repo.items()):
        bugs, bugs_hit = tally.bugs_by_repo.get((repo, rule), (0, 0))
        print(f"  {rule} {repo:45} {hit:4} / {seen:<4} {bugs_hit:4} / {bugs:<4}")
    if show:
        for sighting in sorted(tally.sightings, key=lambda s: (s.finding.code, not s.caught, s.repo)):
            mark = "caught" if sighting.caught else "kept  "
            print(f"{sighting.finding.code} {mark} {sighting.repo} {sighting.commit} {sighting.path}:"
                  f"{sighting.finding.line}  {sighting.line_text[:90]}  [{sighting.subject[:60]}]")
        for rule, where, old, new in tally.missed:
            print(f"{rule} missed {where}\n    - {old[:110]}\n    + {new[:110]}")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", help="git directories (bare or .git)")
    parser.add_argument("--select", default="TDL003,TDL004")
    parser.add_argument("--grep", default=DEVICE_MESSAGE, help="commit message regex (case-insensitive)")
    parser.add_argument("--since")
    parser.add_argument("--max-commits", type=int, default=2000)
    parser.add_argument("--budget", type=float, help="seconds per repository: stop at the next commit after it")
    parser.add_argument(
        "--pickaxe", nargs="?", const=BARE_CONVERSION_LINE, metavar="REGEX",
        help="only commits whose diff adds or removes a line matching REGEX (git log -G; without REGEX: a bare"
        " conversion statement, TDL004's shape); with --grep . it mines every commit, whatever its message",
    )
    parser.add_argument(
        "--project", action="store_true",
        help="lint each file with the project index of its commit's whole tree, as a run on a checkout would",
    )
    parser.add_argument("--show", action="store_true", help="list every finding on a parent")
    parser.add_argument(
        "--shaped-only", action="store_true",
        help="lint only the files where the commit made a fix of a selected rule's shape (recall only, much faster)",
    )
    args = parser.parse_args(argv)
    rules = tuple(code.strip() for code in args.select.split(",") if code.strip())
    linter = Linter(Settings(select=rules))
    tally = Tally()
    failed = 0
    for repo in args.repos:
        try:
            mine(repo, linter, rules, args, tally)
        except subprocess.CalledProcessError as error:  # not a git directory, or git failed
            print(f"{repo}: error: git failed ({' '.join(error.cmd[3:5])}...), exit {error.returncode}; skipped", file=sys.stderr)
            failed += 1
    report(tally, rules, args.show)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
