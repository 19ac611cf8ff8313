"""Which device expression a fix should use at a given place in the file.

A fix never invents a second notion of "the device": it reuses one already in scope, in
this order of preference, and only when none exists asks for one module-level binding:

1. a device variable of the enclosing function bound before the site (``device`` first);
2. the device of the tensor the site meets (``x.device``), when that tensor is a name;
3. inside a module's ``forward`` (or a helper it feeds), an input tensor's ``.device``;
4. ``self.device`` when the class sets it;
5. a module-level device variable (bound before the site, for module-level code);
6. a new ``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis.flow import FlowAnalysis, Scope
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.values import Kind

_CANDIDATE_GLOBAL_NAMES = ("device", "torch_device", "default_device")

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


class DeviceBinder:
    def __init__(
        self, flow: FlowAnalysis, imports: ImportTable, style: str = "cuda", name: Optional[str] = None
    ) -> None:
        self.flow = flow
        self.imports = imports
        self.style = style
        #: The configured name for a new binding (``device-name``); tried before the defaults.
        self.preferred_name = name
        self.global_name = self._free_global_name()

    # ----------------------------------------------------------------- choice
    def choose(
        self,
        statement: Optional[cst.CSTNode],
        functions: Sequence[cst.FunctionDef],
        partner: Optional[str] = None,
    ) -> DeviceChoice:
        """The device to use in ``statement``, nested in ``functions`` (innermost first)."""
        site = self.flow.statement_order.get(statement, 0) if statement is not None else 0
        scopes = [self.flow.scopes[f] for f in functions if f in self.flow.scopes]
        for scope in scopes:
            name = _bound_device_name(scope, site)
            if name is not None:
                return DeviceChoice(name)
        if partner is not None and scopes and bound_before(scopes[0], partner, site):
            return DeviceChoice(f"{partner}.device")
        for scope in scopes:
            if scope.device_tensor_params:
                return DeviceChoice(f"{scope.device_tensor_params[0]}.device")
        innermost = scopes[0] if scopes else None
        if (
            innermost is not None
            and innermost.owner_class is not None
            and isinstance(innermost.node, cst.FunctionDef)
            and innermost.node.name.value != "__init__"
        ):
            device_attribute = innermost.owner_class.attributes.get("device")
            if device_attribute is not None and device_attribute.kind is Kind.DEVICE:
                return DeviceChoice("self.device")
        module_scope = self.flow.scopes[self.flow.module]
        name = _bound_device_name(module_scope, site if not scopes else None)
        if name is not None:
            return DeviceChoice(name)
        return DeviceChoice(self.global_name, inserts_binding=True)

    # -------------------------------------------------------------- insertion
    def binding_statements(self) -> list[cst.BaseStatement]:
        """The lines a fix inserts: ``device = ...`` and, if missing, ``import torch``."""
        torch_name = self.imports.torch_alias or "torch"
        expression = DEVICE_STYLES[self.style].format(torch=torch_name)
        statements: list[cst.BaseStatement] = [cst.parse_statement(f"{self.global_name} = {expression}\n")]
        if self.imports.torch_alias is None:
            statements.insert(0, cst.parse_statement("import torch\n"))
        return statements

    def insert_binding(self, module: cst.Module, before_index: int) -> cst.Module:
        """Insert the binding after the imports that precede top-level statement ``before_index``."""
        body: list[cst.BaseStatement] = list(module.body)
        position = _leading_position(body)
        for index, statement in enumerate(body[:before_index]):
            if _is_import_line(statement):
                position = index + 1
        body[position:position] = self.binding_statements()
        return module.with_changes(body=body)

    def _free_global_name(self) -> str:
        non_device_bindings: set[str] = set(self.imports.aliases) | set(self.flow.classes) | set(self.flow.functions)
        for scope in self.flow.scopes.values():
            for name, value in scope.env.items():
                if value.kind is not Kind.DEVICE or value.defaults_to_cpu or name in self.imports.aliases:
                    non_device_bindings.add(name)
        candidates = (self.preferred_name,) if self.preferred_name else ()
        for name in candidates + _CANDIDATE_GLOBAL_NAMES:
            if name not in non_device_bindings:
                return name
        return "_portable_device"


def _bound_device_name(scope: Scope, site: Optional[int]) -> Optional[str]:
    """A device variable of ``scope`` bound before ``site`` (None: at any point)."""
    usable = [
        name
        for name, order in scope.device_names.items()
        if (site is None or order < site) and scope.env.get(name) is not None and scope.env[name].kind is Kind.DEVICE
    ]
    if not usable:
        return None
    return "device" if "device" in usable else usable[0]


def bound_before(scope: Scope, name: str, site: int) -> bool:
    """Whether ``name`` is first bound in ``scope`` before the statement numbered ``site``."""
    order = scope.bound_at.get(name)
    return order is not None and order < site


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


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
