"""Generated and mutated programs: never a crash, fixes that parse, idempotent, untouched lines kept.

Three sources of programs:

- hypothesmith's programs from Python's grammar and from LibCST's node types, with an
  ``import torch`` line so that they get past the pre-filter;
- every pairing of a real-world device bug (``.cuda()``, a factory in ``forward``, a discarded
  ``x.to(device)``, ...) with a syntactic context it is often found in (lambdas,
  comprehensions, decorators, nested classes, walrus, ``match``, ``async``, ``global`` /
  ``nonlocal``, star-args, very long and very deep expressions, ...);
- hypothesis-composed nestings of those contexts, written with varied line endings,
  indentation, byte-order marks and final newlines;
- expressions nested up to past the depth budget (brackets, calls, operators, lambdas,
  conditionals), checked under the guard the CLI uses.

Every program goes through `check_invariants`.
"""

from __future__ import annotations

import collections
import importlib
import re
import warnings
from dataclasses import dataclass

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.engine import Linter
from torchdevice_lint.guard import Budget, TooComplex, within_budget
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.settings import Settings

#: Generated programs are valid but often odd (``"a"()``): Python warns when it compiles them.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

LINTER = Linter(Settings(preview=True))  # every rule, preview ones included
HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def physical_lines(data: bytes) -> list[bytes]:
    return _LINE.findall(data)


def check_invariants(source: bytes) -> None:
    """Lint and fix (unsafe fixes included) must hold up on ``source``."""
    try:
        findings = LINTER.lint(source)
    except SourceError:
        with pytest.raises(SourceError):
            LINTER.fix(source, unsafe=True)
        return
    result = LINTER.fix(source, unsafe=True)
    fixed = result.source
    assert isinstance(fixed, bytes)
    cst.parse_module(fixed)
    if _compiles(source):
        assert _compiles(fixed), "the fixed program does not compile"
    again = LINTER.fix(fixed, unsafe=True)
    assert again.source == fixed, "fixing twice changes the output"
    if result.applied == 0:
        assert fixed == source
        return
    touched: set[int] = set()
    for finding in findings:
        if finding.fix_safety is not None:  # only what check mode reports as fixable may change
            touched.update(range(finding.line, finding.end_line + 1))
    before, after = physical_lines(source), physical_lines(fixed)
    untouched = collections.Counter(line for number, line in enumerate(before, 1) if number not in touched)
    lost = untouched - collections.Counter(after)
    assert not lost, f"lines without findings changed: {list(lost)}"
    # statements added: the device binding and `import torch` (and the second line of an unsafe
    # `set_default_tensor_type` fix); lines may also grow where a fix wraps a long line
    added = _statements(fixed) - _statements(source)
    assert 0 <= added <= 3, "a fix added more than the device binding"


def _statements(source: bytes) -> int:
    return sum(
        isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        for node in walk(cst.parse_module(source))
    )


def _compiles(source: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<source>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # deep nesting: the compiler's own limits
            return False
    return True


# ---------------------------------------------------------------- hypothesmith
def from_hypothesmith(name: str) -> st.SearchStrategy[str]:
    """hypothesmith's strategy ``name``, imported and built when a test first draws from it:
    importing it and building its grammar's parser cost ~2 s of CPU, which every collection
    paid (each xdist worker collects every module)."""
    return st.deferred(lambda: getattr(importlib.import_module("hypothesmith"), name)())


def fuzz(examples: int):
    """Few examples per run, each run new ones (no example database, a fresh seed): the suite
    stays fast and the examples tried add up over the runs of CI and of everyone's loop."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@fuzz(30)
@given(from_hypothesmith("from_grammar"))
def test_programs_from_the_grammar(program):
    check_invariants((HEADER + program).encode("utf-8", "surrogatepass"))


# Generating from LibCST's nodes is slow (large programs): fewer examples, each with bugs added.
@fuzz(12)
@given(from_hypothesmith("from_node"), st.sampled_from([
    "model = Net().cuda()\n", "x = torch.zeros(3)\nx.to(device)\n", "t = torch.device('cuda')\n"]))
def test_programs_from_libcst_nodes_with_a_device_bug(program, bug):
    check_invariants((HEADER + bug + program + "\n" + bug).encode("utf-8", "surrogatepass"))


# ------------------------------------------------------- real-world mutations
#: Statements (``{s}``) and expressions (``{e}``) that real code gets wrong.
STATEMENTS = {
    "cuda-call": "model = Net().cuda()",
    "cuda-index": "t = torch.ones(2).cuda(0)",
    "factory-meets-input": "mask = torch.zeros(inp.shape[0]); out = inp.to(device) * mask",
    "discarded-to": "x = torch.ones(3); x.to(device)",
    "discarded-float": "y = torch.zeros(2); y.float()",
    "device-literal": 'dev = torch.device("cuda:0")',
    "string-device": 'z = torch.randn(4, device="cuda")',
    "load": 'model.load_state_dict(torch.load("w.pt"))',
    "legacy-constructor": "buffer = torch.cuda.FloatTensor(3)",
}
EXPRESSIONS = {
    "cuda-call": "Net().cuda()",
    "tensor-cuda": "torch.zeros(3).cuda()",
    "device-literal": 'torch.device("cuda")',
    "to-string": 'inp.to("cuda")',
    "arange": "torch.arange(inp.size(1))",
}

#: Where those appear. ``{s}`` is a statement at the context's indentation, ``{e}`` an expression.
STATEMENT_CONTEXTS = {
    "module": "{s}\n",
    "function": "def f(inp):\n    {s}\n    return inp\n",
    "forward": "class M(nn.Module):\n    def forward(self, inp):\n        {s}\n        return inp\n",
    "nested-class": (
        "class Outer:\n    class Inner(nn.Module):\n        def forward(self, inp):\n"
        "            {s}\n            return inp\n"
    ),
    "decorated": "@torch.no_grad()\n@staticmethod\ndef g(inp):\n    {s}\n",
    "match": 'match command:\n    case "go":\n        {s}\n    case [first, *rest]:\n        pass\n    case _:\n        {s}\n',
    "async": "async def run(inp):\n    async with lock:\n        {s}\n    async for item in stream:\n        {s}\n    await inp\n",
    "global": "def g(inp):\n    global model, t\n    {s}\n",
    "nonlocal": "def outer(inp):\n    model = t = None\n    def inner():\n        nonlocal model, t\n        {s}\n    inner()\n",
    "try": "try:\n    {s}\nexcept (RuntimeError, ValueError) as error:\n    {s}\nelse:\n    pass\nfinally:\n    {s}\n",
    "loops": "for i in range(3):\n    {s}\nelse:\n    {s}\nwhile False:\n    {s}\n",
    "with": "with torch.no_grad(), open(path) as handle:\n    {s}\n",
    "one-line-if": "if flag: {s}\n",
    "semicolons": "a = 1; {s}; b = 2\n",
    "noqa": "{s}  # noqa\n",
    "noqa-code": "{s}  # noqa: TDL001\n",
    "comment-after": "{s}  # keep this comment\n",
    "if-main": 'if __name__ == "__main__":\n    {s}\n',
}
EXPRESSION_CONTEXTS = {
    "lambda": "f = lambda inp: {e}\n",
    "list-comprehension": "xs = [{e} for inp in batch if inp is not None]\n",
    "dict-comprehension": "xs = {{k: {e} for k, inp in items}}\n",
    "generator": "total = sum({e} for inp in batch)\n",
    "set-comprehension": "xs = {{{e} for inp in batch}}\n",
    "decorator-argument": "@register({e})\ndef h(inp):\n    pass\n",
    "class-decorator": "@register({e})\nclass K:\n    pass\n",
    "walrus": "if (m := {e}) is not None:\n    print(m)\n",
    "star-args": "call(*[{e}], **{{'a': {e}}})\nfirst, *rest = {e}, 1, 2\n",
    "default-argument": "def h(inp, m={e}) -> None:\n    pass\n",
    "class-attribute": "class C:\n    attr = {e}\n",
    "conditional": "m = {e} if flag else None\n",
    "f-string": 'message = f"{{{e}}} and {{inp!r:>10}}"\n',
    "return": "def r(inp):\n    return {e}\n",
    "yield": "def gen(inp):\n    yield {e}\n    yield from [{e}]\n",
    "await": "async def a(inp):\n    return await wrap({e})\n",
    "assert": "assert {e} is not None, 'message'\n",
    "subscript": "table[{e}] = values[{e}:]\n",
    "keyword": "call(x=1, y={e}, *args, **kwargs)\n",
    "tuple-unpack": "(a, b), c = ({e}, {e}), {e}\n",
    "chained": "out = {e}.float().half().to(torch.float32)\n",
    "parenthesised": "m = (\n    (\n        {e}\n    )\n)\n",
    "multi-line-call": "m = build(\n    first=1,\n    second={e},\n)\n",
    "very-long": "total = " + " + ".join(["{e}"] * 150) + "\n",
    "very-deep": "deep = " + "f(" * 60 + "{e}" + ")" * 60 + "\n",
    "many-statements": "".join(f"v{index} = {{e}}\n" for index in range(80)),
}


def _programs():
    for context_name, context in STATEMENT_CONTEXTS.items():
        for bug_name, bug in STATEMENTS.items():
            body = context.replace("{s}", bug) if "{s}" in context else context
            # Statements with ';' cannot go in a one-line compound header's position as-is.
            yield pytest.param(HEADER + body, id=f"{context_name}-{bug_name}")
    for context_name, context in EXPRESSION_CONTEXTS.items():
        for bug_name, bug in EXPRESSIONS.items():
            yield pytest.param(HEADER + context.replace("{e}", bug).replace("{{", "{").replace("}}", "}"),
                               id=f"{context_name}-{bug_name}")


@pytest.mark.parametrize("program", list(_programs()))
def test_real_world_shapes(program):
    source = program.encode()
    cst.parse_module(source)  # the test's own programs must be valid
    check_invariants(source)


# ----------------------------------------------- composed nestings, odd bytes
WRAPPERS = [
    "def w{n}(inp):\n{body}",
    "class W{n}(nn.Module):\n    def forward(self, inp):\n{body}",
    "if flag{n}:\n{body}",
    "for item{n} in items:\n{body}",
    "with ctx{n}:\n{body}",
    "try:\n{body}except Exception:\n    pass\n",
    "async def a{n}(inp):\n{body}",
    "while running{n}:\n{body}",
]
ENCODINGS = ["plain", "crlf", "cr", "mixed", "bom", "tabs", "no-final-newline", "form-feeds", "latin-1"]


def _indent(text: str, unit: str) -> str:
    return "".join(unit + line if line.strip() else line for line in text.splitlines(keepends=True))


@st.composite
def nested_programs(draw):
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    body = "".join(draw(st.lists(st.sampled_from(list(STATEMENTS.values())), min_size=1, max_size=4)))
    body = "\n".join(body.split("; ")) if draw(st.booleans()) else body
    body = "".join(f"{line}\n" for line in body.splitlines())
    for depth in range(draw(st.integers(0, 4))):
        wrapper = draw(st.sampled_from(WRAPPERS))
        body = wrapper.format(n=depth, body=_indent(body, unit))
    prefix = draw(st.sampled_from(["", '"""Docstring."""\n', "from __future__ import annotations\n", "#!/usr/bin/env python\n"]))
    return prefix + HEADER + body, draw(st.sampled_from(ENCODINGS))


def encode(program: str, how: str) -> bytes:
    if how == "crlf":
        return program.replace("\n", "\r\n").encode()
    if how == "cr":
        return program.replace("\n", "\r").encode()
    if how == "mixed":
        lines = program.splitlines(keepends=True)
        return "".join(line.replace("\n", "\r\n") if index % 2 else line for index, line in enumerate(lines)).encode()
    if how == "bom":
        return b"\xef\xbb\xbf" + program.encode()
    if how == "tabs":
        return program.replace("    ", "\t").encode()
    if how == "no-final-newline":
        return program.rstrip("\n").encode()
    if how == "form-feeds":
        return program.replace("\nimport torch\n", "\n\x0c\nimport torch\n").replace("\nmodel", "\n\x0cmodel").encode()
    if how == "latin-1":
        return ("# -*- coding: latin-1 -*-\n" + program + "name = 'caf\xe9'\n").encode("latin-1")
    return program.encode()


@fuzz(50)
@given(nested_programs())
def test_composed_programs_in_every_byte_format(case):
    program, how = case
    source = encode(program, how)
    if how == "tabs" and "  " in program.replace("    ", ""):
        return  # mixing tabs into two-space indentation is not valid Python
    check_invariants(source)


# ------------------------------------------------------------------ deep nesting
@dataclass(frozen=True)
class Level:
    """One level of nesting around an expression, and what it may wrap without parentheses.

    Looseness orders how weakly an expression's top binds: 0 an atom or bracket, 1 a unary
    minus, 2 a sum, 3 ``not``, 4 ``or``, 5 a lambda or conditional expression.
    """

    opening: str
    closing: str = ""
    wraps_up_to: int = 5
    looseness: int = 0

    @property
    def is_bracket(self) -> bool:
        return self.looseness == 0


LEVELS = [
    Level("(", ")"),
    Level("f(", ")"),
    Level("[", "]"),
    Level("{'k': ", "}"),
    Level("t[", "]"),
    Level("-", wraps_up_to=1, looseness=1),
    Level("a + ", wraps_up_to=2, looseness=2),
    Level("not ", wraps_up_to=3, looseness=3),
    Level("b or ", wraps_up_to=4, looseness=4),
    Level("lambda: ", looseness=5),
    Level("c if d else ", looseness=5),
]
#: Python's tokenizer refuses 200 nested brackets: stay under it so that deep files stay valid.
MAX_BRACKETS = 150
#: Innermost expressions with a device bug, so that the rules walk all the way down.
CORES = ["torch.zeros(3).cuda()", "torch.arange(n)", "x.to(device)", "torch.cuda.FloatTensor(2)"]
DEEP_BUDGET = Budget(seconds=60.0)


@st.composite
def deeply_nested_programs(draw):
    """A valid expression nested up to past the depth budget, mixing every kind of level."""
    limit = DEEP_BUDGET.depth
    depth = draw(st.one_of(st.integers(1, 100), st.integers(100, limit), st.integers(limit - 50, limit + 300)))
    chooser = draw(st.randoms(use_true_random=False))
    expression, looseness, brackets = draw(st.sampled_from(CORES)), 0, 0
    for _ in range(depth):
        level = chooser.choice(
            [
                level
                for level in LEVELS
                if level.wraps_up_to >= looseness and (not level.is_bracket or brackets < MAX_BRACKETS)
            ]
        )
        expression = f"{level.opening}{expression}{level.closing}"
        looseness, brackets = level.looseness, brackets + level.is_bracket
    if draw(st.booleans()):
        return HEADER + f"class M(nn.Module):\n    def forward(self, x):\n        return {expression}\n"
    return HEADER + f"y = {expression}\n"


@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")  # the guard raises it for good
@fuzz(5)
@given(deeply_nested_programs())
def test_deep_nesting_is_checked_or_refused_in_one_line(program):
    """Past the budget a file is refused with one line; within it, every invariant holds.

    The work runs under the same guard as the CLI and the flake8 plugin: a stack overflow
    here would end the test process, which is the failure this test exists to catch.
    """
    source = program.encode()
    try:
        within_budget(source, lambda: check_invariants(source), DEEP_BUDGET)
    except TooComplex as refusal:
        assert "\n" not in str(refusal) and str(refusal).startswith("too complex to check (")
