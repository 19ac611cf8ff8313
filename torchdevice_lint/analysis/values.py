"""The abstract values the flow analysis assigns to expressions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst


class Kind(enum.Enum):
    """What an object is, as far as device handling cares."""

    TENSOR = "tensor"
    #: An ``nn.Module``: its conversions work in place.
    MODULE = "module"
    #: Another object whose ``.to()`` works in place (BatchEncoding, PyG Data, own classes).
    IN_PLACE = "in-place container"
    #: A ``torch.device`` or a string naming one.
    DEVICE = "device"
    #: A DataLoader: unpacking its items gives tensors.
    LOADER = "loader"
    UNKNOWN = "unknown"


class Place(enum.Enum):
    """Where a tensor (or a module's parameters) lives."""

    CPU = "cpu"
    #: The run's accelerator: the device that ``.to(device)``, parameters and inputs share.
    DEVICE = "device"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Value:
    kind: Kind = Kind.UNKNOWN
    place: Place = Place.UNKNOWN
    #: The device-less factory call that made this CPU tensor; the place a fix adds ``device=``.
    origin: Optional[cst.Call] = None
    #: For modules and objects: the class, as ``torch.nn.Linear`` or a class name of the file.
    type_name: Optional[str] = None
    #: For tuple and list literals: the value of each element.
    elements: Optional[tuple["Value", ...]] = None

    def moved_to(self, place: Place) -> "Value":
        return replace(self, place=place, origin=self.origin if place is Place.CPU else None, elements=None)

    @property
    def is_cpu_factory_tensor(self) -> bool:
        return self.place is Place.CPU and self.origin is not None


UNKNOWN = Value()
DEVICE_OBJECT = Value(kind=Kind.DEVICE)


def merge(first: Value, second: Value) -> Value:
    """The value a name has after two branches that bound it differently."""
    if first == second:
        return first
    kind = first.kind if first.kind == second.kind else Kind.UNKNOWN
    place = first.place if first.place == second.place else Place.UNKNOWN
    origin = first.origin if first.origin is second.origin and place is Place.CPU else None
    type_name = first.type_name if first.type_name == second.type_name else None
    elements = None
    if first.elements is not None and second.elements is not None and len(first.elements) == len(second.elements):
        elements = tuple(merge(a, b) for a, b in zip(first.elements, second.elements))
    return Value(kind, place, origin, type_name, elements)
