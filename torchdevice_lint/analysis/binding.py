"""Which device expression a fix should use at a given place in the file.

A fix never invents a second notion of "the device": it reuses one already in scope, in
this order of preference, and only when none exists asks for one module-level binding:

1. a device variable of the enclosing function bound before the site (``device`` first; an
   ``if``/``else`` statement binding it in every branch binds it), unless it may be the CPU on
   purpose (``cpu if gather_on_cpu else cuda``, as an expression or as such a statement);
2. the device of the tensor the site meets (``x.device``), when that tensor is a name: a
   meeting the flow found, or an operand of the same operation requiring one device
   (``torch.where(m, y, t.cuda())``, ``w = t.cuda()`` then ``w * g``: `analysis.operands`);
3. inside a module's ``forward`` (or a helper it feeds), an input tensor's ``.device``; in any
   other function, a parameter its body shows is a tensor (``torch.topk(corr, k)``,
   ``torch.zeros_like(values)``, ``x.size(0)``), one whose ``.device`` it reads first, unless it
   moves its own arguments (``batch.cuda()``: host data it places) or loads data (`_computed_with`);
4. ``self.device`` when the class sets it, inherits it from Lightning (``LightningModule``,
   ``LightningLite``, ``Fabric``), or places its data with it elsewhere (in ``__init__`` only
   after ``super().__init__()``, when a base class provides it);
5. a module-level device variable (bound before the site, for module-level code), one
   the file imports from its project (``torch_device`` from a testing module), or one a script
   keeps on its parsed arguments (``args.device``);
6. the repository's own accelerator switch read in the function or its class
   (``torch.device("cuda" if self.gpu_mode else "cpu")``, `analysis.switches`);
7. a new ``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``, named
   ``device`` in every file unless the module binds that name to something else; built from the
   file's module-level switch instead when it has one (``"cuda" if args.cuda else "cpu"``).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from dataclasses import dataclass
from typing import AbstractSet, Callable, Iterator, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.bind_once import can_bind_once
from torchdevice_lint.analysis.contract import is_data_loading
from torchdevice_lint.analysis.devices import looks_like_accelerator_switch, looks_like_device_name
from torchdevice_lint.analysis.evidence import FunctionBody, names_used_as_tensors
from torchdevice_lint.analysis.flow import FlowAnalysis, Scope
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.operands import bound_names, carried_to, device_keeping_parts
from torchdevice_lint.analysis.switches import SwitchGuard, defines_switch, device_from, named_as_switch, switch_guards
from torchdevice_lint.analysis.tree import (
    annotated_expression,
    assignment_targets,
    bound_targets,
    decorated_with,
    iter_child_nodes,
    parameter_names,
    parameters,
    self_attribute,
    string_quote,
    walk,
)
from torchdevice_lint.analysis.values import Kind, Place

_CANDIDATE_GLOBAL_NAMES = ("device", "torch_device", "default_device")

#: Members a tensor does not have, read on graphs (DGL, PyG) and mappings: a name they are
#: read on is no tensor, whatever the flow guessed (a DGL graph has a ``.device`` of its own,
#: but a fix reads ``.device`` only from a known tensor).
_NON_TENSOR_MEMBERS = frozenset(
    {
        "num_nodes", "num_edges", "number_of_nodes", "number_of_edges", "ndata", "edata", "srcdata",
        "dstdata", "add_nodes", "add_edges", "in_degrees", "out_degrees", "successors", "predecessors",
        "local_scope", "update_all", "apply_edges", "edge_index", "keys", "items", "get",
    }
)

#: Lightning's classes whose instances know their device (``self.device``), and its packages.
_LIGHTNING_DEVICE_CLASSES = frozenset({"LightningModule", "LightningLite", "Fabric"})
_LIGHTNING_PACKAGES = frozenset({"lightning", "pytorch_lightning", "lightning_fabric", "lightning_lite"})

#: CUDA libraries other than torch, whose own device objects a file may name ``device``.
_OTHER_CUDA_LIBRARIES = frozenset({"pycuda", "cupy", "numba", "tensorrt", "pynvml", "cuda"})

#: How the notebook front end starts each cell in the program it builds from the cells: an
#: import, so that a binding lands inside the cell that needs it, where it is laid out as at
#: the top of a file (no blank line above it unless the cell has imports of its own).
CELL_MARKER = "import _tdl_cell_"

#: How each ``--device-style`` spells the portable device (the styles a configuration may name).
DEVICE_STYLES = {
    "cuda": '{torch}.device("cuda" if {torch}.cuda.is_available() else "cpu")',
    "accelerator": (
        '{torch}.accelerator.current_accelerator() if {torch}.accelerator.is_available() '
        'else {torch}.device("cpu")'
    ),
}


@dataclass(frozen=True)
class DeviceChoice:
    #: Source text of the device expression, e.g. ``device`` or ``x.device``.
    expression: str
    #: True when the expression is the module-level binding that a fix must insert.
    inserts_binding: bool = False
    #: True when the site cannot have the module-level binding: an enclosing function binds
    #: that name itself, or the file imports torch only inside functions (lazily, often because
    #: torch is optional there, so a module-level ``import torch`` would change what importing
    #: the file needs). The finding is reported without a fix.
    shadowed: bool = False


class DeviceBinder:
    def __init__(
        self,
        flow: FlowAnalysis,
        imports: ImportTable,
        style: str = "cuda",
        name: Optional[str] = None,
        lines_after_imports: Optional[int] = None,
    ) -> None:
        self.flow = flow
        self.imports = imports
        self.style = style
        #: The project's isort ``lines-after-imports`` (None: what the file shows).
        self.lines_after_imports = lines_after_imports
        #: The configured name for a new binding (``device-name``); tried before the defaults.
        self.preferred_name = name
        self.global_name = self._free_global_name()
        self._strict_evidence: dict[tuple[cst.FunctionDef, bool], _Evidence] = {}
        self._guards_by_node: dict[cst.CSTNode, list[SwitchGuard]] = {}

    # ----------------------------------------------------------------- choice
    def choose(
        self,
        statement: Optional[cst.CSTNode],
        functions: Sequence[cst.FunctionDef],
        partner: Optional[str] = None,
        operands: Sequence[cst.Name] = (),
        moving: Optional[str] = None,
        computing: bool = True,
    ) -> DeviceChoice:
        """The device to use in ``statement``, nested in ``functions`` (innermost first);
        ``partner`` and ``operands`` name tensors the site's value meets (`analysis.operands`);
        ``moving`` names the tensor the site moves, whose own device is never the answer;
        ``computing`` false where the site computes nothing with the function's tensors (a
        checkpoint's ``map_location``): no tensor parameter's device only for being one.

        A site in a ``def`` line (a parameter's default, a decorator: ``statement`` is the
        function) runs in the scope around it, before the function's parameters exist: where the
        function names its own device (a parameter or local of that name, or a switch of its own,
        whose device line it would get) the default would read as that device: no fix there."""
        choice = self._choose(statement, functions, partner, operands, moving, computing)
        if isinstance(statement, cst.FunctionDef) and self._names_own_device(statement, choice.expression.split(".")[0]):
            return dataclasses.replace(choice, shadowed=True)
        return choice

    def _names_own_device(self, function: cst.FunctionDef, name: str) -> bool:
        scope = self.flow.scopes.get(function)
        return (
            name in parameter_names(function)
            or (scope is not None and (_binds(scope, name) or self._scope_switch(scope, 0) is not None))
        )

    def _choose(
        self,
        statement: Optional[cst.CSTNode],
        functions: Sequence[cst.FunctionDef],
        partner: Optional[str],
        operands: Sequence[cst.Name],
        moving: Optional[str],
        computing: bool = True,
    ) -> DeviceChoice:
        site = self.flow.statement_order.get(statement, 0) if statement is not None else 0
        scopes = [self.flow.scopes[f] for f in functions if f in self.flow.scopes]
        for depth, scope in enumerate(scopes):
            name = _bound_device_name(scope, site)
            if name is not None and (depth > 0 or statement is None or _binding_reaches(scope.node, name, statement)):
                return DeviceChoice(name)
        if partner is not None and scopes and bound_before(scopes[0], partner, site) and self._reads_device(
            scopes[0], partner
        ):
            return DeviceChoice(f"{partner}.device")
        for operand in operands if scopes else ():
            if operand.value != moving and bound_before(scopes[0], operand.value, site) and self._reads_device(scopes[0], operand.value):
                return DeviceChoice(f"{operand.value}.device")
        for scope in scopes:
            known = [
                name for name in scope.device_tensor_params if name != moving and self._reads_device(scope, name)
            ]
            if known:
                return DeviceChoice(f"{known[0]}.device")
        computed = self._computed_with(scopes[0], site, moving) if scopes and computing else None
        if computed is not None:
            return DeviceChoice(f"{computed}.device")
        placing = _placing_device(scopes[0].node) if scopes and computing else None
        if placing is not None:
            return DeviceChoice(placing)
        innermost = scopes[0] if scopes else None
        if innermost is not None and innermost.owner_class is not None and isinstance(innermost.node, cst.FunctionDef):
            owner = innermost.owner_class
            if innermost.node.name.value != "__init__":
                device_attribute = owner.attributes.get("device")
                if (
                    device_attribute is not None
                    and device_attribute.kind is Kind.DEVICE
                    and not device_attribute.may_be_cpu
                    and device_attribute.place is not Place.CPU
                ):
                    return DeviceChoice("self.device")
                if self._has_device_property(owner.node) or self._places_with_self_device(owner.node):
                    return DeviceChoice("self.device")
                helper = self._device_helper(innermost)
                if helper is not None:
                    return DeviceChoice(helper)
            elif self._places_with_self_device(owner.node) and self._base_set_up_before(owner.node, innermost.node, site):
                return DeviceChoice("self.device")
        module_scope = self.flow.scopes[self.flow.module]
        name = _bound_device_name(module_scope, site if not scopes else None)
        if (
            name is not None
            and (scopes or statement is None or _binding_reaches(self.flow.module, name, statement))
            and not self._device_of_another_library(name)
        ):
            return DeviceChoice(name)
        imported = self._imported_device_name()
        if imported is not None and not any(_binds(scope, imported) for scope in scopes):
            return DeviceChoice(imported)
        kept = self._module_device_attribute
        if kept is not None and (
            not any(_binds(scope, kept[0].split(".")[0]) for scope in scopes)
            if scopes
            else statement is not None and self._top_level_index(statement) > kept[1]
        ):
            return DeviceChoice(kept[0])  # ``args.device``, set from the script's own switch
        test = self._scope_switch(scopes[0], site) if scopes else None
        if test is None and statement is not None:
            test = self._block_switch(scopes[-1].node if scopes else statement)
        module_torch = self.imports.torch_at_module_level()
        if test is not None:
            if not test or module_torch is None or (_moves_in(statement) > 1 and not self._binds_once(scopes, test)):
                # an inline switch device written once per statement, never twice on one line
                return DeviceChoice(self.global_name, inserts_binding=True, shadowed=True)
            return DeviceChoice(device_from(test, module_torch, self.quote))
        if self._switch_unreadable_at(statement, in_function=bool(scopes)):
            return DeviceChoice(self.global_name, inserts_binding=True, shadowed=True)
        shadowed = any(_binds(scope, self.global_name) for scope in scopes)
        shadowed = shadowed or (self.imports.torch_alias is not None and self.imports.torch_at_module_level() is None)
        shadowed = shadowed or self._line_would_precede_gpu_choice(statement)
        return DeviceChoice(self.global_name, inserts_binding=True, shadowed=shadowed)

    def _computed_with(self, scope: Scope, site: int, moving: Optional[str]) -> Optional[str]:
        """A tensor parameter the function computes with, wherever it is called from: in
        ``def time_delay_agg_full(self, values, corr)``, ``torch.topk(corr, k)`` shows ``corr`` is
        a tensor, and code that ran on the GPU made its own tensors where ``corr`` was. One whose
        ``.device`` the function already reads comes first (``.to(gt_boxes.device)``).

        Not where the function moves its own arguments (``batch = batch.cuda()``, ``x.to(device)``:
        host data it places, a train step or a preprocessor), in data loading (a Dataset, a
        collate function), for a parameter the function binds again, one that may be None
        (``ids: Tensor = None``), one shown only by ``.size()`` (a process group's ``group.size()``)
        or the value being moved."""
        function = scope.node
        if not isinstance(function, cst.FunctionDef) or is_data_loading(function):
            return None
        owner = scope.owner_class
        if owner is not None and any(name.endswith("Dataset") for name in _base_names(owner.node)):
            return None
        evidence = self._evidence_of(function, bare_size=False)
        may_be_none = {
            param.name.value for param in parameters(function) if isinstance(param.default, cst.Name) and param.default.value == "None"
        } | _tested_for_none(function)
        assigned = bound_names(function.body)
        candidates = [
            name
            for name in parameter_names(function)
            if name in scope.parameters
            and name not in may_be_none
            and name in evidence.tensors
            if name in evidence.tensors
            and name != moving
            and (name not in assigned or _rebound_in_place(function, name, self.imports))
            and (value := scope.env.get(name)) is not None
            and value.kind in (Kind.TENSOR, Kind.UNKNOWN)
            and value.place is not Place.CPU
        ]
        if not candidates or _moves_its_own_values(function, scope.parameters, self.imports):
            return None
        read = _device_read_of(function)
        return next((name for name in candidates if name in read), candidates[0])

    def _evidence_of(self, function: cst.FunctionDef, bare_size: bool = True) -> _Evidence:
        """`_strict_tensor_evidence` of ``function``, once per function; without ``bare_size``,
        ``x.size()`` with no argument shows nothing (`_computed_with`)."""
        evidence = self._strict_evidence.get((function, bare_size))
        if evidence is None:
            evidence = self._strict_evidence[(function, bare_size)] = _strict_tensor_evidence(
                self.flow.body_of(function), self.imports, bare_size
            )
        return evidence

    def _binds_once(self, scopes: Sequence[Scope], test: str) -> bool:
        """The engine will bind the switch device once at the top of the innermost function
        (`analysis.bind_once`): a statement moving twice then reads the name, never a line
        holding the device expression twice."""
        function = scopes[0].node if scopes else None
        if not isinstance(function, cst.FunctionDef):
            return False
        try:
            expression = cst.parse_expression(test)
        except cst.ParserSyntaxError:
            return False
        return can_bind_once(function, expression, self.preferred_name or "device")

    @functools.cached_property
    def _gpu_choices(self) -> Optional[tuple[int, ...]]:
        """The top-level statements that name ``CUDA_VISIBLE_DEVICES`` (``os.environ[...] = "1"``),
        or None when code inside a function, class or block names it: the device line's
        ``torch.cuda.is_available()`` initialises CUDA, after which the variable is not read
        again (pytorch/pytorch#23544), so the line must run after the script chooses its GPUs."""
        module = self.flow.module
        if _GPU_CHOICE not in self.flow.text:
            return ()
        found = []
        for index, statement in enumerate(module.body):
            if _GPU_CHOICE in module.code_for_node(statement):
                if not isinstance(statement, cst.SimpleStatementLine):
                    return None
                found.append(index)
        return tuple(found)

    def _line_would_precede_gpu_choice(self, statement: Optional[cst.CSTNode]) -> bool:
        """The module device line cannot go after the script's GPU choice and before ``statement``."""
        choices = self._gpu_choices
        if choices == ():
            return False
        if choices is None or statement is None:
            return True
        return max(choices) >= self._top_level_index(statement)

    def _top_level_index(self, statement: cst.CSTNode) -> int:
        for index, top in enumerate(self.flow.module.body):
            if top is statement or any(node is statement for node in walk(top)):
                return index
        return 0

    def _device_helper(self, scope: Scope) -> Optional[str]:
        """The class's or the project's own way to ask for the device, from a method of the
        class (not ``__init__``): a method of the class taking only ``self`` whose every return
        is ``<x>.device`` or ``torch.device(...)`` (``self.torch_device()``, or ``self.torch_device``
        for a property); in a module's running method (``forward`` and what it calls), a function
        of one parameter doing the same for the module, of this file or imported from the project
        (tianshou's ``torch_device(self)``, which reads the module's parameters)."""
        function, owner = scope.node, scope.owner_class
        if not isinstance(function, cst.FunctionDef) or owner is None or decorated_with(function, "staticmethod", "classmethod"):
            return None
        params = parameter_names(function)
        if not params or params[0] != "self":
            return None
        for method in owner.node.body.body:
            if (
                isinstance(method, cst.FunctionDef)
                and method is not function
                and parameter_names(method) == ["self"]
                and not decorated_with(method, "staticmethod", "classmethod")
                and self._returns_a_device(method)
            ):
                return f"self.{method.name.value}" if decorated_with(method, "property") else f"self.{method.name.value}()"
        if not owner.is_module or function.name.value not in owner.running_methods:
            return None
        local = sorted(
            name
            for name, helper in self.flow.functions.items()
            if len(parameter_names(helper)) == 1 and self._returns_a_device(helper)
        )
        imported = sorted(
            name
            for name in self.imports.aliases
            if self.flow.project is not None and self.flow.project.returns_a_device(name)
        )
        for name in (*local, *imported):
            if not _binds(scope, name):
                return f"{name}(self)"
        return None

    def _returns_a_device(self, function: cst.FunctionDef) -> bool:
        """Every return of ``function`` (its own, not a nested function's) gives a device:
        ``<x>.device`` or ``torch.device(...)``."""
        returned = []
        pending: list[cst.CSTNode] = [function.body]
        while pending:
            node = pending.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Return):
                returned.append(node.value)
            pending.extend(iter_child_nodes(node))
        return bool(returned) and all(
            (isinstance(value, cst.Attribute) and value.attr.value == "device")
            or (isinstance(value, cst.Call) and self.imports.qualified_name(value.func) == "torch.device")
            for value in returned
        )

    def _base_set_up_before(self, owner: cst.ClassDef, init: cst.FunctionDef, site: int) -> bool:
        """In ``__init__``, ``self.device`` is there when a base class provides it: the class never
        sets it itself, and ``super().__init__(...)`` ran before the site."""
        if any(self_attribute(target) == "device" for node in walk(owner) for target in assignment_targets(node)):
            return False
        return any(
            _calls_super_init(statement) and self.flow.statement_order.get(statement, site) < site
            for statement in init.body.body
        )

    def _has_device_property(self, node: cst.ClassDef) -> bool:
        """A subclass of Lightning's ``LightningModule``, ``LightningLite`` or ``Fabric``: its
        ``self.device`` is the device the framework runs this process on."""
        for base in node.bases:
            qualified = self.imports.qualified_name(base.value) if base.keyword is None else None
            if qualified is None:
                continue
            root, _, rest = qualified.partition(".")
            if root in _LIGHTNING_PACKAGES and rest.rsplit(".", 1)[-1] in _LIGHTNING_DEVICE_CLASSES:
                return True
        return False

    def _device_of_another_library(self, name: str) -> bool:
        """In a file that imports another CUDA library (pycuda, cupy, numba, TensorRT), a
        module-level ``device`` bound by a call that is not torch's is that library's device:
        ``device = context.get_device()`` under pycuda (diffusers' TensorRT example)."""
        roots = {full.split(".")[0] for full in self.imports.aliases.values()}
        if not roots & _OTHER_CUDA_LIBRARIES:
            return False
        for statement in self.flow.module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    value = small.value
                    callee = self.imports.qualified_name(value.func) if isinstance(value, cst.Call) else None
                    if isinstance(value, cst.Call) and not (callee or "").startswith("torch."):
                        return True
        return False

    def _imported_device_name(self) -> Optional[str]:
        """A device the file imports from its project: ``from ..testing_utils import torch_device``
        (diffusers' and transformers' tests), never ``torch.device`` itself nor a function the
        file calls (``get_device()``)."""
        names = set()
        for statement in self.flow.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                    continue
                module = small.module
                if module is not None and cst.Module([]).code_for_node(module).split(".")[0] == "torch":
                    continue
                for alias in small.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    if self.flow.project is not None and self.flow.project.returns_a_device(local):
                        continue  # a function that gives the device (``torch_device(module)``), no device
                    if looks_like_device_name(local) and local not in self.flow.called_names:
                        names.add(local)
        return "device" if "device" in names else min(names, default=None)

    def tensor_parameter_in(self, function: cst.FunctionDef, expression: cst.CSTNode) -> Optional[str]:
        """A parameter of ``function`` that ``expression`` computes with and that is known to be
        a tensor: ``torch.empty(e.shape, device="cuda")`` in ``def kernel(e, g)`` gives ``e``."""
        scope = self.flow.scopes.get(function)
        if scope is None:
            return None
        used = {node.value for node in walk(expression) if isinstance(node, cst.Name)}
        parameters = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        parameters += [p.name.value for p in function.params.kwonly_params]
        return next((name for name in parameters if name in used and self._reads_device(scope, name)), None)

    def _reads_device(self, scope: Scope, name: str) -> bool:
        """Whether a fix may write ``name.device``: the name is known to be a tensor.

        The flow's guess for a parameter counts unless the body also uses it as a size, a
        count, an index or a flag (``torch.zeros(1, batch_size, h)``, ``range(n)``, ``x[i]``,
        ``if verbose:``, ``batch["images"]``) with no tensor-only use to outweigh it (a ``Tensor`` annotation, a
        tensor-only method, its ``.device`` read). Locals hold what the flow computed."""
        value = scope.env.get(name)
        function = scope.node
        if value is None or value.kind not in (Kind.TENSOR, Kind.UNKNOWN) or not isinstance(function, cst.FunctionDef):
            return value is not None and value.kind is Kind.TENSOR
        evidence = self._evidence_of(function)
        if value.kind is Kind.UNKNOWN:
            # a name the flow could not type, written into by a method only tensors have
            # (``input_label.scatter_(1, idx, 1.0)``, ``input_label`` made by ``self.Tensor(...)``)
            return name in evidence.written and not (name in evidence.sizes or name in evidence.sequences)
        if name not in parameter_names(function):
            return True
        return name in evidence.tensors or not (name in evidence.sizes or name in evidence.sequences)

    # -------------------------------------------------------------- insertion
    def binding_statements(self, device_line: bool = True, switch: Optional[str] = None) -> list[cst.BaseStatement]:
        """The lines a fix inserts: ``device = ...`` (unless ``device_line`` is false) and, if
        missing, ``import torch``; with ``switch``, the device that module-level flag chooses."""
        module_torch = self.imports.torch_at_module_level()  # a function's own import reaches no module line
        statements: list[cst.BaseStatement] = []
        if module_torch is None:
            statements.append(cst.parse_statement("import torch\n"))
        if device_line:
            if switch is None:
                expression = DEVICE_STYLES[self.style].format(torch=module_torch or "torch").replace('"', self.quote)
            else:
                expression = device_from(switch, module_torch or "torch", self.quote)
            statements.append(cst.parse_statement(f"{self.global_name} = {expression}\n"))
        return statements

    @functools.cached_property
    def _switch_guards(self) -> list[SwitchGuard]:
        return switch_guards(self.flow.module, self.flow.module, self.imports)

    def _switch_test(self, switch: str) -> str:
        """The test the file writes for ``switch`` (``len(gpu_ids) > 0``), or the switch itself."""
        return next((guard.test for guard in self._switch_guards if guard.switch == switch), switch)

    @functools.cached_property
    def _module_bindings(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """The names module-level code binds and the dotted targets it assigns (``args.cuda``), each
        with the top-level statements that do (-1 for one inside a compound statement); a name a
        function declares ``global`` counts as bound twice."""
        names: dict[str, list[int]] = {}
        dotted: dict[str, list[int]] = {}
        for index, statement in enumerate(self.flow.module.body):
            where = index if isinstance(statement, cst.SimpleStatementLine) else -1
            pending: list[cst.CSTNode] = [statement]
            while pending:
                node = pending.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    for inner in walk(node):
                        if isinstance(inner, cst.Global):
                            for item in inner.names:
                                names.setdefault(item.name.value, []).extend((-1, -1))
                    continue
                for target in bound_targets(node):
                    if isinstance(target, cst.Name):
                        names.setdefault(target.value, []).append(where)
                    elif dotted_name(target) is not None:
                        dotted.setdefault(dotted_name(target) or "", []).append(where)
                pending.extend(iter_child_nodes(node))
        return names, dotted

    def _set_once_at_top(self, root: str) -> Optional[int]:
        """The top-level statement that binds ``root``, when module-level code binds it once, there."""
        bound = self._module_bindings[0].get(root, [])
        return bound[0] if len(bound) == 1 and bound[0] >= 0 else None

    @functools.cached_property
    def cuda_switch(self) -> Optional[tuple[str, int]]:
        """The file's own CUDA switch, as the test a device line reads, and the top-level statement
        after which that line can go: a module-level name (``cuda = True``), or an attribute of one
        (``args.cuda``, ``args = parser.parse_args()``), bound once by a plain top-level statement,
        that guards moves to CUDA (``if cuda: model.cuda()``, `analysis.switches`) or is set from
        ``torch.cuda.is_available()`` (``args.cuda = not args.no_cuda and ...is_available()``). A
        device line the file lacks follows it (``torch.device("cuda" if args.cuda else "cpu")``)
        rather than adding a second switch."""
        candidates: dict[str, int] = {}
        _, dotted = self._module_bindings
        for statement in self.flow.module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and defines_switch(small.value):
                    for target in small.targets:
                        name = dotted_name(target.target)
                        if name is not None and looks_like_accelerator_switch(name):
                            candidates[name] = 0
        for guard in self._switch_guards:
            candidates[guard.switch] = candidates.get(guard.switch, 0) + 1
        usable = []
        for switch, guards in candidates.items():
            root = switch.split(".")[0]
            position = self._set_once_at_top(root)
            assigned = dotted.get(switch, []) if switch != root else []
            if position is None or any(index < 0 for index in assigned):
                continue
            usable.append((-guards, max([position, *assigned, *self._changed_at(switch)]), switch))
        if not usable:
            return None
        _, position, switch = min(usable)
        return self._switch_test(switch), position

    def _changed_at(self, switch: str) -> list[int]:
        """The top-level statements (not definitions) that change ``switch`` in place: a method
        call on it (``gpu_ids.append(i)`` in a loop after ``gpu_ids = []``), an item or attribute
        of it assigned, an augmented assignment. The device line goes after them."""
        found = []
        for index, top in enumerate(self.flow.module.body):
            if isinstance(top, (cst.FunctionDef, cst.ClassDef)):
                continue
            for node in walk(top):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                    changed = dotted_name(node.func.value) == switch
                elif isinstance(node, cst.AugAssign):
                    changed = dotted_name(node.target) == switch
                else:
                    changed = any(
                        isinstance(target, (cst.Subscript, cst.Attribute)) and dotted_name(target.value) == switch
                        for target in bound_targets(node)
                    )
                if changed:
                    found.append(index)
                    break
        return found

    def _scope_switch(self, scope: Scope, site: int) -> Optional[str]:
        """The test of the switch the function of ``scope`` (or its class) reads, visible at the
        statement numbered ``site``: a switch guarding moves in the function whose root is a
        parameter (``cfg.NUM_GPUS``), a local bound before the site, or ``self`` (``if self.gpu_mode:``
        in any method; in ``__init__``, once set); else a parameter named as a switch
        (``def __init__(self, gpu_ids)``). ``""`` when the function guards its moves with a switch
        it cannot read at the site."""
        function = scope.node
        if not isinstance(function, cst.FunctionDef):
            return None
        params = parameter_names(function)
        guards = self._guards_in(function)
        owner = scope.owner_class
        inherited: list[SwitchGuard] = []
        if owner is not None and params and params[0] == "self":
            guards = guards + [g for g in self._guards_in(owner.node) if g.switch.startswith("self.")]
            if not guards:
                inherited = self._inherited_guards(owner.node)
        unreadable = False
        for guard in guards + inherited:
            root = guard.switch.split(".")[0]
            if any(guard is other for other in inherited):
                # the switch a base class set: in ``__init__``, once ``super().__init__()`` (or
                # ``Base.__init__(self)``) ran or the class set it itself before the site
                readable = function.name.value != "__init__" or self._assigned_before(function, guard.switch, site) or any(
                    _calls_base_init(statement) and self.flow.statement_order.get(statement, site) < site
                    for statement in function.body.body
                )
                if readable:
                    return guard.test
                unreadable = True
                continue
            if root == "self":
                readable = params[:1] == ["self"] and (
                    function.name.value != "__init__" or self._assigned_before(function, guard.switch, site)
                )
            elif root in params:
                readable = True
            else:
                readable = bound_before(scope, root, site) or (
                    not _binds(scope, root) and self.cuda_switch is not None
                )
                if readable and not _binds(scope, root):
                    continue  # the module's switch: its own device line (`cuda_switch`)
            if readable and (
                guard.switch == root
                or root == "self"
                or not self._assignments_in(function, guard.switch)
                or self._assigned_before(function, guard.switch, site)
            ):
                return self._switch_test(guard.switch)
            unreadable = True
        if unreadable:
            return ""
        switch_params = [name for name in params if name != "self" and named_as_switch(name)]
        return self._switch_test(switch_params[0]) if switch_params else None

    def _inherited_guards(self, node: cst.ClassDef) -> list[SwitchGuard]:
        """The guards on a ``self`` switch (``if self.use_cuda: self.net.cuda()``) in the base
        classes of ``node`` that the project defines, in this file or another, nearest first:
        a subclass whose own code never names the switch still runs under it."""
        found: list[SwitchGuard] = []
        for local, home, name in self._project_bases(node):
            guards = self._guards_in(local) if local is not None else _guards_of_class_in(home, name, _modified(home))
            found.extend(guard for guard in guards if guard.switch.startswith("self."))
        return found

    def _places_with_self_device(self, node: cst.ClassDef) -> bool:
        """The class, or a base class the project defines, places tensors with ``self.device``:
        BasicSR's ``VideoBaseModel(SRModel)`` never names it, ``SRModel`` moves every batch there."""
        return _moves_with_self_device(node) or any(
            _moves_with_self_device(local) if local is not None else _class_moves_with_self_device(home, name, _modified(home))
            for local, home, name in self._project_bases(node)
        )

    def _project_bases(self, node: cst.ClassDef) -> Iterator[tuple[Optional[cst.ClassDef], str, str]]:
        """The base classes of ``node`` that the project defines, nearest first, each once: its
        node where this file defines it, else the file defining it and its name there."""
        seen: set[tuple[str, str]] = set()
        pending: list[tuple[Optional[str], str]] = [(None, dotted) for dotted in _base_names(node)]
        while pending and len(seen) < _MAX_BASES:
            path, base = pending.pop(0)
            local = self.flow.classes.get(base) if path is None else None
            bases: Sequence[str]
            if local is not None:
                key, home, bases = ("", base), None, _base_names(local.node)
            else:
                located = self.flow.project.class_home(base, path) if self.flow.project is not None else None
                if located is None:
                    continue
                home, name, bases = located
                key = (home, name)
            if key in seen:
                continue
            seen.add(key)
            yield (local.node if local is not None else None), key[0], key[1]
            pending.extend((home, dotted) for dotted in bases)

    def _block_switch(self, node: cst.CSTNode) -> Optional[str]:
        """The test of a switch that module-level code of a block (``if __name__ == "__main__":``)
        binds and guards moves with, read by ``node``: a function defined in that block, or a
        statement of it, after the statement of the block that binds the switch's root
        (``args = parser.parse_args()`` then ``if args.ngpu > 0: net.cuda()``). The root is bound
        once in the module, the switch never assigned; the function does not bind the root."""
        index = self._top_level_index(node)
        top = self.flow.module.body[index]
        if top is node and isinstance(node, cst.FunctionDef):
            return self._global_block_switch(node)
        body = getattr(top, "body", None)
        if isinstance(top, (cst.FunctionDef, cst.ClassDef)) or not isinstance(body, cst.IndentedBlock):
            return None
        children = list(body.body)
        at = next((i for i, child in enumerate(children) if child is node or any(n is node for n in walk(child))), None)
        if at is None:
            return None
        in_block_code = set()
        pending: list[cst.CSTNode] = [top]
        while pending:
            current = pending.pop()
            if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            in_block_code.add(id(current))
            pending.extend(iter_child_nodes(current))
        names, dotted = self._module_bindings
        function = node if isinstance(node, cst.FunctionDef) else None
        for guard in self._switch_guards:
            root = guard.switch.split(".")[0]
            if id(guard.node) not in in_block_code or root == "self" or len(names.get(root, [])) != 1:
                continue
            if guard.switch != root and guard.switch in dotted:
                continue
            if function is not None and (root in parameter_names(function) or _binds_in(function.body, root)):
                continue
            if any(
                isinstance(child, cst.SimpleStatementLine)
                and any(isinstance(t, cst.Name) and t.value == root for small in child.body for t in bound_targets(small))
                for child in children[:at]
            ):
                return self._switch_test(guard.switch)
        return None

    def _global_block_switch(self, function: cst.FunctionDef) -> Optional[str]:
        """The test of a switch that module-level code of a block binds and tests, for a top-level
        function that already reads the switch's root as a global (``def train(): ... args.lr``,
        ``args`` parsed under ``if __name__ == "__main__":``): it runs only once the block bound it."""
        names, dotted = self._module_bindings
        read = {node.value for node in walk(function.body) if isinstance(node, cst.Name)}
        for guard in self._switch_guards:
            root = guard.switch.split(".")[0]
            if root == "self" or root not in read or names.get(root) != [-1]:
                continue
            if guard.switch != root and guard.switch in dotted:
                continue
            if root in parameter_names(function) or _binds_in(function.body, root):
                continue
            top = self.flow.module.body[self._top_level_index(guard.node)]
            if isinstance(top, (cst.FunctionDef, cst.ClassDef)) or any(
                isinstance(inner, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
                and any(n is guard.node for n in walk(inner))
                for inner in walk(top)
            ):
                continue  # a guard inside a definition is no module-level code
            return self._switch_test(guard.switch)
        return None

    def _guards_in(self, node: cst.FunctionDef | cst.ClassDef) -> list[SwitchGuard]:
        """The switch guards in a function or class (`analysis.switches`), found once per node."""
        found = self._guards_by_node.get(node)
        if found is None:
            found = self._guards_by_node[node] = switch_guards(node.body, self.flow.module, self.imports)
        return found

    @functools.cached_property
    def _guarded_at_module_level(self) -> bool:
        """Module-level code (not a definition) holds a switch guard."""
        guards = {id(guard.node) for guard in self._switch_guards}
        return bool(guards) and any(
            id(node) in guards
            for top in self.flow.module.body
            if not isinstance(top, (cst.FunctionDef, cst.ClassDef))
            for node in walk(top)
        )

    def _assignments_in(self, function: cst.FunctionDef, target: str) -> list[cst.SimpleStatementLine]:
        """The statements of ``function`` that assign ``target`` (``self.gpu_mode = ...``)."""
        return [
            node
            for node in walk(function.body)
            if isinstance(node, cst.SimpleStatementLine)
            and any(dotted_name(t) == target for small in node.body for t in bound_targets(small))
        ]

    def _assigned_before(self, function: cst.FunctionDef, target: str, site: int) -> bool:
        """Some statement of ``function`` before the one numbered ``site`` assigns ``target``."""
        order = self.flow.statement_order
        return any(order.get(statement, site) < site for statement in self._assignments_in(function, target))

    def _switch_unreadable_at(self, statement: Optional[cst.CSTNode], in_function: bool) -> bool:
        """The code at ``statement`` cannot read a device line that follows the file's switch:
        module-level code at or above the switch's last setting, or a function defined above it
        that module-level code calls before it; or module-level code guards moves with a switch
        that no top-level line can read (``args`` parsed inside ``if __name__ == "__main__":``)."""
        switch = self.cuda_switch
        if switch is None:
            return not in_function and self._guarded_at_module_level
        if statement is None:
            return True
        index = self._top_level_index(statement)
        top = self.flow.module.body[index]
        if not in_function or not isinstance(top, (cst.FunctionDef, cst.ClassDef)):
            return index <= switch[1]
        return any(
            isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == top.name.value
            for later in self.flow.module.body[index + 1 : switch[1] + 1]
            if not isinstance(later, (cst.FunctionDef, cst.ClassDef))
            for node in walk(later)
        )

    @functools.cached_property
    def _module_device_attribute(self) -> Optional[tuple[str, int]]:
        """A device the script keeps on a module-level object, and the top-level statement after
        which it is there: ``args = cli()`` where ``cli()`` sets ``args.device = torch.device(...)``
        and returns ``args``, or a top-level ``args.device = ...``."""
        for index, statement in enumerate(self.flow.module.body):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                target = small.targets[0].target
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.attr.value == "device":
                    if self._set_once_at_top(target.value.value) is not None:
                        return f"{target.value.value}.device", index
                if (
                    isinstance(target, cst.Name)
                    and self._set_once_at_top(target.value) == index
                    and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name)
                    and _sets_device_of_returned(self.flow.functions.get(small.value.func.value))
                ):
                    return f"{target.value}.device", index
        return None

    @functools.cached_property
    def quote(self) -> str:
        """The quote of the strings a fix inserts: the file's own (`tree.string_quote`)."""
        return string_quote(self.flow.module)

    def insert_binding(self, module: cst.Module, before_index: int, device_line: bool = True) -> cst.Module:
        """Insert the binding (or, without ``device_line``, only ``import torch``) after the
        imports that precede top-level statement ``before_index``."""
        body: list[cst.BaseStatement] = list(module.body)
        switch = self.cuda_switch  # a site above it gets no device line (`choose`)
        inserted = self.binding_statements(device_line, switch[0] if switch is not None else None)
        if inserted and _is_import_line(inserted[0]):
            joined = _torch_import_position(body[:before_index])
            if joined is not None:
                # ``import torch`` joins the file's imports from torch where isort puts it
                import_torch = inserted.pop(0)
                index, heads_block = joined
                if heads_block:  # the blank lines and comments above the block stay above it
                    import_torch = import_torch.with_changes(leading_lines=_leading_lines(body[index]))
                    body[index] = body[index].with_changes(leading_lines=())
                body.insert(index, import_torch)
                before_index += 1
        if not inserted:
            return module.with_changes(body=body)
        position = _leading_position(body)
        for index, statement in enumerate(body[:before_index]):
            if _is_import_line(statement) or _is_guarded_import(statement):
                position = index + 1
        choices = [index for index in self._gpu_choices or () if index < before_index]
        if choices:  # after the script sets CUDA_VISIBLE_DEVICES (see `_gpu_choices`)
            position = max(position, max(choices) + 1)
        if switch is not None and device_line and position <= switch[1] + (len(body) - len(module.body)):
            # right under the switch it reads
            position = switch[1] + (len(body) - len(module.body)) + 1
            body[position:position] = inserted
            return module.with_changes(body=body)
        at_top = position == 0 or _is_cell_marker(body[position - 1])
        after_imports = not at_top and (_is_import_line(body[position - 1]) or _is_guarded_import(body[position - 1]))
        closing: Sequence[cst.EmptyLine] = ()
        if after_imports and position < len(body):
            # comments right under the last import and apart from the code below close the
            # import block (flowtron's ``# =====END: ADDED FOR DISTRIBUTED======``): they stay
            # above the device line; a comment right over the code is that code's
            leading = _leading_lines(body[position])
            closing = tuple(itertools.takewhile(lambda line: line.comment is not None, leading))
            if len(closing) < len(leading):
                body[position] = body[position].with_changes(leading_lines=leading[len(closing) :])
            else:
                closing = ()
        if not at_top:
            # PEP 8 and isort: blank lines between the import block (or docstring) and code, as
            # many as the file already puts there (isort's lines_after_imports).
            blank = 1
            if self.lines_after_imports is not None and after_imports:
                blank = self.lines_after_imports
            elif after_imports and position < len(body):
                blank = _blank_lines_after_imports(body[position])
            inserted[0] = inserted[0].with_changes(leading_lines=[*closing, *[cst.EmptyLine()] * blank])
        if len(inserted) > 1:
            # ``import torch`` is its own import block: the blank lines the project asks for under it.
            inserted[1] = inserted[1].with_changes(leading_lines=[cst.EmptyLine()] * (self.lines_after_imports or 1))
        if position < len(body):
            body[position] = _spaced_after_code(body[position], came_after_imports=after_imports)
        body[position:position] = inserted
        return module.with_changes(body=body)

    def _free_global_name(self) -> str:
        """One name in every file (``device``, or the configured one) unless the module itself
        binds it to something else; a function that binds it locally gets no fix that needs it
        (see ``DeviceChoice.shadowed``) instead of a second name for the whole file."""
        non_device_bindings: set[str] = set(self.imports.aliases) | set(self.flow.classes) | set(self.flow.functions)
        for name, value in self.flow.scopes[self.flow.module].env.items():
            if (
                value.kind is not Kind.DEVICE
                or value.defaults_to_cpu
                or value.may_be_cpu
                or value.place is Place.CPU
                or self._device_of_another_library(name)
            ):
                non_device_bindings.add(name)
        candidates = (self.preferred_name,) if self.preferred_name else ()
        for name in candidates + _CANDIDATE_GLOBAL_NAMES:
            if name not in non_device_bindings:
                return name
        return "_portable_device"


def _binds(scope: Scope, name: str) -> bool:
    """``name`` is local to the function of ``scope``: a parameter or assigned in its body."""
    function = scope.node
    return name in scope.bound_at or (isinstance(function, cst.FunctionDef) and name in parameter_names(function))


def _bound_device_name(scope: Scope, site: Optional[int]) -> Optional[str]:
    """A device variable of ``scope`` bound before ``site`` (None: at any point)."""
    usable = [
        name
        for name, order in scope.device_names.items()
        if (site is None or order < site)
        and scope.env.get(name) is not None
        and scope.env[name].kind is Kind.DEVICE
        and not scope.env[name].may_be_cpu  # the CPU on purpose on some path: not the device
        and scope.env[name].place is not Place.CPU  # ``cpu = torch.device("cpu")``
    ]
    if not usable:
        return None
    return "device" if "device" in usable else usable[0]


def _binding_reaches(scope_node: cst.CSTNode, name: str, site: cst.CSTNode) -> bool:
    """Some binding of ``name`` in ``scope_node`` reaches ``site``: it is not part of the site
    itself (``rank, dev = 0, torch.device("cuda")``), nor inside an ``if``/``else`` branch or
    an ``except`` handler that the site is outside of (``dev`` bound under ``if distributed:``
    is unbound in the ``else:``). Parameters always reach."""
    if isinstance(scope_node, cst.FunctionDef) and name in parameter_names(scope_node):
        return True
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    bindings: list[cst.CSTNode] = []
    for node in walk(scope_node):
        for child in iter_child_nodes(node):
            parents[child] = node
        if any(isinstance(target, cst.Name) and target.value == name for target in bound_targets(node)):
            bindings.append(node)
    around_site = {site, *_ancestors(site, parents)}
    for binding in bindings:
        if binding in around_site or any(ancestor is site for ancestor in _ancestors(binding, parents)):
            continue  # the site's own assignment
        branches = [
            block
            for block in _ancestors(binding, parents)
            if isinstance(parents.get(block), (cst.If, cst.Else, cst.ExceptHandler))
            and isinstance(block, cst.BaseSuite)
            and not _every_branch_binds(_top_of_chain(block, parents), name)
        ]
        if all(block in around_site for block in branches):
            return True
    return False


def _top_of_chain(block: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> Optional[cst.If]:
    """The ``if`` statement a branch ``block`` belongs to, the first of its ``elif`` chain."""
    node = parents.get(block)
    if isinstance(node, cst.Else):
        node = parents.get(node)
    if not isinstance(node, cst.If):
        return None
    above = parents.get(node)
    while isinstance(above, cst.If) and above.orelse is node:
        node, above = above, parents.get(above)
    return node


def _every_branch_binds(statement: Optional[cst.If], name: str) -> bool:
    """``if c: device = "cuda"`` / ``else: device = "cpu"``: every branch, ``else`` included,
    binds ``name``, so the statement as a whole binds it for what follows."""
    branch: Optional[cst.CSTNode] = statement
    while isinstance(branch, cst.If):
        if not _binds_in(branch.body, name):
            return False
        branch = branch.orelse
    return isinstance(branch, cst.Else) and _binds_in(branch.body, name)


def _moves_in(statement: Optional[cst.CSTNode]) -> int:
    """How many ``.cuda()`` moves a simple statement line holds (1 for any other statement)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return 1
    return sum(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda"
        for node in walk(statement)
    )


def _binds_in(suite: cst.CSTNode, name: str) -> bool:
    pending = [suite]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if any(isinstance(target, cst.Name) and target.value == name for target in bound_targets(node)):
            return True
        pending.extend(iter_child_nodes(node))
    return False


def _ancestors(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> Iterator[cst.CSTNode]:
    parent = parents.get(node)
    while parent is not None:
        yield parent
        parent = parents.get(parent)


def bound_before(scope: Scope, name: str, site: int) -> bool:
    """Whether ``name`` is first bound in ``scope`` before the statement numbered ``site``."""
    order = scope.bound_at.get(name)
    return order is not None and order < site


@dataclass(frozen=True)
class _Evidence:
    #: Parameters the body shows are tensors.
    tensors: frozenset[str]
    #: Names the body uses as a size, a count, an index, a flag, a mapping or a graph (a
    #: positional argument of a torch factory, ``range(n)``, a subscript, an ``if`` test,
    #: ``batch["x"]``, ``g.num_nodes()``).
    sizes: frozenset[str]
    #: Names the body takes single items of by position (``outputs[2 * j]``, ``outputs[-1]``): a
    #: model's list of outputs as often as a tensor, whose ``.device`` a list does not have.
    sequences: frozenset[str] = frozenset()
    #: Names a method only tensors have writes into (``input_label.scatter_(1, idx, 1.0)``).
    written: frozenset[str] = frozenset()


def _strict_tensor_evidence(body: FunctionBody, imports: ImportTable, bare_size: bool = True) -> _Evidence:
    function = body.function
    tensors = names_used_as_tensors(body.nodes, imports, lenient=False, operands=True, bare_size=bare_size)
    for param in parameters(function):
        annotation = param.annotation
        if annotation is not None and (imports.qualified_name(annotated_expression(annotation)) or "") == "torch.Tensor":
            tensors.add(param.name.value)
    sizes: set[str] = set()
    sequences: set[str] = set()
    written: set[str] = set()
    for node in walk(function.body):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            if node.attr.value == "device":
                tensors.add(node.value.value)
            elif node.attr.value in _NON_TENSOR_MEMBERS:
                sizes.add(node.value.value)  # g.num_nodes(), batch.keys(): a graph or a mapping
        if isinstance(node, cst.Call):
            if (
                isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.attr.value in torch_api.TENSOR_ONLY_WRITES
            ):
                written.add(node.func.value.value)
            callee = imports.qualified_name(node.func) or ""
            if callee in torch_api.FACTORIES or (isinstance(node.func, cst.Name) and node.func.value == "range"):
                sizes.update(arg.value.value for arg in node.args if arg.keyword is None and isinstance(arg.value, cst.Name))
        if isinstance(node, cst.SubscriptElement) and isinstance(node.slice, cst.Index):
            if isinstance(node.slice.value, cst.Name):
                sizes.add(node.slice.value.value)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            if any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice):
                sizes.add(node.value.value)  # batch["images"]: a mapping
            elif len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                sequences.add(node.value.value)
        if isinstance(node, (cst.If, cst.While, cst.IfExp)) and isinstance(node.test, cst.Name):
            sizes.add(node.test.value)  # a flag
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and isinstance(node.expression, cst.Name):
            sizes.add(node.expression.value)
    return _Evidence(frozenset(tensors), frozenset(sizes), frozenset(sequences), frozenset(written))


def _spaced_after_code(statement: cst.BaseStatement, came_after_imports: bool) -> cst.BaseStatement:
    """``statement`` now follows the device line: two blank lines before a ``def`` or
    ``class`` (PEP 8), and at least one before anything else that followed the imports."""
    leading: Sequence[cst.EmptyLine] = getattr(statement, "leading_lines", ())
    blank = [line for line in leading if line.comment is None]
    wanted = 2 if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) else int(came_after_imports)
    if len(blank) >= wanted or len(blank) != len(leading):
        return statement  # enough already, or comments among them: keep the author's layout
    extra = [cst.EmptyLine()] * (wanted - len(blank))
    return statement.with_changes(leading_lines=[*extra, *leading])


def _blank_lines_after_imports(statement: cst.BaseStatement) -> int:
    """How many blank lines this file puts between its imports and code (1 or 2), read on the
    statement that followed them: two before a ``def`` or ``class`` say nothing (the default
    asks for two there, and one before other code)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return 1
    leading: Sequence[cst.EmptyLine] = getattr(statement, "leading_lines", ())
    blank = 0
    for line in leading:
        if line.comment is not None:
            break
        blank += 1
    return min(max(blank, 1), 2)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _is_guarded_import(statement: cst.CSTNode) -> bool:
    """``try: from yaml import CLoader as Loader`` / ``except ImportError: from yaml import Loader``:
    an import with its fallback, part of the import block (the device line goes below it)."""
    if not isinstance(statement, cst.Try) or not statement.handlers or statement.orelse or statement.finalbody:
        return False
    handler_suites = [handler.body for handler in statement.handlers]
    return _holds_only(statement.body, _is_import_line) and all(
        _holds_only(suite, lambda line: _is_import_line(line) or _is_fallback_line(line)) for suite in handler_suites
    )


def _holds_only(suite: cst.BaseSuite, accepts: Callable[[cst.BaseStatement], bool]) -> bool:
    return isinstance(suite, cst.IndentedBlock) and all(accepts(line) for line in suite.body)


def _is_fallback_line(statement: cst.CSTNode) -> bool:
    """``pass`` or ``name = None``: what an import's fallback holds besides other imports."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return isinstance(small, cst.Pass) or (
        isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value == "None"
    )


def _is_cell_marker(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and cst.Module([statement]).code.startswith(CELL_MARKER)


#: The environment variable a script sets to choose its GPUs before CUDA starts.
_GPU_CHOICE = "CUDA_VISIBLE_DEVICES"


def _torch_import_position(body: Sequence[cst.BaseStatement]) -> Optional[tuple[int, bool]]:
    """Where ``import torch`` goes in a file that does not import torch itself, in the order
    isort gives a section: the block of consecutive import lines holding the file's first import
    of torch's submodules (``from torch import nn``) or of its family (``torchvision``: EDVR's
    scripts), else of a package PyTorch code imports most (`_THIRD_PARTY_NEIGHBOURS`): the
    third-party section torch belongs in. In that block, plain imports sorted by module ahead of
    ``from`` imports (isort's default), or all of them sorted by module (its
    ``force_sort_within_sections``); and whether that is the block's first line. None where there
    is no such block or it is in neither order (the caller then starts a block of its own)."""
    first = next((i for i, statement in enumerate(body) if _imports_package(statement, _is_torch_family)), None)
    if first is None:
        first = next((i for i, statement in enumerate(body) if _imports_package(statement, _is_neighbour)), None)
    if first is None:
        return None
    start = first
    while start > 0 and _is_import_line(body[start - 1]) and not _starts_block(body, start):
        start -= 1
    end = first + 1
    while end < len(body) and _is_import_line(body[end]) and not _starts_block(body, end):
        end += 1
    block = [statement.body[0] for statement in body[start:end]]  # type: ignore[attr-defined]
    kinds = [isinstance(small, cst.ImportFrom) for small in block]
    modules = [_sort_key(small) for small in block]
    if kinds == sorted(kinds):
        for index, (is_from, module) in enumerate(zip(kinds, modules), start):
            if is_from or module > "torch":
                return index, index == start
        return end, False
    if modules == sorted(modules):
        index = next((index for index, module in enumerate(modules, start) if module >= "torch"), end)
        return index, index == start
    return None  # neither of isort's orders


#: Third-party packages whose import block ``import torch`` joins in a file importing nothing of
#: torch's family (the packages PyTorch projects import most).
_THIRD_PARTY_NEIGHBOURS = frozenset({"numpy", "scipy", "cv2", "PIL", "tqdm", "matplotlib", "yaml", "pandas", "sklearn"})


def _is_torch_family(package: str) -> bool:
    return package.startswith("torch")


def _is_neighbour(package: str) -> bool:
    return package in _THIRD_PARTY_NEIGHBOURS


def _imports_package(statement: cst.BaseStatement, accepts: Callable[[str], bool]) -> bool:
    """``statement`` is an import line of a package ``accepts`` (an absolute import)."""
    if not _is_import_line(statement):
        return False
    for small in statement.body:  # type: ignore[attr-defined]
        if isinstance(small, cst.ImportFrom) and small.relative:
            continue
        names = [small.module] if isinstance(small, cst.ImportFrom) else [alias.name for alias in small.names]
        if any(accepts((dotted_name(name) or "").split(".")[0]) for name in names if name is not None):
            return True
    return False


def _sort_key(statement: cst.Import | cst.ImportFrom) -> str:
    """The module isort sorts an import line by."""
    if isinstance(statement, cst.ImportFrom):
        module = dotted_name(statement.module) if statement.module is not None else None
        return ("." * len(statement.relative) + (module or "")).lower()
    return (dotted_name(statement.names[0].name) or "").lower()


def _starts_block(body: Sequence[cst.BaseStatement], index: int) -> bool:
    """A blank line or a comment line above the statement separates it from the one before."""
    return bool(_leading_lines(body[index]))


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return getattr(statement, "leading_lines", ())


def _leading_position(body: list[cst.BaseStatement]) -> int:
    """Just after the module docstring and ``__future__`` imports."""
    position = 0
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        small = statement.body[0]
        is_docstring = index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
        is_future = (
            isinstance(small, cst.ImportFrom)
            and isinstance(small.module, cst.Name)
            and small.module.value == "__future__"
        )
        if not (is_docstring or is_future):
            break
        position = index + 1
    return position


def _moves_its_own_values(function: cst.FunctionDef, parameters: AbstractSet[str], imports: ImportTable) -> bool:
    """The function moves a value of its own to a device (``x.cuda()``, ``batch.to(device)``,
    ``images.float().to("cuda")``, ``x.data.cuda()``, ``Variable(x).cuda()``): not made by torch
    (``torch.zeros(n).cuda()``) nor the object's own (``self.mask.cuda()``), nor moved to a
    parameter's device (``x.to(y.device)``)."""
    for node in walk(function.body):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            continue
        method = node.func.attr.value
        if method not in ("cuda", "to"):
            continue
        if method == "to":
            target = next((arg.value for arg in node.args if arg.keyword is None or arg.keyword.value == "device"), None)
            if target is None or (
                isinstance(target, cst.Attribute)
                and target.attr.value in ("dtype", "device")
                and isinstance(target.value, cst.Name)
                and (target.attr.value == "dtype" or target.value.value in parameters)
            ):
                continue
            if isinstance(target, cst.Attribute) and dotted_name(target) in torch_api.DTYPES:
                continue
        receiver: cst.BaseExpression = node.func.value
        while isinstance(receiver, (cst.Call, cst.Subscript, cst.Attribute)):
            if isinstance(receiver, cst.Subscript):
                receiver = receiver.value
            elif isinstance(receiver, cst.Attribute):
                if imports.qualified_name(receiver) is not None:
                    break  # a module's member: ``torch.cuda``
                receiver = receiver.value  # ``x.data.cuda()``, ``batch.image.cuda()``
            elif isinstance(receiver.func, cst.Attribute) and imports.qualified_name(receiver.func) is None:
                receiver = receiver.func.value  # a method of the value: ``x.float().cuda()``
            elif imports.qualified_name(receiver.func) in torch_api.VARIABLE_CLASSES and receiver.args:
                receiver = receiver.args[0].value  # ``Variable(x)`` is ``x`` itself
            else:
                break  # made by a library or a function: ``torch.from_numpy(a).cuda()``
        if isinstance(receiver, cst.Name) and receiver.value not in ("self", "cls") and imports.qualified_name(receiver) is None:
            return True
    return False


def _tested_for_none(function: cst.FunctionDef) -> set[str]:
    """The names the function tests for None (``if ids is None:``)."""
    return {
        node.left.value
        for node in walk(function.body)
        if isinstance(node, cst.Comparison)
        and isinstance(node.left, cst.Name)
        and any(
            isinstance(target.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual))
            and isinstance(target.comparator, cst.Name)
            and target.comparator.value == "None"
            for target in node.comparisons
        )
    }


def _rebound_in_place(function: cst.FunctionDef, name: str, imports: ImportTable) -> bool:
    """Every binding of ``name`` computes its new value from the old one through what keeps a
    tensor's device (``spect = spect.contiguous().view(...)``, ``x += bias``) or hands it to a
    submodule (``spect = self.upsample(spect)``, which runs where its input is) or to a torch
    function placing its result like its tensor arguments (``p1 = F.normalize(p1)``): the name
    holds a tensor on the caller's device throughout (WaveGlow's ``infer(self, spect, ...)``)."""
    for node in walk(function.body):
        if not any(isinstance(target, cst.Name) and target.value == name for target in bound_targets(node)):
            continue
        if isinstance(node, cst.AugAssign):
            continue
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
            return False  # a ``for``/``with`` target, an unpacking, ``:=``
        statement = cst.SimpleStatementLine(body=[node])
        if carried_to(statement, name, imports) == name:
            continue
        value = node.value
        given_on = (
            isinstance(value, cst.Call)
            and (self_attribute(value.func) is not None or imports.qualified_name(value.func) in torch_api.TENSOR_FUNCTIONS)
            and bool(value.args)
            and value.args[0].keyword is None
            and any(part.value == name for part in device_keeping_parts(value.args[0].value))
        )
        if not given_on:
            return False
    return True


def _placing_device(function: cst.CSTNode) -> Optional[str]:
    """The device the function already places tensors on, read off an argument:
    ``device=waveglow.upsample.weight.device`` (or ``.to(model.weight.device)``) in WaveGlow's
    ``Denoiser.__init__(self, waveglow)``, where ``STFT(...).cuda()`` belongs too. Only a
    chain from a parameter the function does not bind again (not ``self``: an attribute read
    before it is set is no device yet)."""
    if not isinstance(function, cst.FunctionDef):
        return None
    roots = set(parameter_names(function)) - {"self", "cls"} - bound_names(function.body)
    module = cst.Module(body=[])
    for node in walk(function.body):
        if not isinstance(node, cst.Call):
            continue
        given = [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "device"]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and len(node.args) == 1 and not node.args[0].keyword:
            given.append(node.args[0].value)
        for value in given:
            root: cst.BaseExpression = value
            while isinstance(root, cst.Attribute):
                root = root.value
            if (
                isinstance(value, cst.Attribute)
                and value.attr.value == "device"
                and isinstance(value.value, cst.Attribute)
                and isinstance(root, cst.Name)
                and root.value in roots
            ):
                return module.code_for_node(value)
    return None


def _device_read_of(function: cst.FunctionDef) -> set[str]:
    """The names whose ``.device`` the function reads."""
    return {
        node.value.value
        for node in walk(function.body)
        if isinstance(node, cst.Attribute) and node.attr.value == "device" and isinstance(node.value, cst.Name)
    }


def _moves_with_self_device(owner: cst.ClassDef) -> bool:
    """The class's own code places tensors with ``self.device`` (``x.to(self.device)``,
    ``device=self.device``): whatever base provides it (BasicSR's models), it is the device the
    class works on, the one its other conversions should use."""
    for node in walk(owner):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and node.args and node.args[0].keyword is None:
            if self_attribute(node.args[0].value) == "device":
                return True
        if any(arg.keyword is not None and arg.keyword.value == "device" and self_attribute(arg.value) == "device" for arg in node.args):
            return True
    return False


#: How many base classes a subclass's switch is looked for in.
_MAX_BASES = 8


def _base_names(node: cst.ClassDef) -> list[str]:
    """The bases of a class as written (``FeedForwardClassifier``, ``models.Base``)."""
    return [name for base in node.bases if base.keyword is None and (name := dotted_name(base.value)) is not None]


def _modified(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


@functools.lru_cache(maxsize=64)
def _guards_of_class_in(path: str, name: str, modified: float) -> tuple[SwitchGuard, ...]:
    """The switch guards in the top-level class ``name`` of the project file at ``path`` (as
    last ``modified``)."""
    found = _top_level_class(path, name, modified)
    return tuple(switch_guards(found[0].body, found[1], found[2])) if found is not None else ()


@functools.lru_cache(maxsize=64)
def _class_moves_with_self_device(path: str, name: str, modified: float) -> bool:
    """`_moves_with_self_device` of the top-level class ``name`` of the project file at ``path``."""
    found = _top_level_class(path, name, modified)
    return found is not None and _moves_with_self_device(found[0])


def _top_level_class(path: str, name: str, modified: float) -> Optional[tuple[cst.ClassDef, cst.Module, ImportTable]]:
    """The top-level class ``name`` of the project file at ``path``, with the file and its imports."""
    parsed = _parsed_module(path, modified)
    if parsed is None:
        return None
    module, imports = parsed
    found = next((s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == name), None)
    return (found, module, imports) if found is not None else None


@functools.lru_cache(maxsize=8)
def _parsed_module(path: str, modified: float) -> Optional[tuple[cst.Module, ImportTable]]:
    """Another file of the project (as last ``modified``) and its module-level imports."""
    try:
        with open(path, encoding="utf-8") as handle:
            module = cst.parse_module(handle.read())
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return None
    imports = ImportTable()
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                imports.add(small)
    return module, imports


def _calls_base_init(statement: cst.CSTNode) -> bool:
    """``super().__init__(...)`` or ``Base.__init__(self, ...)``."""
    return _calls_super_init(statement) or any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "__init__"
        and bool(node.args)
        and isinstance(node.args[0].value, cst.Name)
        and node.args[0].value.value == "self"
        for node in walk(statement)
    )


def _calls_super_init(statement: cst.CSTNode) -> bool:
    """``super().__init__(...)`` as a statement of its own."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        call = small.value if isinstance(small, cst.Expr) else None
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "__init__"
            and isinstance(call.func.value, cst.Call)
            and isinstance(call.func.value.func, cst.Name)
            and call.func.value.func.value == "super"
        ):
            return True
    return False


def _sets_device_of_returned(function: Optional[cst.FunctionDef]) -> bool:
    """``function`` sets ``<x>.device`` on the object it returns (``args.device = ...``, ``return args``)."""
    if function is None:
        return False
    returned = {dotted_name(node.value) for node in walk(function.body) if isinstance(node, cst.Return) and node.value is not None}
    return any(
        isinstance(target, cst.Attribute) and target.attr.value == "device" and dotted_name(target.value) in returned
        for node in walk(function.body)
        for target in assignment_targets(node)
    )
