"""Which names are tensors or modules, and where each tensor lives, statement by statement.

A light abstract interpretation within one file: every function body (and the module body)
is walked once in statement order, binding names to a `Value`. Branches are walked in turn
and loops once, which is enough for device bugs: they hinge on where a value was created and
moved, not on how often. Whatever the walk cannot prove stays UNKNOWN, and rules stay silent
on UNKNOWN.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.declarations import ENTRY_METHODS, Declarations
from torchdevice_lint.analysis.devices import (
    looks_like_accelerator_flag,
    looks_like_device_name,
    mentions_device,
    parse_device,
)
from torchdevice_lint.analysis.evidence import (
    FunctionBody,
    assigned_names,
    is_expected_error_block,
    is_scalar_index,
    is_type_test,
)
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.meetings import MeetingLog
from torchdevice_lint.analysis.project import ProjectView
from torchdevice_lint.analysis.scopes import ClassInfo, FunctionOrModule, Scope
from torchdevice_lint.analysis.semantics import (
    as_index,
    combine,
    compares_across_devices,
    compares_two_tensors,
    computed_where,
    device_argument_place,
    given_a_tensor,
    is_zero_dim_factory,
    legacy_cpu_factory,
    literal_place,
    names_a_dtype,
    only_slices,
    owns_parameters,
    reduces_to_zero_dim,
    tensor_arguments,
)
from torchdevice_lint.analysis.tree import (
    annotated_expression,
    branch_assignments,
    decorated_with,
    is_expression,
    is_none,
    is_statement_or_suite,
    iter_child_nodes,
    keyword_argument,
    method_named,
    parameter_names,
    parameters,
    passes_parameter,
    positional_arguments,
    reads_parameter,
    self_attribute,
    string_value,
    walk,
)
from torchdevice_lint.analysis.values import (
    CPU_DEVICE,
    DEVICE_OBJECT,
    UNKNOWN,
    Kind,
    Place,
    Value,
    merge,
    merge_call_sites,
    without_origins,
)

#: The type of a Python list of modules (``[Block(n) for _ in range(k)]``), as the flow names it.
_MODULE_LIST = "builtins.list"
#: Modules whose iteration gives their submodules (not ``nn.ModuleDict``: its keys).
_ITERABLE_MODULES = frozenset({_MODULE_LIST, "torch.nn.ModuleList", "torch.nn.Sequential"})

#: Tensor methods that take another tensor for its shape only: ``expand_as(other)``.
_SHAPE_OF_ARGUMENT = frozenset({"expand_as", "view_as", "reshape_as"})
#: Wrappers around an iterable that yield its items unchanged (or with an index first).
_PASS_THROUGH_ITERATORS = frozenset({"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "iter"})


#: Rounds of walking again the functions whose seeds or callees' return values changed: a chain
#: of helpers (``c = unflatten01(flatten01(a))``) settles one link per round or two.
_MAX_REWALKS = 5


class FlowAnalysis:
    """Runs the walk over a parsed module and keeps every fact it derived."""

    def __init__(
        self, module: cst.Module, imports: ImportTable, source_text: str, project: Optional[ProjectView] = None
    ) -> None:
        self.module = module
        self.imports = imports
        #: Classes and helpers of the project's other files (``from .models import Net``).
        self.project = project
        self.values: dict[cst.CSTNode, Value] = {}
        self._meeting_log = MeetingLog(self.values)
        self.meetings = self._meeting_log.on_device
        #: Device-less factories meeting a tensor whose place the caller chooses (an argument,
        #: what is computed from one): a bug as soon as that tensor lives on a device.
        self.unplaced_meetings = self._meeting_log.unplaced
        self.statement_order: dict[cst.CSTNode, int] = {}
        self.scopes: dict[FunctionOrModule, Scope] = {}
        self.declarations = Declarations(module, imports, project)
        self.classes = self.declarations.classes
        self.functions = self.declarations.functions
        #: Names this file calls: its own functions and classes that it runs itself.
        self.called_names = self.declarations.called_names
        self.sets_default_device = self.declarations.sets_default_device or bool(project and project.cuda_made_the_default())
        #: Code that never names a device, moves anything or calls ``.cuda()`` runs on the CPU.
        self.touches_device = mentions_device(source_text)
        #: The module's code, for questions a substring answers before any walk.
        self.text = source_text
        self._counter = 0
        self._seeds: dict[cst.FunctionDef, dict[int, Value]] = {}
        #: Per helper, the CPU factories its calls pass, and by position of a parameter with a
        #: default, those passed by the calls that give that parameter (`_met_at_one_call`).
        self._passed_origins: dict[cst.FunctionDef, set[cst.CSTNode]] = {}
        self._passed_beside: dict[cst.FunctionDef, dict[int, set[cst.CSTNode]]] = {}
        self._reseeded: set[cst.FunctionDef] = set()
        self._calls_in: dict[cst.FunctionDef, frozenset[cst.CSTNode]] = {}
        #: Bodies that called a function of the file before its return value was known.
        self._awaiting: set[FunctionOrModule] = set()
        #: The bodies that read each function's return value.
        self._callers: dict[cst.FunctionDef, set[FunctionOrModule]] = {}
        #: Inside ``with pytest.raises(...)``: a mismatch there is provoked on purpose.
        self._expecting_errors = False
        self._loop_depth = 0
        #: The function being walked (None: the module body), where the meetings found happen.
        self._body: Optional[cst.FunctionDef] = None
        #: What each function of the file returns, merged over its return statements.
        self.returns: dict[cst.FunctionDef, Value] = {}
        #: What each generator of the file yields, merged over its yield expressions.
        self.yields: dict[cst.FunctionDef, Value] = {}
        #: CPU factories that values computed elsewhere were written into (``k[:, :n] = x @ y``).
        self._filled: set[cst.Call] = set()
        #: What each function's own body shows, read once however often it is walked.
        self._bodies: dict[cst.FunctionDef, FunctionBody] = {}
        self._run()

    # ---------------------------------------------------------------- setup
    def _run(self) -> None:
        parents = self.declarations.parents
        # A module's forward runs on whatever device its caller chose, named in this file or
        # not; a file that makes its own modules and never names a device runs them on the host,
        # unless the file does not run them itself and another file of the project names a
        # device (darts' N-BEATS blocks, moved to the GPU by the library's trainer: cc70f34ae4).
        made_here = self.called_names
        if self.project is not None and self.project.device_named_elsewhere() and not self.declarations.runs_own_modules():
            made_here = set()
        self.touches_device |= any(
            info.is_module and info.running_methods and name not in made_here for name, info in self.classes.items()
        )
        module_scope = Scope(self.module, None, None)
        self.scopes[self.module] = module_scope
        self._walk_block(self.module.body, module_scope)

        def depth(function: cst.FunctionDef) -> int:
            count, parent = 0, parents[function][0]
            while parent is not None:
                count, parent = count + 1, parents[parent][0]
            return count

        # Constructors first, so that methods see the attributes they set; outer before inner.
        ordered = sorted(
            parents,
            key=lambda f: (depth(f), f.name.value != "__init__"),
        )
        for function in ordered:
            self._walk_function(function)
        # Helpers called with device tensors, and callers that ran before their callees'
        # return values were known: walk them again.
        for _ in range(_MAX_REWALKS):
            pending = [f for f in ordered if f in self._reseeded or f in self._awaiting]
            rewalk_module = self.module in self._awaiting
            self._reseeded.clear()
            self._awaiting.clear()
            if rewalk_module:
                self._body = None
                self._walk_block(self.module.body, module_scope)
            for function in pending:
                self._walk_function(function)
            if not pending and not rewalk_module:
                break

    # ------------------------------------------------------------- functions
    def _walk_function(self, function: cst.FunctionDef) -> None:
        parent_function, klass = self.declarations.parents[function]
        parent_scope = self.scopes.get(parent_function) if parent_function else self.scopes[self.module]
        owner = self.classes.get(klass.name.value) if klass is not None else None
        scope = Scope(function, parent_scope, owner)
        self._body = function
        before = self.returns.pop(function, None)
        self.yields.pop(function, None)
        declared = self._annotation_value(function.returns)
        if declared.kind is not Kind.UNKNOWN:
            self.returns[function] = declared
        self._counter += 1
        scope.start = self._counter
        self.scopes[function] = scope
        self._bind_parameters(function, scope)
        body = function.body
        if isinstance(body, cst.IndentedBlock):
            self._walk_block(body.body, scope)
        else:
            self._walk_block([body], scope)
        if before is not None and self.returns.get(function) != before:
            # Walked again with what its callers pass: those that read its old return value
            # read it again (a helper's CPU factory known only once its own helper was).
            self._awaiting.update(self._callers.get(function, ()))

    def _bind_parameters(self, function: cst.FunctionDef, scope: Scope) -> None:
        params = function.params
        positional = [*params.posonly_params, *params.params]
        owner = scope.owner_class
        is_method = owner is not None and positional and positional[0].name.value in ("self", "cls")
        # An autograd Function's forward/backward (static, ``ctx`` first) runs on its inputs' device,
        # as a module's forward does: Occupancy Networks' pooling kernels, ``forward(ctx, feats, pts)``.
        autograd = bool(
            owner is not None
            and positional
            and function.name.value in ("forward", "backward")
            and decorated_with(function, "staticmethod")
            and self.declarations.is_autograd_function(owner.node)
        )
        # A decorator's ``def wrapper(self, x)``, returned to replace a method (a forward wrapped
        # by ``@sliced_forward``): its input arrives as the method's does, on the caller's device.
        parent = scope.parent.node if scope.parent is not None else None
        wrapper = bool(
            owner is None
            and positional
            and positional[0].name.value == "self"
            and isinstance(parent, cst.FunctionDef)
            and function.name.value in self.body_of(parent).returned_names
        )
        is_method = bool(is_method or wrapper)
        inputs_on_device = autograd or wrapper or bool(
            is_method and owner is not None and owner.is_module and function.name.value in ENTRY_METHODS
        )
        seeds = self._seeds.get(function, {})
        #: What the body shows of its parameters, read only when a parameter's annotation does not
        #: say (a parameter the docstring gives a tensor type is one, as an annotated one is).
        tensor_evidence: Optional[set[str]] = None
        for index, param in enumerate([*positional, *params.kwonly_params]):
            name = param.name.value
            if index == 0 and (is_method or autograd):
                continue
            value = self._annotation_value(param.annotation)
            first_input = inputs_on_device and index == 1 and param.default is None and param.star == ""
            if value.kind is Kind.UNKNOWN and not first_input and tensor_evidence is None:
                tensor_evidence = self.body_of(function).used_as_tensors(self.imports, lenient=inputs_on_device)
            if value.kind is Kind.UNKNOWN and (first_input or name in (tensor_evidence or ())):
                # A module's forward gets its input on the caller's device: the input is the
                # tensor the module exists to transform.
                value = Value(Kind.TENSOR)
            seeded = seeds.get(index)
            if seeded is not None:
                kind = value.kind if value.kind is not Kind.UNKNOWN else seeded.kind
                value = replace(seeded, kind=kind)
            elif inputs_on_device and param in positional and value.kind is Kind.TENSOR:
                value = value.moved_to(Place.DEVICE)
            has_none_default = isinstance(param.default, cst.Name) and param.default.value == "None"
            if value.kind is Kind.UNKNOWN and looks_like_device_name(name):
                # ``device=None`` or ``device="cpu"``: a call leaving it out places on the CPU
                # (stylegan2's augmentation helpers, ``normal_sample(size, device="cpu")``)
                cpu_default = param.default is not None and literal_place(param.default, self.imports) is Place.CPU
                value = Value(Kind.DEVICE, defaults_to_cpu=True) if has_none_default or cpu_default else DEVICE_OBJECT
            if value.kind is Kind.DEVICE and not has_none_default:
                scope.device_names[name] = scope.start
            if value.kind is Kind.TENSOR and value.place is Place.DEVICE:
                scope.device_tensor_params.append(name)
            if value.kind is Kind.TENSOR:
                scope.tensor_params.add(name)
            scope.env[name] = value
            scope.bound_at[name] = scope.start
        scope.parameters = {
            param.name.value
            for index, param in enumerate([*positional, *params.kwonly_params])
            if not (index == 0 and (is_method or autograd))
        }
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.parameters.add(star.name.value)
        if is_method and owner is not None:
            self_name = positional[0].name.value
            if owner.is_module:
                running = function.name.value in owner.running_methods
                scope.env[self_name] = Value(Kind.MODULE, Place.DEVICE if running else Place.UNKNOWN)
            elif owner.defines_to:
                scope.env[self_name] = Value(Kind.IN_PLACE)
            else:
                scope.env[self_name] = UNKNOWN

    def _annotation_value(self, annotation: Optional[cst.Annotation]) -> Value:
        if annotation is None:
            return UNKNOWN
        qualified = self.imports.qualified_name(annotated_expression(annotation))
        if qualified in torch_api.LEGACY_TENSOR_TYPES or qualified == "torch.nn.Parameter":
            return Value(Kind.TENSOR)  # ``mask: torch.BoolTensor``: a tensor, on any device
        if qualified == "torch.device":
            return DEVICE_OBJECT
        if qualified == "torch.nn.Module":
            return Value(Kind.MODULE)
        if qualified and torch_api.is_torch_nn_module_class(qualified):
            return Value(Kind.MODULE, type_name=qualified)
        name = annotation.annotation
        if isinstance(name, cst.SimpleString):  # a forward reference: "Encoder"
            text = string_value(name)
            name = cst.Name(text) if text and text.isidentifier() else name
        local = self.classes.get(name.value) if isinstance(name, cst.Name) else None
        if local is not None and local.is_module and isinstance(name, cst.Name):
            return Value(Kind.MODULE, type_name=name.value)
        imported = self.declarations.imported_project_class(name)
        if imported is not None and imported.converts_in_place:
            return Value(Kind.MODULE if imported.is_module else Kind.IN_PLACE, type_name=dotted_name(name))
        return UNKNOWN

    # ------------------------------------------------ the project's other files
    def _project_instance(self, callee: cst.BaseExpression, scope: Scope) -> Optional[Value]:
        """What calling a class (or a builder helper) of another file of the project makes."""
        dotted = dotted_name(callee) if self.project is not None else None
        if dotted is None or self.project is None:
            return None
        head = dotted.partition(".")[0]
        if head in self.classes or head in self.functions or scope.lookup(head) is not None:
            return None
        made = self.project.instance_of(dotted)
        if made is None:
            return None
        if made.is_module:
            return Value(Kind.MODULE, Place.CPU, type_name=dotted)
        return Value(Kind.IN_PLACE if made.defines_to else Kind.UNKNOWN, type_name=dotted)

    # ------------------------------------------------------------ statements
    def _walk_block(self, statements: Sequence[cst.CSTNode], scope: Scope) -> None:
        for statement in statements:
            self._counter += 1
            self.statement_order[statement] = self._counter
            self._walk_statement(statement, scope)

    def _walk_statement(self, statement: cst.CSTNode, scope: Scope) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._walk_small_statement(small, scope)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(statement, cst.ClassDef) and scope.node is self.module:
                self._walk_class_body(statement, scope)
        elif isinstance(statement, cst.If):
            self._evaluate(statement.test, scope)
            self._walk_branches([statement.body, statement.orelse], scope)
            self._mark_cpu_choice(statement, scope)
            if is_type_test(statement.test):
                # ``if not isinstance(x, torch.Tensor): x = torch.from_numpy(x)``: a conversion
                # for callers that pass other types, not a tensor made for this computation.
                for name in assigned_names(statement):
                    if name in scope.env:
                        scope.env[name] = without_origins(scope.env[name])
        elif isinstance(statement, (cst.For,)):
            items = self._evaluate(statement.iter, scope)
            self._bind_loop_target(statement.target, statement.iter, items, scope)
            self._walk_loop_body(statement.body, scope)
            if statement.orelse is not None:
                self._walk_suite(statement.orelse.body, scope)
        elif isinstance(statement, cst.While):
            self._evaluate(statement.test, scope)
            self._walk_loop_body(statement.body, scope)
        elif isinstance(statement, cst.With):
            sets_device = expects_error = False
            for item in statement.items:
                value = self._evaluate(item.item, scope)
                if isinstance(item.item, cst.Call):
                    sets_device |= self.imports.qualified_name(item.item.func) == "torch.device"
                    expects_error |= is_expected_error_block(item.item)
                if item.asname is not None:
                    self._assign(item.asname.name, value, scope)
            saved = (self.sets_default_device, self._expecting_errors)
            self.sets_default_device |= sets_device
            self._expecting_errors |= expects_error
            self._walk_suite(statement.body, scope)
            self.sets_default_device, self._expecting_errors = saved
        elif isinstance(statement, cst.Try):
            self._walk_suite(statement.body, scope)
            for handler in statement.handlers:
                self._walk_suite(handler.body, scope)
            if statement.orelse is not None:
                self._walk_suite(statement.orelse.body, scope)
            if statement.finalbody is not None:
                self._walk_suite(statement.finalbody.body, scope)
        else:
            for child in iter_child_nodes(statement):
                if isinstance(child, cst.BaseExpression):
                    self._evaluate(child, scope)
                elif isinstance(child, (cst.BaseSuite, cst.BaseStatement)):
                    self._walk_suite(child, scope)

    def _walk_suite(self, suite: cst.CSTNode, scope: Scope) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._walk_block(suite.body, scope)
        elif isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self._walk_small_statement(small, scope)
        elif isinstance(suite, (cst.Else, cst.Finally)):
            self._walk_suite(suite.body, scope)
        elif isinstance(suite, cst.If):
            self._walk_statement(suite, scope)
        elif isinstance(suite, cst.BaseStatement):
            self._walk_block([suite], scope)

    def _walk_loop_body(self, body: cst.BaseSuite, scope: Scope) -> None:
        self._loop_depth += 1
        self._walk_suite(body, scope)
        self._loop_depth -= 1

    def _walk_branches(self, branches: Iterable[Optional[cst.CSTNode]], scope: Scope) -> None:
        """Walk each branch from the same state, then merge what they bound.

        Inside a loop, a name that one branch rebinds is loop state (``if first: out = step
        else: out = torch.cat((out, step))``): the other branches see it from a later
        iteration, so they do not see the factory it started from before the loop.
        """
        before = dict(scope.env)
        branches = list(branches)
        # Only loop state needs them, and an ``elif`` ladder would walk each rung again.
        assigned = [assigned_names(branch) if branch is not None and self._loop_depth else set() for branch in branches]
        outcomes = []
        for index, branch in enumerate(branches):
            if branch is None:
                outcomes.append(before)
                continue
            scope.env = dict(before)
            if self._loop_depth:
                rebound_elsewhere = set().union(*(names for other, names in enumerate(assigned) if other != index))
                for name in rebound_elsewhere & scope.env.keys():
                    scope.env[name] = without_origins(scope.env[name])
            self._walk_suite(branch, scope)
            outcomes.append(scope.env)
        if len(outcomes) == 1:
            outcomes.append(before)
        merged = dict(outcomes[0])
        for outcome in outcomes[1:]:
            for name in set(merged) | set(outcome):
                if name in merged and name in outcome:
                    merged[name] = merge(merged[name], outcome[name])
                else:
                    merged[name] = merged.get(name) or outcome[name]
        scope.env = merged

    def _walk_class_body(self, node: cst.ClassDef, scope: Scope) -> None:
        """Class-level statements see module names; what they bind is not visible in methods."""
        class_scope = Scope(node, scope, None)
        if isinstance(node.body, cst.IndentedBlock):
            self._walk_block([s for s in node.body.body if isinstance(s, cst.SimpleStatementLine)], class_scope)

    def _walk_small_statement(self, small: cst.BaseSmallStatement, scope: Scope) -> None:
        if isinstance(small, cst.Assign):
            value = self._evaluate(small.value, scope)
            for assign_target in small.targets:
                self._assign(assign_target.target, value, scope, small.value)
        elif isinstance(small, cst.AnnAssign):
            value = self._evaluate(small.value, scope) if small.value is not None else UNKNOWN
            annotated = self._annotation_value(small.annotation)
            if annotated.kind is not Kind.UNKNOWN and value.kind is Kind.UNKNOWN:
                value = Value(annotated.kind, value.place)
            self._assign(small.target, value, scope, small.value)
        elif isinstance(small, cst.AugAssign):
            target = self._evaluate(small.target, scope)
            operand = self._evaluate(small.value, scope)
            self._record_meeting(small, [(small.target, target), (small.value, operand)])
            if isinstance(small.target, cst.Name) and target.kind is Kind.TENSOR:
                scope.env[small.target.value] = combine([target, operand])
            elif isinstance(small.target, cst.Name) and target.kind is Kind.UNKNOWN and operand.kind is Kind.TENSOR:
                # ``noise = keep_prob; noise += torch.rand(n)``: a number plus a tensor is that tensor.
                scope.env[small.target.value] = operand
        elif isinstance(small, cst.Expr):
            self._walk_expression_statement(small.value, scope)
        elif isinstance(small, cst.Return) and small.value is not None:
            value = self._evaluate(small.value, scope)
            if isinstance(scope.node, cst.FunctionDef):
                previous = self.returns.get(scope.node)
                self.returns[scope.node] = value if previous is None else merge(previous, value)
                self._judge_forward_result(small, value, scope)
        else:
            for child in iter_child_nodes(small):
                if isinstance(child, cst.BaseExpression):
                    self._evaluate(child, scope)

    def _judge_forward_result(self, statement: cst.Return, value: Value, scope: Scope) -> None:
        """A module's ``forward`` returns its result to a caller whose input is on the device: a
        CPU factory the forward filled with values computed from that input (``k = torch.zeros(n, n);
        k[:, :] = x @ x.t(); return k``), alone or in a returned tuple, meets that device there."""
        function, owner = scope.node, scope.owner_class
        if (
            not isinstance(function, cst.FunctionDef)
            or function.name.value != "forward"
            or owner is None
            or not owner.is_module
            or not scope.device_tensor_params
            or statement.value is None
        ):
            return
        expression = statement.value
        if value.elements is not None and isinstance(expression, (cst.Tuple, cst.List)):
            returned = [(element.value, self.values.get(element.value, UNKNOWN)) for element in expression.elements]
        else:
            returned = [(expression, value)]
        # Only a result the forward computed into it: a placeholder for an edge case or an unused
        # output (``return torch.zeros(1, h)`` for an empty graph) is left to the caller.
        if not any(result.is_cpu_factory_tensor and result.origins & self._filled for _, result in returned):
            return
        # The input stands for the caller's device: a name a fix can read ``.device`` from. A
        # forward that never reads its input makes nothing from it (``return torch.arange(4) * scale``).
        name = scope.device_tensor_params[0]
        if not any(isinstance(node, cst.Name) and node.value == name for node in walk(function.body)):
            return
        partner = cst.Name(name)
        self.values[partner] = Value(Kind.TENSOR, Place.DEVICE)
        self._record_meeting(statement, [(partner, self.values[partner]), *returned])

    def _walk_expression_statement(self, expression: cst.BaseExpression, scope: Scope) -> None:
        """A bare ``x.to(d)``: a module moves in place; a tensor is assumed moved as meant.

        Assuming the intended move keeps one bug from being reported twice: the discarded
        conversion is its own finding, and what follows is judged as if it had been fixed.
        """
        self._evaluate(expression, scope)
        if not (isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute)):
            return
        receiver = expression.func.value
        method = expression.func.attr.value
        if method not in torch_api.CONVERSION_METHODS or not isinstance(receiver, cst.Name):
            return
        current = self.values.get(receiver, UNKNOWN)
        if current.kind in (Kind.MODULE, Kind.TENSOR):
            scope.env[receiver.value] = self.values.get(expression, current)
        elif current.kind is Kind.UNKNOWN:
            scope.env[receiver.value] = UNKNOWN

    def _bind_loop_target(self, target: cst.BaseExpression, iterable: cst.BaseExpression, items: Value, scope: Scope) -> None:
        enumerated = False
        while isinstance(iterable, cst.Call) and iterable.args:
            callee = iterable.func
            callee_name = callee.value if isinstance(callee, cst.Name) else self.imports.qualified_name(callee)
            if callee_name == "enumerate":
                enumerated = True
            elif callee_name not in _PASS_THROUGH_ITERATORS:
                break
            iterable = iterable.args[0].value
            items = self.values.get(iterable, UNKNOWN)
        if enumerated and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            self._assign(target.elements[0].value, UNKNOWN, scope)
            target = target.elements[1].value
        if items.kind is Kind.MODULE and items.type_name in _ITERABLE_MODULES:
            # ``for block in self.blocks:``; of a list of one class (``[loss_a, loss_b]`` made by
            # a class of another file, which may move what it is given), a module of that class
            element_type = next(iter(items.may_be)) if len(items.may_be) == 1 else None
            self._assign(target, Value(Kind.MODULE, items.place, type_name=element_type, may_be=items.may_be), scope)
            return
        if items.kind is Kind.LOADER and isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._assign(element.value, Value(Kind.TENSOR, Place.CPU), scope)
            return
        generator = self._local_function(iterable, scope)
        item = self.yields.get(generator) if generator is not None else None
        # Values cross the function boundary without their origin: a fix stays local.
        self._assign(target, without_origins(item) if item is not None else UNKNOWN, scope)

    def _module_made(self, node: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """The class of the module ``node`` makes: ``Block`` for ``Block(width)`` (a module class
        of the file), ``torch.nn.Linear`` for ``nn.Linear(n, n)``; without evaluating ``node``,
        whose names a comprehension binds."""
        if not isinstance(node, cst.Call):
            return None
        if isinstance(node.func, cst.Name) and scope.lookup(node.func.value) is None:
            local = self.classes.get(node.func.value)
            if local is not None:
                return node.func.value if local.is_module else None
        qualified = self.imports.qualified_name(node.func)
        return qualified if qualified is not None and torch_api.is_torch_nn_module_class(qualified) else None

    def _local_function(self, call: cst.BaseExpression, scope: Scope) -> Optional[cst.FunctionDef]:
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and scope.lookup(call.func.value) is None:
            return self.functions.get(call.func.value)
        return None

    def _assign(
        self,
        target: cst.BaseExpression,
        value: Value,
        scope: Scope,
        source: Optional[cst.BaseExpression] = None,
    ) -> None:
        if isinstance(target, cst.Name):
            name = target.value
            if value.kind is Kind.UNKNOWN and looks_like_device_name(name) and source is not None and not is_none(source):
                value = DEVICE_OBJECT
            elif value == UNKNOWN and source is not None and self._parameter_item(name, source, scope):
                value = Value(Kind.TENSOR)  # the caller's tensor, where the caller put it
                scope.parameter_items.add(name)
            scope.list_parts.pop(name, None)
            if isinstance(source, cst.List) and not any(isinstance(e, cst.StarredElement) for e in source.elements):
                scope.list_parts[name] = [(e.value, self.values.get(e.value, UNKNOWN)) for e in source.elements]
            scope.env[name] = value
            scope.bound_at.setdefault(name, self._counter)
            if value.kind is Kind.DEVICE:
                scope.device_names.setdefault(name, self._counter)
            self.values[target] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            sources = source.elements if isinstance(source, (cst.Tuple, cst.List)) else None
            values = value.elements
            if values is None and value.kind is Kind.TENSOR:
                # ``row, col = edge_index``: the rows of a tensor, where it lives.
                values = tuple(replace(value, elements=None) for _ in target.elements)
            elif values is None and value.place is Place.DEVICE:
                # ``images, labels = mixup(images, labels)``: what a module computed on the
                # device, taken apart, is still there.
                values = tuple(Value(place=Place.DEVICE) for _ in target.elements)
            unpackable = values is not None and len(values) == len(target.elements)
            for index, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement) or values is None or not unpackable:
                    self._assign(element.value, UNKNOWN, scope)
                    continue
                element_source = sources[index].value if sources is not None else None
                self._assign(element.value, values[index], scope, element_source)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            owner = scope.owner_class
            self_value = scope.env.get(target.value.value)
            if owner is not None and self_value is not None and target.value.value == "self":
                self._set_attribute(owner, target.attr.value, value, source)
        elif isinstance(target, cst.Subscript) and source is not None:
            receiver = self._evaluate(target.value, scope)
            if receiver.is_cpu_factory_tensor and value.kind is Kind.TENSOR and not value.is_cpu_factory_tensor:
                self._filled.update(receiver.origins)  # ``k[..., :n] = x1 @ x2.t()``: it holds computed values
            element_values = [self._evaluate(e.slice.value, scope) for e in target.slice if isinstance(e.slice, cst.Index)]
            indices = self._tensor_indices(target, element_values, scope)
            if any(index.kind is Kind.TENSOR for _, index in indices):
                # ``x[index] = value`` with a tensor index puts values in place: ``value`` must
                # live where ``x`` does (basic slicing copies, and may cross devices); a CPU
                # ``x`` takes no device index either (the reverse is allowed).
                participants = [(target.value, receiver), (source, value)]
                if receiver.is_cpu_factory_tensor:
                    participants += indices
                self._record_meeting(target, participants)

    def _parameter_item(self, name: str, source: cst.BaseExpression, scope: Scope) -> bool:
        """``task_idcs = params[0] if torch.is_tensor(params[0]) else params[0][0]`` then
        ``task_idcs.long()`` (gpytorch's Hadamard likelihood, a6ffc953d0), ``pos = data.pos``
        then ``pos.size(1)``: an item or attribute of a parameter the body uses as a tensor."""
        function = scope.node
        if not isinstance(function, cst.FunctionDef) or name not in self.body_of(function).shown_as_tensors:
            return False
        if name in scope.parameters:
            return False  # ``timestep = timestep[None]`` after ``timestep = timestep.cpu()``: the flow's own
        # Only parameters still as the caller gave them (not moved or rebound to a known place).
        unmoved = {p for p in scope.parameters if (scope.env.get(p) or UNKNOWN).place is Place.UNKNOWN}
        return reads_parameter(source, unmoved)

    def _set_attribute(self, owner: ClassInfo, name: str, value: Value, source: Optional[cst.BaseExpression]) -> None:
        if value.kind is Kind.UNKNOWN and looks_like_device_name(name) and source is not None and not is_none(source):
            value = DEVICE_OBJECT
        if owner.is_module and value.kind is Kind.TENSOR and not self._is_parameter(source):
            # A plain tensor attribute does not follow ``model.to()``: its place is unknown.
            value = Value(Kind.TENSOR)
        elif owner.is_module and value.kind in (Kind.TENSOR, Kind.MODULE):
            value = value.moved_to(Place.DEVICE)
        previous = owner.attributes.get(name)
        if is_none(source):
            # ``self.probs = None``: a placeholder (or a slot emptied) beside the tensor that other
            # assignments keep there, whose conversions still return copies.
            if previous is None:
                owner.placeholders.add(name)
            elif previous.kind is Kind.TENSOR:
                return
        elif name in owner.placeholders:
            owner.placeholders.discard(name)
            if value.kind is Kind.TENSOR:
                previous = None
        if previous is not None and self._wraps_attribute(source, name):
            # ``self.grid = nn.Parameter(self.grid)``: the tensor kept there becomes the module's
            # parameter and moves with it (nn.Module takes only Parameters under that name now).
            previous = None
        owner.attributes[name] = value if previous is None else merge(previous, value)

    def _wraps_attribute(self, source: Optional[cst.BaseExpression], name: str) -> bool:
        if not self._is_parameter(source) or not isinstance(source, cst.Call) or not source.args:
            return False
        return self_attribute(source.args[0].value) == name

    def _is_parameter(self, source: Optional[cst.BaseExpression]) -> bool:
        return (
            isinstance(source, cst.Call)
            and self.imports.qualified_name(source.func) in torch_api.NN_TENSOR_CLASSES
        )

    # ----------------------------------------------------------- expressions
    def _evaluate(self, node: cst.BaseExpression, scope: Scope) -> Value:
        value = self._evaluate_uncached(node, scope)
        self.values[node] = value
        return value

    def _evaluate_children(self, node: cst.CSTNode, scope: Scope) -> None:
        for child in iter_child_nodes(node):
            if is_expression(child):
                self._evaluate(child, scope)
            elif not is_statement_or_suite(child):
                self._evaluate_children(child, scope)

    def _evaluate_uncached(self, node: cst.BaseExpression, scope: Scope) -> Value:
        # ``type(...) is`` before the ``isinstance`` chain: this runs for every expression of
        # the file, and ``isinstance`` on LibCST's abstract-base-class instances is slow.
        if type(node) is cst.Name:
            found = scope.lookup(node.value)
            return found if found is not None else UNKNOWN
        if type(node) is cst.Attribute:
            return self._evaluate_attribute(node, scope)
        if type(node) is cst.Call:
            return self._evaluate_call(node, scope)
        if type(node) is cst.BinaryOperation or type(node) is cst.Comparison:
            return self._evaluate_operation(node, scope)
        if type(node) is cst.Integer or type(node) is cst.Float:
            return UNKNOWN
        if isinstance(node, cst.UnaryOperation):
            return self._evaluate(node.expression, scope)
        if isinstance(node, cst.Subscript):
            receiver = self._evaluate(node.value, scope)
            self._evaluate_children_except(node, node.value, scope)
            if receiver.kind is Kind.MODULE:
                return Value(Kind.MODULE, receiver.place)  # an element of a ModuleList
            if receiver.is_cpu_factory_tensor:
                # A device index into a CPU tensor raises (the reverse is allowed).
                indices = self._tensor_indices(node, [self.values.get(e.slice.value, UNKNOWN) for e in node.slice
                                                      if isinstance(e.slice, cst.Index)], scope)
                self._record_meeting(node, [(node.value, receiver), *indices])
            if receiver.kind is Kind.TENSOR:
                if only_slices(node):
                    return receiver
                if receiver.is_cpu_factory_tensor and any(isinstance(e.slice, cst.Slice) for e in node.slice):
                    # ``k[..., pi, :]``: a ``:`` keeps a dimension, so the rows picked stay a CPU
                    # tensor of rank 1 or more (gpytorch's gradient kernel, a0ad6c03bd).
                    return Value(Kind.TENSOR, receiver.place, receiver.origins)
                return Value(Kind.TENSOR, receiver.place, scalar_origins=receiver.origins if receiver.is_cpu_factory_tensor else frozenset())
            return Value(place=Place.DEVICE) if receiver.place is Place.DEVICE else UNKNOWN
        if isinstance(node, cst.IfExp):
            return self._evaluate_conditional(node, scope)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            text = string_value(node)
            if text is not None and parse_device(text) is not None:
                return CPU_DEVICE if text.startswith("cpu") else DEVICE_OBJECT
            self._evaluate_children(node, scope)
            return UNKNOWN
        made = self._module_made(node.elt, scope) if isinstance(node, cst.ListComp) else None
        if made is not None:
            # ``[Block(width) for _ in range(depth)]``: iterated, it gives modules (`_bind_loop_target`).
            return Value(Kind.MODULE, Place.CPU, type_name=_MODULE_LIST, may_be=frozenset({made}))
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return UNKNOWN  # their own bindings would shadow ours: stay out
        if isinstance(node, (cst.Tuple, cst.List)):
            values = [self._evaluate(element.value, scope) for element in node.elements]
            if any(isinstance(element, cst.StarredElement) for element in node.elements):
                return UNKNOWN
            if isinstance(node, cst.List) and values and all(value.kind is Kind.MODULE for value in values):
                # ``[trend, seasonality]``: iterated, it gives modules (`_bind_loop_target`).
                place = values[0].place if all(value.place is values[0].place for value in values) else Place.UNKNOWN
                classes = frozenset(value.type_name for value in values if value.type_name is not None)
                return Value(
                    Kind.MODULE,
                    place,
                    type_name=_MODULE_LIST,
                    elements=tuple(values),
                    may_be=classes if all(value.type_name for value in values) else frozenset(),
                )
            return Value(elements=tuple(values))
        if isinstance(node, cst.Yield):
            if node.value is not None and not isinstance(node.value, cst.From):
                value = self._evaluate(node.value, scope)
                if isinstance(scope.node, cst.FunctionDef):
                    previous = self.yields.get(scope.node)
                    self.yields[scope.node] = value if previous is None else merge(previous, value)
            return UNKNOWN
        self._evaluate_children(node, scope)
        return UNKNOWN

    def _evaluate_children_except(self, node: cst.CSTNode, skip: cst.CSTNode, scope: Scope) -> None:
        for child in iter_child_nodes(node):
            if child is skip:
                continue
            if is_expression(child):
                self._evaluate(child, scope)
            else:
                self._evaluate_children(child, scope)

    def _evaluate_attribute(self, node: cst.Attribute, scope: Scope) -> Value:
        receiver = self._evaluate(node.value, scope)
        attribute = node.attr.value
        if attribute == "device":
            # The device of a tensor whose place is known is that place: what is made on it
            # cannot meet the tensor on another device.
            return DEVICE_OBJECT if receiver.place is Place.UNKNOWN else Value(Kind.DEVICE, receiver.place)
        if receiver.kind is Kind.TENSOR and attribute in torch_api.TENSOR_ATTRIBUTES:
            return receiver
        if receiver.kind is Kind.MODULE:
            owner = scope.owner_class
            is_self = isinstance(node.value, cst.Name) and node.value.value == "self"
            if owner is not None and is_self and attribute in owner.attributes:
                member = owner.attributes[attribute]
                return member if receiver.place is Place.DEVICE else member.moved_to(receiver.place)
            if attribute in ("weight", "bias"):
                return Value(Kind.TENSOR, receiver.place)
            local = self.classes.get(receiver.type_name or "")
            local_member = local.attributes.get(attribute) if local is not None else None
            if local_member is not None and local_member.kind in (Kind.MODULE, Kind.TENSOR) and local_member.place is Place.DEVICE:
                return local_member.moved_to(receiver.place)
        if isinstance(node.value, cst.Name) and node.value.value == "self" and scope.owner_class is not None:
            return scope.owner_class.attributes.get(attribute, UNKNOWN)
        return UNKNOWN

    def _evaluate_conditional(self, node: cst.IfExp, scope: Scope) -> Value:
        self._evaluate(node.test, scope)
        body = self._evaluate(node.body, scope)
        orelse = self._evaluate(node.orelse, scope)
        merged = merge(body, orelse)
        if merged.kind is Kind.DEVICE and self._chooses_cpu_on_purpose(node):
            return replace(merged, may_be_cpu=True)
        return merged

    def _mark_cpu_choice(self, statement: cst.If, scope: Scope) -> None:
        """``if gather_on_cpu: d = torch.device("cpu")`` / ``else: d = torch.device("cuda")``
        (or ``self.device = ...`` in both): the statement form of the conditional expression
        that chooses the CPU on purpose (`_chooses_cpu_on_purpose`), marked the same way."""
        if not isinstance(statement.orelse, cst.Else):
            return
        chosen = [branch_assignments(statement.body), branch_assignments(statement.orelse.body)]
        for target in chosen[0].keys() & chosen[1].keys():
            body, orelse = chosen[0][target], chosen[1][target]
            if not self._chooses_cpu_on_purpose(cst.IfExp(test=statement.test, body=body, orelse=orelse)):
                continue
            attribute = target.removeprefix("self.")
            if attribute != target and scope.owner_class is not None:
                value = scope.owner_class.attributes.get(attribute)
                if value is not None and value.kind is Kind.DEVICE:
                    scope.owner_class.attributes[attribute] = replace(value, may_be_cpu=True)
            elif scope.env.get(target) is not None and scope.env[target].kind is Kind.DEVICE:
                scope.env[target] = replace(scope.env[target], may_be_cpu=True)

    def _chooses_cpu_on_purpose(self, node: cst.IfExp) -> bool:
        """``torch.device("cpu") if gather_on_cpu else torch.device("cuda")``: an explicit CPU
        on one side, another device on the other, and a test that does not ask whether CUDA is
        there (``torch.cuda.is_available()`` makes the portable idiom, not a choice)."""
        places = [literal_place(side, self.imports) for side in (node.body, node.orelse)]
        if Place.CPU not in places or Place.DEVICE not in places:
            return False
        if places == [Place.DEVICE, Place.CPU] and looks_like_accelerator_flag(dotted_name(node.test) or ""):
            return False  # ``"cuda" if args.cuda else "cpu"``: the run's device, the CPU its fallback
        return not any(
            isinstance(call, cst.Call)
            and (self.imports.qualified_name(call.func) or "").startswith("torch.")
            and (self.imports.qualified_name(call.func) or "").endswith(("is_available", "device_count"))
            for call in walk(node.test)
        )

    def _evaluate_operation(self, node: cst.BinaryOperation | cst.Comparison, scope: Scope) -> Value:
        if isinstance(node, cst.BinaryOperation):
            operands = [node.left, node.right]
        else:
            operands = [node.left, *(target.comparator for target in node.comparisons)]
        values = [(operand, self._evaluate(operand, scope)) for operand in operands]
        if isinstance(node.left, cst.List) and values[0][1].type_name == _MODULE_LIST:
            return values[0][1]  # ``[block] * depth``: the same module, shared
        self._record_meeting(node, values)
        return combine([value for _, value in values])

    def _evaluate_call(self, node: cst.Call, scope: Scope) -> Value:
        argument_values = [(arg, self._evaluate(arg.value, scope)) for arg in node.args]
        qualified = self.imports.qualified_name(node.func)
        if compares_across_devices(node, qualified):
            self._record_meeting(node, list(tensor_arguments(argument_values[:2], self.values)))
        if qualified is not None and qualified.split(".", 1)[0] in ("torch", "transformers", "torch_geometric"):
            return self._evaluate_library_call(node, qualified, argument_values, scope)
        made = self._project_instance(node.func, scope)
        if made is not None:
            return made
        self._meet_kept_arguments(node, argument_values, scope)
        if isinstance(node.func, cst.Attribute):
            callee = self._evaluate(node.func, scope)
            if callee.kind is Kind.MODULE:
                return self._evaluate_module_call(node, callee, argument_values)
            receiver = self.values.get(node.func.value, UNKNOWN)
            return self._evaluate_method_call(node, receiver, node.func.attr.value, argument_values, scope)
        callee = self._evaluate(node.func, scope)
        if isinstance(node.func, cst.Name):
            if node.func.value == "getattr" and len(argument_values) > 1 and scope.lookup("getattr") is None:
                owner = argument_values[0][1]
                if owner.kind is Kind.MODULE:
                    # ``getattr(self, f"conv_{i}")``: a member registered under a computed name,
                    # a layer (or a parameter) where the module is.
                    return Value(Kind.MODULE, owner.place)
            local_class = self.classes.get(node.func.value)
            if local_class is not None and scope.lookup(node.func.value) is None:
                if local_class.is_module:
                    return Value(Kind.MODULE, Place.CPU, type_name=node.func.value)
                return Value(Kind.IN_PLACE if local_class.defines_to else Kind.UNKNOWN, type_name=node.func.value)
            helper = self.functions.get(node.func.value)
            if helper is not None and scope.lookup(node.func.value) is None:
                self._seed(helper, self._given_off_the_device(node, argument_values), offset=0)
                returned = self._returned_by(helper, scope, argument_values)  # registers this caller too
                placing = self.body_of(helper).cpu_default_placing_parameter
                if placing is not None and not passes_parameter(node, helper, placing):
                    return Value(Kind.TENSOR, Place.CPU)  # placed by a device it leaves at "cpu"
                return returned
        if callee.kind is Kind.MODULE:
            return self._evaluate_module_call(node, callee, argument_values)
        function = self._body
        # ``output = model(input)``, then ``output.cpu().numpy()``
        used = function is not None and node in self.body_of(function).calls_bound_to_used_tensors(self.imports)
        place = computed_where(qualified, argument_values)
        return Value(Kind.TENSOR if used else Kind.UNKNOWN, place) if used or place is Place.DEVICE else UNKNOWN

    def _evaluate_library_call(self, node, qualified, argument_values, scope) -> Value:
        if qualified in torch_api.FACTORIES:
            return self._evaluate_factory(node, qualified)
        if qualified == "torch.meshgrid" and all(arg.keyword is not None or not arg.star for arg in node.args):
            grids = [Value(Kind.TENSOR, v.place, v.origins) for arg, v in argument_values if arg.keyword is None]
            return Value(elements=tuple(grids)) if len(grids) > 1 else UNKNOWN
        if qualified == "torch.device":
            chosen = argument_values[0][1] if argument_values else UNKNOWN
            if chosen.kind is Kind.DEVICE and chosen.place is Place.CPU:
                return CPU_DEVICE  # ``torch.device("cpu")``
            return replace(DEVICE_OBJECT, may_be_cpu=chosen.may_be_cpu)
        if qualified in ("torch.autograd.grad", "torch.autograd.backward"):
            self._sized_output(node, scope)
        written = keyword_argument(node, "out")
        if written is not None:
            self._meet_out_tensors(written, argument_values)
        if qualified in torch_api.TENSOR_FUNCTIONS or qualified.startswith("torch.nn.functional."):
            tensor_values = list(tensor_arguments(argument_values, self.values))
            if qualified in torch_api.COMBINING_FUNCTIONS:
                # ``subsets = [torch.tensor([i])]``, ``subsets.append(col[mask])``, ``torch.cat(subsets)``
                # (PyG's k_hop_subgraph, b713e68eef): what the list holds meets there.
                for arg, _ in argument_values:
                    if isinstance(arg.value, cst.Name) and scope.lookup(arg.value.value) is not None:
                        tensor_values += scope.list_parts.get(arg.value.value, [])
            if qualified in torch_api.COMBINING_FUNCTIONS or compares_two_tensors(qualified, argument_values):
                self._record_meeting(node, tensor_values)
            result = combine([value for _, value in tensor_values])
            if reduces_to_zero_dim(node, qualified):
                return Value(Kind.TENSOR, result.place)  # 0-dim: may meet any device
            return replace(result, kind=Kind.TENSOR)
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1].endswith("_like") and argument_values:
            first = argument_values[0][1]
            return Value(Kind.TENSOR, first.place, first.origins)
        if qualified in torch_api.NN_TENSOR_CLASSES or qualified in torch_api.VARIABLE_CLASSES:
            first = argument_values[0][1] if argument_values else UNKNOWN
            return Value(Kind.TENSOR, first.place)
        if qualified in torch_api.LEGACY_TENSOR_TYPES:
            # ``torch.Tensor([...])``, ``torch.LongTensor(n)``: a new tensor (where, TDL006 says).
            if legacy_cpu_factory(node, qualified):
                # ``torch.FloatTensor(N, 1)``: TDL006's ``torch.empty(N, 1, ...)``, a CPU factory whose
                # meetings TDL006 reads to place its fix where TDL003 would (TimeCycle's TPS grid)
                return Value(Kind.TENSOR, Place.CPU, frozenset({node}))
            return Value(Kind.TENSOR)
        if torch_api.is_torch_nn_module_class(qualified):
            # ``nn.CrossEntropyLoss(weight=torch.tensor([...]))`` holds a CPU buffer until moved.
            origins = frozenset().union(*(v.origins for _, v in argument_values if v.is_cpu_factory_tensor))
            return Value(Kind.MODULE, Place.CPU, origins, type_name=qualified)
        if qualified in torch_api.TENSOR_LOADERS:
            return Value(Kind.LOADER)
        if qualified in torch_api.IN_PLACE_CLASSES:
            return Value(Kind.IN_PLACE)
        # What was moved to the device (``inputs = x.to(device)``) and given to torch is a tensor.
        tensor_values = [
            value
            for _, value in tensor_arguments(argument_values, self.values)
            if value.kind is Kind.TENSOR or value.kind is Kind.UNKNOWN and value.place is Place.DEVICE
        ]
        if tensor_values and torch_api.computes_tensor(qualified):
            return Value(Kind.TENSOR, combine(tensor_values).place)  # what it makes is new: no factory to fix
        return UNKNOWN

    def _meet_kept_arguments(self, node: cst.Call, argument_values, scope: Scope) -> None:
        """``draw_convex_polygon(image, torch.stack((x, y), -1), color)``: a function of another file
        of the project that never moves what it is given at some positions (`ProjectView.kept_arguments`)
        combines the tensors given there where they are; a CPU factory's tensor among them meets
        the others (kornia's draw tests, ac7c4f6139). A position the function moves is no meeting,
        nor a call whose result is moved at once (pytracking's box helpers)."""
        dotted = dotted_name(node.func) if self.project is not None else None
        if dotted is None or self.project is None or scope.lookup(dotted.partition(".")[0]) is not None:
            return
        if self._moved_at_once(node):
            return  # ``rel_to_rect(boxes + shifts, sz).to(device)``: it works off the device
        kept = self.project.kept_arguments(dotted)
        if not kept:
            return
        given = [
            (arg.value, value)
            for position, (arg, value) in enumerate(argument_values)
            if position in kept and arg.keyword is None and not arg.star
        ]
        if any(value.is_cpu_factory_tensor for _, value in given):
            self._record_meeting(node, given)

    def _meet_out_tensors(self, written: cst.BaseExpression, argument_values) -> None:
        """``torch.linalg.cholesky_ex(A, out=(L, torch.empty(n, dtype=torch.int32)))``: a torch
        function writes its results where its inputs live, so the ``out=`` tensors (one, or a
        tuple of them) meet its tensor inputs (gpytorch's psd_safe_cholesky, 101d3729b3)."""
        value = self.values.get(written, UNKNOWN)
        if isinstance(written, (cst.Tuple, cst.List)):
            parts = [(element.value, self.values.get(element.value, UNKNOWN)) for element in written.elements]
        else:
            parts = [(written, replace(value, elements=None))]
            parts += [(written, element) for element in value.elements or ()]
        if not any(part.is_cpu_factory_tensor for _, part in parts):
            return
        inputs = [
            (arg.value, argument)
            for arg, argument in argument_values
            if arg.keyword is None and (argument.kind is Kind.TENSOR or argument.place is Place.DEVICE) and not argument.origins
        ]
        if inputs:
            self._record_meeting(written, [*inputs, *parts])

    def _evaluate_factory(self, node: cst.Call, qualified: str) -> Value:
        device = keyword_argument(node, "device")
        if any(arg.star == "**" for arg in node.args):
            return Value(Kind.TENSOR)
        if device is not None:
            read_from = self.values.get(device.value) if isinstance(device, cst.Attribute) and device.attr.value == "device" else None
            if read_from is not None and read_from.is_cpu_factory_tensor and not is_zero_dim_factory(node, qualified):
                # ``device=k.device`` of a CPU factory tensor: as device-less as ``k`` (gpytorch's
                # polynomial kernel, 710d1b16a6); a fix of ``k``'s factory fixes this one too.
                return Value(Kind.TENSOR, Place.CPU, read_from.origins)
            return Value(Kind.TENSOR, device_argument_place(device, self.values))
        if keyword_argument(node, "out") is not None:  # written into ``out``, on its device
            return Value(Kind.TENSOR)
        pinned = keyword_argument(node, "pin_memory")
        if pinned is not None and not (isinstance(pinned, cst.Name) and pinned.value == "False"):
            return Value(Kind.TENSOR, Place.CPU)  # pinned host memory: on the CPU by design, to be copied from
        if self.sets_default_device:
            return Value(Kind.TENSOR)
        if is_zero_dim_factory(node, qualified):
            return Value(Kind.TENSOR, Place.CPU)
        return Value(Kind.TENSOR, Place.CPU, frozenset({node}))

    def _evaluate_method_call(self, node, receiver: Value, method: str, argument_values, scope) -> Value:
        if method in ("to", "cuda", "cpu", "type_as"):
            return self._evaluate_move(node, receiver, method)
        if method == "append" and isinstance(node.func.value, cst.Name) and len(argument_values) == 1:
            parts = scope.list_parts.get(node.func.value.value)
            if parts is not None and scope.lookup(node.func.value.value) is receiver:
                parts.append((argument_values[0][0].value, argument_values[0][1]))
                return UNKNOWN
        if receiver.kind is Kind.MODULE:
            if method in ("float", "half", "double", "bfloat16", "train", "eval", "requires_grad_"):
                return receiver
            if method == "forward":
                return self._evaluate_module_call(node, receiver, argument_values)
            if method in ("register_buffer", "register_parameter") and len(node.args) >= 2 and scope.owner_class:
                name = string_value(node.args[0].value)
                if name is not None and scope.owner_class.is_module:
                    scope.owner_class.attributes[name] = Value(Kind.TENSOR, Place.DEVICE)
            return self._evaluate_own_method(node, receiver, method, argument_values, scope)
        if receiver.kind is Kind.TENSOR:
            if method == "pin_memory":
                return Value(Kind.TENSOR, Place.CPU)  # pinned host memory: on the CPU by design
            if method in torch_api.SAME_DEVICE_CONSTRUCTOR_METHODS:
                return Value(Kind.TENSOR, receiver.place)
            if method in torch_api.FULL_REDUCTIONS and not node.args:
                return Value(Kind.TENSOR, receiver.place)  # 0-dim: may meet any device
            if method == "type" and node.args:
                return self._evaluate_type_conversion(node, receiver, scope)
            if method in torch_api.COMBINING_METHODS or (
                method in torch_api.ELEMENTWISE_WHEN_GIVEN_A_TENSOR and given_a_tensor(argument_values, 0)
            ):
                participants = [(node.func.value, receiver), *tensor_arguments(argument_values, self.values)]
                self._record_meeting(node, participants)
                return combine([value for _, value in participants])
            if receiver.scalar_origins and method in torch_api.RANK_GIVING_METHODS and (node.args or method == "flatten"):
                return Value(Kind.TENSOR, receiver.place, receiver.scalar_origins)  # at least 1-dim now
            if method in _SHAPE_OF_ARGUMENT and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name):
                self._shown_a_tensor(node.args[0].value.value, scope)
            if method in torch_api.TENSOR_RETURNING_METHODS:
                return receiver
            if method not in torch_api.NON_TENSOR_METHODS and not method.startswith("_"):
                return Value(Kind.TENSOR, receiver.place)  # ``labels.bincount()``: a new tensor, where the receiver is
        if receiver.kind is Kind.UNKNOWN and method in torch_api.TENSOR_ONLY_METHODS:
            return Value(Kind.TENSOR, receiver.place)  # only tensors have .detach(), .unsqueeze(), ...
        if receiver.kind is Kind.UNKNOWN and receiver.place is Place.DEVICE and method in torch_api.TENSOR_RETURNING_METHODS:
            return Value(place=Place.DEVICE)  # a model's output, reshaped: still where it was
        if method == "forward" and self._super_call(node.func.value):
            # ``super().forward(x1, x2)`` in a module that runs on the device: the base class's
            # forward of this module, its output there too (gpytorch's RBFKernelGrad, a0ad6c03bd).
            self_value = scope.lookup("self")
            if self_value is not None and self_value.kind is Kind.MODULE and self_value.place is Place.DEVICE:
                return Value(place=Place.DEVICE)
        if receiver.kind in (Kind.UNKNOWN, Kind.IN_PLACE):
            result = self._evaluate_own_method(node, receiver, method, argument_values, scope)
            if result == UNKNOWN and receiver.kind is Kind.UNKNOWN and self._computed_by_another_object(node, argument_values):
                return Value(Kind.TENSOR, Place.DEVICE)
            return result
        return UNKNOWN

    def _shown_a_tensor(self, name: str, scope: Scope) -> None:
        """``torch.rand(n, 1).cuda().expand_as(real_images)``: a tensor's ``expand_as`` takes only a
        tensor (a TypeError otherwise), so a local the flow could not type (``real_images =
        tensor2var(real_images)``) holds one from there on, where it was."""
        value = scope.env.get(name)
        if value is not None and value.kind is Kind.UNKNOWN and name not in scope.parameters:
            scope.env[name] = Value(Kind.TENSOR, value.place)

    def _sized_output(self, node: cst.Call, scope: Scope) -> None:
        """``torch.autograd.grad(outputs=out, ..., grad_outputs=torch.ones(out.size()).cuda())``:
        autograd takes a tensor or a sequence of them, and a sequence has no ``.size()`` or
        ``.shape``: an ``out`` the call also sizes is a tensor (a model's output the flow could not type)."""
        output = keyword_argument(node, "outputs") or keyword_argument(node, "tensors")
        if output is None and node.args and node.args[0].keyword is None:
            output = node.args[0].value
        if not isinstance(output, cst.Name):
            return
        name = output.value
        sized = any(
            isinstance(inner, cst.Attribute)
            and inner.attr.value in ("size", "shape")
            and isinstance(inner.value, cst.Name)
            and inner.value.value == name
            for inner in walk(node)
        )
        if sized:
            self._shown_a_tensor(name, scope)
            self.values[output] = scope.env.get(name, UNKNOWN)

    def _super_call(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"

    def _computed_by_another_object(self, node: cst.Call, argument_values) -> bool:
        """``grad = self.estimator.loss_gradient(x=x, y=y)``, then ``grad.isnan()``: another
        object's method given a tensor on the device, whose result the function uses as a
        tensor, computed it there (the device-agnostic contract: ART's PGD momentum, 478d9a7b71).
        Not a method of the module's own class (``self.m``: its body decides), of a library
        (``np.abs``), nor a result the function never uses as a tensor (NumPy predictions)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            return False
        if self.imports.qualified_name(func) is not None or node not in self._tensor_bound_calls():
            return False
        return any(
            value.kind is Kind.TENSOR and value.place is Place.DEVICE and not value.origins
            for _, value in argument_values
        )

    def body_of(self, function: cst.FunctionDef) -> FunctionBody:
        """What ``function``'s own body shows (`evidence.FunctionBody`), read once for the walk and the fixes."""
        body = self._bodies.get(function)
        if body is None:
            body = self._bodies[function] = FunctionBody(function)
        return body

    def _tensor_indices(self, node: cst.Subscript, values: list[Value], scope: Scope) -> list[tuple[cst.BaseExpression, Value]]:
        """The indices of ``node`` (its ``Index`` elements, with their ``values``) that take part in
        its meeting, each as an index (`semantics.as_index`). A 0-dim index (``x[n - 1]``, ``n`` a
        slice bound) selects, as an integer does, and takes no part."""
        elements = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        return [(e, as_index(v)) for e, v in zip(elements, values) if not self._scalar_index(e, scope)]

    def _scalar_index(self, node: cst.BaseExpression, scope: Scope) -> bool:
        """A 0-dim index by use (`evidence.is_scalar_index`): not a device index into a CPU tensor."""
        function = scope.node
        if not isinstance(function, cst.FunctionDef):
            return False
        bounds = self.body_of(function).slice_bounds
        return bool(bounds) and is_scalar_index(node, bounds)

    def _tensor_bound_calls(self) -> frozenset[cst.Call]:
        """The calls whose result the function being walked binds to a name it uses as a tensor
        (``grad = obj.m(x) * k`` with ``grad.isnan()`` below)."""
        function = self._body
        if function is None:
            return frozenset()
        return self.body_of(function).calls_bound_to_tensors

    def _evaluate_own_method(self, node, receiver: Value, method: str, argument_values, scope) -> Value:
        """``self.helper(x)`` or ``model.init_hidden(n)`` on a class of this file."""
        owner: Optional[ClassInfo] = None
        if isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            owner = scope.owner_class
        elif receiver.type_name is not None:
            owner = self.classes.get(receiver.type_name)
        helper = method_named(owner.node, method) if owner is not None else None
        if helper is None:
            if owner is not None and owner is scope.owner_class and owner.is_module and method in owner.attributes and any(
                value.place is Place.DEVICE and value.kind is not Kind.DEVICE and not value.origins
                for _, value in argument_values
            ):
                # ``self._activation(convolution(tokens))``: a callable the module holds (a layer
                # of another file, a function) computes on the device it is given, as a layer does.
                return Value(place=Place.DEVICE)
            return UNKNOWN
        # A module's own method that runs on its device (reached from ``forward``), called while
        # the module is being built (``self._combine(dummy_input, ...)`` in ``append``): its
        # submodules are wherever the module is then, so CPU factories passed there meet nothing.
        building = (
            owner is scope.owner_class
            and owner is not None
            and bool(owner.is_module)
            and receiver.place is not Place.DEVICE
            and method in owner.running_methods
        )
        given = self._given_off_the_device(node, argument_values)
        self._seed(helper, given, offset=0 if decorated_with(helper, "staticmethod") else 1, building=building)
        return self._returned_by(helper, scope, argument_values)

    def _evaluate_move(self, node: cst.Call, receiver: Value, method: str) -> Value:
        if method == "cuda":
            return receiver.moved_to(Place.DEVICE)
        if method == "cpu":
            return receiver.moved_to(Place.CPU)
        if method == "type_as":
            other = self.values.get(node.args[0].value, UNKNOWN) if node.args else UNKNOWN
            return Value(Kind.TENSOR).moved_to(other.place) if receiver.kind is Kind.TENSOR else UNKNOWN
        target = keyword_argument(node, "device")
        if target is None:
            positional = positional_arguments(node)
            target = positional[0] if positional else None
        if target is None:
            return receiver
        if self.imports.qualified_name(target) in torch_api.DTYPES or names_a_dtype(target):
            return receiver
        target_value = self.values.get(target, UNKNOWN)
        if target_value.kind is not Kind.TENSOR and isinstance(target, cst.Attribute) and target.attr.value == "device":
            target_value = self.values.get(target.value, UNKNOWN)  # ``.to(val.device)``
        if target_value.kind is Kind.TENSOR:
            # Where ``val`` is, on every path: a CPU factory on one (``val = torch.tensor([val])``
            # for a float) and the caller's device on another. What meets ``val`` then is beside it.
            moved = receiver.moved_to(target_value.place)
            return replace(moved, origins=target_value.origins, elsewhere=target_value.elsewhere)
        return receiver.moved_to(device_argument_place(target, self.values))

    def _evaluate_type_conversion(self, node: cst.Call, receiver: Value, scope: Scope) -> Value:
        """``t.type(other.type())`` takes the type name of ``other``, its device included
        ("torch.cuda.FloatTensor"): a move, as ``type_as``. A dtype or a CPU type keeps the place
        as the flow sees it; a type that comes from elsewhere may name a device.

        ``def decode(self, outputs, dtype)`` called with ``dtype=outputs.type()`` (YOLOX's head,
        widely copied): ``torch.full(...).type(dtype)`` lands where ``outputs`` is."""
        target = node.args[0].value
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) and target.func.attr.value == "type":
            if not target.args:
                other = self.values.get(target.func.value, UNKNOWN)
                return Value(Kind.TENSOR).moved_to(other.place)
        qualified = self.imports.qualified_name(target) or ""
        text = string_value(target)
        if qualified.startswith("torch.cuda.") or (text is not None and text.startswith("torch.cuda.")):
            return receiver.moved_to(Place.DEVICE)
        if qualified in torch_api.DTYPES or qualified in torch_api.LEGACY_TENSOR_TYPES or text is not None:
            return receiver
        if self._names_a_dtype_here(target, scope):
            return receiver
        return Value(Kind.TENSOR).moved_to(Place.UNKNOWN)

    def _names_a_dtype_here(self, target: cst.BaseExpression, scope: Scope) -> bool:
        """``x.dtype``, ``self.compute_dtype``, a local ``dtype``, or a parameter given a dtype by
        its default or annotation (``dtype=torch.float32``, ``dtype: torch.dtype``). A parameter
        with neither may be given a type name (``x.type()``), which names a device too."""
        if not names_a_dtype(target):
            return False
        function = scope.node
        if not isinstance(target, cst.Name) or not isinstance(function, cst.FunctionDef):
            return True
        param = next(
            (p for p in parameters(function) if p.name.value == target.value),
            None,
        )
        if param is None:
            return True
        default = self.imports.qualified_name(param.default) if param.default is not None else None
        annotation = self.imports.qualified_name(annotated_expression(param.annotation)) if param.annotation else None
        return default in torch_api.DTYPES or annotation == "torch.dtype"

    def _returned_by(self, function: cst.FunctionDef, scope: Scope, argument_values=()) -> Value:
        """What a function of the file returns to this call; its caller is walked again if
        that is not known yet.

        The return value is merged over every call: a CPU factory passed in at another call
        (``window_partition(torch.zeros(...))`` in ``__init__``) does not come back from this
        one, which passes device tensors.
        """
        self._callers.setdefault(function, set()).add(scope.node)
        if function not in self.returns and function not in self.scopes:
            self._awaiting.add(scope.node)
        returned = self.returns.get(function, UNKNOWN)
        if not returned.origins and not returned.scalar_origins:
            if returned.kind is Kind.UNKNOWN:
                return self._indexed_argument(function, argument_values) or returned
            return returned
        passed = {origin for _, value in argument_values for origin in value.origins | value.scalar_origins}
        made_here = self._calls_in_body(function)
        kept = frozenset(origin for origin in returned.origins if origin in passed or origin in made_here)
        # An element of what another call passed (``unsqueeze_1d(feats_range, ...)``, returning
        # ``value[dims]``) does not come back from this one either.
        scalars = frozenset(origin for origin in returned.scalar_origins if origin in passed or origin in made_here)
        if kept == returned.origins and scalars == returned.scalar_origins:
            given = [value for _, value in argument_values if value.origins & kept or value.scalar_origins & scalars]
            if returned.elsewhere is not None and not any(value.elsewhere is not None for value in given):
                # ``flatten01(a)`` in a sanity check of a CPU ``torch.rand``: the device tensors
                # other calls pass (``flatten01(obs)``) do not come back from this one.
                return replace(returned, elsewhere=None)
            return returned
        if kept or scalars:
            return replace(returned, origins=kept, scalar_origins=scalars, elements=None)
        places = {value.place for _, value in argument_values if value.kind is Kind.TENSOR}
        place = places.pop() if len(places) == 1 else Place.UNKNOWN
        return replace(returned, place=place, origins=frozenset(), scalar_origins=frozenset(), elements=None)

    def _indexed_argument(self, function: cst.FunctionDef, argument_values) -> Optional[Value]:
        """A helper whose every return indexes one of its parameters (speechbrain's
        ``unsqueeze_1d``: ``return value[unsqueeze_dim]``) gives back part of what was passed
        there: a CPU factory tensor of unknown rank (it may be 0-dim until a rank is given)."""
        position = self.indexed_parameter(function)
        if position is None:
            return None
        positional = [value for arg, value in argument_values if arg.keyword is None and not arg.star]
        given = positional[position] if position < len(positional) else None
        if given is None or not given.is_cpu_factory_tensor:
            return None
        return Value(Kind.TENSOR, Place.CPU, scalar_origins=given.origins)

    def indexed_parameter(self, function: cst.FunctionDef) -> Optional[int]:
        """The position of the parameter that every return of ``function`` indexes, if one."""
        return self.body_of(function).indexed_parameter

    def _calls_in_body(self, function: cst.FunctionDef) -> frozenset[cst.CSTNode]:
        calls = self._calls_in.get(function)
        if calls is None:
            calls = self._calls_in[function] = frozenset(n for n in walk(function) if isinstance(n, cst.Call))
        return calls

    def _evaluate_module_call(self, node: cst.Call, module: Value, argument_values) -> Value:
        """A module called on tensors: where they must meet its parameters, or each other."""
        type_name = module.type_name or ""
        local = self.classes.get(type_name)
        if local is not None:
            # A module of this file: what its forward does with the inputs decides.
            forward = method_named(local.node, "forward")
            if forward is not None and module.place is Place.DEVICE:
                # Only a module known to be on the device says where its inputs must be; a
                # forward otherwise keeps its own assumption (its inputs live on the device).
                self._seed(forward, argument_values, offset=1)
                result = self.returns.get(forward, UNKNOWN)
                return Value(result.kind, module.place if module.place is Place.DEVICE else Place.UNKNOWN)
        if type_name in torch_api.CPU_TARGET_LOSSES:
            return Value(Kind.TENSOR)
        tensor_values = list(
            tensor_arguments(self._met_by_forward(type_name, argument_values), self.values, lengths_allowed=False)
        )
        if type_name.startswith("torch.nn.") and not type_name.endswith("Loss") and not owns_parameters(type_name):
            # Activations, dropout, pooling: no device of their own; the input passes through.
            return combine([value for _, value in tensor_values])
        if module.place is Place.DEVICE or module.is_cpu_factory_tensor:
            tensor_values.append((node.func, module))
        elif foreign := sorted(name for name in module.type_names if not name.startswith("torch.") and name not in self.classes):
            # A module of another file or library whose forward is not seen (one of them, for an
            # item of ``[MeanReducer(), AvgNonZeroReducer()]``) may move its inputs (metric-learning
            # losses move the labels to the embeddings' device), and computes where they are.
            return Value(self._module_result_kind(module), computed_where(foreign[0], argument_values))
        self._record_meeting(node, tensor_values)
        place = module.place if module.place is Place.DEVICE else Place.UNKNOWN
        return Value(self._module_result_kind(module), place)

    def _met_by_forward(self, type_name: str, argument_values):
        """The arguments of a call of a project module that its ``forward`` may combine: not those
        given to a parameter it only turns into Python values (``gt_indices.tolist()``)."""
        if self.project is None or not type_name or type_name.startswith("torch."):
            return argument_values
        made = self.project.class_named(type_name)
        if made is None or not made.host_only_inputs:
            return argument_values
        kept, position = [], 0
        for arg, value in argument_values:
            if arg.keyword is not None or arg.star:
                position = -1  # past the positional arguments
            elif position >= 0:
                position += 1
                if position - 1 in made.host_only_inputs:
                    continue
            kept.append((arg, value))
        return kept

    def _module_result_kind(self, module: Value) -> Kind:
        """Built-in layers return a tensor; a module of the file returns what its forward does."""
        type_name = module.type_name
        if type_name is None:
            return Kind.UNKNOWN
        if type_name.startswith("torch.nn."):
            return Kind.UNKNOWN if type_name in torch_api.NON_TENSOR_RESULT_MODULES else Kind.TENSOR
        local = self.classes.get(type_name)
        forward = method_named(local.node, "forward") if local is not None else None
        result = self.returns.get(forward) if forward is not None else None
        return result.kind if result is not None else Kind.UNKNOWN

    def _given_off_the_device(self, node: cst.Call, argument_values):
        """The arguments of a call of a helper of the file as it receives them: on the CPU, those
        of unknown place, when the caller moves the result to the device at once (reformer's
        ``mask_tokens(inputs)``, given the tokenizer's tensors, `calls_moved_at_once`)."""
        if not self._moved_at_once(node):
            return argument_values
        return [
            (arg, replace(value, place=Place.CPU) if value.place is Place.UNKNOWN and not value.origins else value)
            for arg, value in argument_values
        ]

    def _moved_at_once(self, call: cst.Call) -> bool:
        """The function being walked moves what ``call`` returns to the device at once
        (`calls_moved_at_once`)."""
        return self._body is not None and call in self.body_of(self._body).calls_moved_at_once

    def _met_at_one_call(self, participants: Sequence[tuple]) -> Sequence[tuple]:
        """The participants of a meeting in a helper, without the CPU factories its callers pass
        that never come with the device tensor a parameter with a default holds there: tests call
        ``rank_formula(p, l, mask=mask)`` on the device and ``rank_formula(p, l)`` on the host
        (allennlp's Spearman tests), and the host's tensors never meet that mask."""
        function = self._body
        beside = self._passed_beside.get(function) if function is not None else None
        if function is None or not beside:
            return participants
        names = parameter_names(function)
        defaulted_on_device = [
            beside[names.index(expression.value)]
            for expression, value in participants
            if isinstance(expression, cst.Name)
            and value.place is Place.DEVICE
            and expression.value in names
            and names.index(expression.value) in beside
        ]
        if not defaulted_on_device:
            return participants
        # Passed only by the calls that leave those parameters out.
        foreign = self._passed_origins[function] - set().union(*defaulted_on_device)
        return [
            (expression, replace(value, origins=value.origins - foreign) if value.origins & foreign else value)
            for expression, value in participants
        ]

    def _seed(self, helper: cst.FunctionDef, argument_values, offset: int, building: bool = False) -> None:
        """Remember which inputs of a helper arrive on the device, to walk it with them: each
        positional argument and each keyword argument the parameter it names."""
        seeds = self._seeds.setdefault(helper, {})
        names = parameter_names(helper)
        given, passed = set(range(offset)), set()
        for index, (arg, value) in enumerate(argument_values):
            if self._expecting_errors or building:
                value = without_origins(value)
            passed |= value.origins
            if arg.star:
                return
            if arg.keyword is None:
                position = index + offset
            elif arg.keyword.value in names:
                position = names.index(arg.keyword.value)  # ``backwarp(tenInput=a, tenFlow=f)``
            else:
                continue  # one for ``**kwargs``
            given.add(position)
            previous = seeds.get(position)
            seeded = value if previous is None else merge_call_sites(previous, value)
            if seeded != previous and (seeded.kind is not Kind.UNKNOWN or seeded.place is not Place.UNKNOWN):
                seeds[position] = seeded
                self._reseeded.add(helper)
        self._passed_origins.setdefault(helper, set()).update(passed)
        beside = self._passed_beside.setdefault(helper, {})
        for position, param in enumerate(parameters(helper)):
            if param.default is not None and position in given:
                beside.setdefault(position, set()).update(passed)

    def _record_meeting(self, site: cst.CSTNode, participants: Sequence[tuple]) -> None:
        self._meeting_log.record(
            site,
            self._met_at_one_call(participants),
            self._body,
            self._counter,
            judged=not self._expecting_errors,
            devices_in_play=self.touches_device,
        )

