"""The abstract values the flow analysis assigns to expressions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Iterable, Optional

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
    #: The device-less factory calls that may have made this CPU tensor (one per path); where
    #: a fix adds ``device=``.
    origins: frozenset[cst.Call] = frozenset()
    #: For modules and objects: the class, as ``torch.nn.Linear`` or a class name of the file.
    type_name: Optional[str] = None
    #: For tuple and list literals: the value of each element.
    elements: Optional[tuple["Value", ...]] = None
    #: A device parameter defaulting to None (``device=None``): the CPU unless a caller passes
    #: one, so what it places is not known to be on the device.
    defaults_to_cpu: bool = False
    #: A device chosen between the CPU and CUDA by a test other than CUDA's availability
    #: (``torch.device("cpu") if gather_on_cpu else torch.device("cuda")``): the CPU on purpose
    #: on some path of a GPU machine, so it is not where ``.cuda()`` placed things.
    may_be_cpu: bool = False
    #: The factories of a CPU tensor that may be 0-dim (an element ``mask[i]``): such a tensor may
    #: meet any device, until an explicit rank (``mask[i].view(n, 1)``) makes it a factory tensor again.
    scalar_origins: frozenset[cst.Call] = frozenset()
    #: For a tensor moved to the device: the factories it came from (``torch.zeros(n).cuda()``).
    moved_from: frozenset[cst.Call] = frozenset()
    #: For a CPU factory tensor that reaches here on one path: where the tensor is on another
    #: path, when that is the device (``eye = torch.eye(n) if ref is None else torch.eye(n,
    #: device=ref.device)``) or the caller's device (UNKNOWN: an argument, what is computed from
    #: one). A factory that meets it meets that device on that path.
    elsewhere: Optional[Place] = None
    #: For an object bound differently on two paths (``model = A()`` or ``model = B()``): every
    #: class it may be an instance of, where ``type_name`` (one class on every path) is None.
    may_be: frozenset[str] = frozenset()

    @property
    def type_names(self) -> frozenset[str]:
        """Every class this object may be an instance of, as far as the paths show."""
        return frozenset((self.type_name,)) if self.type_name is not None else self.may_be

    def moved_to(self, place: Place) -> "Value":
        if place is Place.CPU:
            return replace(self, place=place, elements=None, elsewhere=None)
        return replace(
            self, place=place, origins=frozenset(), elements=None, moved_from=self.origins, elsewhere=None
        )

    @property
    def is_cpu_factory_tensor(self) -> bool:
        return self.place is Place.CPU and bool(self.origins)


UNKNOWN = Value()
DEVICE_OBJECT = Value(kind=Kind.DEVICE)
#: ``"cpu"``, ``torch.device("cpu")``: a device naming the CPU, never where ``.cuda()`` places.
CPU_DEVICE = Value(kind=Kind.DEVICE, place=Place.CPU)


def merge(first: Value, second: Value) -> Value:
    """The value a name has after two branches that bound it differently."""
    if first == second:
        return first
    kind = first.kind if first.kind == second.kind else Kind.UNKNOWN
    # A device-less factory reaching this point on one path keeps its origin unless the other
    # path moved that tensor (``if cuda: x = x.cuda()``): whatever it meets on its own path, it
    # meets as a CPU tensor (``mask = torch.ones(n) if mask is None else mask``).
    origins = first.origins | second.origins
    if origins and not origins & (first.moved_from | second.moved_from):
        return Value(
            Kind.TENSOR if Kind.UNKNOWN in (first.kind, second.kind) else kind,
            Place.CPU,
            origins,
            elsewhere=nearest_device((place_elsewhere(first), place_elsewhere(second))),
        )
    place = first.place if first.place == second.place else Place.UNKNOWN
    type_name = first.type_name if first.type_name == second.type_name else None
    may_be = frozenset() if type_name is not None else first.type_names | second.type_names
    elements = None
    if first.elements is not None and second.elements is not None and len(first.elements) == len(second.elements):
        elements = tuple(merge(a, b) for a, b in zip(first.elements, second.elements))
    elif (first.elements is None) != (second.elements is None):
        # ``if out is not None: out = (out, torch.empty(n))``: a factory in the tuple built on one
        # path still arrives on that path, as a factory bound to a name does.
        built = first.elements if first.elements is not None else second.elements
        if built is not None and any(element.origins for element in built):
            elements = tuple(merge(element, UNKNOWN) for element in built)
    # A device that is None on either path (``device=None``) may be the CPU after the merge.
    return Value(
        kind,
        place,
        type_name=type_name,
        elements=elements,
        defaults_to_cpu=first.defaults_to_cpu or second.defaults_to_cpu,
        may_be_cpu=first.may_be_cpu or second.may_be_cpu,
        may_be=may_be,
    )


def merge_call_sites(first: Value, second: Value) -> Value:
    """A parameter's value over two calls: a CPU factory passed at either call still arrives.

    Unlike two branches of one function, a device tensor at one call site does not move the
    factory passed at another.
    """
    if first.origins or second.origins:
        kind = first.kind if first.kind == second.kind else Kind.UNKNOWN
        return Value(
            kind,
            Place.CPU,
            first.origins | second.origins,
            elsewhere=nearest_device((place_elsewhere(first), place_elsewhere(second))),
        )
    return merge(first, second)


def place_elsewhere(value: Value) -> Optional[Place]:
    """The device, or the caller's device (UNKNOWN), that ``value`` has on this path or another."""
    if value.elsewhere is not None:
        return value.elsewhere
    if value.place is Place.DEVICE and value.kind in (Kind.TENSOR, Kind.UNKNOWN):
        return Place.DEVICE
    if value.place is Place.UNKNOWN and value.kind is Kind.TENSOR and not value.origins:
        return Place.UNKNOWN
    return None


def nearest_device(places: Iterable[Optional[Place]]) -> Optional[Place]:
    """Of the places paths give, the device before the caller's device; None for none."""
    found = set(places)
    if Place.DEVICE in found:
        return Place.DEVICE
    return Place.UNKNOWN if Place.UNKNOWN in found else None


def without_origins(value: Value) -> Value:
    elements = tuple(without_origins(e) for e in value.elements) if value.elements is not None else None
    return replace(value, origins=frozenset(), elements=elements)
