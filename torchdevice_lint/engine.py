"""Parse a file once, run every enabled rule in one walk, and apply their fixes.

The flake8 plugin, the CLI and the Python API are thin layers over `Linter`.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import io
import re
import textwrap
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence, Union

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchdevice_lint.analysis import FileAnalysis, ProjectIndex
from torchdevice_lint.analysis.binding import DeviceBinder
from torchdevice_lint.analysis.tree import _child_fields, walk
from torchdevice_lint.findings import Finding, Report, Safety
from torchdevice_lint.rule import Rule, RuleContext
from torchdevice_lint.rules import ALL_RULES

Source = Union[str, bytes]

#: flake8's inline suppression syntax, character for character (``flake8.defaults.NOQA_INLINE_REGEXP``):
#: ``# noqa`` silences everything on the line, ``# noqa: TDL001,TDL003`` the listed codes and prefixes.
NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)

#: A whole-file opt-out on a line of its own: ours, or flake8's ``# flake8: noqa`` (so both front ends agree).
_SKIP_FILE = r"^[ \t\f]*#[ \t]*torchdevice:[ \t]*skip-file\b|^[ \t\f]*# flake8[:=][ \t]*noqa"
SKIP_FILE = re.compile(_SKIP_FILE, re.IGNORECASE | re.MULTILINE)
SKIP_FILE_BYTES = re.compile(_SKIP_FILE.encode(), re.IGNORECASE | re.MULTILINE)

#: Fixing repeats until nothing changes; overlapping fixes need one round each.
MAX_FIX_ROUNDS = 8


class SourceError(Exception):
    """A file that cannot be linted: the message is one line, fit for a report."""


@dataclass(frozen=True)
class Settings:
    """Which rules run and how fixes are written; `torchdevice_lint.config` builds one from a pyproject.

    ``select`` and ``ignore`` take codes or prefixes (``TDL``, ``TDL00``, ``TDL001``); where both
    match a rule, the longer prefix wins, and a tie goes to ``ignore``. A preview rule runs with
    ``preview`` or when ``select`` names its full code.
    """

    #: Code prefixes to enable; None means every rule that is on by default.
    select: Optional[tuple[str, ...]] = None
    ignore: tuple[str, ...] = ()
    #: Turn on rules still in preview.
    preview: bool = False
    #: How a fix spells a new device binding: ``cuda`` or ``accelerator``.
    device_style: str = "cuda"
    #: Name of the module-level variable a fix binds (None: ``device``, or a free variant).
    device_name: Optional[str] = None

    def enabled_rules(self) -> list[type[Rule]]:
        return [rule for rule in ALL_RULES if self.is_enabled(rule)]

    def is_enabled(self, rule: type[Rule]) -> bool:
        selected = _longest_prefix(rule.code, self.select or ("TDL",))
        ignored = _longest_prefix(rule.code, self.ignore)
        if selected is None or (ignored is not None and len(ignored) >= len(selected)):
            return False
        # A prefix (TDL, TDL01) never turns a preview rule on, in flake8 as here; its full code does.
        return not rule.preview or self.preview or rule.code in {code.strip().upper() for code in self.select or ()}


def _longest_prefix(code: str, prefixes: Sequence[str]) -> Optional[str]:
    matching = [prefix for prefix in prefixes if code.startswith(prefix.strip().upper())]
    return max(matching, key=len) if matching else None


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
        #: Honour ``# noqa`` and skip-file comments (flake8's ``--disable-noqa`` turns this off).
        self.noqa = noqa
        self.rules = settings.enabled_rules()
        self.needles = tuple({needle for rule in self.rules for needle in rule.needles})
        self.byte_needles = tuple(needle.encode() for needle in self.needles)

    # ---------------------------------------------------------------- public
    def lint(self, source: Source, project: Optional[ProjectIndex] = None, path: Optional[str] = None) -> list[Finding]:
        """``project`` and ``path``: the index of the walked project and this file's path in it."""
        check_decodable(source)
        if not self._may_match(source) or (self.noqa and skips_file(source)):
            return []
        module = parse(source)
        reports = self._run_rules(module, _text_of(source, module), project, path).reports
        return [finding for finding in self._findings(module, reports) if finding is not None]

    def fix(
        self, source: Source, unsafe: bool = False, project: Optional[ProjectIndex] = None, path: Optional[str] = None
    ) -> FixResult:
        check_decodable(source)
        if not self._may_match(source) or (self.noqa and skips_file(source)):
            return FixResult(source, [], 0)
        module = original = parse(source)
        text: Optional[str] = _text_of(source, module)
        original_text = text
        applied = 0
        #: (code, line) of the fixes check mode reports; later rounds fix only those, so that
        #: what one fix writes (a device line) never brings a finding check mode did not show.
        reported: set[tuple[str, int]] = set()
        for round_number in range(MAX_FIX_ROUNDS):
            context = self._run_rules(module, text, project, path)
            reports = context.reports
            findings = self._findings(module, reports)
            lines = _OriginalLines(original_text, module.code) if round_number else None
            wanted = [
                report
                for report, finding in zip(reports, findings)
                if report.fix is not None
                and finding is not None
                and (unsafe or report.fix.safety is Safety.SAFE)
                and (lines is None or lines.reported(finding, reported))
            ]
            if not round_number:
                wanted_ids = {id(report) for report in wanted}
                reported = {(f.code, f.line) for r, f in zip(reports, findings) if f is not None and id(r) in wanted_ids}
            chosen = _non_overlapping(wanted)
            if not chosen:
                break
            module, text = self._apply(module, chosen, context.analysis.binder), None
            applied += len(chosen)
        if applied:
            reports = self._run_rules(module, None, project, path).reports
        remaining = self._findings(module, reports)
        if not applied:  # nothing to write: hand back the very input
            return FixResult(source, [f for f in remaining if f is not None], 0)
        output: Source = module.bytes if isinstance(source, bytes) else module.code
        output = _keep_what_libcst_drops(source, original, output)
        return FixResult(output, [f for f in remaining if f is not None], applied)

    # -------------------------------------------------------------- internals
    def _may_match(self, source: Source) -> bool:
        needles = self.byte_needles if isinstance(source, bytes) else self.needles
        return any(needle in source for needle in needles)

    def _run_rules(
        self,
        module: cst.Module,
        text: Optional[str] = None,
        project: Optional[ProjectIndex] = None,
        path: Optional[str] = None,
    ) -> RuleContext:
        """Analyse the module once and walk it once for every rule; ``text`` is its source."""
        analysis = FileAnalysis(module, self.settings.device_style, self.settings.device_name, text, project, path)
        context = RuleContext(analysis)
        handlers: dict[type, list[Callable[[cst.CSTNode], None]]] = {}
        for rule_class in self.rules:
            rule = rule_class(context)
            for attribute in dir(rule_class):
                if attribute.startswith("visit_"):
                    node_type = getattr(cst, attribute[len("visit_") :])
                    handlers.setdefault(node_type, []).append(getattr(rule, attribute))
        _walk_with_ancestors(module, context.ancestors, handlers)
        return context

    def _findings(self, module: cst.Module, reports: list[Report]) -> list[Optional[Finding]]:
        """Positions for each report (None where a noqa comment suppresses it)."""
        if not reports:
            return []
        code, positions = _positions(module, [report.node for report in reports])
        noqa_text = _NoqaText(code)
        findings: list[Optional[Finding]] = []
        for report in reports:
            (line, column), (end_line, end_column) = positions[id(report.node)]
            if self.noqa and _suppressed(report.code, noqa_text.for_line(line)):
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

    def _apply(self, module: cst.Module, reports: list[Report], binder: DeviceBinder) -> cst.Module:
        """The module with the reports' fixes; ``binder`` comes from the analysis that made them."""
        replacements = {old: new for report in reports for old, new in report.fix.replacements}
        updated = module.visit(_Replacer(replacements))
        binding_sites = [r.top_level_index for r in reports if r.fix.needs_device_binding]
        if binding_sites:
            updated = binder.insert_binding(updated, min(binding_sites))
        try:
            return cst.parse_module(updated.bytes)
        except cst.ParserSyntaxError as error:  # a bug in a rule's fix, never the user's
            raise AssertionError(f"a fix produced code that does not parse: {error}") from error


def _text_of(source: Source, module: cst.Module) -> str:
    """The source as text, decoded as LibCST decoded it (cheaper than regenerating it)."""
    return source.decode(module.encoding) if isinstance(source, bytes) else source


def _keep_what_libcst_drops(source: Source, original: cst.Module, output: Source) -> Source:
    """``output`` with what LibCST dropped from the untouched input put back, byte for byte.

    LibCST reproduces a file exactly but for two known cases: a form feed in the indentation
    of a line that holds code, and a final lone ``\\r``. When the input has either, the lines
    the fixes left alone are taken from the input itself and an edited line gets its form
    feeds back; any other difference refuses the file rather than change lines no fix touched.
    """
    regenerated = original.bytes if isinstance(source, bytes) else original.code
    if regenerated == source:
        return output
    text = _Text(source)
    before, plain, after = text.lines(source), text.lines(regenerated), text.lines(output)
    if len(before) != len(plain) or not all(map(text.only_dropped, before, plain)):
        raise SourceError("cannot fix: LibCST does not reproduce this file byte for byte")
    restored = []
    matcher = difflib.SequenceMatcher(None, plain, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            restored.extend(before[i1:i2])
        elif tag == "replace":
            # Edited lines, maybe with lines inserted among them: pair each input line with
            # the most similar output line after the previous pair, and give it back its bytes.
            block, start = list(after[j1:j2]), 0
            for index in range(i1, i2):
                ratios = [(difflib.SequenceMatcher(None, plain[index], block[m]).ratio(), m) for m in range(start, len(block))]
                ratio, best = max(ratios, default=(0.0, -1))
                if ratio >= 0.5:
                    block[best] = text.put_back(before[index], plain[index], block[best])
                    start = best + 1
            restored.extend(block)
        else:
            restored.extend(after[j1:j2])
    result = text.empty.join(restored)
    if text.ends_with_lone_cr(source) and not result.endswith((text.cr, text.lf)):
        result += text.cr
    return result


class _Text:
    """Line surgery that works alike on ``str`` and ``bytes``."""

    def __init__(self, sample: Source) -> None:
        def encode(value: str) -> Source:
            return value.encode() if isinstance(sample, bytes) else value

        self.empty, self.feed, self.cr, self.lf = encode(""), encode("\x0c"), encode("\r"), encode("\n")
        self.indent_with_feed, self.indent = encode(" \t\x0c"), encode(" \t")
        self._line = _BYTE_LINE if isinstance(sample, bytes) else _LINE

    def lines(self, text):
        """Physical lines with their endings (never split at form feeds, unlike ``splitlines``)."""
        return self._line.findall(text)

    def only_dropped(self, line, regenerated) -> bool:
        """LibCST's copy of ``line`` lacks at most form feeds and a final lone CR."""
        bare = line.replace(self.feed, self.empty)
        return regenerated.replace(self.feed, self.empty) in (bare, bare[: -len(self.cr)] if bare.endswith(self.cr) else bare)

    def ends_with_lone_cr(self, text) -> bool:
        return text.endswith(self.cr) and not text.endswith(self.cr + self.lf)

    def put_back(self, line, regenerated, edited):
        """``edited``, a fix of ``regenerated``, with the indentation and final CR ``line`` had."""
        if line == regenerated:
            return edited
        indent = len(line) - len(line.lstrip(self.indent_with_feed))
        kept = len(regenerated) - len(regenerated.lstrip(self.indent))
        if edited[:kept] == regenerated[:kept]:
            edited = line[:indent] + edited[kept:]
        if line.endswith(self.cr) and not edited.endswith((self.cr, self.lf)):
            edited += self.cr
        return edited


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
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

    def reported(self, finding: Finding, reported: set[tuple[str, int]]) -> bool:
        return any((finding.code, line) in reported for line in self.origins.get(finding.line, ()))


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
    """Depth-first walk calling each node's handlers while ``ancestors`` holds its path.

    The hottest loop of a run: it visits every node of every file, so it reads the node
    fields itself (the children `analysis.tree.iter_child_nodes` yields, in the same order)
    and avoids ``isinstance`` on LibCST's abstract base classes, which is slow.
    """
    leave = _LEAVE
    stack: list = [module]
    pop, push, extend = stack.pop, stack.append, stack.extend
    get_handlers = handlers.get
    is_node = _IS_NODE_TYPE
    while stack:
        node = pop()
        if node is leave:
            ancestors.pop()
            continue
        node_type = type(node)
        for handler in get_handlers(node_type, ()):
            handler(node)
        ancestors.append(node)
        push(leave)
        children = []
        for name in _child_fields(node_type):
            value = getattr(node, name)
            value_type = type(value)
            if value_type is tuple or value_type is list:
                for item in value:
                    item_type = type(item)
                    flag = is_node.get(item_type)
                    if flag is None:
                        flag = is_node[item_type] = issubclass(item_type, cst.CSTNode)
                    if flag:
                        children.append(item)
            else:
                flag = is_node.get(value_type)
                if flag is None:
                    flag = is_node[value_type] = issubclass(value_type, cst.CSTNode)
                if flag:
                    children.append(value)
        if children:
            children.reverse()
            extend(children)


_LEAVE = object()
_IS_NODE_TYPE: dict[type, bool] = {}


#: Line breaks as LibCST counts them for positions (``str.splitlines`` also splits at form feeds).
_NEWLINE = re.compile(r"\r\n?|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")
_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


class _SpanState(CodegenState):
    """Code generation that notes which generated tokens each node spans.

    It records the same syntactic extents as LibCST's ``PositionProvider`` (which this replaces)
    but as token indices, without turning every token into a line and column: only the nodes a
    finding needs are converted, and only files with findings pay for this at all.
    """

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.spans: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        self.spans.setdefault(id(node), (start, len(self.tokens)))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            if start_node is not None:
                start = self.spans[id(start_node)][0]
            if end_node is not None:
                end = self.spans[id(end_node)][1]
            self.spans[id(node)] = (start, end)


Position = tuple[int, int]


def _positions(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> tuple[str, dict[int, tuple[Position, Position]]]:
    """The module's code and, by node id, each node's (line, column) start and end.

    Lines are 1-based and columns 0-based, exactly as LibCST's ``PositionProvider`` gives them.
    """
    state = _SpanState(module)
    module._codegen(state)
    tokens = state.tokens
    spans = {id(node): state.spans[id(node)] for node in nodes}
    wanted = sorted({index for span in spans.values() for index in span})
    at: dict[int, Position] = {}
    line, column, next_wanted = 1, 0, 0
    for index, token in enumerate(tokens):
        while next_wanted < len(wanted) and wanted[next_wanted] == index:
            at[index] = (line, column)
            next_wanted += 1
        if next_wanted == len(wanted):
            break
        if "\n" in token or "\r" in token:
            segments = _NEWLINE.split(token)
            line += len(segments) - 1
            column = len(segments[-1])
        else:
            column += len(token)
    for index in wanted[next_wanted:]:
        at[index] = (line, column)
    return "".join(tokens), {key: (at[start], at[end]) for key, (start, end) in spans.items()}


class _NoqaText:
    """The physical lines whose ``# noqa`` covers a finding on a given line.

    Those are all the lines of the finding's logical line: a comment on any line of a bracketed
    multi-line statement, a multi-line string, a backslash continuation or a multi-line
    compound-statement header covers the whole of it. (flake8 itself joins only strings and
    continuations; the flake8 plugin applies this wider reach before flake8 filters, so both
    front ends suppress the same findings.)
    """

    def __init__(self, code: str) -> None:
        self.lines = _LINE.findall(code)
        self._ranges: Optional[dict[int, tuple[int, int]]] = None

    def for_line(self, line: int) -> list[str]:
        if self._ranges is None:
            self._ranges = self._logical_lines()
        first, last = self._ranges.get(line, (line, line))
        return self.lines[max(first, 1) - 1 : last]

    def _logical_lines(self) -> dict[int, tuple[int, int]]:
        ranges: dict[int, tuple[int, int]] = {}
        first, last, depth = len(self.lines) + 2, -1, 0
        try:
            for token in tokenize.generate_tokens(io.StringIO("".join(self.lines)).readline):
                if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                    continue
                first, last = min(first, token.start[0]), max(last, token.end[0])
                if token.type == tokenize.OP and token.string in "([{":
                    depth += 1
                elif token.type == tokenize.OP and token.string in ")]}":
                    depth = max(depth - 1, 0)
                elif token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                    ranges.update(dict.fromkeys(range(first, last + 1), (first, last)))
                    first, last = len(self.lines) + 2, -1
        except (tokenize.TokenError, SyntaxError):
            return {}  # physical lines only
        return ranges


def _suppressed(code: str, lines: Sequence[str]) -> bool:
    """flake8's test on each line: a blanket ``# noqa``, or one listing ``code`` or a prefix of it.

    As in flake8 the codes are matched case-sensitively (``# noqa: tdl001`` suppresses nothing).
    """
    for line in lines:
        if "noqa" not in line.lower():
            continue
        match = NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        if codes is None:
            return True
        listed = tuple(listed for listed in re.split(r"[,\s]+", codes) if listed)
        if code in listed or code.startswith(listed):
            return True
    return False


def skips_file(source: Source) -> bool:
    """True when the file opts out with ``# torchdevice: skip-file`` (or ``# flake8: noqa``)."""
    pattern = SKIP_FILE_BYTES if isinstance(source, bytes) else SKIP_FILE
    return pattern.search(source) is not None


#: Byte order marks of encodings Python never reads source in (it would stop at the first line).
_FOREIGN_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def check_decodable(source: Source) -> None:
    """Raise a one-line `SourceError` for bytes Python cannot read as source, whatever text they
    hold, so that such a file is named rather than skipped for lack of ``torch`` in it."""
    if not isinstance(source, bytes):
        return
    for bom, encoding in _FOREIGN_BOMS.items():
        if source.startswith(bom):
            raise SourceError(f"cannot decode: {encoding} text (Python reads source as UTF-8 or its coding line's encoding)")
    if b"\x00" in source:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        source.decode(encoding)
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        raise SourceError(f"cannot decode: {error}") from None


def parse(source: Source) -> cst.Module:
    """Parse, turning every failure into a one-line `SourceError`."""
    check_decodable(source)
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(_syntax_error(source, error)) from None
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        raise SourceError(f"cannot decode: {error}") from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None


def _syntax_error(source: Source, error: cst.ParserSyntaxError) -> str:
    """One line: Python's own diagnosis (clearer than LibCST's list of expected tokens)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<file>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python:
        return f"syntax error at line {python.lineno}, column {python.offset}: {python.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    else:  # valid Python that this LibCST cannot read (newer syntax, for one)
        detail = error.message.removeprefix("parser error: ")
        return f"LibCST cannot parse this file (Python can): {textwrap.shorten(detail, 100)}"
    return f"syntax error at line {error.raw_line}, column {error.raw_column + 1}"


def lint_source(
    source: Source,
    settings: Settings = Settings(),
    *,
    filename: Optional[str] = None,
    noqa: bool = True,
    project: Optional[ProjectIndex] = None,
) -> list[Finding]:
    """The findings in one file's source text, sorted by position.

    ``source`` is the text (``str``) or the raw bytes of a file (bytes honour a PEP 263 coding
    line and a BOM). ``settings`` chooses the rules (`Settings`). With a ``filename`` ending in
    ``.ipynb`` the source is a notebook's JSON and each finding's ``cell`` names its code cell.
    ``noqa=False`` ignores ``# noqa`` and skip-file comments. ``project`` (a `ProjectIndex` of
    the project ``filename`` belongs to) lets the rules see the classes its imports name.
    Raises `SourceError` (one line) for a file that cannot be parsed.

    >>> [f.code for f in lint_source("import torch\\nmodel = Net().cuda()\\n")]
    ['TDL001']
    """
    linter = Linter(settings, noqa=noqa)
    if filename is not None and filename.endswith(".ipynb"):
        from torchdevice_lint.notebook import lint_notebook

        return lint_notebook(source.encode("utf-8") if isinstance(source, str) else source, linter)
    return sorted(linter.lint(source, project, filename), key=lambda f: (f.line, f.column, f.code))


def fix_source(
    source: Source, *, unsafe: bool = False, settings: Settings = Settings(), filename: Optional[str] = None
) -> Source:
    """The source with every applicable fix applied: the safe ones, plus the unsafe ones if asked.

    Returns the same type it is given; bytes come back byte for byte identical outside the
    fixed expressions (line endings, encoding, BOM). Findings silenced by ``# noqa`` are not
    fixed. A ``filename`` ending in ``.ipynb`` fixes a notebook's JSON cell by cell.

    >>> print(fix_source("import torch\\nmodel = Net().cuda()\\n"), end="")
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    """
    linter = Linter(settings)
    if filename is not None and filename.endswith(".ipynb"):
        from torchdevice_lint.notebook import fix_notebook

        data = source.encode("utf-8") if isinstance(source, str) else source
        fixed = fix_notebook(data, linter, unsafe=unsafe).data
        return fixed.decode("utf-8") if isinstance(source, str) else fixed
    return linter.fix(source, unsafe=unsafe).source
