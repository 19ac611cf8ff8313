"""The semantics of torch calls as pure functions: where a ``device=`` argument puts a
tensor, which factories make 0-dim tensors, what an operation on several operands gives."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.devices import DEVICE_NAME_HINTS, looks_like_device_name, parse_device
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.tree import called_name, keyword_argument, positional_arguments, string_value
from torchdevice_lint.analysis.values import UNKNOWN, Kind, Place, Value, nearest_device


# ------------------------------------------------------------------ helpers
def device_argument_place(node: cst.BaseExpression, values: dict) -> Place:
    """Where ``device=node`` (or ``.to(node)``) puts a tensor."""
    text = string_value(node)
    if text is not None:
        if text.startswith("cpu"):
            return Place.CPU
        return Place.DEVICE if parse_device(text) is not None else Place.UNKNOWN
    if isinstance(node, cst.Call) and node.args:
        inner = string_value(node.args[0].value)
        if inner is not None and inner.startswith("cpu"):
            return Place.CPU
    if isinstance(node, cst.Attribute) and node.attr.value == "device" and node.value in values:
        owner = values[node.value]
        if owner.kind is Kind.TENSOR or owner.place is not Place.UNKNOWN:
            return owner.place
    device = values.get(node, UNKNOWN)
    if device.kind is Kind.DEVICE:
        if device.defaults_to_cpu:
            return Place.UNKNOWN
        return Place.DEVICE if device.place is Place.UNKNOWN else device.place
    if isinstance(node, cst.Name) and looks_like_device_name(node.value):
        return Place.DEVICE
    if device.kind is Kind.UNKNOWN and _own_device_attribute(node):
        # ``.to(self._device)`` with the attribute set in a base class of another file (ART's
        # estimators): the object's device, the run's device as ``.to(device)`` is.
        return Place.DEVICE
    return Place.UNKNOWN


def _own_device_attribute(node: cst.BaseExpression) -> bool:
    """``self._device``, ``self.estimator._device``: the device attribute of the object whose
    method this is (``device`` itself reads as a tensor's or module's device). Not a device
    for a purpose (``self._cpu_device``, ``self.offload_device``)."""
    if not isinstance(node, cst.Attribute) or node.attr.value.lstrip("_") not in DEVICE_NAME_HINTS:
        return False
    root = node.value
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value == "self"


def is_zero_dim_factory(call: cst.Call, qualified: str) -> bool:
    """0-dim CPU tensors may meet CUDA tensors; a rank we cannot see counts as 0-dim too."""
    positional = positional_arguments(call)
    if qualified in torch_api.DATA_FACTORIES:
        data = positional[0] if positional else keyword_argument(call, "data")
        is_sequence = isinstance(data, (cst.List, cst.Tuple)) and bool(data.elements)
        # ``torch.tensor(x[begin:end])``: a slice of an array or a sequence is one too, of rank 1
        # or more (ART's feature adversaries, edccfbfdfb).
        sliced = isinstance(data, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in data.slice)
        # ``torch.tensor(range(N, 0, -1))``: a range is a sequence (pyro's autocorrelation, d52e215af9).
        ranged = isinstance(data, cst.Call) and isinstance(data.func, cst.Name) and data.func.value == "range"
        return not (is_sequence or sliced or ranged or isinstance(data, cst.ListComp))
    if qualified == "torch.from_numpy":
        return False
    size = positional[0] if positional else keyword_argument(call, "size")
    if qualified in _SIZE_FIRST_FACTORIES and isinstance(size, cst.Integer) and size.value == "0":
        return True  # ``torch.empty(0)``: a placeholder to be replaced before use
    return isinstance(size, (cst.Tuple, cst.List)) and not size.elements


_SIZE_FIRST_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})


def combine(values: Sequence[Value]) -> Value:
    """The value of an operation on several operands: tensors win, the device wins."""
    tensors = [value for value in values if value.kind is Kind.TENSOR]
    placed = [value.place for value in values if value.kind is Kind.TENSOR or value.place is Place.DEVICE]
    if Place.DEVICE in placed:
        return Value(Kind.TENSOR if tensors else Kind.UNKNOWN, Place.DEVICE)
    if not tensors:
        return UNKNOWN
    if all(place is Place.CPU for place in placed):
        return Value(
            Kind.TENSOR,
            Place.CPU,
            frozenset().union(*(value.origins for value in tensors)),
            elsewhere=nearest_device(value.elsewhere for value in tensors),
        )
    return Value(Kind.TENSOR)


def as_index(value: Value) -> Value:
    """What an index tensor brings to the subscript it indexes (``x[i, j]``, ``x[i] = v``): its
    place, not its factories. An index may stay on the CPU whatever device ``x`` is on, next to a
    device index too (``gpu_t[cpu_idx, gpu_idx]``); only ``x`` (a device index into a CPU ``x``
    raises) and an assigned value meet the others there."""
    if not (value.origins or value.scalar_origins):
        return value
    return replace(value, origins=frozenset(), scalar_origins=frozenset())


def tensor_arguments(argument_values, values: dict, lengths_allowed: bool = True):
    """The (expression, value) pairs passed to a call, looking into list and tuple literals."""
    for arg, value in argument_values:
        if not lengths_allowed and looks_like_lengths(arg):
            continue
        if isinstance(arg.value, (cst.List, cst.Tuple)):
            for element in arg.value.elements:
                yield element.value, values.get(element.value, UNKNOWN)
        else:
            yield arg.value, value


def looks_like_lengths(arg: cst.Arg) -> bool:
    """Sequence lengths must stay on the CPU for packing: never ask to move them."""
    names = [arg.keyword.value] if arg.keyword is not None else []
    if isinstance(arg.value, cst.Name):
        names.append(arg.value.value)
    return any("len" in name.lower() for name in names)


def owns_parameters(type_name: str) -> bool:
    return any(word in type_name for word in torch_api.PARAMETER_MODULE_WORDS)


def only_slices(node: cst.Subscript) -> bool:
    """``x[:n]``, ``x[None, :]``: the rank is kept. An integer index may make a 0-dim tensor."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and not (
            isinstance(index.value, cst.Name) and index.value.value == "None" or isinstance(index.value, cst.Ellipsis)
        ):
            return False
    return True


def compares_two_tensors(qualified: str, argument_values) -> bool:
    """``torch.max(zero, scores)``: two tensors compared elementwise, not a reduction over a dim."""
    return qualified.rsplit(".", 1)[-1] in torch_api.ELEMENTWISE_WHEN_GIVEN_A_TENSOR and given_a_tensor(argument_values, 1)


def compares_across_devices(call: cst.Call, qualified: Optional[str]) -> bool:
    """``torch.allclose(out, expected)``, ``assert_close(out, expected)`` (torch's, or a test
    suite's wrapper of it, ``self.assert_close``): a comparison that refuses two devices."""
    if qualified in torch_api.DEVICE_CHECKING_COMPARISONS:
        return True
    return called_name(call) in torch_api.TEST_COMPARISON_NAMES and not (qualified or "").startswith(("numpy.", "np."))


def given_a_tensor(argument_values, index: int) -> bool:
    """The positional argument at ``index`` (or ``other=``) is a tensor."""
    positional = [value for arg, value in argument_values if arg.keyword is None and not arg.star]
    keyword = [value for arg, value in argument_values if arg.keyword is not None and arg.keyword.value == "other"]
    candidates = positional[index : index + 1] or keyword
    return bool(candidates) and candidates[0].kind is Kind.TENSOR


def reduces_to_zero_dim(call: cst.Call, qualified: str) -> bool:
    """``torch.sum(x)``: a full reduction, given no dimension."""
    return (
        qualified.rsplit(".", 1)[-1] in torch_api.FULL_REDUCTIONS
        and len(positional_arguments(call)) == 1
        and keyword_argument(call, "dim") is None
    )


def names_a_dtype(node: cst.BaseExpression) -> bool:
    """``x.dtype``, ``dtype``, ``self.compute_dtype``: a conversion to a dtype, not a move."""
    name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
    return name == "dtype" or name.endswith("_dtype")


def literal_place(node: cst.BaseExpression, imports: ImportTable) -> Place:
    """Where a device written out names: ``"cpu"``/``torch.device("cpu")`` the CPU, ``"cuda"``
    (any accelerator) the device; anything else unknown."""
    if isinstance(node, cst.Call) and imports.qualified_name(node.func) == "torch.device" and node.args:
        node = node.args[0].value
    text = string_value(node)
    if text is None:
        return Place.UNKNOWN
    if text.startswith("cpu"):
        return Place.CPU
    return Place.DEVICE if parse_device(text) is not None else Place.UNKNOWN


def legacy_cpu_factory(node: cst.Call, qualified: str) -> bool:
    """A CPU legacy constructor given two or more sizes (``torch.FloatTensor(N, 1)``), which it
    only accepts as sizes: the ``torch.empty`` TDL006 makes of it."""
    return (
        not qualified.startswith("torch.cuda.")
        and len(node.args) >= 2
        and all(arg.keyword is None and not arg.star for arg in node.args)
    )


#: Libraries whose functions take tensors to read them on the host (or not at all).
_HOST_LIBRARIES = frozenset(
    {"numpy", "scipy", "cv2", "PIL", "matplotlib", "pandas", "sklearn", "tqdm", "wandb", "tensorboardX", "pytest"}
)


def computed_where(qualified: Optional[str], argument_values) -> Place:
    """Where an imported function or module of another file (``warp_affine(image, matrix)``,
    ``RandomMixUp()(images, labels)``) puts what it computes from the tensors it is given: on
    the device when one of them is there and none is on the CPU; it works on the caller's
    device, as the device-agnostic contract asks of every function. Not said of the standard
    library, of host-side libraries (NumPy, plotting, logging) or of unimported names."""
    if qualified is None:
        return Place.UNKNOWN
    root = qualified.split(".", 1)[0]
    if root in sys.stdlib_module_names or root in _HOST_LIBRARIES:
        return Place.UNKNOWN
    places = {value.place for _, value in argument_values if value.kind is Kind.TENSOR or value.place is Place.DEVICE}
    return Place.DEVICE if Place.DEVICE in places and Place.CPU not in places else Place.UNKNOWN
