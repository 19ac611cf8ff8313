"""Small syntax helpers over LibCST nodes, shared by the analysis, the engine and the rules."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import libcst as cst

if TYPE_CHECKING:
    from typing_extensions import TypeGuard  # typing's own from Python 3.10

#: Fields that only ever hold whitespace, brackets or punctuation: never worth descending into
#: (nor is any field whose name starts with ``whitespace``: see `_child_fields`).
_FORMATTING_FIELDS = frozenset(
    {
        "leading_whitespace",
        "lpar",
        "rpar",
        "whitespace_before",
        "whitespace_after",
        "whitespace_after_func",
        "whitespace_before_args",
        "whitespace_after_star",
        "whitespace_after_arg",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "trailing_whitespace",
        "semicolon",
        "comma",
        "dot",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "colon",
        "equal",
        "indent",
    }
)

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    cached = _CHILD_FIELDS.get(node_type)
    if cached is None:
        cached = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _FORMATTING_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[node_type] = cached
    return cached


#: type -> whether its instances are nodes; ``isinstance`` against the abstract ``CSTNode``
#: goes through ``ABCMeta.__instancecheck__``, which dominated walking a tree.
_IS_NODE_TYPE: dict[type, bool] = {}


def _instance_of(value: object, bases: tuple[type, ...], verdicts: dict[type, bool]) -> bool:
    """``isinstance(value, bases)``, answered once per type: what the hot loops ask of every node."""
    value_type = type(value)
    verdict = verdicts.get(value_type)
    if verdict is None:
        verdict = verdicts[value_type] = issubclass(value_type, bases)
    return verdict


def _is_node(value: object) -> bool:
    return _instance_of(value, (cst.CSTNode,), _IS_NODE_TYPE)


_EXPRESSION_TYPES: dict[type, bool] = {}
_STATEMENT_OR_SUITE_TYPES: dict[type, bool] = {}
_COMPOUND_STATEMENT_TYPES: dict[type, bool] = {}


def is_expression(value: object) -> TypeGuard[cst.BaseExpression]:
    return _instance_of(value, (cst.BaseExpression,), _EXPRESSION_TYPES)


def is_compound_statement(value: object) -> TypeGuard[cst.BaseCompoundStatement]:
    return _instance_of(value, (cst.BaseCompoundStatement,), _COMPOUND_STATEMENT_TYPES)


def is_statement_or_suite(value: object) -> bool:
    return _instance_of(value, (cst.BaseStatement, cst.BaseSuite), _STATEMENT_OR_SUITE_TYPES)


def iter_child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of a node in source order.

    ``CSTNode.children`` and ``CSTNode.visit`` rebuild every node they pass; reading the
    dataclass fields directly is several times cheaper, and a list cheaper than a generator:
    every walk of every file comes through here.
    """
    children: list[cst.CSTNode] = []
    known = _IS_NODE_TYPE.get
    for name in _CHILD_FIELDS.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            for item in value:
                verdict = known(type(item))
                if verdict or verdict is None and _is_node(item):
                    children.append(item)
        else:
            verdict = known(value_type)
            if verdict or verdict is None and _is_node(value):
                children.append(value)
    return children


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below ``node`` (itself included), depth first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if type(current) is not cst.Name:  # the commonest node, and a leaf
            children = iter_child_nodes(current)
            children.reverse()
            stack.extend(children)


def functions_holding(ancestors: Sequence[cst.CSTNode]) -> list[cst.FunctionDef]:
    """The functions whose body holds the node below ``ancestors`` (its parent last), innermost
    first. A parameter's default, a decorator and an annotation run in the scope around the
    ``def``, before its parameters exist."""
    functions = []
    for index in range(len(ancestors) - 2, -1, -1):
        node = ancestors[index]
        if isinstance(node, cst.FunctionDef) and ancestors[index + 1] is node.body:
            functions.append(node)
    return functions


def parameters(function: cst.FunctionDef) -> list[cst.Param]:
    """``function``'s positional-only, plain and keyword-only parameters, in order."""
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def parameter_names(function: cst.FunctionDef) -> list[str]:
    """The names of `parameters`."""
    return [param.name.value for param in parameters(function)]


def self_attribute(node: cst.CSTNode) -> Optional[str]:
    """``A`` for ``self.A``."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def string_quote(module: cst.Module) -> str:
    """The quote a file writes its strings with, for the strings a fix inserts: ``'`` where
    single-quoted strings outnumber double-quoted ones (a project whose hooks want them, such as
    pre-commit's double-quote-string-fixer), else ``"``. Triple-quoted strings and strings that
    hold a quote themselves say nothing."""
    counts = {"'": 0, '"': 0}
    for node in walk(module):
        if isinstance(node, cst.SimpleString) and node.quote in counts and not {"'", '"'} & set(node.raw_value):
            counts[node.quote] += 1
    return "'" if counts["'"] > counts['"'] else '"'


def assignment_targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What an ``=``, ``+=`` or annotated assignment binds (empty for any other node)."""
    # ``type(...) is``: asked of every statement, and ``isinstance`` on LibCST's classes is slow
    if type(node) is cst.Assign:
        return [target.target for target in node.targets]
    if type(node) is cst.AnnAssign or type(node) is cst.AugAssign:
        return [node.target]
    return []



def bound_targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What ``node`` binds, tuples unpacked: ``a, b = ...``, ``for a in``, ``with ... as a``, ``(a := ...)``."""
    targets = assignment_targets(node)
    if isinstance(node, (cst.For, cst.CompFor)):
        targets = [node.target]
    elif isinstance(node, cst.AsName):
        targets = [node.name]
    elif isinstance(node, cst.NamedExpr):
        targets = [node.target]
    unpacked: list[cst.BaseExpression] = []
    while targets:
        target = targets.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            targets.extend(element.value for element in target.elements)
        else:
            unpacked.append(target)
    return unpacked


def called_name(call: cst.Call) -> Optional[str]:
    """The last name of what ``call`` calls: ``exit`` for ``sys.exit(1)`` and ``exit()``, None
    for a call of anything else (``fns[0](x)``)."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def keyword_argument(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def passes_parameter(call: cst.Call, function: cst.FunctionDef, name: str) -> bool:
    """Whether ``call`` of ``function`` gives its parameter ``name`` a value: by keyword, at its
    position, or maybe through ``*args``/``**kwargs``."""
    if any(arg.star or (arg.keyword is not None and arg.keyword.value == name) for arg in call.args):
        return True
    positional = [param.name.value for param in function.params.params]
    return name in positional and positional.index(name) < len(positional_arguments(call))


def annotated_expression(annotation: cst.Annotation) -> cst.BaseExpression:
    """What an annotation names; a forward reference (``x: "torch.Tensor"``, ART's style where
    torch is imported for type checking only) is read as the dotted name it quotes."""
    node = annotation.annotation
    if type(node) is cst.SimpleString:
        text = string_value(node)
        if text and all(part.isidentifier() for part in text.split(".")):
            parsed = cst.parse_expression(text)
            if isinstance(parsed, (cst.Name, cst.Attribute)):
                return parsed
    return node


def reads_parameter(node: cst.BaseExpression, parameters: set[str]) -> bool:
    """An item or attribute (of an item...) of one of ``parameters``, on every side of a
    conditional expression: ``params[0] if ok else params[0][0]``, ``data.pos``."""
    if isinstance(node, cst.IfExp):
        return reads_parameter(node.body, parameters) and reads_parameter(node.orelse, parameters)
    if not isinstance(node, (cst.Subscript, cst.Attribute)):
        return False
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return isinstance(node, cst.Name) and node.value in parameters


def string_value(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.SimpleString:
        # Without escapes or line endings to translate the text between the quotes is the
        # value; LibCST's ``evaluated_value`` runs ``ast.literal_eval``, costly on docstrings.
        prefix = node.prefix.lower()
        if "b" in prefix:
            return None
        if "\r" not in node.value and ("\\" not in node.value or "r" in prefix):
            return node.raw_value
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_compared(parent: Optional[cst.CSTNode]) -> bool:
    """A child of ``parent`` is an operand of a comparison (``x.device.type == "cuda"``): what it
    holds is compared, not used."""
    return isinstance(parent, (cst.Comparison, cst.ComparisonTarget))


def is_none(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def decorated_with(function: cst.FunctionDef, *names: str) -> bool:
    """``@staticmethod``, ``@property``: one of the plain-name decorators ``names``."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value in names for d in function.decorators)


def method_named(node: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    if not isinstance(node.body, cst.IndentedBlock):
        return None
    for statement in node.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None


def branch_assignments(suite: cst.BaseSuite) -> dict[str, cst.BaseExpression]:
    """What the statements of one branch assign last to a name or to ``self.<name>``."""
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    assigned: dict[str, cst.BaseExpression] = {}
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
        for small in smalls:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                text = target.value if isinstance(target, cst.Name) else self_attribute(target)
                if text is not None:
                    assigned[text if isinstance(target, cst.Name) else f"self.{text}"] = small.value
    return assigned
