"""The tensors a value is combined with, whose device a fix can reuse for it.

``torch.where(rec != 0, y - rec, torch.tensor([0.0]).cuda())``: the moved tensor meets ``rec``
and ``y`` in an operation that raises when its tensors sit on different devices, so on the GPU
machine where the code ran they were on the device ``.cuda()`` chose; ``rec.device`` is that
device by construction, and stays right on a machine without one. Only operations that demand
one device count (arithmetic, comparisons, torch's combining functions and methods), never a
call of unknown code (``sqnr(w, dq.cuda())`` may move its arguments itself).
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.tree import assignment_targets, iter_child_nodes, walk
from torchdevice_lint.analysis.values import Kind, Place, Value

_NOT_KEEPING = torch_api.FULL_REDUCTIONS | {"argmax", "argmin", "type_as"}
_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


def operand_partners(
    node: cst.BaseExpression,
    ancestors: Sequence[cst.CSTNode],
    imports: ImportTable,
    values: Mapping[cst.CSTNode, Value],
) -> list[cst.Name]:
    """The names of tensors that ``node``'s value (through methods that keep its device,
    ``.float()``, ``.view(...)``) meets in one operation requiring one device; ``ancestors``
    runs from the module down to ``node``'s parent. Outermost operands first."""
    chain = list(reversed(ancestors))
    current: cst.CSTNode = node
    index = 0
    while index < len(chain):
        parent = chain[index]
        above = chain[index + 1] if index + 1 < len(chain) else None
        if isinstance(parent, _STATEMENTS):
            return []
        if isinstance(parent, cst.Attribute) and parent.value is current:
            if not (isinstance(above, cst.Call) and above.func is parent):
                return []
            method = parent.attr.value
            if method in torch_api.COMBINING_METHODS or (
                method in torch_api.ELEMENTWISE_WHEN_GIVEN_A_TENSOR and _positional(above)
            ):
                return _tensor_names([arg.value for arg in above.args], values)
            if not keeps_device(method):
                return []
            current, index = above, index + 2
            continue
        if isinstance(parent, cst.UnaryOperation):
            current, index = parent, index + 1
            continue
        if isinstance(parent, cst.BinaryOperation):
            other = parent.right if parent.left is current else parent.left
            partners = _tensor_names([other], values)
            if not partners:
                # ``logprobs + (mask * -0.693 * alpha)``: scaled by no tensor, it meets what the product meets
                current, index = parent, index + 1
                continue
            return partners
        if isinstance(parent, cst.ComparisonTarget) and isinstance(above, cst.Comparison):
            operands = [above.left, *(target.comparator for target in above.comparisons)]
            return _tensor_names([operand for operand in operands if operand is not current], values)
        if isinstance(parent, cst.Comparison):
            return _tensor_names([target.comparator for target in parent.comparisons], values)
        if isinstance(parent, cst.Arg) and isinstance(above, cst.Call):
            if _wraps(above, parent, imports):
                current, index = above, index + 2
                continue
            return _call_partners(above, parent, imports, values)
        if isinstance(parent, cst.Element) and isinstance(above, (cst.Tuple, cst.List)):
            arg = chain[index + 2] if index + 2 < len(chain) else None
            call = chain[index + 3] if index + 3 < len(chain) else None
            if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)):
                return []
            if imports.qualified_name(call.func) not in torch_api.COMBINING_FUNCTIONS:
                return []  # torch.cat((a, b.cuda())): one device for every element
            siblings = [element.value for element in above.elements if element is not parent]
            return _tensor_names(siblings, values) + _call_partners(call, arg, imports, values)
        return []
    return []


def next_statement_partners(
    name: str,
    statement: cst.CSTNode,
    block: Optional[cst.CSTNode],
    imports: ImportTable,
    values: Mapping[cst.CSTNode, Value],
    depth: int = 0,
    rebound: frozenset[str] = frozenset(),
    existing: Optional[Callable[[str], bool]] = None,
) -> list[cst.Name]:
    """``w = torch.tensor([...]).cuda()`` followed by ``(w * (grads - gt)).mean()``: the
    tensors ``name`` meets in the first statement after ``statement`` in ``block`` that reads
    it (fastMRI's ``is_rotated = ....cuda()``, a transpose, then ``torch.where(is_rotated, a, p)``).
    A partner bound again from ``statement`` on is not the tensor there (``g = g.cuda()`` between),
    unless ``existing`` says the name did not exist at ``statement`` (bound first after it)."""
    body = getattr(block, "body", None)
    if block is None or not isinstance(body, (list, tuple)):
        return []
    position = next((index for index, line in enumerate(body) if line is statement), len(body))
    rebound = rebound | bound_names(statement)
    for later in body[position + 1 :]:
        uses = list(_uses(later, name, [block]))
        if uses and _only_fills_in(later, name, uses):
            continue  # ``for i in ...: mask[i, j] += 1``: numbers written into it, nothing met
        if uses:  # the first statement that reads it (or binds it again: no partner then)
            partners = [
                partner
                for use, path in uses
                for partner in operand_partners(use, path, imports, values)
                if partner.value != name
                and not (partner.value in rebound and (existing is None or existing(partner.value)))
            ]
            carried = carried_to(later, name, imports)
            if partners or carried is None or depth >= 3:
                return partners
            # ``r_adv = eps * d`` meets nothing: what it meets, ``d`` meets (``model(ul_x + r_adv)``)
            return next_statement_partners(carried, later, block, imports, values, depth + 1, rebound, existing)
        rebound = rebound | bound_names(later)
    return []


def _number_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _only_fills_in(
    statement: cst.CSTNode, name: str, uses: Sequence[tuple[cst.Name, list[cst.CSTNode]]]
) -> bool:
    """A loop or an ``if`` whose every use of ``name`` writes into an item of it a number
    (``mask[i, j] += 1``, ``mask[i] = 0``) or its own items (``flipped[:, 1:] =
    flipped.clone()[:, :-1]``, a shifted heatmap): the tensor meets no other there, and keeps
    its device and name."""
    if not isinstance(statement, (cst.For, cst.While, cst.If)):
        return False
    own_reads: set[cst.Name] = set()
    for use, path in uses:
        if use in own_reads:
            continue
        subscript, above, assign = (path[-1], path[-2], path[-3]) if len(path) >= 3 else (None, None, None)
        if not (isinstance(subscript, cst.Subscript) and subscript.value is use):
            return False
        if isinstance(above, cst.AugAssign) and above.target is subscript:
            value = above.value
        elif isinstance(above, cst.AssignTarget) and above.target is subscript and isinstance(assign, cst.Assign):
            value = assign.value
        else:
            return False
        if _number_literal(value):
            continue
        reads = _read_names(value)
        if not reads or any(read.value != name for read in reads):
            return False
        own_reads.update(reads)
    return True


def _read_names(expression: cst.BaseExpression) -> list[cst.Name]:
    """The names ``expression`` reads (not attribute or keyword names)."""
    skipped = {id(node.attr) for node in walk(expression) if isinstance(node, cst.Attribute)}
    skipped |= {id(node.keyword) for node in walk(expression) if isinstance(node, cst.Arg) and node.keyword is not None}
    return [node for node in walk(expression) if isinstance(node, cst.Name) and id(node) not in skipped]


def bound_names(statement: cst.CSTNode) -> frozenset[str]:
    """The names ``statement`` binds (assignments, ``for`` and ``with`` targets, at any depth)."""
    names: set[str] = set()
    for node in walk(statement):
        targets: list[cst.BaseExpression] = list(assignment_targets(node))
        if isinstance(node, (cst.For, cst.CompFor)):
            targets.append(node.target)
        elif isinstance(node, cst.AsName):
            targets.append(node.name)
        elif isinstance(node, cst.NamedExpr):
            targets.append(node.target)
        for target in targets:
            names.update(inner.value for inner in walk(target) if isinstance(inner, cst.Name))
    return frozenset(names)


def carried_to(statement: cst.CSTNode, name: str, imports: ImportTable) -> Optional[str]:
    """``r_adv = eps * d``, ``mesh = torch.stack([xx, yy])``, ``mesh = mesh.float()``: the name
    ``statement`` binds to a value computed from ``name`` through what keeps a tensor's device
    (or a torch function joining tensors into one)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return None
    target = assign.targets[0].target.value
    value = assign.value
    if (
        isinstance(value, cst.Call)
        and imports.qualified_name(value.func) in torch_api.COMBINING_FUNCTIONS
        and value.args
        and isinstance(value.args[0].value, (cst.List, cst.Tuple))
    ):
        joined = [element.value for element in value.args[0].value.elements]
        return target if any(part.value == name for item in joined for part in device_keeping_parts(item)) else None
    if not any(part.value == name for part in device_keeping_parts(value)):
        return None
    return target


def _uses(
    node: cst.CSTNode, name: str, path: list[cst.CSTNode]
) -> Iterator[tuple[cst.Name, list[cst.CSTNode]]]:
    """Each ``Name`` ``name`` read in ``node``, with the nodes above it (not into nested
    functions, classes or lambdas, which run elsewhere)."""
    if isinstance(node, cst.Name) and node.value == name:
        yield node, path
        return
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return
    for child in iter_child_nodes(node):
        yield from _uses(child, name, [*path, node])


def _call_partners(
    call: cst.Call, arg: cst.Arg, imports: ImportTable, values: Mapping[cst.CSTNode, Value]
) -> list[cst.Name]:
    others = [other.value for other in call.args if other is not arg and not other.star]
    qualified = imports.qualified_name(call.func)
    if qualified is not None:
        if qualified in torch_api.COMBINING_FUNCTIONS or (
            qualified in ("torch.max", "torch.min") and len(_positional(call)) >= 2
        ):
            return _tensor_names(others, values)
        if qualified in _GRADIENT_OF:
            return _tensor_names(_gradient_partner(call, arg, *_GRADIENT_OF[qualified]), values)
        return []
    if isinstance(call.func, cst.Attribute):
        method = call.func.attr.value
        if method in torch_api.COMBINING_METHODS or method in torch_api.ELEMENTWISE_WHEN_GIVEN_A_TENSOR:
            receiver = values.get(call.func.value)
            if receiver is not None and receiver.kind is Kind.TENSOR:
                return _tensor_names([call.func.value, *others], values)
            if (
                method in torch_api.TENSOR_ONLY_WRITES
                and isinstance(call.func.value, cst.Name)
                and (receiver is None or receiver.kind is Kind.UNKNOWN and receiver.place is not Place.CPU)
            ):
                # ``input_label.scatter_(1, idx.cuda(), 1.0)``: only a tensor has the method, and
                # the index goes where it is (``self.Tensor(...)`` made it: unknown to the flow)
                return [call.func.value, *_tensor_names(others, values)]
    return []


#: Autograd calls whose gradient argument must sit on its output's device ("invalid gradient
#: at index 0 - expected device cuda:0 but got cpu"): (outputs keyword, gradient keyword, its position).
_GRADIENT_OF = {
    "torch.autograd.grad": ("outputs", "grad_outputs", 2),
    "torch.autograd.backward": ("tensors", "grad_tensors", 1),
}


def _gradient_partner(call: cst.Call, arg: cst.Arg, outputs: str, gradient: str, position: int) -> list[cst.BaseExpression]:
    """``torch.autograd.grad(outputs=out, inputs=x, grad_outputs=torch.ones(out.size()).cuda())``:
    the gradient given (not a list of them) meets the output it is the gradient of."""
    positional = _positional(call)
    given = arg.keyword.value == gradient if arg.keyword is not None else positional.index(arg) == position if arg in positional else False
    if not given:
        return []
    output = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == outputs), None)
    if output is None and positional and positional[0] is not arg:
        output = positional[0].value
    return [] if output is None else [output]


def device_keeping_parts(expression: cst.BaseExpression) -> Iterator[cst.Name]:
    """The names ``expression`` computes with through what keeps a tensor's device, left to right."""
    if isinstance(expression, cst.Name):
        yield expression
    elif isinstance(expression, cst.BinaryOperation):
        yield from device_keeping_parts(expression.left)
        yield from device_keeping_parts(expression.right)
    elif isinstance(expression, cst.Comparison):
        yield from device_keeping_parts(expression.left)
        for target in expression.comparisons:
            yield from device_keeping_parts(target.comparator)
    elif isinstance(expression, cst.UnaryOperation):
        yield from device_keeping_parts(expression.expression)
    elif isinstance(expression, cst.Attribute) and expression.attr.value == "data":
        yield from device_keeping_parts(expression.value)  # ``real_images.data``: the same storage
    elif isinstance(expression, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in expression.slice):
        yield from device_keeping_parts(expression.value)  # ``g[0:2]``: a slice, never 0-dim
    elif (
        isinstance(expression, cst.Call)
        and isinstance(expression.func, cst.Attribute)
        and keeps_device(expression.func.attr.value)
    ):
        yield from device_keeping_parts(expression.func.value)


def keeps_device(method: str) -> bool:
    """A tensor method whose result is a tensor of the receiver's shape class on its device: not
    a reduction (a 0-dim result meets any device), not ``type_as`` (the other tensor's device)."""
    return method in torch_api.TENSOR_RETURNING_METHODS and method not in _NOT_KEEPING


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def _tensor_names(expressions: Sequence[cst.BaseExpression], values: Mapping[cst.CSTNode, Value]) -> list[cst.Name]:
    """The names in ``expressions`` that are tensors not known to be on the CPU, reached through
    what keeps a tensor's device (operators, slices, ``.float()``, ``.view()``), left to right; never
    through a size (``x.shape[0]``), an index or a call of other code."""
    names: list[cst.Name] = []
    for expression in expressions:
        for inner in device_keeping_parts(expression):
            value = values.get(inner)
            if value is not None and value.kind is Kind.TENSOR and value.place is not Place.CPU and not value.scalar_origins:
                names.append(inner)
    return names


def _wraps(call: cst.Call, arg: cst.Arg, imports: ImportTable) -> bool:
    """``Variable(d.cuda(), requires_grad=True)``, ``nn.Parameter(w.cuda())``: the wrapper is the
    tensor it is given (``Variable`` returns it since PyTorch 0.4), on its device."""
    if imports.qualified_name(call.func) not in torch_api.VARIABLE_CLASSES | torch_api.NN_TENSOR_CLASSES:
        return False
    given = next((a for a in call.args if a.keyword is None and not a.star), None)
    return arg is given or given is None and arg.keyword is not None and arg.keyword.value == "data"


def assigned_name(
    node: cst.BaseExpression, ancestors: Sequence[cst.CSTNode], imports: Optional[ImportTable] = None
) -> Optional[str]:
    """``w = torch.tensor([...]).cuda().float()``: the one name ``node``'s value is bound to,
    through methods that keep its device (and ``Variable(...)``, ``nn.Parameter(...)``)."""
    chain = list(reversed(ancestors))
    current: cst.CSTNode = node
    index = 0
    while index + 1 < len(chain):
        parent, above = chain[index], chain[index + 1]
        if (
            isinstance(parent, cst.Attribute)
            and parent.value is current
            and isinstance(above, cst.Call)
            and above.func is parent
            and keeps_device(parent.attr.value)
        ):
            current, index = above, index + 2
            continue
        if imports is not None and isinstance(parent, cst.Arg) and isinstance(above, cst.Call) and _wraps(above, parent, imports):
            current, index = above, index + 2
            continue
        if isinstance(parent, cst.Assign) and parent.value is current and len(parent.targets) == 1:
            target = parent.targets[0].target
            return target.value if isinstance(target, cst.Name) else None
        assign = chain[index + 2] if index + 2 < len(chain) else None
        if (
            isinstance(parent, cst.Element)
            and isinstance(above, cst.Tuple)
            and isinstance(assign, cst.Assign)
            and assign.value is above
            and len(assign.targets) == 1
        ):  # ``xx, yy = xx.cuda(), yy.cuda()``: the name in the same place
            target = assign.targets[0].target
            position = next(i for i, element in enumerate(above.elements) if element is parent)
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(above.elements):
                bound = target.elements[position].value
                return bound.value if isinstance(bound, cst.Name) else None
        return None
    return None
