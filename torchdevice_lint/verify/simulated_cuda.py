"""A pretend CUDA device for CPU-only PyTorch, and a switch that hides real CUDA.

Inside ``simulated_cuda()`` a program written for a GPU runs on a CPU-only
build: tensors "on cuda" hold real CPU values (so outputs can be compared)
while reporting ``device == cuda:0``, and every torch call checks the devices
of its tensor arguments the way CUDA kernels do. That makes the device bugs a
GPU would raise show up on a laptop or in CI.

How it works: a ``TorchFunctionMode`` sees every torch call. A tensor is "on
cuda" when its storage is in a registry of simulated-cuda storages (weakly
held), so views, ``param.data = ...`` and in-place ops keep the device without
any tensor subclass. Calls that move data (``.to``, ``.cuda``, ``.cpu``,
factories with ``device=``) copy on the CPU and register or leave out the new
storage; every other call raises if a simulated-cuda tensor meets a CPU tensor
of dim >= 1. ``torch.cuda.is_available`` and friends are patched only while
the context is open.

What the simulation covers (checked against documented CUDA behaviour):
  * ``t.device`` / ``t.is_cuda`` / ``t.is_cpu`` / ``t.get_device()`` report cuda:0;
    ``torch.cuda.is_available()`` is True, ``device_count()`` 1,
    ``current_device()`` 0; ``synchronize``, ``manual_seed(_all)``,
    ``set_device(0)``, ``empty_cache`` are harmless; ``torch.accelerator`` says cuda.
  * One GPU: ``cuda:1``, ``.cuda(1)``, ``.to(1)``, ``torch.cuda.set_device(1)``
    and ``map_location="cuda:1"`` raise ``CUDA error: invalid device ordinal``,
    as on a one-GPU machine; ``nn.DataParallel`` runs its one-device path
    (inputs moved to cuda:0, the module called once).
  * ``.cuda()``, ``.cuda(0)``, ``.to("cuda")``, ``.to("cuda:0")``,
    ``.to(torch.device("cuda"))``, ``.to(other_tensor)``, ``non_blocking=``,
    factories and ``*_like`` / ``new_*`` with a cuda ``device=``,
    ``with torch.device("cuda"):`` and ``torch.set_default_device("cuda")``.
  * Mixing a cuda tensor with a CPU tensor of dim >= 1 raises ``RuntimeError:
    Expected all tensors to be on the same device, but found at least two
    devices, cuda:0 and cpu!``; 0-dim CPU tensors and Python scalars pass;
    a CPU index may index a cuda tensor, a cuda index on a CPU tensor raises;
    ``copy_`` and basic-slice assignment may cross devices, as on a GPU.
  * ``.numpy()`` on cuda raises the GPU's TypeError; ``.cpu()``, ``.item()``,
    ``.tolist()`` work.
  * ``nn.Module.to/.cuda`` move parameters and buffers in place (same
    ``Parameter`` objects, so optimizers built before still work), autograd,
    ``.grad``, optimizers, ``state_dict`` / ``load_state_dict``,
    ``torch.save`` (stores CPU values) and ``torch.load(map_location=...)``.

What only a real GPU proves:
  * CUDA kernels and their numerics (every op runs the CPU kernel), TF32,
    cuDNN algorithm choice, autocast/AMP (ops stay in their own dtype).
  * CUDA random numbers: ``torch.randn(..., device="cuda")`` draws from the
    CPU generator here, so it differs from a GPU; draw on the CPU, then move.
  * Streams, asynchronous execution, ``non_blocking`` races, events, CUDA
    graphs, ``torch.compile`` on GPU, memory limits (OOM) and memory stats.
  * Several GPUs: replicas, gather, NCCL, ``DistributedDataParallel`` on the
    GPU; the simulated machine has one GPU.
  * pinned memory (``pin_memory()`` copies on the CPU), ``torch.cuda.*Tensor``
    legacy types, ``torch.Generator("cuda")``, sparse tensors' devices.
  * ``torch.load`` without ``map_location`` of a checkpoint saved inside the
    simulation gives CPU tensors (a GPU would restore them to cuda).
  * Code run inside autograd (hooks, custom ``Function.backward``) and inside
    torch's own Python functions is not device-checked, only their inputs.
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from typing import Any, Callable, Iterator
from unittest import mock

import torch
from torch.nn.parameter import UninitializedTensorMixin  # type: ignore[attr-defined]  # public, missing from the stubs
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack
from torch.utils._device import DeviceContext, _device_constructors
from torch.utils._pytree import tree_leaves, tree_map

_data_parallel = importlib.import_module("torch.nn.parallel.data_parallel")  # the package hides it

SIMULATED_DEVICE = torch.device("cuda", 0)  # noqa: TDL002
MISMATCH_MESSAGE = (
    "Expected all tensors to be on the same device, but found at least two "
    "devices, cuda:0 and cpu!"
)
NUMPY_MESSAGE = (
    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to "
    "copy the tensor to host memory first."
)
INVALID_ORDINAL_MESSAGE = "CUDA error: invalid device ordinal"
CUDA_INDEX_ON_CPU_MESSAGE = (
    "indices should be either on cpu or on the same device as the indexed "
    "tensor (cpu)"
)

_Tensor = torch._C.TensorBase


class _CudaStorages:
    """Which CPU storages stand for cuda memory; weak, so freed memory is forgotten."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    @staticmethod
    def _storage(tensor: torch.Tensor) -> Any:
        with torch._C.DisableTorchFunction():
            try:
                return tensor.untyped_storage()
            except (RuntimeError, NotImplementedError):  # sparse, nested...
                return None

    def add(self, tensor: torch.Tensor) -> None:
        storage = self._storage(tensor)
        if storage is not None:
            self._refs[storage._cdata] = weakref.ref(storage)

    def __contains__(self, tensor: object) -> bool:
        if not isinstance(tensor, torch.Tensor):
            return False
        storage = self._storage(tensor)
        if storage is None:
            return False
        ref = self._refs.get(storage._cdata)
        if ref is None:
            return False
        if ref() is not storage:  # the address was reused by new memory
            del self._refs[storage._cdata]
            return False
        return True


def _as_device(value: Any) -> torch.device | None:
    """The device a ``.to``/factory argument names, or None if it names none."""
    if isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        try:
            return torch.device(value)
        except RuntimeError:
            return None
    if _is_index(value):
        return torch.device("cuda", value)
    return None


def _on_the_one_gpu(device: torch.device | None) -> torch.device | None:
    """``device``, after checking that a machine with one GPU has it (``cuda:1`` it has not)."""
    if device is not None and device.type == "cuda" and device.index not in (None, 0):
        raise RuntimeError(INVALID_ORDINAL_MESSAGE)
    return device


def _tensors_in(tree: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_leaves(tree) if isinstance(leaf, torch.Tensor)]


def _is_batch_sizes(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dim() == 1 and value.dtype == torch.int64


def _default_device() -> torch.device | None:
    """The device ``torch.set_default_device`` chose, if any.

    Its mode sits below this one on the stack, so it would hand factories a
    cuda device only after this mode had looked at them.
    """
    for mode in reversed(_get_current_function_mode_stack()):
        if isinstance(mode, DeviceContext):
            return mode.device
    return None


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _getset_name(func: Callable) -> str | None:
    """'device' for ``Tensor.device.__get__`` and the like, else None."""
    descriptor: Any = getattr(func, "__self__", None)
    if type(descriptor).__name__ == "getset_descriptor" and func.__name__ in ("__get__",
                                                                              "__set__"):
        return f"{descriptor.__name__}.{func.__name__}"
    return None


class _SimulatedCudaMode(TorchFunctionMode):
    """Runs every torch call on the CPU while tracking and checking cuda tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.cuda = _CudaStorages()
        self._methods: dict[Any, Callable] = {
            _Tensor.to: self._to,
            _Tensor.cuda: self._cuda,
            _Tensor.cpu: self._cpu,
            _Tensor.numpy: self._numpy,
            torch.Tensor.__array__: self._numpy,
            _Tensor.get_device: lambda func, t: 0 if t in self.cuda else func(t),
            _Tensor.pin_memory: self._pin_memory,
            _Tensor.__getitem__: self._getitem,
            _Tensor.__setitem__: self._setitem,
            torch._C._nn._parse_to: self._parse_to,
        }
        # Calls that may legally take tensors from both devices.
        self._cross_device = {
            _Tensor.copy_,
            torch._has_compatible_shallow_copy_type,  # metadata only
            _Tensor.is_same_size,
            _Tensor.is_set_to,
        }
        # Packed sequences keep lengths / batch_sizes (a 1-D int64 second
        # argument) on the CPU next to cuda data; these calls take or return them.
        self._packed_sequence_ops = {
            torch._pack_padded_sequence, torch._pad_packed_sequence,
            torch.gru, torch.lstm, torch.rnn_tanh, torch.rnn_relu,
        }
        self._properties: dict[str, Callable] = {
            "device.__get__": lambda t: SIMULATED_DEVICE if t in self.cuda else None,
            "is_cuda.__get__": lambda t: True if t in self.cuda else None,
            "is_cpu.__get__": lambda t: False if t in self.cuda else None,
        }

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        prop = _getset_name(func)
        if prop is not None:
            return self._property(prop, func, args)
        method = self._methods.get(func)
        if method is not None:
            return method(func, *args, **kwargs)
        return self._generic(func, args, kwargs)

    # -- tracking -------------------------------------------------------------

    def mark(self, result: Any) -> Any:
        """Register every tensor in ``result`` as living on cuda."""
        for tensor in _tensors_in(result):
            self.cuda.add(tensor)
        return result

    def _check_same_device(self, tensors: list[torch.Tensor]) -> None:
        # Lazy modules' placeholders carry no data to check yet.
        tensors = [t for t in tensors if not isinstance(t, UninitializedTensorMixin)]
        on_cuda = any(t in self.cuda for t in tensors)
        on_cpu = any(
            t not in self.cuda and t.device.type == "cpu" and t.dim() > 0 for t in tensors
        )
        if on_cuda and on_cpu:
            raise RuntimeError(MISMATCH_MESSAGE)

    # -- handlers -------------------------------------------------------------

    def _generic(self, func, args, kwargs):
        tensors = _tensors_in((args, kwargs))
        if func in self._packed_sequence_ops and _is_batch_sizes(args[1]):
            return self._packed_sequence_op(func, args, kwargs)
        if kwargs.get("device") is None and func in _device_constructors():
            kwargs["device"] = _default_device()
        target = _on_the_one_gpu(_as_device(kwargs.get("device")))
        if target is not None and target.type == "cuda":
            kwargs["device"] = "cpu"
        if target is None and func not in self._cross_device:
            self._check_same_device(tensors)
        result = func(*args, **kwargs)
        if target is not None:
            to_cuda = target.type == "cuda"
        else:
            to_cuda = any(t in self.cuda for t in tensors)
        if to_cuda:
            self._mark_new_tensors(result, inputs=tensors)
        return result

    def _mark_new_tensors(self, result: Any, inputs: list[torch.Tensor]) -> None:
        """Mark the results as cuda, except those aliasing a CPU input (views, in-place)."""
        storage = self.cuda._storage
        cpu_inputs = {id(storage(t)) for t in inputs if t not in self.cuda}
        for tensor in _tensors_in(result):
            if storage(tensor) is not None and id(storage(tensor)) not in cpu_inputs:
                self.cuda.add(tensor)

    def _packed_sequence_op(self, func, args, kwargs):
        """Check and run the call without its CPU lengths; they come back on the CPU."""
        self._check_same_device(_tensors_in((args[0], args[2:], kwargs)))
        result = func(*args, **kwargs)
        if args[0] not in self.cuda:
            return result
        if func in (torch._pack_padded_sequence, torch._pad_packed_sequence):
            return self.mark(result[0]), result[1]
        return self.mark(result)

    def _property(self, name, func, args):
        if name == "data.__set__":  # param.data = other: crossing devices is allowed
            return func(*args)
        if name == "grad.__get__":  # a gradient lives where its tensor lives
            grad = func(*args)
            if grad is not None and args[0] in self.cuda:
                self.cuda.add(grad)
            return grad
        simulated = self._properties.get(name)
        answer = simulated(args[0]) if simulated is not None else None
        return func(*args) if answer is None else answer

    def _to(self, func, tensor, *args, **kwargs):
        args = list(args)
        if args and isinstance(args[0], torch.Tensor):  # .to(other, non_blocking, copy)
            other, flags = args[0], args[1:]
            kwargs.update(zip(("non_blocking", "copy"), flags), dtype=other.dtype)
            kwargs["device"] = SIMULATED_DEVICE if other in self.cuda else other.device
            args = []
        target = None
        for i, arg in enumerate(args):
            if _as_device(arg) is not None:
                target, args[i] = _on_the_one_gpu(_as_device(arg)), "cpu"
        if "device" in kwargs and kwargs["device"] is not None:
            target, kwargs["device"] = _on_the_one_gpu(_as_device(kwargs["device"])), "cpu"
        if target is not None and target.type not in ("cuda", "cpu"):
            return func(tensor, *args, **kwargs)  # meta, mps...: leave to torch
        source_cuda = tensor in self.cuda
        target_cuda = source_cuda if target is None else target.type == "cuda"
        if source_cuda != target_cuda:
            kwargs["copy"] = True
        result = func(tensor, *args, **kwargs)
        return self.mark(result) if target_cuda else result

    def _cuda(self, func, tensor, device=None, non_blocking=False, **kwargs):
        _on_the_one_gpu(_as_device(device))
        if tensor in self.cuda:
            return tensor
        kwargs.pop("memory_format", None)
        return self.mark(tensor.to("cpu", non_blocking=non_blocking, copy=True))

    def _cpu(self, func, tensor, **kwargs):
        if tensor in self.cuda:
            return tensor.to("cpu", copy=True)
        return func(tensor, **kwargs)

    def _numpy(self, func, tensor, *args, **kwargs):
        if tensor in self.cuda and not kwargs.get("force", False):
            raise TypeError(NUMPY_MESSAGE)
        return func(tensor, *args, **kwargs)

    def _pin_memory(self, func, tensor, *args, **kwargs):
        if tensor in self.cuda:
            raise RuntimeError(
                "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"
            )
        return tensor.clone()  # pinned memory is still CPU memory

    def _parse_to(self, func, *args, **kwargs):
        """``Module.to(0)``: an int means a cuda index, which a CPU build rejects."""
        args = [torch.device("cuda", a) if _is_index(a) else a for a in args]
        if _is_index(kwargs.get("device")):
            kwargs["device"] = torch.device("cuda", kwargs["device"])
        parsed = func(*args, **kwargs)
        _on_the_one_gpu(parsed[0])
        return parsed

    def _check_index(self, tensor, index):
        indices = [x for x in tree_leaves(index) if isinstance(x, torch.Tensor)]
        if tensor not in self.cuda and any(i in self.cuda for i in indices):
            raise RuntimeError(CUDA_INDEX_ON_CPU_MESSAGE)
        return indices

    def _getitem(self, func, tensor, index):
        self._check_index(tensor, index)
        result = func(tensor, index)
        return self.mark(result) if tensor in self.cuda else result

    def _setitem(self, func, tensor, index, value):
        advanced = self._check_index(tensor, index)
        if advanced and isinstance(value, torch.Tensor) and value.dim() > 0:
            if (value in self.cuda) != (tensor in self.cuda):
                raise RuntimeError(MISMATCH_MESSAGE)
        return func(tensor, index, value)  # basic slicing copies, which may cross devices


def _load_with_simulated_map_location(real_load: Callable, mode: _SimulatedCudaMode) -> Callable:
    """``torch.load(..., map_location="cuda")``: load on the CPU, then mark as cuda."""

    def load(*args, **kwargs):
        target = _on_the_one_gpu(_as_device(kwargs.get("map_location")))
        if target is None or target.type != "cuda":
            return real_load(*args, **kwargs)
        kwargs["map_location"] = "cpu"
        return mode.mark(real_load(*args, **kwargs))

    return load


class _SimulatedStream:
    """The one stream of the simulated device: everything already ran, in order."""

    device = SIMULATED_DEVICE

    def is_capturing(self) -> bool:
        return False

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass


def _returning(value: Any) -> Callable:
    """A fresh stand-in function per patched name: torch._dynamo, if imported
    inside the context, indexes torch functions by identity and rejects one
    object standing for two of them."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        return value

    return stand_in


def _patch_cuda_queries(stack: contextlib.ExitStack, available: bool) -> None:
    """Make ``torch.cuda`` and ``torch.accelerator`` answer as if a GPU is (not) there."""
    count = 1 if available else 0
    patches: dict[Any, dict[str, Any]] = {
        torch.cuda: {"is_available": available, "device_count": count},
        torch.accelerator: {
            "is_available": available,
            "device_count": count,
            "current_accelerator": SIMULATED_DEVICE if available else None,
        },
    }
    if available:
        for name in ("synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all",
                     "empty_cache"):
            patches[torch.cuda][name] = None
        patches[torch.cuda]["current_device"] = 0
        patches[torch.cuda]["get_device_name"] = "Simulated CUDA device (CPU values)"
        patches[torch.cuda]["current_stream"] = _SimulatedStream()
        patches[torch.cuda]["is_current_stream_capturing"] = False
        patches[torch.accelerator].update(
            current_device_index=0,
            synchronize=None,
            set_device_index=None,
            current_stream=_SimulatedStream(),
        )
    for module, names in patches.items():
        for name, value in names.items():
            if hasattr(module, name):
                stack.enter_context(mock.patch.object(module, name, _returning(value)))
    if available:
        stack.enter_context(mock.patch.object(torch.cuda, "set_device", _set_device))


def _set_device(device: Any) -> None:
    """``torch.cuda.set_device``: only the one GPU can be chosen."""
    _on_the_one_gpu(_as_device(device))


def _check_ordinals(device_ids: Any) -> None:
    for device in device_ids:
        _on_the_one_gpu(_as_device(device))


def _scatter_to_the_one_gpu() -> Callable:
    """``DataParallel``'s scatter on a machine with one GPU: every input moves to ``cuda:0``.

    The real scatter calls CUDA's copy kernels directly; with one device it hands the module
    the inputs, moved, as a single chunk.
    """

    def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
        _check_ordinals(target_gpus)

        def move(tree: Any) -> Any:
            return tree_map(lambda leaf: leaf.cuda() if isinstance(leaf, torch.Tensor) else leaf, tree)

        return (move(tuple(inputs)),), (move(dict(kwargs or {})),)

    return scatter_kwargs


@contextlib.contextmanager
def simulated_cuda() -> Iterator[_SimulatedCudaMode]:
    """Run the block as if a CUDA GPU were present, on CPU values."""
    mode = _SimulatedCudaMode()
    with contextlib.ExitStack() as stack:
        _patch_cuda_queries(stack, available=True)
        stack.enter_context(
            mock.patch.object(torch, "load", _load_with_simulated_map_location(torch.load, mode))
        )
        stack.enter_context(
            mock.patch.object(_data_parallel, "scatter_kwargs", _scatter_to_the_one_gpu())
        )
        # DataParallel compares the GPUs' properties; one GPU is always balanced.
        stack.enter_context(mock.patch.object(_data_parallel, "_check_balance", _check_ordinals))
        stack.enter_context(mode)
        yield mode


@contextlib.contextmanager
def hidden_cuda() -> Iterator[None]:
    """Run the block as on a laptop: ``torch.cuda.is_available()`` is False.

    In a fresh process also set ``CUDA_VISIBLE_DEVICES=""`` before importing
    torch, so that a real GPU is hidden from torch's C++ side too.
    """
    with contextlib.ExitStack() as stack:
        _patch_cuda_queries(stack, available=False)
        yield
