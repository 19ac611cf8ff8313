"""The analysis every rule asks: computed once per file, before the rules run."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.binding import DeviceBinder, DeviceChoice, bound_before
from torchdevice_lint.analysis.contract import asserts_cpu_tensor, is_data_loading, only_test_code_uses, runs_on_cpu
from torchdevice_lint.analysis.evidence import is_type_test
from torchdevice_lint.analysis.flow import FlowAnalysis, Scope
from torchdevice_lint.analysis.guards import (
    beside_cuda_only_code,
    in_code_sized_by_gpu_count,
    in_cuda_only_code,
    in_nccl_collectives,
    in_test_code,
    process_needs_cuda,
    times_with_cuda_events,
)
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.project import EMPTY_INDEX, ProjectClass, ProjectIndex, ProjectView
from torchdevice_lint.analysis.receivers import Receiver, ReceiverJudge
from torchdevice_lint.analysis.scopes import Meeting
from torchdevice_lint.analysis.tree import assignment_targets, reads_parameter, self_attribute, walk
from torchdevice_lint.analysis.values import UNKNOWN, Kind, Place, Value

if TYPE_CHECKING:  # settings imports the rules, which import this package
    from torchdevice_lint.settings import Settings

#: Stands for a value the derivation does not follow: it reads no name.
_UNFOLLOWED = cst.Integer("0")
#: Words of the text without which no ``torch.cuda`` call sets the process up on the GPU
#: (`guards.process_needs_cuda`, its ``_SETS_UP_A_GPU``): a fast test before the walk.
_SETUP_WORDS = (
    "nccl", "set_device", "current_device", "get_device_", "mem_get_info", "memory_fraction", "reset_",
    "memory_summary", "cuda.init", "initial_seed", "get_rng_state",
)

__all__ = [
    "FileAnalysis", "DeviceChoice", "Kind", "Place", "Value", "Meeting", "ProjectClass", "ProjectIndex", "Receiver",
]


class CallerMeeting(NamedTuple):
    """A factory meeting a tensor on the caller's device."""

    #: The tensor it meets.
    partner: str
    #: The tensor whose device a fix gives the factory; None when none is in scope there.
    source: Optional[str]
    #: The method where they meet, when it is not the factory's own (state kept on ``self``).
    method: Optional[cst.FunctionDef] = None


class FileAnalysis:
    """Facts about one parsed file: imports, kinds and places of values, device bindings."""

    def __init__(
        self,
        module: cst.Module,
        settings: Optional[Settings] = None,
        source_text: Optional[str] = None,
        project: Optional[ProjectIndex] = None,
        path: Optional[str] = None,
    ) -> None:
        """``source_text`` is the module's code when the caller already holds it: rebuilding
        it from the tree costs about a sixth of the whole analysis. ``project`` indexes the
        other files of the walked project and ``path`` is this file's place among them; without
        them the file is judged alone."""
        self.module = module
        self.imports = ImportTable()
        text = source_text if source_text is not None else module.code
        #: Whether the text times work with events at all: the walk that tells whether it times GPU
        #: work cost every file asked about CUDA-only code a walk of its whole tree.
        self._mentions_timing = "enable_timing" in text
        #: Whether the text may wait for the GPU at all (``torch.cuda.synchronize()``, streams, events),
        #: hand a module's devices to ``DistributedDataParallel`` or enter ``torch.cuda.device(0)``.
        self._mentions_waiting = any(
            word in text
            for word in (
                "synchronize", "ipc_collect", "Stream", "stream(", "Event", "CUDAGraph", "graph(", "device_ids",
                "cuda.device(",
            )
        )
        #: Whether the text may call a ``torch.cuda`` query that sets the process up on the GPU.
        self._mentions_setup_calls = any(word in text for word in _SETUP_WORDS)
        #: Whether the text may set the process up on the GPU or end it without one
        #: (`guards.process_needs_cuda`).
        self._mentions_setup = (
            self._mentions_waiting
            or self._mentions_setup_calls
            or (("is_available" in text or "device_count" in text) and ("exit(" in text or "raise" in text))
        )
        #: Whether the text may call ``torch.distributed`` collectives (`guards.in_nccl_collectives`).
        self._mentions_collectives = any(
            word in text for word in ("reduce", "gather", "broadcast", "scatter", "all_to_all", "send(", "recv(")
        )
        #: Whether the text may size work by the number of GPUs (`guards.in_code_sized_by_gpu_count`).
        self._mentions_gpu_count = "device_count" in text
        #: Classes of the project's files, seen from this one (see `analysis.project`).
        self.project = ProjectView(project or EMPTY_INDEX, path, text)
        self.flow = FlowAnalysis(module, self.imports, text, self.project)
        #: The run's settings (None: the defaults), for rules that read more than the binding.
        self.settings = settings
        self.binder = (
            DeviceBinder(
                self.flow, self.imports, settings.device_style, settings.device_name, settings.lines_after_imports
            )
            if settings is not None
            else DeviceBinder(self.flow, self.imports)
        )
        #: The fixes about to be applied give this file a CPU fallback it lacks today (the device
        #: line, a conditional device): set by the engine, which knows the fixes; rules that judge
        #: whether a file runs without an accelerator read it, so check reports what fix changes.
        self.cpu_fallback_coming = False
        self._meetings_by_origin: Optional[dict[cst.Call, Meeting]] = None
        self._unplaced_by_origin: Optional[dict[cst.Call, list[Meeting]]] = None
        self._argument_derived: dict[cst.FunctionDef, dict[str, str]] = {}
        self._rebound_later: dict[cst.FunctionDef, dict[str, int]] = {}

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualified_name(node)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.flow.values.get(node, UNKNOWN)

    def in_cuda_only_code(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        """Whether the code at the end of ``ancestors`` is CUDA-only by construction: see
        `guards.in_cuda_only_code`, and all of a module built on CUDA-only libraries (through
        the project: it imports Triton, TensorRT or PyCUDA, or a module of the project that
        does) or timing GPU work with CUDA events."""
        return self._cuda_only_module or in_cuda_only_code(self.imports, ancestors)

    def beside_cuda_only_code(self, ancestors: Sequence[cst.CSTNode]) -> bool:
        """Whether the code at the end of ``ancestors`` only runs with code that waits for the
        GPU (`guards.beside_cuda_only_code`), in a function that divides by the number of GPUs
        (`guards.in_code_sized_by_gpu_count`), in one handing tensors to collectives of a project
        whose process groups are all NCCL's (`guards.in_nccl_collectives`), or in a module using project code that refuses
        tensors off CUDA (`ProjectView.uses_cuda_only_code`): its findings stay reported, without a fix."""
        if self._process_needs_cuda or self.project.uses_cuda_only_code:
            return True
        functions = self._beside_cuda_only
        return bool(functions) and any(node in functions for node in ancestors if isinstance(node, cst.FunctionDef))

    @functools.cached_property
    def _process_needs_cuda(self) -> bool:
        return self._mentions_setup and process_needs_cuda(self.imports, self.module)

    @functools.cached_property
    def _beside_cuda_only(self) -> frozenset[cst.FunctionDef]:
        gated = self._mentions_waiting or self._mentions_setup_calls
        beside = beside_cuda_only_code(self.imports, self.module) if gated else frozenset()
        sized = in_code_sized_by_gpu_count(self.imports, self.module) if self._mentions_gpu_count else frozenset()
        if self._mentions_collectives and self.project.nccl_only:
            sized |= in_nccl_collectives(self.imports, self.module)
        return beside | sized

    @functools.cached_property
    def _cuda_only_module(self) -> bool:
        return self.project.needs_cuda or (self._mentions_timing and times_with_cuda_events(self.imports, self.module))

    @functools.cached_property
    def receivers(self) -> ReceiverJudge:
        """Whether the receiver of a conversion is a tensor or converts in place."""
        return ReceiverJudge(self)

    def class_of(self, node: cst.BaseExpression) -> Optional[ProjectClass]:
        """The class of the object ``node`` holds, when the file shows it was made by a class
        of the project (this file's or another's, directly or through a helper that returns
        one): ``net = Net(); net.cuda()`` gives ``Net``, with ``cuda_without_to`` and
        ``converts_in_place`` to ask."""
        type_name = self.value_of(node).type_name
        return self.project.instance_of(type_name) if type_name is not None else None

    def classes_of(self, node: cst.BaseExpression) -> list[ProjectClass]:
        """Every class of the project the object ``node`` holds may be an instance of, over the
        paths that bind it (``model = A()`` in one branch, ``model = B()`` in another)."""
        made = (self.project.instance_of(name) for name in sorted(self.value_of(node).type_names))
        return [owner for owner in made if owner is not None]

    def meeting_for_origin(self, factory: cst.Call) -> Optional[Meeting]:
        """How a device-less factory call meets the device, if it does."""
        if self._meetings_by_origin is None:
            self._meetings_by_origin = {}
            for meetings in self.flow.meetings.values():
                for meeting in meetings:
                    self._meetings_by_origin.setdefault(meeting.origin, meeting)
        return self._meetings_by_origin.get(factory)

    def unplaced_meetings_for_origin(self, factory: cst.Call) -> list[Meeting]:
        """How a device-less factory call meets tensors of unknown place (one meeting per such
        tensor), when it meets no tensor known to live on the device."""
        if self._unplaced_by_origin is None:
            self._unplaced_by_origin = {}
            for meetings in self.flow.unplaced_meetings.values():
                for meeting in meetings:
                    self._unplaced_by_origin.setdefault(meeting.origin, []).append(meeting)
        if self.meeting_for_origin(factory) is not None:
            return []
        return self._unplaced_by_origin.get(factory, [])

    def caller_device_meeting(
        self, factory: cst.Call, ancestors: Sequence[cst.CSTNode], statement: Optional[cst.CSTNode]
    ) -> Optional[CallerMeeting]:
        """The device-agnostic contract: a factory meeting a tensor that came in from the caller
        (an argument, or what is computed from one) is on the caller's device, unless the code
        shows this place is the CPU. Returns the tensor met and the one whose device a fix
        reads (bound before the factory), or None.

        A factory kept on ``self`` (``self.total = torch.zeros(n)`` in ``reset``) may meet the
        caller's tensors in another method of the class (``self.total += preds.sum()`` in
        ``update(preds)``); that method's arguments are not in scope for a fix."""
        meetings = self.unplaced_meetings_for_origin(factory)
        if not meetings:
            return None
        functions = [node for node in reversed(ancestors) if type(node) is cst.FunctionDef]
        if not functions or in_test_code(self.imports, ancestors) or self.works_on_the_cpu(functions[-1], ancestors):
            return None
        if only_test_code_uses(self.module, functions[-1]) or asserts_cpu_tensor(functions[0], self.imports):
            return None
        if not self.flow.touches_device and functions[-1].name.value in self.flow.declarations.run_by_the_file:
            return None  # a file that names no device and runs this function itself: the host
        here = functions[0]
        # Only the function's arguments and what is computed from them: a tensor from a helper
        # of another file may be on the CPU by that helper's contract.
        from_arguments = self.argument_derived_names(here)
        partner = next((m.partner for m in meetings if m.body in (None, here) and m.partner in from_arguments), None)
        if partner is None:
            # A parameter the function rebinds later is still the caller's tensor before that.
            rebound = self.rebound_parameters(here)
            partner = next(
                (
                    m.partner
                    for m in meetings
                    if m.body in (None, here) and m.partner in rebound and 0 < m.order < rebound[m.partner]
                ),
                None,
            )
            from_arguments = {**from_arguments, partner: partner} if partner is not None else from_arguments
        if partner is not None:
            # The fix reads the device of a tensor bound before the call: the partner, or else the
            # argument it is computed from (`same = labels == ...` comes after `eye = torch.eye(n)`).
            source = partner if self.bound_before(partner, statement, here) else from_arguments[partner]
            return CallerMeeting(partner, source)
        kept = next(
            (
                CallerMeeting(m.partner, None, m.body)
                for m in meetings
                if m.partner is not None and self._meets_kept_state(m, here)
            ),
            None,
        )
        return kept if kept is not None else self._returned_to_caller(factory, meetings, here)

    @functools.cached_property
    def batch_builders(self) -> frozenset[cst.FunctionDef]:
        """Functions of the file a DataLoader runs: those given as ``collate_fn=`` (PyG's
        ``DataLoader(..., collate_fn=self._sample)``), and the helpers only they call
        (``self._neg_sample(batch)``). They build batches on the CPU, as a ``collate_fn`` does."""
        declarations = self.flow.declarations
        methods: dict[tuple[Optional[cst.ClassDef], str], cst.FunctionDef] = {}
        for function, (outer, klass) in declarations.parents.items():
            if outer is None:
                methods.setdefault((klass, function.name.value), function)
        given: set[cst.FunctionDef] = set()
        callers: dict[cst.FunctionDef, set[cst.FunctionDef]] = {}
        for function, (outer, klass) in declarations.parents.items():
            for node in walk(function.body):
                if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "collate_fn":
                    named = _own_function(node.value, klass, methods)
                    if named is not None:
                        given.add(named)
                elif isinstance(node, cst.Call):
                    callee = _own_function(node.func, klass, methods)
                    if callee is not None:
                        callers.setdefault(callee, set()).add(function)
        builders = set(given)
        changed = True
        while changed:
            changed = False
            for callee, calling in callers.items():
                if callee not in builders and calling <= builders:
                    builders.add(callee)
                    changed = True
        return frozenset(builders)

    def works_on_the_cpu(self, outermost: cst.FunctionDef, ancestors: Sequence[cst.CSTNode]) -> bool:
        """The code at ``ancestors`` (in the function ``outermost``) shows it works on the CPU:
        data loading (a Dataset, a collator, a ``collate_fn`` and its helpers), the CPU branch
        of a device test, or a function the project calls off the device."""
        return (
            runs_on_cpu(self.module, ancestors)
            or outermost in self.batch_builders
            or self.called_off_the_device(outermost)
        )

    def called_off_the_device(self, function: cst.FunctionDef) -> bool:
        """``function`` is a top-level function that the project calls where it works on the CPU
        (`ProjectView.called_off_the_device`): its callers give it CPU tensors."""
        return function in self.module.body and self.project.called_off_the_device(function.name.value)

    def _returned_to_caller(self, factory: cst.Call, meetings: Sequence[Meeting], here: cst.FunctionDef) -> Optional[CallerMeeting]:
        """The helper returns the factory's tensor to a function of the file that meets its own
        arguments with it, and hands the helper one of them (speechbrain's ``length_range(feats,
        len_dim)``, 736d2a4125: ``torch.arange(max_len)`` returned, compared with the caller's
        ``start``): the helper's parameter given that tensor is on the caller's device, and a
        fix reads its device."""
        returned = self.flow.returns.get(here)
        if returned is None or factory not in returned.origins:
            return None
        own = self.argument_derived_names(here)
        rebound = self.rebound_parameters(here)
        for meeting in meetings:
            body = meeting.body
            if body is None or body is here or body not in self.flow.scopes or meeting.partner is None:
                continue
            derived = self.argument_derived_names(body)
            if meeting.partner not in derived or is_data_loading(body):
                continue
            for parameter in _parameters_given(body, here, derived):
                if own.get(parameter) == parameter and parameter not in rebound:
                    return CallerMeeting(meeting.partner, parameter)
        return None

    def _meets_kept_state(self, meeting: Meeting, here: cst.FunctionDef) -> bool:
        """The factory's tensor, kept on ``self``, meets an argument of another method of the
        same class (not one that loads data on the CPU)."""
        body = meeting.body
        if body is None or body is here or body not in self.flow.scopes or here not in self.flow.scopes:
            return False
        owner = self.flow.scopes[here].owner_class
        if owner is None or self.flow.scopes[body].owner_class is not owner or is_data_loading(body):
            return False
        if self._given_cpu_factories(owner.node, body, meeting.partner):
            return False
        return (
            meeting.partner in self.argument_derived_names(body)
            and not _sets_attributes_by_name(body)
            and not self._moved_before_every_call(owner.node, body, meeting.origin)
            and not _given_only_own_state(owner.node, body, meeting.partner)
        )

    def _given_cpu_factories(self, owner: cst.ClassDef, body: cst.FunctionDef, parameter: Optional[str]) -> bool:
        """Every call of ``body`` in its class (``self.compute_rope_freqs(rope_freq, t)``) passes
        a CPU factory tensor for ``parameter``: the tensor met there is on the CPU too (NeMo's
        llama4 RoPE tables, built in ``__init__`` and moved with ``.cuda()`` at the end)."""
        given = _arguments_given(owner, body, parameter) if parameter is not None else None
        return bool(given) and all(self.flow.values.get(arg, UNKNOWN).is_cpu_factory_tensor for _, arg in given or ())

    def _moved_before_every_call(self, owner: cst.ClassDef, body: cst.FunctionDef, origin: cst.Call) -> bool:
        """Every call of ``body`` in its class (``self._batch_get_variance(t, prev_t)``) comes
        after the calling method moved the kept state ``body`` reads
        (``self.alphas_cumprod = self.alphas_cumprod.to(model_output.device)``): the class
        keeps its state on the CPU and moves it where it is used."""
        read = [node for node in walk(body.body) if isinstance(node, cst.Attribute) and self_attribute(node)]
        kept = {node.attr.value for node in read if origin in self.value_of(node).origins} or {
            node.attr.value for node in read if self.value_of(node).kind is Kind.TENSOR
        }
        called = False
        for method in owner.body.body:
            if not isinstance(method, cst.FunctionDef) or method is body:
                continue
            moved: set[str] = set()
            for node in walk(method.body):
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
                    func = node.value.func
                    if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
                        source = self_attribute(func.value)
                        if source is not None and any(self_attribute(t.target) == source for t in node.targets):
                            moved.add(source)
                elif isinstance(node, cst.Call) and self_attribute(node.func) == body.name.value:
                    if not kept or not kept <= moved:
                        return False
                    called = True
        return called

    def tensor_argument_behind(self, function: cst.FunctionDef, expression: cst.CSTNode) -> Optional[str]:
        """A tensor parameter of ``function`` that ``expression`` computes with, directly or
        through a name computed only from it (`argument_derived_names`): Tacotron 2's
        ``max_len = torch.max(lengths).item()`` then ``torch.arange(0, max_len, ...)`` in
        ``def get_mask_from_lengths(lengths)`` belongs with ``lengths``."""
        derived = self.argument_derived_names(function)
        for name in (n.value for n in walk(expression) if isinstance(n, cst.Name)):
            source = derived.get(name)
            if source is not None and self.binder.tensor_parameter_in(function, cst.Name(source)):
                return source
        return None

    def argument_derived_names(self, function: cst.FunctionDef) -> dict[str, str]:
        """The tensor parameters of ``function`` and the local names computed only from them,
        each with the parameter it is computed from (a parameter maps to itself).

        A name counts when every assignment to it reads such a parameter (or another such name)
        and calls nothing but torch functions and methods of those values: it lives wherever
        the caller's tensors live. A name bound from any other call (a helper of another file)
        does not count, nor does a tensor made here and placed by a non-tensor argument
        (``torch.randn(3).to(rank)``).
        """
        cached = self._argument_derived.get(function)
        if cached is not None:
            return cached
        scope = self.flow.scopes.get(function)
        derived = {name: name for name in scope.tensor_params} if scope is not None else {}
        # Items of parameters used as tensors stand for the caller's tensors as parameters do.
        items = scope.parameter_items if scope is not None else set()
        derived.update((name, name) for name in items)
        for name in self._given_to_numpy(function):
            derived.pop(name, None)  # NumPy reads it: on the CPU by the function's own contract
        bindings: dict[str, list[cst.BaseExpression]] = {}
        #: The order of the statement of each bound value (``id`` of the value).
        order_of: dict[int, int] = {}
        for node in walk(function.body):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.SimpleStatementLine):
                order = self.flow.statement_order.get(node, 0)
                order_of.update((id(small.value), order) for small in node.body if isinstance(small, _BINDINGS))
            if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and node.value is not None:
                for target in assignment_targets(node):
                    if isinstance(target, cst.Name):
                        bindings.setdefault(target.value, []).append(node.value)
                    elif (
                        isinstance(target, (cst.Tuple, cst.List))
                        and isinstance(node.value, (cst.Tuple, cst.List))
                        and len(target.elements) == len(node.value.elements)
                        and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *node.value.elements))
                    ):  # ``n, c = x.size(0), x.size(1)``: each name its own value
                        for part, given in zip(target.elements, node.value.elements):
                            if isinstance(part.value, cst.Name):
                                bindings.setdefault(part.value.value, []).append(given.value)
                            else:
                                for inner in walk(part.value):
                                    if isinstance(inner, cst.Name):
                                        bindings.setdefault(inner.value, []).append(_UNFOLLOWED)
                    elif isinstance(target, (cst.Tuple, cst.List)):  # the parts of what is unpacked
                        # ``row, col = edge_index`` or ``row, col, value = src.coo()``: a method of
                        # the argument (or a torch function of it) gives its parts where it lives.
                        unpacked = node.value if isinstance(node.value, (cst.Name, cst.Call)) else _UNFOLLOWED
                        for element in walk(target):
                            if isinstance(element, cst.Name):
                                bindings.setdefault(element.value, []).append(unpacked)
        # ``out`` of ``attn = out["attn"]``: its other items are the caller's too (``out["lengths"].max()``).
        containers = frozenset(
            root
            for name in items
            for value in bindings.get(name, ())
            if scope is not None and reads_parameter(value, scope.parameters) and (root := _root_name(value)) is not None
        )
        changed = True
        while changed:
            changed = False
            for name, values in bindings.items():
                if name in derived:
                    continue
                # A name rebound from itself (``signal = torch.cat([signal, pad])``, ``x = x.t()``)
                # counts when its other bindings do: the rebinding keeps it where it was.
                with_itself = {**derived, name: name}
                seeding = [value for value in values if self._computed_from(value, derived, containers)]
                if seeding and all(
                    self._computed_from(value, with_itself, containers) or self._made_here(value) for value in values
                ):
                    source = next(n for n in sorted(_read_names(seeding[0])) if n in derived)
                    derived[name] = derived[source]
                    changed = True
        rebound: dict[str, int] = {}
        for name, values in bindings.items():
            foreign = [
                value
                for value in values
                if not self._computed_from(value, derived, containers)
                and not self._made_here(value)
                and not (name in items and scope is not None and reads_parameter(value, scope.parameters))
            ]
            if name in derived and foreign:
                del derived[name]  # a parameter rebound to something else
                if scope is not None and name in scope.tensor_params:
                    rebound[name] = min(order_of.get(id(value), 0) for value in foreign)
        self._argument_derived[function] = derived
        self._rebound_later[function] = rebound
        return derived

    def rebound_parameters(self, function: cst.FunctionDef) -> dict[str, int]:
        """Tensor parameters that ``function`` rebinds to something not computed from the
        caller's tensors (``target = target_bool_mat[:, observed]``), each with the order of the
        first such statement: before it, the name still holds the caller's tensor."""
        self.argument_derived_names(function)
        return self._rebound_later.get(function, {})

    def _given_to_numpy(self, function: cst.FunctionDef) -> set[str]:
        """Names NumPy reads: on the CPU by the function's own contract. Not a name the function
        tests for being a tensor (``if torch.is_tensor(array): ... else: np.pad(array, ...)``,
        whisper's ``pad_or_trim``, f680570016): NumPy reads only what is not a tensor."""
        names: set[str] = set()
        tested: set[str] = set()
        for node in walk(function.body):
            if isinstance(node, cst.Call) and (self.qualified_name(node.func) or "").startswith("numpy."):
                names.update(arg.value.value for arg in node.args if isinstance(arg.value, cst.Name))
            elif isinstance(node, cst.If) and is_type_test(node.test):
                tested.update(name.value for name in walk(node.test) if isinstance(name, cst.Name))
        return names - tested

    def _made_here(self, expression: cst.BaseExpression) -> bool:
        """``torch.zeros(n)`` on another branch (``if isinstance(out, list): attn = torch.zeros(n)
        else: attn = out["attn"]``): where the name holds the caller's tensor, the flow says so at
        each site; a factory's tensor is no helper's result of unknown place."""
        return isinstance(expression, cst.Call) and self.qualified_name(expression.func) in torch_api.FACTORIES

    def _computed_from(
        self, expression: cst.BaseExpression, names: dict[str, str], containers: frozenset[str] = frozenset()
    ) -> bool:
        if not _read_names(expression) & names.keys():
            return False
        value = self.flow.values.get(expression, UNKNOWN)
        if value.origins and value.elsewhere is None:
            return False  # made by a factory of this function, wherever it was moved
        for node in walk(expression):
            if not isinstance(node, cst.Call):
                continue
            qualified = self.qualified_name(node.func)
            if qualified in torch_api.LEGACY_TENSOR_TYPES or (
                qualified is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu"
            ):
                # ``filler = torch.FloatTensor(filler)`` (a legacy constructor places on the CPU, or
                # for ``torch.cuda.*`` the current GPU, whatever it is given; the flow leaves that
                # to TDL006), ``ltrb = bbox_preds[0].cpu() * scale``: not where the caller's tensors are
                return False
            if qualified is not None and qualified.startswith("torch."):
                continue
            if isinstance(node.func, cst.Name) and node.func.value in _NUMBER_BUILTINS and qualified is None:
                continue  # ``torch.tensor(range(N, 0, -1))``: numbers, no tensor of another origin
            if self._part_of_argument(node, names):
                continue
            if isinstance(node.func, cst.Attribute):
                receiver = _read_names(node.func.value)
                if receiver and receiver <= names.keys() | containers | {"torch"}:
                    continue
                if _root_name(node.func.value) in names:
                    continue  # ``task_idcs[..., self.index].unsqueeze(-1)``: a method of part of it
            return False
        return True

    def _part_of_argument(self, call: cst.Call, names: dict[str, str]) -> bool:
        """``unsqueeze_1d(start, dims, 0)``, a helper of the file whose every return indexes the
        parameter given ``start`` (``return value[dims]``): part of that argument comes back."""
        helper = self.flow.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
        position = self.flow.indexed_parameter(helper) if helper is not None else None
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        if position is None or position >= len(positional):
            return False
        return bool(_read_names(positional[position].value) & names.keys())

    def bound_before(self, name: str, statement: Optional[cst.CSTNode], function: cst.FunctionDef) -> bool:
        """Whether ``name`` is first bound in ``function`` before ``statement``."""
        scope = self.flow.scopes.get(function)
        if scope is None or statement is None:
            return False
        return bound_before(scope, name, self.flow.statement_order.get(statement, 0))

    def scopes_of(self, functions: Sequence[cst.FunctionDef]) -> list[Scope]:
        return [self.flow.scopes[f] for f in functions if f in self.flow.scopes]


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """``x`` of ``x[i, self.k]`` or ``x.mT``: the name an item or attribute chain starts from."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


#: Builtins that give numbers or sequences of numbers, never a tensor from elsewhere.
_NUMBER_BUILTINS = frozenset({"range", "len", "int", "float", "slice"})


def _arguments_given(
    within: cst.CSTNode, body: cst.FunctionDef, parameter: str
) -> Optional[list[tuple[cst.Call, cst.BaseExpression]]]:
    """Each call of the method ``body`` in ``within`` (``self.<body>(...)``) with what it passes
    for ``parameter``; None where ``body`` takes no such parameter after its first one or a call
    leaves it unread (``*args`` or ``**kwargs`` without it by keyword, too few arguments)."""
    names = [p.name.value for p in body.params.params]
    if parameter not in names[1:]:
        return None
    index = names.index(parameter) - 1
    given = []
    for node in walk(within):
        if not (isinstance(node, cst.Call) and self_attribute(node.func) == body.name.value):
            continue
        value = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == parameter), None)
        if value is None:
            positional = [a for a in node.args if a.keyword is None]
            if any(a.star for a in positional) or index >= len(positional):
                return None
            value = positional[index].value
        given.append((node, value))
    return given


def _given_only_own_state(owner: cst.ClassDef, body: cst.FunctionDef, parameter: str) -> bool:
    """``body`` is private (``_select_within``) and every call of it in the class passes, for
    ``parameter``, the object's own state (``self._group_index[key]``) or that same parameter
    (a recursive call): the tensor it meets never comes from the caller."""
    if not body.name.value.startswith("_") or body.name.value.startswith("__"):
        return False
    params = body.params.params
    given = _arguments_given(owner.body, body, parameter) if params and params[0].name.value == "self" else None
    if given is None:
        return False
    called = False
    for node, value in given:
        within = any(node is n for n in walk(body.body))
        if within and isinstance(value, cst.Name) and value.value == parameter:
            continue  # recursion: the same tensor
        root = value
        while isinstance(root, (cst.Subscript, cst.Attribute)) and self_attribute(root) is None:
            root = root.value
        if self_attribute(root) is None:
            return False
        called = True
    return called


#: Statements that bind a name to a value.
_BINDINGS = (cst.Assign, cst.AnnAssign, cst.AugAssign)


def _sets_attributes_by_name(function: cst.FunctionDef) -> bool:
    """``setattr(self, name, to_device(getattr(self, name), x))``: attributes the walk cannot follow."""
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "setattr"
        for node in walk(function.body)
    )


def _read_names(expression: cst.CSTNode) -> set[str]:
    """The variables ``expression`` reads: not attribute names (``x.pow``) or keywords."""
    skipped = set()
    for node in walk(expression):
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
    return {node.value for node in walk(expression) if isinstance(node, cst.Name) and id(node) not in skipped}


def _parameters_given(caller: cst.FunctionDef, helper: cst.FunctionDef, derived: dict[str, str]) -> list[str]:
    """The parameters of ``helper`` that ``caller`` passes one of its own parameters or of its
    argument-derived tensors (a name of ``derived``) in a direct call: ``helper(x)``, or ``self.helper(x)`` for a method."""
    name = helper.name.value
    params = [param.name.value for param in helper.params.params]
    caller_params = {param.name.value for param in caller.params.params} - {"self", "cls"}
    given = []
    for node in walk(caller.body):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Name) and func.value == name:
            offset = 0
        elif self_attribute(func) == name:
            offset = 1
        else:
            continue
        for index, arg in enumerate(node.args):
            if arg.star or not (isinstance(arg.value, cst.Name) and (arg.value.value in derived or arg.value.value in caller_params)):
                continue
            if arg.keyword is not None:
                given.append(arg.keyword.value)
            elif index + offset < len(params):
                given.append(params[index + offset])
    return given


def _own_function(
    node: cst.BaseExpression,
    klass: Optional[cst.ClassDef],
    functions: dict[tuple[Optional[cst.ClassDef], str], cst.FunctionDef],
) -> Optional[cst.FunctionDef]:
    """The function of the file ``node`` names: ``helper`` (top-level) or ``self.helper`` (a
    method of ``klass``)."""
    if isinstance(node, cst.Name):
        return functions.get((None, node.value))
    method = self_attribute(node)
    return functions.get((klass, method)) if klass is not None and method is not None else None
