"""Parse a file once, run every enabled rule in one walk, and apply their fixes.

The flake8 plugin, the CLI and the Python API are thin layers over `Linter`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchdevice_lint.analysis import FileAnalysis
from torchdevice_lint.analysis.tree import iter_child_nodes, walk
from torchdevice_lint.findings import Finding, Fix, Report, Safety
from torchdevice_lint.rule import Rule, RuleContext
from torchdevice_lint.rules import ALL_RULES

Source = Union[str, bytes]

#: flake8's own inline suppression syntax.
NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)

#: Fixing repeats until nothing changes; overlapping fixes need one round each.
MAX_FIX_ROUNDS = 8


class SourceError(Exception):
    """A file that cannot be linted: the message is one line, fit for a report."""


@dataclass(frozen=True)
class Settings:
    #: Code prefixes to enable; None means every rule that is on by default.
    select: Optional[tuple[str, ...]] = None
    ignore: tuple[str, ...] = ()
    #: Turn on rules still in preview.
    preview: bool = False
    device_style: str = "cuda"

    def enabled_rules(self) -> list[type[Rule]]:
        return [rule for rule in ALL_RULES if self.is_enabled(rule)]

    def is_enabled(self, rule: type[Rule]) -> bool:
        selected = _longest_prefix(rule.code, self.select or ("TDL",))
        ignored = _longest_prefix(rule.code, self.ignore)
        if selected is None or (ignored is not None and len(ignored) >= len(selected)):
            return False
        return not rule.preview or self.preview or self.select is not None


def _longest_prefix(code: str, prefixes: Sequence[str]) -> Optional[str]:
    matching = [prefix for prefix in prefixes if code.startswith(prefix.strip().upper())]
    return max(matching, key=len) if matching else None


@dataclass
class FixResult:
    source: Source
    #: Findings that remain after fixing (unfixable, unsafe without ``unsafe``, or suppressed).
    remaining: list[Finding]
    applied: int


class Linter:
    def __init__(self, settings: Settings = Settings()) -> None:
        self.settings = settings
        self.rules = settings.enabled_rules()
        self.needles = tuple({needle for rule in self.rules for needle in rule.needles})
        self.byte_needles = tuple(needle.encode() for needle in self.needles)

    # ---------------------------------------------------------------- public
    def lint(self, source: Source) -> list[Finding]:
        if not self._may_match(source):
            return []
        module = parse(source)
        return [finding for finding in self._findings(module, self._run_rules(module)) if finding is not None]

    def fix(self, source: Source, unsafe: bool = False) -> FixResult:
        if not self._may_match(source):
            return FixResult(source, [], 0)
        module = parse(source)
        applied = 0
        for _ in range(MAX_FIX_ROUNDS):
            reports = self._run_rules(module)
            findings = self._findings(module, reports)
            suppressed = {id(report) for report, finding in zip(reports, findings) if finding is None}
            wanted = [
                report
                for report in reports
                if report.fix is not None
                and id(report) not in suppressed
                and (unsafe or report.fix.safety is Safety.SAFE)
            ]
            chosen = _non_overlapping(wanted)
            if not chosen:
                break
            module = self._apply(module, chosen)
            applied += len(chosen)
        remaining = self._findings(module, self._run_rules(module)) if applied else self._findings(module, reports)
        output: Source = module.bytes if isinstance(source, bytes) else module.code
        return FixResult(output, [f for f in remaining if f is not None], applied)

    # -------------------------------------------------------------- internals
    def _may_match(self, source: Source) -> bool:
        needles = self.byte_needles if isinstance(source, bytes) else self.needles
        return any(needle in source for needle in needles)

    def _run_rules(self, module: cst.Module) -> list[Report]:
        analysis = FileAnalysis(module, self.settings.device_style)
        context = RuleContext(analysis)
        handlers: dict[type, list[Callable[[cst.CSTNode], None]]] = {}
        for rule_class in self.rules:
            rule = rule_class(context)
            for attribute in dir(rule_class):
                if attribute.startswith("visit_"):
                    node_type = getattr(cst, attribute[len("visit_") :])
                    handlers.setdefault(node_type, []).append(getattr(rule, attribute))
        _walk_with_ancestors(module, context.ancestors, handlers)
        return context.reports

    def _findings(self, module: cst.Module, reports: list[Report]) -> list[Optional[Finding]]:
        """Positions for each report (None where a noqa comment suppresses it)."""
        if not reports:
            return []
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        lines = module.code.splitlines()
        findings: list[Optional[Finding]] = []
        for report in reports:
            where = positions[report.node]
            scope = positions[report.statement] if report.statement is not None else where
            noqa_lines = lines[scope.start.line - 1 : max(scope.end.line, where.start.line)]
            if _suppressed(report.code, noqa_lines):
                findings.append(None)
                continue
            findings.append(
                Finding(
                    code=report.code,
                    message=report.message,
                    line=where.start.line,
                    column=where.start.column,
                    end_line=where.end.line,
                    end_column=where.end.column,
                    fix_safety=report.fix.safety if report.fix is not None else None,
                )
            )
        return findings

    def _apply(self, module: cst.Module, reports: list[Report]) -> cst.Module:
        replacements = {old: new for report in reports for old, new in report.fix.replacements}
        updated = module.visit(_Replacer(replacements))
        binding_sites = [r.top_level_index for r in reports if r.fix.needs_device_binding]
        if binding_sites:
            binder = FileAnalysis(module, self.settings.device_style).binder
            updated = binder.insert_binding(updated, min(binding_sites))
        try:
            return cst.parse_module(updated.bytes)
        except cst.ParserSyntaxError as error:  # a bug in a rule's fix, never the user's
            raise AssertionError(f"a fix produced code that does not parse: {error}") from error


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.replacements.get(original_node, updated_node)


def _non_overlapping(reports: list[Report]) -> list[Report]:
    """Fixes whose replaced subtrees do not overlap; the rest wait for the next round."""
    taken: set[int] = set()
    chosen = []
    for report in reports:
        assert report.fix is not None
        covered = {id(node) for old, _ in report.fix.replacements for node in walk(old)}
        if covered & taken:
            continue
        taken |= covered
        chosen.append(report)
    return chosen


def _walk_with_ancestors(module: cst.Module, ancestors: list, handlers: dict) -> None:
    """Depth-first walk calling each node's handlers while ``ancestors`` holds its path."""
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            ancestors.pop()
            continue
        for handler in handlers.get(type(node), ()):
            handler(node)
        ancestors.append(node)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(iter_child_nodes(node))))


def _suppressed(code: str, lines: Sequence[str]) -> bool:
    for line in lines:
        if "noqa" not in line.lower():
            continue
        match = NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        if codes is None:
            return True
        if any(code.startswith(listed) for listed in re.split(r"[,\s]+", codes.upper()) if listed):
            return True
    return False


def parse(source: Source) -> cst.Module:
    """Parse, turning every failure into a one-line `SourceError`."""
    if isinstance(source, bytes) and b"\x00" in source:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message = str(error).strip().splitlines()[0]
        raise SourceError(f"syntax error at line {error.raw_line}, column {error.raw_column}: {message}") from None
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        raise SourceError(f"cannot decode: {error}") from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None


def lint_source(source: Source, settings: Settings = Settings()) -> list[Finding]:
    """The findings in one file's source text, sorted by position."""
    return sorted(Linter(settings).lint(source), key=lambda f: (f.line, f.column, f.code))


def fix_source(source: Source, *, unsafe: bool = False, settings: Settings = Settings()) -> Source:
    """The source with every applicable fix applied (safe ones, plus unsafe ones if asked)."""
    return Linter(settings).fix(source, unsafe=unsafe).source
