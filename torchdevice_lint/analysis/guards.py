"""Whether code only runs where CUDA is present: guards, CUDA-only tests, CUDA-named code.

Rules that report CUDA-specific code ask here, so that they agree on what counts as a
fallback. Everything works on the path from the module to the node (its ancestors).
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.project import CUDA_ONLY_LIBRARIES
from torchdevice_lint.analysis.tree import assignment_targets, called_name, iter_child_nodes, keyword_argument, walk

#: Words in an ``if`` test or a decorator that make it a device choice.
_DEVICE_WORDS = ("cuda", "gpu", "cpu", "device", "accelerator", "available", "mps")


def mentions_device(module: cst.Module, node: cst.CSTNode) -> bool:
    text = module.code_for_node(node).lower()
    return any(word in text for word in _DEVICE_WORDS)


def in_cuda_only_test(module: cst.Module, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside a test (or class) decorated to run only with CUDA: ``@skipIf(not cuda...)``."""
    return any(
        mentions_device(module, decorator.decorator)
        for ancestor in ancestors
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef))
        for decorator in ancestor.decorators
    )


def in_code_named_for_cuda(ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside a function or class whose name says it is about CUDA (``CUDAAccelerator``)."""
    return any(
        isinstance(ancestor, (cst.FunctionDef, cst.ClassDef))
        and any(word in ancestor.name.value.lower() for word in ("cuda", "gpu"))
        for ancestor in ancestors
    )


def under_device_check(module: cst.Module, ancestors: Sequence[cst.CSTNode]) -> bool:
    """In a conditional expression or a block under a device test (``x.cuda() if use_gpu else x``;
    not ``d if isinstance(d, torch.Tensor) else torch.tensor(d).cuda()``), or after an early exit."""
    for ancestor in ancestors:
        if isinstance(ancestor, (cst.If, cst.While, cst.IfExp)) and mentions_device(module, ancestor.test):
            return True
    return _after_early_exit(module, ancestors)


def _after_early_exit(module: cst.Module, ancestors: Sequence[cst.CSTNode]) -> bool:
    """``if not torch.cuda.is_available(): return`` (or ``assert torch.cuda.is_available()``)
    earlier in an enclosing block."""
    for index in range(len(ancestors) - 1, -1, -1):
        block = ancestors[index]
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            continue
        on_path = ancestors[index + 1] if index + 1 < len(ancestors) else None
        for earlier in block.body:
            if earlier is on_path:
                break
            if isinstance(earlier, cst.If) and mentions_device(module, earlier.test) and _exits(earlier.body):
                return True
            if isinstance(earlier, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Assert) and mentions_device(module, small.test) for small in earlier.body
            ):
                return True  # ``assert torch.cuda.is_available()``: what follows runs only with the device
        if index > 0 and isinstance(ancestors[index - 1], cst.FunctionDef):
            return False
    return False


#: Calls that never return: a test skipped or failed, the program ended.
_EXIT_CALLS = ("skip", "skipTest", "fail", "exit")


def _exits(body: cst.BaseSuite) -> bool:
    """The block ends by leaving: ``return``, ``raise``, ``continue``, ``break``, or a call that
    never returns (``pytest.skip(...)``, ``self.skipTest(...)``, ``sys.exit(...)``)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        final = last.body[-1]
        if isinstance(final, cst.Expr) and isinstance(final.value, cst.Call):
            return called_name(final.value) in _EXIT_CALLS
        return isinstance(final, (cst.Return, cst.Raise, cst.Continue, cst.Break))
    return isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break))


#: Libraries whose code paths exist only on CUDA: Triton kernels, TensorRT, PyCUDA, CuPy,
#: bitsandbytes' k-bit paths, nvdiffrast's rasterizer (a CUDA extension whose ops take CUDA
#: tensors only, with an OpenGL or CUDA context). The last two are used beside portable code in
#: a module (stable-dreamfusion's renderer imports nvdiffrast for its DMTet stage only), so only
#: the functions calling into them count.
_CUDA_ONLY_LIBRARIES = (*CUDA_ONLY_LIBRARIES, "bitsandbytes", "nvdiffrast")

#: ``torch.cuda`` calls that raise without CUDA: waiting for the GPU, its events and streams,
#: freeing CUDA IPC memory (``ipc_collect``, MPRNet's test loops). Checked on a CPU build of torch
#: 2.13 (results/17-wrong9.md); ``empty_cache``, ``memory_allocated``, ``manual_seed(_all)`` and
#: ``is_available``/``device_count`` do nothing there, and the queries below only set a process up.
_NEEDS_A_GPU = frozenset(
    f"torch.cuda.{name}"
    for name in ("synchronize", "ipc_collect", "Event", "Stream", "current_stream", "default_stream", "CUDAGraph", "graph")
)


def in_cuda_only_code(imports: ImportTable, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside code that is CUDA-only by construction: a Triton kernel (``@triton.jit``), a
    launcher (a function that calls ``kernel[grid](...)`` in a file importing Triton), a
    function that calls into ``bitsandbytes``, or any code of a module that defines a Triton
    kernel (its wrappers, autograd functions and the tests beside them reach the kernels
    through each other: unsloth's kernels/layernorm.py ``test_layernorm``). Moving it to the
    CPU cannot make it run."""
    if any(
        isinstance(node, cst.FunctionDef) and any(_needs_a_gpu(imports, call) for call in _unguarded_calls(node.body))
        for node in ancestors
    ):
        return True
    if not any(full.split(".")[0] in _CUDA_ONLY_LIBRARIES for full in imports.aliases.values()):
        return False
    imports_triton = any(full.split(".")[0] == "triton" for full in imports.aliases.values())
    module = ancestors[0] if ancestors else None
    if imports_triton and isinstance(module, cst.Module) and _defines_a_triton_kernel(imports, module):
        return True
    for node in ancestors:
        if not isinstance(node, cst.FunctionDef):
            continue
        if any(_from_cuda_only_library(imports, d.decorator) for d in node.decorators):
            return True
        for inner in walk(node.body):
            if imports_triton and isinstance(inner, cst.Call) and isinstance(inner.func, cst.Subscript):
                return True  # kernel[grid](...): a Triton launch
            if isinstance(inner, (cst.Attribute, cst.Name)) and _from_cuda_only_library(imports, inner):
                return True
    return False


def beside_cuda_only_code(imports: ImportTable, module: cst.Module) -> frozenset[cst.FunctionDef]:
    """Functions that only run together with code that waits for the GPU (`in_cuda_only_code`'s
    first kind: ``torch.cuda.synchronize()``, CUDA streams or events outside a device check), so
    making them portable cannot make the program run without CUDA: the other methods of a class
    one of whose methods waits for the GPU (timm's ``PrefetchLoader.__init__`` beside its
    CUDA-stream ``__iter__``), a module-level function that calls such a function, and one that
    only such functions call (dfdc's ``main()`` calling ``train_epoch()``, and ``validate()``
    called only from ``main()``). Those functions themselves are not included (`in_cuda_only_code`
    leaves them alone). A function handing a module to ``DistributedDataParallel`` with
    ``device_ids`` (`_wraps_for_a_gpu`, XMem's trainer), entering ``with torch.cuda.device(0):``
    (`_Entered`, PatchTST's ``test_params_flop``), or, on its main path (under no condition:
    BiSeNet's ``if 'LOCAL_RANK' in os.environ: torch.cuda.set_device(...)`` sets up only a
    distributed launch), setting the process up on a GPU (``torch.cuda.set_device(gpu_id)``,
    which raises without CUDA: semantic-segmentation-pytorch's ``eval_multipro.worker``) or
    naming two or more GPUs (``device_ids=[0, 1]``: its sync-batchnorm tests) is included, with
    what runs beside it as above."""
    waiting: set[cst.FunctionDef] = set()
    wrapping: set[cst.FunctionDef] = set()
    entered = _Entered(module)
    for function in walk(module):
        if isinstance(function, cst.FunctionDef):
            made = _unguarded_calls(function.body)
            if any(_needs_a_gpu(imports, call) for call in made):
                waiting.add(function)
            elif any(_wraps_for_a_gpu(imports, call) or entered.selects_a_gpu(imports, call) for call in made) or any(
                imports.qualified_name(call.func) in _SETS_UP_A_GPU or _names_several_gpus(call)
                for call in _default_path_calls(function.body.body, {})
            ):
                wrapping.add(function)
    if not waiting and not wrapping:
        return frozenset()
    found: set[cst.FunctionDef] = waiting | wrapping
    classes = [node for node in walk(module) if isinstance(node, cst.ClassDef)]
    functions = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    #: each module-level function: the module-level functions it calls outside a device check
    calls = {
        name: {
            call.func.value
            for call in _unguarded_calls(function.body)
            if isinstance(call.func, cst.Name) and call.func.value in functions
        }
        for name, function in functions.items()
    }
    #: each module-level function called somewhere: the functions calling it (None: module-level code)
    callers: dict[str, set[Optional[str]]] = {}
    for statement in module.body:
        caller = statement.name.value if isinstance(statement, cst.FunctionDef) else None
        for node in walk(statement):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in functions:
                callers.setdefault(node.func.value, set()).add(caller)
    changed = True
    while changed:
        changed = False
        for owner in classes:
            methods = [item for item in owner.body.body if isinstance(item, cst.FunctionDef)]
            if any(method in found for method in methods) and not all(method in found for method in methods):
                found.update(methods)
                changed = True
        for name, function in functions.items():
            if function in found:
                continue
            reached_from = callers.get(name)
            if any(functions[callee] in found for callee in calls[name]) or (
                reached_from and None not in reached_from and all(functions[c] in found for c in reached_from if c)
            ):
                found.add(function)
                changed = True
    return frozenset(found - waiting)


#: ``torch.distributed`` collectives and point-to-point calls, which hand tensors to the process
#: group's backend: NCCL's take only CUDA tensors.
_COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce", "all_gather", "all_gather_into_tensor", "reduce", "broadcast", "gather", "scatter",
        "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
    )
)


def in_nccl_collectives(imports: ImportTable, module: cst.Module) -> frozenset[cst.FunctionDef]:
    """Functions that hand tensors to a ``torch.distributed`` collective on their main path (not
    under any condition: after an early ``if world_size == 1: return``), for a project whose every
    process group is NCCL's (`ProjectView.nccl_only`): the tensors they move to CUDA must be there
    (maskrcnn-benchmark's and vq-vae-2's ``all_gather``: ``torch.ByteTensor(storage).to("cuda")``
    gathered across ranks). A collective under a condition (``if dist.is_initialized():``) leaves
    the function's other moves on the single-process path, where a portable one helps."""
    return frozenset(
        function
        for function in walk(module)
        if isinstance(function, cst.FunctionDef)
        and any(imports.qualified_name(call.func) in _COLLECTIVES for call in _default_path_calls(function.body.body, {}))
    )


def in_code_sized_by_gpu_count(imports: ImportTable, module: cst.Module) -> frozenset[cst.FunctionDef]:
    """Functions that cannot run without CUDA because they size work by the number of GPUs:
    one that binds a name (or attribute) to ``torch.cuda.device_count()``, alone or times a
    number, that divides (``n // bs``, ``/``, ``%``) or steps (``range(0, n, bs)``, ``x[::bs]``)
    somewhere, as nowhere else is it bound: 0 without CUDA, a ZeroDivisionError or ValueError
    (dgcnn's ``evaluate()``: ``args.eval_batch_size = 6 * torch.cuda.device_count()``, then
    ``input.shape[0] // args.eval_batch_size`` in the functions it calls); and the module-level
    functions only such functions call. A ``device_count() > 1`` test is no such use."""
    bound: dict[str, list[Optional[cst.FunctionDef]]] = {}
    divisors: dict[str, list[Optional[cst.FunctionDef]]] = {}
    nodes = _nodes_by_function(module)
    for owner, node in nodes:
        for target in assignment_targets(node):
            text = _EMPTY_MODULE.code_for_node(target)
            gpu_count = isinstance(node, cst.Assign) and _is_gpu_count(imports, node.value)
            bound.setdefault(text, []).append(owner if gpu_count else None)
        for divisor in _divisors(node):
            divisors.setdefault(_EMPTY_MODULE.code_for_node(divisor), []).append(owner)
    found: set[cst.FunctionDef] = set()
    for text, owners in bound.items():
        owner = owners[0]
        if owner is None or len(owners) > 1 or text not in divisors:
            continue
        if "." in text or owner in divisors[text]:  # a local divides in its own function
            found.add(owner)
    if not found:
        return frozenset()
    functions = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    callers: dict[str, set[Optional[cst.FunctionDef]]] = {}
    for owner, node in nodes:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in functions:
            callers.setdefault(node.func.value, set()).add(owner)
    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            reached_from = callers.get(name)
            if function not in found and reached_from and all(caller in found for caller in reached_from):
                found.add(function)
                changed = True
    return frozenset(found)


def _nodes_by_function(module: cst.Module) -> list[tuple[Optional[cst.FunctionDef], cst.CSTNode]]:
    """Every node of ``module`` with the innermost function holding it (None: module-level code)."""
    found: list[tuple[Optional[cst.FunctionDef], cst.CSTNode]] = []
    stack: list[tuple[Optional[cst.FunctionDef], cst.CSTNode]] = [(None, module)]
    while stack:
        owner, node = stack.pop()
        found.append((owner, node))
        inner = node if type(node) is cst.FunctionDef else owner
        stack.extend((inner, child) for child in iter_child_nodes(node))
    return found


def _is_gpu_count(imports: ImportTable, value: cst.BaseExpression) -> bool:
    """``torch.cuda.device_count()``, alone or times an integer (``6 * torch.cuda.device_count()``)."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        if isinstance(value.left, cst.Integer):
            value = value.right
        elif isinstance(value.right, cst.Integer):
            value = value.left
    return isinstance(value, cst.Call) and not value.args and imports.qualified_name(value.func) == "torch.cuda.device_count"


def _divisors(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What ``node`` divides by or steps by: the right of ``//``, ``/``, ``%`` (and their
    augmented forms), ``range``'s third argument, a slice's step."""
    if isinstance(node, (cst.BinaryOperation, cst.AugAssign)) and isinstance(
        node.operator, (cst.FloorDivide, cst.Divide, cst.Modulo, cst.FloorDivideAssign, cst.DivideAssign, cst.ModuloAssign)
    ):
        return [node.right if isinstance(node, cst.BinaryOperation) else node.value]
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" and len(node.args) == 3:
        return [node.args[2].value]
    if isinstance(node, cst.Slice) and node.step is not None:
        return [node.step]
    return []


#: ``torch.cuda`` calls that need a GPU to set the process up: choosing or reading the current
#: device, its name, properties and free memory, its memory limit and statistics, its random state.
_SETS_UP_A_GPU = frozenset(
    f"torch.cuda.{name}"
    for name in (
        "set_device", "current_device", "get_device_name", "get_device_properties", "get_device_capability",
        "mem_get_info", "set_per_process_memory_fraction", "reset_peak_memory_stats", "reset_max_memory_allocated",
        "reset_accumulated_memory_stats", "memory_summary", "init", "initial_seed", "get_rng_state",
    )
)


def process_needs_cuda(imports: ImportTable, module: cst.Module) -> bool:
    """The program cannot start without CUDA: on its default path (module-level code, the
    ``if __name__ == '__main__':`` block, and the bodies of the module-level functions that path calls),
    outside any condition but a flag the module sets to a constant (``profile = False`` ...
    ``if profile: ... else:``), it calls ``torch.distributed.init_process_group(backend="nccl")``,
    ``torch.cuda.set_device``/``current_device``, waits for the GPU (RIFE train.py's
    ``__main__``, nanoGPT bench.py's ``torch.cuda.synchronize()``) or enters ``with
    torch.cuda.device(0):``, or it ends itself when there is no GPU (DARTS' and its copies'
    ``main()``: ``if not torch.cuda.is_available(): sys.exit(1)``, a portable ``train()`` it
    calls bought nothing). Its code stays reported, without a fix."""
    flags: dict[str, bool] = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Name)
                    and small.value.value in ("True", "False")
                ):
                    flags.setdefault(small.targets[0].target.value, small.value.value == "True")
    functions = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    statements = list(_default_path_statements(module.body, flags))
    calls = _calls_of(statements)
    seen: set[str] = set()
    for call in calls:  # grows: the functions that path calls, and those they call in turn
        if isinstance(call.func, cst.Name) and call.func.value in functions and call.func.value not in seen:
            seen.add(call.func.value)
            reached = list(_default_path_statements(functions[call.func.value].body.body, {}))
            statements += reached
            calls += _calls_of(reached)
    entered = _Entered(module)
    return any(_sets_up_a_gpu(imports, call) or entered.selects_a_gpu(imports, call) for call in calls) or any(
        _stops_without_cuda(imports, statement) for statement in statements
    )


def _stops_without_cuda(imports: ImportTable, statement: cst.CSTNode) -> bool:
    """``if not torch.cuda.is_available(): sys.exit(1)`` (or ``raise``; a test of
    ``torch.cuda.device_count() == 0`` too): the program ends where there is no GPU. A test
    that asks more (``if args.cuda and not torch.cuda.is_available():``) is a user's choice, and
    ``return`` may leave the rest of the program running: neither counts."""
    if not isinstance(statement, cst.If) or statement.orelse is not None or not _tests_for_no_gpu(imports, statement.test):
        return False
    body = statement.body
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    if not isinstance(last, cst.SimpleStatementLine):
        return False
    final = last.body[-1]
    if isinstance(final, cst.Raise):
        return True
    return isinstance(final, cst.Expr) and isinstance(final.value, cst.Call) and called_name(final.value) in ("exit", "_exit", "quit")


def _tests_for_no_gpu(imports: ImportTable, test: cst.BaseExpression) -> bool:
    """``not torch.cuda.is_available()``, ``torch.cuda.device_count() == 0`` or ``< 1``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        return isinstance(inner, cst.Call) and imports.qualified_name(inner.func) == "torch.cuda.is_available"
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Call):
        target = test.comparisons[0]
        bound = target.comparator.value if isinstance(target.comparator, cst.Integer) else None
        counted = imports.qualified_name(test.left.func) == "torch.cuda.device_count"
        return counted and (
            (isinstance(target.operator, cst.Equal) and bound == "0")
            or (isinstance(target.operator, cst.LessThan) and bound == "1")
        )
    return False


def _sets_up_a_gpu(imports: ImportTable, call: cst.Call) -> bool:
    full = imports.qualified_name(call.func)
    if full in _SETS_UP_A_GPU or _needs_a_gpu(imports, call) or _wraps_for_a_gpu(imports, call):
        return True
    if full != "torch.distributed.init_process_group":
        return False
    backend = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "backend"), None)
    if backend is None and call.args and not call.args[0].keyword:
        backend = call.args[0].value
    return isinstance(backend, cst.SimpleString) and "nccl" in backend.value


def _default_path_calls(statements: Sequence[cst.CSTNode], flags: dict[str, bool]) -> list[cst.Call]:
    """The calls ``statements`` always make (see `_default_path_statements`)."""
    return _calls_of(list(_default_path_statements(statements, flags)))


def _calls_of(statements: Sequence[cst.CSTNode]) -> list[cst.Call]:
    """The calls of simple statements and of what ``with`` statements enter (``with
    torch.cuda.device(0):``), outside device checks: the compound statements' bodies are among
    ``statements`` themselves."""
    found: list[cst.Call] = []
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            found += [c for small in statement.body for c in _unguarded_calls(small)]
        elif isinstance(statement, cst.With):
            found += [call for item in statement.items for call in _unguarded_calls(item.item)]
    return found


def _default_path_statements(statements: Sequence[cst.CSTNode], flags: dict[str, bool]) -> Iterator[cst.CSTNode]:
    """``statements`` and the statements inside them that always run: not under a condition
    (but ``__name__ == '__main__'`` and a flag of ``flags``, whose branch is followed), an
    ``except`` or a nested definition."""
    for statement in statements:
        yield statement
        if isinstance(statement, cst.If):
            test = statement.test
            if "__main__" in _EMPTY_MODULE.code_for_node(test):
                yield from _default_path_statements(statement.body.body, flags)
            elif isinstance(test, cst.Name) and test.value in flags:
                if flags[test.value]:
                    yield from _default_path_statements(statement.body.body, flags)
                elif isinstance(statement.orelse, cst.Else):
                    yield from _default_path_statements(statement.orelse.body.body, flags)
        elif isinstance(statement, (cst.For, cst.With, cst.Try)):
            yield from _default_path_statements(statement.body.body, flags)


def times_with_cuda_events(imports: ImportTable, module: cst.Module) -> bool:
    """The module times GPU work with CUDA events (``torch.cuda.Event(enable_timing=True)``
    outside any device check): a GPU benchmark or profiler, whose figures mean nothing without
    one (diffusers' examples/profiling/profiling_utils.py)."""
    return any(
        imports.qualified_name(call.func) == "torch.cuda.Event"
        and any(arg.keyword is not None and arg.keyword.value == "enable_timing" for arg in call.args)
        for statement in module.body
        for call in _unguarded_calls(statement, nested=True)
    )


def _needs_a_gpu(imports: ImportTable, call: cst.Call) -> bool:
    return imports.qualified_name(call.func) in _NEEDS_A_GPU


def _wraps_for_a_gpu(imports: ImportTable, call: cst.Call) -> bool:
    """``DistributedDataParallel(module, device_ids=[rank])``: DDP raises for a module on the CPU
    when ``device_ids`` is given (XMem's trainer), so the code around it is CUDA-only."""
    return imports.qualified_name(call.func) in _DISTRIBUTED_DATA_PARALLEL and _given_devices(call)


#: ``DistributedDataParallel``, which refuses ``device_ids`` for a module on the CPU.
_DISTRIBUTED_DATA_PARALLEL = frozenset(
    {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
)


class _Entered:
    """The ``with`` statements of a module that select a GPU: ``with torch.cuda.device(0):``,
    ``torch.cuda.device("cuda:1")``, ``torch.cuda.device(torch.device("cuda"))``. Entering one
    raises without CUDA (a CPU build of torch 2.13: RuntimeError "compiled without CUDA support" for
    an index or ``'cuda:0'``, TypeError for ``'cuda'``), so the code it sits in is CUDA-only (PatchTST's
    ``with torch.cuda.device(0): get_model_complexity_info(model.cuda(), ...)``). A device read from
    data is not taken: ``x.get_device()`` is -1 for a CPU tensor, a no-op, and ``x.device``/a name is
    what device-agnostic code enters on its CUDA branch (fairseq's ``if not x.is_cuda: ... else:``);
    nor ``torch.cuda.device(0)`` made but not entered, which does nothing. The ``with`` items are
    collected only once a candidate call is met: most modules have none."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._items: Optional[set[cst.Call]] = None

    def selects_a_gpu(self, imports: ImportTable, call: cst.Call) -> bool:
        if not _names_a_gpu(imports, call) or imports.qualified_name(call.func) != "torch.cuda.device":
            return False
        if self._items is None:
            self._items = {
                item.item
                for node in walk(self._module)
                if type(node) is cst.With
                for item in node.items
                if type(item.item) is cst.Call
            }
        return call in self._items


def _names_a_gpu(imports: ImportTable, call: cst.Call) -> bool:
    """The one argument of ``call`` is a GPU written out: an index >= 0, a ``'cuda'``/``'cuda:N'``
    string or ``torch.device`` of one (``torch.device('cuda', 1)``)."""
    if len(call.args) != 1 or (call.args[0].keyword is not None and call.args[0].keyword.value != "device"):
        return False
    value = call.args[0].value
    if isinstance(value, cst.Call) and value.args and imports.qualified_name(value.func) == "torch.device":
        value = value.args[0].value
    if isinstance(value, cst.Integer):
        return True
    return isinstance(value, cst.SimpleString) and re.fullmatch(r"cuda(?::\d+)?", str(value.evaluated_value)) is not None


def _names_several_gpus(call: cst.Call) -> bool:
    """``device_ids=[0, 1]``: two or more GPU indices written out, code for several GPUs
    (``DataParallel`` quietly drops them without CUDA, but what it runs was meant for them)."""
    devices = _written_device_ids(call)
    return len(devices) >= 2 and all(isinstance(element.value, cst.Integer) for element in devices)


def _given_devices(call: cst.Call) -> bool:
    """``device_ids=[local_rank]``: a list or tuple of devices written out (a value that may be
    None, ``[rank] if cuda else None``, is not)."""
    return bool(_written_device_ids(call))


def _written_device_ids(call: cst.Call) -> Sequence[cst.BaseElement]:
    """The elements of a list or tuple written out as ``device_ids=``; none for any other value."""
    value = keyword_argument(call, "device_ids")
    return value.elements if isinstance(value, (cst.List, cst.Tuple)) else ()


def _unguarded_calls(node: cst.CSTNode, nested: bool = False) -> list[cst.Call]:
    """The calls in ``node`` outside any device check (``if torch.cuda.is_available():``, a
    conditional expression on the device), and outside nested functions and classes unless
    ``nested``."""
    found: list[cst.Call] = []
    stack = [node]
    while stack:
        current = stack.pop()
        # ``type(...) is``: this walks whole modules, and ``isinstance`` on LibCST's classes is slow
        if type(current) is cst.Call:
            found.append(current)
        elif (type(current) is cst.If or type(current) is cst.While or type(current) is cst.IfExp) and mentions_device(
            _EMPTY_MODULE, current.test
        ):
            continue
        if not nested and current is not node and type(current) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(iter_child_nodes(current))
    return found


#: Renders a node's code when its own module is not at hand (the text is the same).
_EMPTY_MODULE = cst.Module(body=[])


def _defines_a_triton_kernel(imports: ImportTable, module: cst.Module) -> bool:
    """A top-level function of ``module`` is decorated from Triton (``@triton.jit``, ``@triton.autotune``)."""
    return any(
        isinstance(statement, cst.FunctionDef)
        and any(_from_cuda_only_library(imports, d.decorator) for d in statement.decorators)
        for statement in module.body
    )


def _from_cuda_only_library(imports: ImportTable, node: cst.BaseExpression) -> bool:
    target = node.func if isinstance(node, cst.Call) else node
    name = imports.qualified_name(target) or ""
    return name.split(".")[0] in _CUDA_ONLY_LIBRARIES


def in_test_code(imports: ImportTable, ancestors: Sequence[cst.CSTNode]) -> bool:
    """A function or class named for tests, or a module importing ``pytest``, ``unittest`` or
    test utilities: tests run on one known machine and often mean their devices."""
    for node in ancestors:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and "test" in node.name.value.lower():
            return True
    return any(_imports_test_code(full) for full in imports.aliases.values())


_TEST_FRAMEWORKS = frozenset({"pytest", "unittest", "nose", "nose2", "hypothesis"})


def _imports_test_code(full: str) -> bool:
    """A test framework, a ``testing`` / ``test_util*`` module (``torch.testing``), or a leading
    ``test*`` package (``tests.helpers``). An inner ``test`` part names no test code:
    ``from model.test import im_detect`` is a project's inference module."""
    first, *inner = full.split(".")
    if first in _TEST_FRAMEWORKS or first.startswith("test"):
        return True
    return any(part == "testing" or part.startswith(("test_util", "testing_util")) for part in inner)
