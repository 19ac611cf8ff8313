"""What the flow walk keeps per body and per class: scopes, classes of the file, meetings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

from torchdevice_lint.analysis.values import Value

FunctionOrModule = Union[cst.FunctionDef, cst.Module, cst.ClassDef]


@dataclass
class Meeting:
    """A tensor made on the CPU without ``device=`` meets a tensor on the device."""

    site: cst.CSTNode
    origin: cst.Call
    #: A name holding a device tensor it meets, usable as ``partner.device`` in a fix.
    partner: Optional[str]
    #: The function where they meet (None: the module body); not the factory's own when the
    #: tensor is kept on ``self`` and met in another method.
    body: Optional[cst.FunctionDef] = None
    #: The order of the statement where they meet (see ``FlowAnalysis.statement_order``).
    order: int = 0


@dataclass
class ClassInfo:
    node: cst.ClassDef
    #: True, False, or None when a base class comes from elsewhere and cannot be judged.
    is_module: Optional[bool]
    defines_to: bool
    attributes: dict[str, Value] = field(default_factory=dict)
    #: ``forward`` (and the other entry points) with the methods they call on ``self``: where
    #: the module runs on its device. Elsewhere (``__init__``, setup helpers) it may not yet.
    running_methods: set[str] = field(default_factory=set)
    #: Attributes assigned only ``None`` so far (``self.probs, self.alias = None, None`` in
    #: ``__init__``): a placeholder, which a tensor assigned later replaces.
    placeholders: set[str] = field(default_factory=set)

    @property
    def converts_in_place(self) -> bool:
        return bool(self.is_module) or self.defines_to


@dataclass
class Scope:
    """What one function body (or the module body) binds."""

    node: FunctionOrModule
    parent: Optional["Scope"]
    owner_class: Optional[ClassInfo]
    env: dict[str, Value] = field(default_factory=dict)
    #: Statement order at which each name was first bound; parameters are bound at the start.
    bound_at: dict[str, int] = field(default_factory=dict)
    #: Names bound to a device (``torch.device(...)``, the guarded idiom, a ``device`` param).
    device_names: dict[str, int] = field(default_factory=dict)
    #: Parameters that hold tensors on the device, in signature order.
    device_tensor_params: list[str] = field(default_factory=list)
    #: Parameters that hold tensors (by annotation, use or the values passed), wherever they live.
    tensor_params: set[str] = field(default_factory=set)
    #: Every parameter's name (``*params`` and ``**kwargs`` too), but ``self``/``cls``.
    parameters: set[str] = field(default_factory=set)
    #: Names bound only to an item or attribute of a parameter (``task_idcs = params[0]``, ``pos
    #: = data.pos``) that the body uses as a tensor: the caller's tensors, as the parameters are.
    parameter_items: set[str] = field(default_factory=set)
    #: Names bound to a list literal, with the expressions (and values) it holds: its elements
    #: and what ``name.append(x)`` added since, on any path.
    list_parts: dict[str, list[tuple[cst.BaseExpression, Value]]] = field(default_factory=dict)
    start: int = 0

    def lookup(self, name: str) -> Optional[Value]:
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.env:
                return scope.env[name]
            scope = scope.parent
        return None
