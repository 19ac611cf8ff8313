"""Evidence from the shapes of code: uses that show a name is a tensor, the methods a module
runs, type tests and blocks that expect errors."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Iterable, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.tree import (
    bound_targets,
    called_name,
    is_none,
    iter_child_nodes,
    keyword_argument,
    method_named,
    string_value,
    walk,
)

#: Attributes that, read off a parameter of ``forward``, show it is a tensor.
_FORWARD_TENSOR_EVIDENCE = frozenset({"size", "shape", "view", "dim", "ndim", "device", "dtype", "reshape"})


#: A tensor type written in a docstring: ``torch.Tensor``, ``Tensor``, ``torch.LongTensor``.
_TENSOR_TYPE = r"(?:torch\.)?[A-Z]?[a-z]*Tensor(?:\s*,\s*optional)?"
#: ``start: torch.Tensor`` / ``start : Tensor`` on a line of its own (NumPy style),
#: ``start (torch.Tensor): ...`` (Google style), ``:type start: torch.Tensor`` (Sphinx).
_DOCUMENTED_TENSOR = re.compile(
    rf"^\s*(?:(\w+)\s*:\s*{_TENSOR_TYPE}\s*$"
    rf"|(\w+)\s*\(\s*{_TENSOR_TYPE}\s*\)\s*:"
    rf"|:type\s+(\w+)\s*:\s*{_TENSOR_TYPE}\s*$)",
    re.MULTILINE,
)


def documented_tensors(function: cst.FunctionDef) -> set[str]:
    """The parameters the function's docstring gives a tensor type (nothing else: ``Tensor or
    ndarray`` is not one), as an annotation would."""
    docstring = function.get_docstring(clean=False)
    if not docstring or "Tensor" not in docstring:
        return set()
    return {next(name for name in match.groups() if name) for match in _DOCUMENTED_TENSOR.finditer(docstring)}


def body_nodes(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """The nodes of a function's body, not those inside its nested functions, classes and
    lambdas: one walk that the evidence below reads, each in its own way."""
    nodes: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        nodes.append(node)
        # ``type(...) is``, not ``isinstance``: this walks every function, and LibCST's classes
        # are abstract-base-class instances whose ``isinstance`` is slow (none of these has subclasses).
        if type(node) is not cst.Name and type(node) is not cst.FunctionDef and type(node) is not cst.ClassDef and type(node) is not cst.Lambda:
            stack.extend(iter_child_nodes(node))
    return nodes


def names_used_as_tensors(
    body: list[cst.CSTNode], imports: ImportTable, lenient: bool, operands: bool = False, bare_size: bool = True
) -> set[str]:
    """Names a function's `body_nodes` treat as tensors: tensor-only methods, a tensor's
    results of ``.cpu()`` (``x.cpu().numpy()``); in ``forward`` also ``.shape`` and being passed
    to any ``torch.*`` function. With ``operands``, also the first operand of a torch function
    that takes only a tensor there (``torch.topk(corr, k)``, ``torch.zeros_like(values)``) and
    the parts of a sequence ``torch.cat``/``torch.stack`` take (`_sequence_parts`): the
    device choice reads it (`binding`), the flow does not (a parameter typed so would make new
    findings in data-loading helpers: ``torch.index_select(frames, 0, torch.linspace(...))``).
    Without ``bare_size``, ``x.size()`` with no argument is none (a process group's ``group.size()``)."""
    evidence = torch_api.TENSOR_ONLY_METHODS | (_FORWARD_TENSOR_EVIDENCE if lenient else frozenset())
    found = _names_read_with(body, evidence, bare_size) | _names_copied_to_host(body)
    #: ``row, col = edge_index``: what the rows show of the tensor they come from.
    unpacked_from: dict[str, str] = {}
    for node in body:
        if type(node) is cst.Call:
            func = node.func
            # ``torch.rand(n, dtype=inputs.dtype)``: only a tensor gives torch its dtype or device.
            placing = [
                arg.value.value.value
                for arg in node.args
                if arg.keyword is not None
                and arg.keyword.value in _PLACING_KEYWORDS
                and type(arg.value) is cst.Attribute
                and type(arg.value.value) is cst.Name
                and arg.value.attr.value == arg.keyword.value
            ]
            # the qualified name only where it decides: most calls are neither in ``forward`` nor placing
            first = node.args[0] if node.args else None
            # ``torch.mean(corr)``, ``torch.zeros_like(values)``: a tensor only (NumPy is refused there)
            operand = (
                first.value.value
                if operands and first is not None and type(first.value) is cst.Name and not first.keyword and not first.star
                else None
            )
            # ``torch.stack((idx[:, 0], idx[:, 1]))``: the parts of a literal sequence of tensors
            parts = (
                _sequence_parts(first.value)
                if operands and first is not None and not first.keyword and not first.star
                else []
            )
            if lenient or placing or operand is not None or parts:
                qualified = imports.qualified_name(func) or ""
                if qualified.startswith("torch."):
                    found.update(placing)
                    if lenient:
                        found.update(arg.value.value for arg in node.args if type(arg.value) is cst.Name and not arg.keyword)
                    elif operand is not None and torch_api.takes_tensor_operand(qualified):
                        found.add(operand)
                    elif parts and qualified in torch_api.TENSOR_SEQUENCE_FUNCTIONS:
                        found.update(parts)
        elif type(node) is cst.Assign and type(node.value) is cst.Name:
            for target in node.targets:
                if isinstance(target.target, (cst.Tuple, cst.List)):
                    for element in target.target.elements:
                        if isinstance(element.value, cst.Name):
                            unpacked_from[element.value.value] = node.value.value
    return found | {unpacked_from[name] for name in found if name in unpacked_from}


def _sequence_parts(value: cst.BaseExpression) -> list[str]:
    """The names a list or tuple literal holds as tensors if ``torch.cat`` takes it: an element
    ``x``, or ``x[:, 0]`` (an index of two or more parts, which a list refuses and which leaves
    a NumPy array a NumPy array, refused too)."""
    if type(value) is not cst.Tuple and type(value) is not cst.List:
        return []
    names = []
    for element in value.elements:
        part = element.value
        if type(part) is cst.Subscript and len(part.slice) >= 2:
            part = part.value
        if type(part) is cst.Name and type(element) is cst.Element:
            names.append(part.value)
    return names


#: Members that NumPy arrays (and numbers) do not have either: read off a value of unknown
#: kind, they show a tensor (``grad.isnan()``, ``grad.sign()``, ``task_idcs.long()``).
_STRONG_TENSOR_EVIDENCE = torch_api.TENSOR_ONLY_METHODS | frozenset(
    {"isnan", "isinf", "abs", "sign", "cpu", "cuda", "backward", "sigmoid", "exp", "log", "clamp", "norm", "dim",
     "long", "mT"}
)


def names_shown_as_tensors(body: list[cst.CSTNode]) -> set[str]:
    """Names a function's `body_nodes` read with a member only tensors have, or call with
    ``.size()``/``.view()``, and never as no tensor can be (`names_shown_not_tensors`: a module's
    ``prior.cuda()`` beside ``prior.n_ctx``)."""
    return _names_read_with(body, _STRONG_TENSOR_EVIDENCE) - names_shown_not_tensors(body)


def names_shown_not_tensors(nodes: Iterable[cst.CSTNode]) -> set[str]:
    """Names ``nodes`` call (``prior(x, y)``) or read a member off that tensors lack
    (``prior.n_ctx``, ``prior.decode(z)``; `torch_api.TENSOR_MEMBERS`): no tensors."""
    names: set[str] = set()
    for node in nodes:
        if type(node) is cst.Call and type(node.func) is cst.Name:
            names.add(node.func.value)
        elif type(node) is cst.Attribute and type(node.value) is cst.Name and node.attr.value not in torch_api.TENSOR_MEMBERS:
            names.add(node.value.value)
    return names


def _names_read_with(body: list[cst.CSTNode], members: frozenset[str], bare_size: bool = True) -> set[str]:
    """Names ``body`` reads one of ``members`` off (``x.shape``), or calls one of the methods
    only tensors have by that name on (``x.size()``; ``x.size(0)`` only, without ``bare_size``)."""
    names: set[str] = set()
    for node in body:
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.attr.value in members:
            names.add(node.value.value)
        elif type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and type(func.value) is cst.Name and func.attr.value in _CALLED_TENSOR_EVIDENCE:
                if bare_size or node.args or func.attr.value != "size":
                    names.add(func.value.value)
    return names


#: Members of ``x.cpu()`` that only a tensor's copy has: a module's ``.cpu()`` returns the
#: module, which has none of them (``model.cpu().state_dict()`` says nothing).
_HOST_COPY_MEMBERS = frozenset({"numpy", "tolist", "item", "detach", "data", "clone"})


def _names_copied_to_host(body: list[cst.CSTNode]) -> set[str]:
    """Names ``body`` copies to the host and reads as a tensor there (``x.cpu().numpy()``)."""
    names: set[str] = set()
    for node in body:
        if type(node) is cst.Attribute and node.attr.value in _HOST_COPY_MEMBERS:
            call = node.value
            if type(call) is cst.Call and not call.args and type(call.func) is cst.Attribute:
                func = call.func
                if func.attr.value == "cpu" and type(func.value) is cst.Name:
                    names.add(func.value.value)
    return names


def calls_bound_to_tensors(body: list[cst.CSTNode], names: set[str]) -> frozenset[cst.Call]:
    """The calls whose result a function's `body_nodes` assign to one of ``names``
    (`names_shown_as_tensors`), alone or as an operand of arithmetic (``grad = obj.m(x) * k``,
    then ``grad.isnan()``)."""
    found: set[cst.Call] = set()
    for node in body:
        if type(node) is cst.Assign and any(
            type(target.target) is cst.Name and target.target.value in names for target in node.targets
        ):
            pending: list[cst.BaseExpression] = [node.value]
            while pending:
                value = pending.pop()
                if type(value) is cst.Call:
                    found.add(value)
                elif type(value) is cst.BinaryOperation:
                    pending += [value.left, value.right]
                elif type(value) is cst.UnaryOperation:
                    pending.append(value.expression)
    return frozenset(found)


#: Keywords of a torch call that, given ``x.dtype`` or ``x.device``, show ``x`` is a tensor.
_PLACING_KEYWORDS = frozenset({"dtype", "device"})

#: Methods that, called on a name, show it is a tensor (NumPy's ``size`` is no method).
_CALLED_TENSOR_EVIDENCE = frozenset({"size", "dim", "view"})


def methods_reached_from(node: cst.ClassDef, entry_points: frozenset[str]) -> set[str]:
    """The entry methods a class defines and every method they reach through ``self.m(...)``."""
    reached: set[str] = set()
    pending = [name for name in entry_points if method_named(node, name) is not None]
    while pending:
        name = pending.pop()
        method = method_named(node, name)
        if name in reached or method is None:
            continue
        reached.add(name)
        stack: list[cst.CSTNode] = [method.body]
        while stack:
            current = stack.pop()
            if (
                isinstance(current, cst.Call)
                and isinstance(current.func, cst.Attribute)
                and isinstance(current.func.value, cst.Name)
                and current.func.value.value == "self"
            ):
                pending.append(current.func.attr.value)
            stack.extend(iter_child_nodes(current))
    return reached


def is_expected_error_block(call: cst.Call) -> bool:
    """``pytest.raises(...)``, ``self.assertRaises(...)``: errors in the block are the point."""
    return called_name(call) in ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")


def in_gpu_labelled_section(ancestors: Sequence[cst.CSTNode]) -> bool:
    """After a statement that labels what follows as the GPU run (``print('=> Testing GPU...')``,
    a ``# GPU test`` comment) in a block that labelled an earlier section as the CPU run: the
    section repeats the CPU one on the GPU on purpose (temporal-shift-module's self-test), and
    moved to the portable device it would run the CPU test again under its GPU label."""
    for index in range(len(ancestors) - 1, -1, -1):
        block = ancestors[index]
        if type(block) is not cst.IndentedBlock and type(block) is not cst.Module:
            continue
        on_path = ancestors[index + 1] if index + 1 < len(ancestors) else None
        labels: list[str] = []
        for statement in block.body:
            labels += _section_labels(statement, printed=statement is not on_path)
            if statement is on_path:
                break
        if labels and labels[-1] == "gpu" and "cpu" in labels:
            return True
    return False


def _section_labels(statement: cst.CSTNode, printed: bool) -> list[str]:
    """"cpu" or "gpu" for each comment above ``statement`` naming one device, then for
    ``statement`` itself when it prints a string naming one (and ``printed``)."""
    texts = [line.comment.value for line in getattr(statement, "leading_lines", ()) if line.comment is not None]
    if printed and type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
        call = statement.body[0].value if type(statement.body[0]) is cst.Expr else None
        if type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "print" and call.args:
            first = call.args[0].value
            if isinstance(first, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                texts.append(cst.Module([]).code_for_node(first))
    labels = []
    for text in texts:
        lowered = text.lower()
        gpu, cpu = "gpu" in lowered or "cuda" in lowered, "cpu" in lowered
        if gpu != cpu:
            labels.append("gpu" if gpu else "cpu")
    return labels


def is_type_test(test: cst.BaseExpression) -> bool:
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute))
        and (node.func.value if isinstance(node.func, cst.Name) else node.func.attr.value) in ("isinstance", "is_tensor")
        for node in walk(test)
    )


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Names bound by plain assignments anywhere under ``node`` (not in nested functions)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.FunctionDef or type(current) is cst.ClassDef or type(current) is cst.Lambda:
            continue
        if type(current) is cst.Assign or type(current) is cst.AnnAssign or type(current) is cst.AugAssign:
            # ``x``, those of ``a, (b, *c)``; not the tensor ``x[i] = ...`` writes into, nor the
            # object ``x.y = ...`` sets, which stay what they were
            names.update(target.value for target in bound_targets(current) if type(target) is cst.Name)
        stack.extend(iter_child_nodes(current))
    return names


def index_every_return_takes(function: cst.FunctionDef, body: list[cst.CSTNode]) -> Optional[int]:
    """The position of the one parameter that every return of ``function`` indexes
    (``return value[dim]``), from its `body_nodes`; None for a method or a body with nested code."""
    params = [param.name.value for param in function.params.params]
    if not params or params[0] in ("self", "cls"):
        return None
    indexed = set()
    for node in body:
        if type(node) is cst.FunctionDef or type(node) is cst.ClassDef or type(node) is cst.Lambda:
            return None
        if type(node) is cst.Return:
            value = node.value
            if not (type(value) is cst.Subscript and type(value.value) is cst.Name and value.value.value in params):
                return None
            indexed.add(value.value.value)
    return params.index(indexed.pop()) if len(indexed) == 1 else None


def cpu_default_placing_parameter(function: cst.FunctionDef, body: list[cst.CSTNode]) -> Optional[str]:
    """The parameter (``device="cpu"`` or ``device=None``) that places every tensor ``function``
    returns: each ``return`` a factory given ``device=<it>`` or a ``.to(<it>)``, possibly followed
    by other methods (``return torch.empty(size, device=device).uniform_(low, high)``). A call
    that leaves it out gets CPU tensors (stylegan2's ``uniform_sample(size, low, high)``)."""
    defaults = {
        param.name.value
        for param in (*function.params.params, *function.params.kwonly_params)
        if param.default is not None
        and (is_none(param.default) or string_value(param.default) == "cpu")
    }
    placed_by: set[str] = set()
    #: Names bound once, to what: ``category = torch.tensor(values, device=device)`` then
    #: ``return category[sample]``.
    bound: dict[str, Optional[cst.BaseExpression]] = {}
    for node in body:
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            target = node.targets[0].target.value
            bound[target] = None if target in bound else node.value
    for node in body:
        if type(node) is cst.FunctionDef or type(node) is cst.Lambda:
            return None
        if type(node) is not cst.Return:
            continue
        name = _placing_name(node.value, dict(bound))
        if name is None or name not in defaults:
            return None
        placed_by.add(name)
    return placed_by.pop() if len(placed_by) == 1 else None


def _placing_name(value: Optional[cst.BaseExpression], bound: dict[str, Optional[cst.BaseExpression]]) -> Optional[str]:
    """``x`` in ``torch.zeros(n, device=x)`` or ``t.to(x)``, under a chain of method calls,
    arithmetic with numbers (``torch.randn(n, device=x) * std``), an index, or a name ``bound``
    once to such a value."""
    if type(value) is cst.BinaryOperation:
        names = {_placing_name(value.left, bound), _placing_name(value.right, bound)} - {None}
        return names.pop() if len(names) == 1 else None
    if type(value) is cst.Subscript:
        return _placing_name(value.value, bound)
    if type(value) is cst.Name:
        return _placing_name(bound.pop(value.value, None), bound)  # popped: no cycle
    while type(value) is cst.Call:
        if type(value.func) is cst.Attribute and value.func.attr.value == "to" and value.args:
            target = value.args[0].value
            return target.value if type(target) is cst.Name and value.args[0].keyword is None else None
        placing = keyword_argument(value, "device")
        if placing is not None:
            return placing.value if type(placing) is cst.Name else None
        value = value.func.value if type(value.func) is cst.Attribute else None
    return None


def slice_bound_names(body: list[cst.CSTNode]) -> set[str]:
    """Names a function's `body_nodes` use as a bound of a slice (``ranges[i, :encoded_len]``):
    an integer or a 0-dim tensor, since slicing takes nothing else."""
    return {
        bound.value
        for node in body
        if type(node) is cst.Slice
        for bound in (node.lower, node.upper, node.step)
        if type(bound) is cst.Name
    }


def is_scalar_index(node: cst.BaseExpression, scalars: set[str]) -> bool:
    """``encoded_len - 1`` with ``encoded_len`` a slice bound: arithmetic on slice bounds and
    numbers is a 0-dim index, which indexes a tensor on any device (PyTorch selects with its
    ``item()``)."""
    if type(node) is cst.Name:
        return node.value in scalars
    if type(node) is cst.Integer:
        return True
    if type(node) is cst.UnaryOperation:
        return is_scalar_index(node.expression, scalars)
    if type(node) is cst.BinaryOperation:
        sides = (node.left, node.right)
        return all(is_scalar_index(side, scalars) for side in sides) and any(type(side) is not cst.Integer for side in sides)
    return False


#: Conversions whose receiver, moved at once, was made off the device: ``.pin_memory()`` too,
#: which only a CPU tensor has.
_MOVES = frozenset({"to", "cuda", "pin_memory"})


def calls_moved_at_once(body: list[cst.CSTNode]) -> frozenset[cst.Call]:
    """The calls a function's `body_nodes` move as soon as they return, through reshapes and
    indexing (``rel_to_rect(boxes, sz).view(1, -1, 4).to(device)``), or whose result the next
    statement moves (``inputs, labels = self.mask_tokens(inputs)`` then ``inputs, labels =
    inputs.to(d), labels.to(d)``): what they computed was off the device, and so were the tensors
    they were given."""
    moved: set[cst.Call] = set()
    for node in body:
        receiver = _moved_receiver(node)
        while receiver is not None:
            if type(receiver) is cst.Call:
                moved.add(receiver)
                receiver = receiver.func
            elif type(receiver) is cst.Attribute or type(receiver) is cst.Subscript:
                receiver = receiver.value
            else:
                receiver = None
    for block in body:
        if type(block) is not cst.IndentedBlock:
            continue
        for statement, following in zip(block.body, block.body[1:]):
            if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
                continue
            assign = statement.body[0]
            if type(assign) is not cst.Assign or type(assign.value) is not cst.Call:
                continue
            targets = {target.value for target in bound_targets(assign) if type(target) is cst.Name}
            moved_names = {receiver.value for receiver in map(_moved_receiver, walk(following)) if type(receiver) is cst.Name}
            if targets and targets <= moved_names:
                moved.add(assign.value)
    return frozenset(moved)


def _moved_receiver(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """What ``node`` moves to a device, if it is such a call: ``x`` of ``x.to(d)``, ``x.cuda()``,
    ``x.pin_memory()`` (not of a cast, ``x.to(torch.int64)``)."""
    if not (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _MOVES):
        return None
    first = node.args[0].value if node.args else None
    if isinstance(first, cst.Attribute) and f"torch.{first.attr.value}" in torch_api.DTYPES:
        return None
    return node.func.value


class FunctionBody:
    """What one function's own body shows, each fact read from its `body_nodes` on first use
    and kept: the flow walk asks again every time it walks the function again."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self._used_as_tensors: dict[bool, set[str]] = {}
        self._bound_to_used: Optional[frozenset[cst.Call]] = None

    @cached_property
    def nodes(self) -> list[cst.CSTNode]:
        return body_nodes(self.function)

    def used_as_tensors(self, imports: ImportTable, lenient: bool) -> set[str]:
        """`names_used_as_tensors`, and the parameters its docstring types as tensors."""
        names = self._used_as_tensors.get(lenient)
        if names is None:
            names = self._used_as_tensors[lenient] = names_used_as_tensors(self.nodes, imports, lenient) | documented_tensors(
                self.function
            )
        return names

    @cached_property
    def shown_as_tensors(self) -> set[str]:
        return names_shown_as_tensors(self.nodes)

    @cached_property
    def calls_bound_to_tensors(self) -> frozenset[cst.Call]:
        return calls_bound_to_tensors(self.nodes, self.shown_as_tensors)

    def calls_bound_to_used_tensors(self, imports: ImportTable) -> frozenset[cst.Call]:
        """`calls_bound_to_tensors` for the names `used_as_tensors` (strictly): ``output =
        model(input)`` then ``output.cpu().numpy()``."""
        if self._bound_to_used is None:
            self._bound_to_used = calls_bound_to_tensors(self.nodes, self.used_as_tensors(imports, lenient=False))
        return self._bound_to_used

    @cached_property
    def calls_moved_at_once(self) -> frozenset[cst.Call]:
        return calls_moved_at_once(self.nodes)

    @cached_property
    def indexed_parameter(self) -> Optional[int]:
        return index_every_return_takes(self.function, self.nodes)

    @cached_property
    def cpu_default_placing_parameter(self) -> Optional[str]:
        return cpu_default_placing_parameter(self.function, self.nodes)

    @cached_property
    def slice_bounds(self) -> set[str]:
        return slice_bound_names(self.nodes)

    @cached_property
    def returned_names(self) -> frozenset[str]:
        """The names the function returns as they are (``return wrapper``)."""
        return frozenset(
            node.value.value for node in self.nodes if type(node) is cst.Return and type(node.value) is cst.Name
        )
