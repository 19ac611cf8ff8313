"""Parse a file once, run every enabled rule in one walk, and apply their fixes.

The flake8 plugin, the CLI and the Python API (`torchdevice_lint.api`) are thin layers over `Linter`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import FileAnalysis, ProjectIndex
from torchdevice_lint.analysis.bind_once import BindOnce, switch_device_test
from torchdevice_lint.analysis.binding import DeviceBinder
from torchdevice_lint.analysis.tree import iter_child_nodes, walk
from torchdevice_lint.findings import Finding, Fix, Replacement, Report, Safety
from torchdevice_lint.noqa import NoqaLines, is_suppressed, skips_file
from torchdevice_lint.parsing import Source, check_decodable, parse, parse_module
from torchdevice_lint.positions import Position, node_positions, positions_in_statement
from torchdevice_lint.reparse import Layout, Reparser
from torchdevice_lint.round_trip import keep_what_libcst_drops
from torchdevice_lint.rule import Rule, RuleContext
from torchdevice_lint.settings import Settings
from torchdevice_lint.wrapping import rows_pushed_past, wrap_lengthened_lines

#: Fixing repeats until nothing changes; overlapping fixes need one round each.
MAX_FIX_ROUNDS = 8

@dataclass
class FixResult:
    """What `Linter.fix` returns: the new source, what is left to report, and how many fixes applied."""

    source: Source
    #: Findings that remain after fixing (unfixable, unsafe without ``unsafe``, or suppressed).
    remaining: list[Finding]
    applied: int


class Linter:
    """Lint or fix source text under one `Settings` (build one per configuration and reuse it)."""

    def __init__(self, settings: Settings = Settings(), *, noqa: bool = True) -> None:
        self.settings = settings
        #: Honour noqa and skip-file comments (flake8's ``--disable-noqa`` turns this off).
        self.noqa = noqa
        self.rules = settings.enabled_rules()
        self.needles = tuple({needle for rule in self.rules for needle in rule.needles})
        self.byte_needles = tuple(needle.encode() for needle in self.needles)

    # ---------------------------------------------------------------- public
    def lint(
        self,
        source: Source,
        project: Optional[ProjectIndex] = None,
        path: Optional[str] = None,
        reparser: Optional[Reparser] = None,
    ) -> list[Finding]:
        """``project`` and ``path``: the index of the walked project and this file's path in it.
        ``reparser``: the one that parsed the previous version of this text (an editor's document)."""
        check_decodable(source)
        if not self._may_match(source) or (self.noqa and skips_file(source)):
            return []
        module, layout = reparser.parse(source) if reparser is not None and isinstance(source, str) else (parse(source), None)
        reports = self._run_rules(module, _text_of(source, module), project, path).reports
        return [finding for finding in self._findings(module, reports, layout) if finding is not None]

    def fix(
        self,
        source: Source,
        unsafe: bool = False,
        project: Optional[ProjectIndex] = None,
        path: Optional[str] = None,
        only: Optional[Callable[[Finding], bool]] = None,
    ) -> FixResult:
        """``only``: fix only the findings it accepts (an editor's quick fix for one finding),
        and what their fixes bring on their lines.

        A fix never pushes a line past the project's configured line length: where a line it
        lengthens cannot be laid out within it (`torchdevice_lint.wrapping`), the findings on
        the lines it replaced are left unfixed (deepvoice3's ``for ... in [(...), (...,
        torch.IntTensor([1]))]:`` header went from 117 to 133 columns under tox.ini's 120)."""
        result, too_long = self._fix(source, unsafe, project, path, only)
        excluded: list[tuple[int, int]] = []
        while too_long and not set(too_long) <= set(excluded):
            excluded.extend(too_long)

            def keeps(finding: Finding, ranges: tuple[tuple[int, int], ...] = tuple(excluded)) -> bool:
                return (only is None or only(finding)) and not any(
                    first <= finding.end_line and finding.line <= last for first, last in ranges
                )

            result, too_long = self._fix(source, unsafe, project, path, keeps)
        if excluded:
            limit = self.settings.line_length
            reason = f"the fixed line would not fit in {limit} columns (the project's line length)"
            result.remaining = _without_fix(result.remaining, excluded, source, result.source, reason)
        return result

    def _fix(
        self,
        source: Source,
        unsafe: bool,
        project: Optional[ProjectIndex],
        path: Optional[str],
        only: Optional[Callable[[Finding], bool]],
    ) -> tuple[FixResult, list[tuple[int, int]]]:
        """The fixed source, and the rows of ``source`` (first, last, from 1) whose replacement
        the fixes left past the configured line length."""
        check_decodable(source)
        if not self._may_match(source) or (self.noqa and skips_file(source)):
            return FixResult(source, [], 0), []
        module = original = parse(source)
        #: The code of ``module``, carried along with it: regenerating it from the tree costs about
        #: a third of a small file's fix, and a parsed tree gives back exactly the text it was parsed from.
        original_text = text = _text_of(source, module)
        applied = 0
        #: Lines of the fixes check mode reports; later rounds fix only findings there (what one
        #: fix writes, such as TDL006's torch.empty meeting a device tensor, is finished in the same
        #: run), so that a fix never touches a line check mode did not show.
        reported: set[int] = set()
        for round_number in range(MAX_FIX_ROUNDS):
            context = self._run_rules(module, text, project, path, unsafe)
            reports = context.reports
            findings = self._findings(module, reports)
            lines = _OriginalLines(original_text, text) if round_number else None
            wanted = [
                report
                for report, finding in zip(reports, findings)
                if report.fix is not None
                and finding is not None
                and (unsafe or report.fix.safety is Safety.SAFE)
                and (lines is None or lines.reported(finding, reported))
                and (lines is not None or only is None or only(finding))
            ]
            if not round_number:
                wanted_ids = {id(report) for report in wanted}
                reported = {f.line for r, f in zip(reports, findings) if f is not None and id(r) in wanted_ids}
            chosen = _non_overlapping(wanted)
            if not chosen:
                break
            module, text = self._apply(module, chosen, context.analysis.binder)
            applied += len(chosen)
        if applied:
            module, text = self._wrapped(original, module, text, isinstance(source, bytes))
            reports = self._run_rules(module, text, project, path).reports
        remaining = self._findings(module, reports)
        if not applied:  # nothing to write: hand back the very input
            return FixResult(source, [f for f in remaining if f is not None], 0), []
        output: Source = text.encode(module.encoding) if isinstance(source, bytes) else text
        output = keep_what_libcst_drops(source, original, output)
        limit = self.settings.line_length
        too_long = [] if limit is None else rows_pushed_past(original_text, text, limit)
        return FixResult(output, [f for f in remaining if f is not None], applied), too_long

    # -------------------------------------------------------------- internals
    def _may_match(self, source: Source) -> bool:
        if isinstance(source, bytes):
            return any(needle in source for needle in self.byte_needles)
        return any(needle in source for needle in self.needles)

    def _run_rules(
        self,
        module: cst.Module,
        text: Optional[str] = None,
        project: Optional[ProjectIndex] = None,
        path: Optional[str] = None,
        unsafe: bool = False,
    ) -> RuleContext:
        """Analyse the module once and walk it once for every rule; ``text`` is its source.

        When the fixes that would be applied (``unsafe`` ones too, if asked) give the file a CPU
        fallback (the device line, or ``"cuda" if ... is_available() else "cpu"``), the rules
        that read it walk again knowing so: the finding the fallback brings is then reported,
        and fixed, in the same run, and a second run changes nothing."""
        analysis = FileAnalysis(module, self.settings, text, project, path)
        context = self._walk(analysis, self.rules)
        readers = [rule for rule in self.rules if rule.reads_coming_cpu_fallback]
        if readers and any(
            report.fix is not None
            and (unsafe or report.fix.safety is Safety.SAFE)
            and _brings_cpu_fallback(report.fix, module)
            for report in context.reports
        ):
            analysis.cpu_fallback_coming = True
            codes = {rule.code for rule in readers}
            again = self._walk(analysis, readers)
            context.reports = [report for report in context.reports if report.code not in codes] + again.reports
        return context

    def _walk(self, analysis: FileAnalysis, rules: Sequence[type[Rule]]) -> RuleContext:
        context = RuleContext(analysis)
        handlers: dict[type, list[Callable[[cst.CSTNode], None]]] = {}
        for rule_class in rules:
            rule = rule_class(context)
            for node_type, attribute in _visitors(rule_class):
                handlers.setdefault(node_type, []).append(getattr(rule, attribute))
        _walk_with_ancestors(analysis.module, context.ancestors, handlers)
        return context

    def _findings(self, module: cst.Module, reports: list[Report], layout: Optional[Layout] = None) -> list[Optional[Finding]]:
        """Positions for each report (None where a noqa comment suppresses it)."""
        if not reports:
            return []
        located = _located(module, reports, layout)
        noqa_lines: Callable[[int], list[str]]
        if located is None:
            code, positions = node_positions(module, [report.node for report in reports])
            noqa_lines = NoqaLines(code).for_line
        else:
            positions, noqa_lines = located
        findings: list[Optional[Finding]] = []
        for report in reports:
            (line, column), (end_line, end_column) = positions[id(report.node)]
            if self.noqa and is_suppressed(report.code, noqa_lines(line)):
                findings.append(None)
                continue
            findings.append(
                Finding(
                    code=report.code,
                    message=report.message,
                    line=line,
                    column=column,
                    end_line=end_line,
                    end_column=end_column,
                    fix_safety=report.fix.safety if report.fix is not None else None,
                )
            )
        return findings

    def _wrapped(self, original: cst.Module, fixed: cst.Module, text: str, as_bytes: bool) -> tuple[cst.Module, str]:
        """``fixed`` (whose code is ``text``) with the lines its fixes pushed past the project's
        line length laid out over several lines (`torchdevice_lint.wrapping`), and its code."""
        code = wrap_lengthened_lines(original.code, text, self.settings.line_length, fixed.default_indent, self.settings.layout)
        if code == text:
            return fixed, text
        return parse(code.encode(fixed.encoding) if as_bytes else code), code

    def _apply(self, module: cst.Module, reports: list[Report], binder: DeviceBinder) -> tuple[cst.Module, str]:
        """The module with the reports' fixes, and its code; ``binder`` comes from the analysis
        that made them."""
        fixes = [(report, report.fix) for report in reports if report.fix is not None]
        replacements = {old: new for _, fix in fixes for old, new in fix.replacements}
        updated = module.visit(_Replacer(replacements))
        created = [
            id(node)
            for _, new in replacements.items()
            if isinstance(new, cst.CSTNode)
            for node in walk(new)
            if switch_device_test(node) is not None
        ]
        if len(created) > 1:  # a switch device written at two sites of a function: bound once there
            updated = updated.visit(BindOnce(created, binder.preferred_name or "device"))
        binding_sites = [report.top_level_index for report, fix in fixes if fix.needs_device_binding]
        import_sites = [report.top_level_index for report, fix in fixes if fix.needs_torch_import]
        if binding_sites or import_sites:
            # one insertion above the first statement that needs it: the binding brings ``import torch``
            updated = binder.insert_binding(updated, min(binding_sites + import_sites), device_line=bool(binding_sites))
        code = updated.code
        try:
            return parse_module(code.encode(updated.encoding)), code
        except cst.ParserSyntaxError as error:  # a bug in a rule's fix, never the user's
            raise AssertionError(f"a fix produced code that does not parse: {error}") from error


def _located(
    module: cst.Module, reports: list[Report], layout: Optional[Layout]
) -> Optional[tuple[dict[int, tuple[Position, Position]], Callable[[int], list[str]]]]:
    """Positions and ``# noqa`` lines read from the statements that hold the reports alone (the
    layout knows where each starts) rather than from the whole module's code; None where the
    layout is not this module's or a report lies outside its statement."""
    if layout is None or layout.module is not module:
        return None
    by_statement: dict[int, list[cst.CSTNode]] = {}
    for report in reports:
        by_statement.setdefault(report.top_level_index, []).append(report.node)
    positions: dict[int, tuple[Position, Position]] = {}
    for index, nodes in by_statement.items():
        found = positions_in_statement(module, module.body[index], layout.first_lines[index], nodes)
        if found is None:
            return None
        positions.update(found)
    return positions, layout.noqa_lines()


def _brings_cpu_fallback(fix: Fix, module: cst.Module) -> bool:
    return fix.needs_device_binding or any(
        isinstance(new, cst.CSTNode) and "is_available(" in module.code_for_node(new) for _, new in fix.replacements
    )


def _without_fix(
    remaining: list[Finding], excluded: Sequence[tuple[int, int]], before: Source, after: Source, reason: str
) -> list[Finding]:
    """``remaining`` with the findings on the ``excluded`` rows of ``before`` (whose fixes were
    left: their lines could not be laid out within the line length) marked as having none, and
    why, so that what ``--fix`` prints neither offers them again nor contradicts check mode."""
    old_lines, new_lines = (
        (text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text).splitlines() for text in (before, after)
    )
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    rows: set[int] = set()
    for old_start, new_start, size in matcher.get_matching_blocks():
        rows.update(
            new_start + offset + 1
            for offset in range(size)
            if any(first <= old_start + offset + 1 <= last for first, last in excluded)
        )
    return [
        replace(finding, fix_safety=None, fix_withheld=reason) if finding.line in rows and finding.fixable else finding
        for finding in remaining
    ]


def _text_of(source: Source, module: cst.Module) -> str:
    """The source as text, decoded as LibCST decoded it (cheaper than regenerating it)."""
    return source.decode(module.encoding) if isinstance(source, bytes) else source


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


class _OriginalLines:
    """Which lines of the original source a line of the fixed source comes from.

    An unchanged line is itself, a line a fix rewrote stands for every line of the hunk it
    replaced, a line a fix inserted (the device binding, an import) for none.
    """

    def __init__(self, original: str, current: str) -> None:
        self.origins: dict[int, range] = {}
        matcher = difflib.SequenceMatcher(None, original.splitlines(), current.splitlines(), autojunk=False)
        for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
            for offset, line in enumerate(range(new_start, new_end)):
                if tag == "equal":
                    self.origins[line + 1] = range(old_start + offset + 1, old_start + offset + 2)
                elif tag == "replace":
                    self.origins[line + 1] = range(old_start + 1, old_end + 1)

    def reported(self, finding: Finding, reported: set[int]) -> bool:
        return any(line in reported for line in self.origins.get(finding.line, ()))


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


#: Rule class -> the node types it visits, with the method for each.
_VISITORS: dict[type, tuple[tuple[type, str], ...]] = {}


def _visitors(rule_class: type[Rule]) -> tuple[tuple[type, str], ...]:
    """What `_VISITORS` holds for ``rule_class``: read with ``dir`` once per rule class, not for every file."""
    found = _VISITORS.get(rule_class)
    if found is None:
        found = _VISITORS[rule_class] = tuple(
            (getattr(cst, attribute[len("visit_") :]), attribute) for attribute in dir(rule_class) if attribute.startswith("visit_")
        )
    return found


def _walk_with_ancestors(module: cst.Module, ancestors: list, handlers: dict) -> None:
    """Depth-first walk calling each node's handlers while ``ancestors`` holds its path.

    The hottest loop of a run: it visits every node of every file."""
    leave = _LEAVE
    stack: list = [module]
    pop, push, extend = stack.pop, stack.append, stack.extend
    get_handlers = handlers.get
    name = cst.Name
    while stack:
        node = pop()
        if node is leave:
            ancestors.pop()
            continue
        for handler in get_handlers(type(node), ()):
            handler(node)
        if type(node) is name:
            continue  # the commonest node, and a leaf
        children = iter_child_nodes(node)
        if children:  # a leaf is nobody's ancestor
            ancestors.append(node)
            push(leave)
            children.reverse()
            extend(children)


_LEAVE = object()

