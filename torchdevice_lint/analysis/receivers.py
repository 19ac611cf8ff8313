"""Is the receiver of a conversion a tensor (converted into a copy) or an object converted in place?

``x.to(device)`` as a statement does nothing when ``x`` is a tensor and is correct when ``x``
is an ``nn.Module``, a Hugging Face ``BatchEncoding``, a PyTorch Geometric ``Data`` or any
class with its own in-place ``to``. Tensors are the common case: batch elements unpacked from
a loader, arguments, model outputs, what tensor methods return. So the judgement is a default
with named exceptions: a receiver is taken for a tensor unless the file shows (or its name
strongly suggests) an object that converts in place, or its origin is an unknown call whose
result may be anything.
"""

from __future__ import annotations

import enum
import re
from typing import Callable, Iterator, Optional, Sequence, Union

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.evidence import names_shown_not_tensors
from torchdevice_lint.analysis.imports import dotted_name
from torchdevice_lint.analysis.tree import iter_child_nodes, parameters, walk
from torchdevice_lint.analysis.values import Kind, Place


class Receiver(enum.Enum):
    """What the receiver of a conversion statement is, as far as the file tells."""

    #: The flow analysis proved it: a fix that assigns the result is safe.
    TENSOR = "tensor"
    #: Taken for a tensor by default (unpacked from a batch, an argument, a model's output).
    LIKELY_TENSOR = "likely tensor"
    #: A module or another object whose conversions work in place.
    IN_PLACE = "in place"
    #: Made by a call whose result may be anything: left alone.
    UNKNOWN = "unknown"
    #: A DGL graph: since DGL 0.5 its ``to``/``cuda``/``cpu`` return a converted copy.
    GRAPH = "graph"
    #: An object of a class of the project whose own ``to`` returns a new object.
    COPY = "copy"


#: Words that name modules and other objects converted in place, as parts of an identifier
#: (``model``, ``net_g``, ``text_encoder``, ``loss_fn``, ``ReplayBuffer``...).
IN_PLACE_WORDS = frozenset(
    """
    model models net nets network networks module modules encoder encoders decoder decoders
    criterion criterions classifier classifiers backbone head heads layer layers generator
    discriminator critic critics actor policy agent vae unet transformer embedder lstm rnn gru
    cnn mlp conv fc linear bn attention block blocks teacher student ema pipe pipeline metric
    metrics estimator predictor regressor vocoder extractor learner wrapper ddp fsdp env envs
    buffer storage rollouts replay memory fn func trainer component components evaluator tagger ranker segmenter
    detector autoencoder seq2seq lm clf qnet dqn vit resnet scorer mod submod submodule
    """.split()
)
#: Endings of one-word module names: ``resnet``, ``unet``, ``densenet``, ``swinformer``.
IN_PLACE_ENDINGS = ("net", "model", "former", "encoder", "decoder")
#: In a file of these libraries, batches and samples are containers converted in place
#: (PyG ``Data``/``Batch``, Hugging Face ``BatchEncoding``).
CONTAINER_LIBRARIES = {
    "torch_geometric": frozenset({"data", "batch", "graph", "graphs", "sample", "g"}),
    "transformers": frozenset({"batch", "inputs", "encoding", "encodings", "encoded", "tokens", "tokenized", "features"}),
}
#: In a file that imports DGL, the usual names of its graphs, whose conversions make copies.
DGL_GRAPH_NAMES = frozenset({"g", "graph", "bg", "hg", "sg", "subg"})
#: DGL functions that return a graph.
DGL_GRAPH_MAKERS = frozenset(
    {
        "dgl.graph", "dgl.heterograph", "dgl.DGLGraph", "dgl.batch", "dgl.rand_graph", "dgl.add_self_loop",
        "dgl.remove_self_loop", "dgl.to_bidirected", "dgl.to_simple", "dgl.node_subgraph", "dgl.edge_subgraph",
        "dgl.to_homogeneous", "dgl.to_heterogeneous", "dgl.knn_graph", "dgl.khop_graph", "dgl.to_block", "dgl.merge",
    }
)
#: Words of callees that make Hugging Face ``BatchEncoding``s (converted in place).
ENCODING_MAKERS = frozenset({"tokenizer", "tokenize", "processor", "collate", "collator", "extractor", "encode"})
#: Calls whose result is a model or a container whatever their receiver: loaders and builders.
OBJECT_MAKERS = frozenset(
    {"from_pretrained", "from_config", "load", "load_model", "deepcopy", "copy", "instantiate", "hub"}
)

#: Tensor methods that containers converted in place also have, returning themselves or a copy of
#: their kind (PyG ``data.clone()``, ``data.contiguous()``; ``model.requires_grad_()``).
CONTAINER_RETURNING_METHODS = frozenset({"clone", "contiguous", "requires_grad_"})

#: Methods of ``nn.Module`` that return the module itself (tensors have none of them, but
#: ``requires_grad_``, which returns the tensor).
SELF_RETURNING_MODULE_METHODS = frozenset({"eval", "train", "requires_grad_", "share_memory"})

#: Mappings of settings and built objects: ``hparams["encoder"]`` is a module, not a tensor.
SETTINGS_NAMES = frozenset({"hparams", "params", "hp", "opts", "opt", "config", "cfg", "args", "modules", "models"})

#: Verbs that start the names of helpers returning objects (``get_bench_module()``).
BUILDER_VERBS = ("build", "create", "make", "get", "load", "init", "setup", "prepare", "construct", "instantiate")

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def words(identifier: str) -> list[str]:
    """``netG`` -> net, g; ``text_encoder`` -> text, encoder; ``QNetwork`` -> q, network."""
    return [word.lower() for part in identifier.split("_") for word in _WORD.findall(part)]


def names_in_place_object(identifier: str) -> bool:
    lowered = identifier.lower()
    parts = set(words(identifier))
    plurals = {part[:-1] for part in parts if len(part) > 3 and part.endswith("s")}  # ``named_linears``
    return bool((parts | plurals) & IN_PLACE_WORDS) or (
        len(lowered) > 4 and lowered.endswith(IN_PLACE_ENDINGS)
    )


class Binding(enum.Enum):
    PARAMETER = "parameter"
    ASSIGNED = "assigned"
    UNPACKED = "unpacked"
    LOOP_ITEM = "loop item"
    #: ``with ... as x``, imports, ``global``: nothing to judge by.
    OTHER = "other"


class ReceiverJudge:
    """Judges receivers of conversions in one file; built once per `FileAnalysis`."""

    def __init__(self, analysis) -> None:
        self.analysis = analysis
        self._bindings: dict[cst.CSTNode, dict[str, list[tuple[Binding, Optional[cst.CSTNode]]]]] = {}
        #: Names whose bindings are being judged, with their scope: a binding may read the name again.
        self._judging: set[tuple[str, Optional[int]]] = set()
        self._fixture_defs: Optional[dict[str, cst.FunctionDef]] = None
        #: Per scope, the names it shows are no tensors (`names_shown_not_tensors`).
        self._not_tensors: dict[Union[cst.FunctionDef, cst.Module], set[str]] = {}
        libraries = self._imported_libraries()
        self._container_names = frozenset().union(
            *(names for library, names in CONTAINER_LIBRARIES.items() if library in libraries)
        )
        self._graph_names = DGL_GRAPH_NAMES if "dgl" in libraries else frozenset()

    def _imported_libraries(self) -> set[str]:
        return {full.split(".", 1)[0] for full in self.analysis.imports.aliases.values()}

    # ------------------------------------------------------------ receivers
    def judge(
        self, receiver: cst.BaseExpression, functions: Sequence[cst.FunctionDef], assigned: Optional[cst.BaseExpression] = None
    ) -> Receiver:
        """What ``receiver`` is, in the innermost-first ``functions`` holding the statement.

        The flow analysis's kind decides first, then what the receiver's shape and names show
        (``self.<layer>``, ``model``, ``hparams["encoder"]``), then where it was bound: by
        ``assigned``, the value of the one assignment that reaches the statement for certain
        (`reaching_assignment`), if there is one, else by every binding of the name.
        """
        known = self._known_kind(receiver)
        if known is not None:
            return known
        if isinstance(receiver, cst.Name):
            name = receiver.value
            if name in ("self", "cls") or names_in_place_object(name) or name in self._container_names:
                return Receiver.IN_PLACE
            if name in self._graph_names:
                return Receiver.GRAPH
            if self._shown_not_a_tensor(name, functions):
                return Receiver.UNKNOWN
            # What the name was bound to outranks where its value is: ``sbn = SyncBatchNorm(n).cuda()``
            # is on the device and still a module.
            if assigned is not None:
                judged = self._judge_binding(Binding.ASSIGNED, assigned, functions)
            else:
                judged = self._judge_name(name, functions)
            return judged if judged is Receiver.IN_PLACE else self._placed(receiver) or judged
        if isinstance(receiver, cst.Attribute):
            if _root(receiver) in ("self", "cls") or _names_in_place_part(receiver):
                return Receiver.IN_PLACE  # ``self.encoder``, ``trainer.model``: layers and models
            # ``helper.face_detector``, ``bias.seqinfo``: members of objects of unknown classes
            # are as often models and containers as tensors.
            return self._placed(receiver) or Receiver.UNKNOWN
        if isinstance(receiver, cst.Subscript):
            base = receiver.value
            if _root(base) in ("self", "cls") or _names_in_place_part(base) or self._known_kind(base) is Receiver.IN_PLACE:
                return Receiver.IN_PLACE  # ``self.layers[i]``, ``models[k]``
            if isinstance(base, cst.Name) and self._holds_modules(base.value, functions):
                return Receiver.IN_PLACE  # ``qlayers = get_layers(model); qlayers[name]``
            if (dotted_name(base) or "").rsplit(".", 1)[-1] in SETTINGS_NAMES or _names_in_place_key(receiver):
                return Receiver.IN_PLACE  # ``hparams["encoder"]``: modules built from a configuration
            return Receiver.LIKELY_TENSOR  # ``batch[0]``, ``inputs["ids"]``
        if isinstance(receiver, cst.Call):
            return self._judge_made(receiver, functions)
        return Receiver.UNKNOWN

    def judge_assigned(self, value: cst.BaseExpression, functions: Sequence[cst.FunctionDef]) -> Receiver:
        """What a receiver is that was last assigned ``value``."""
        return self._judge_binding(Binding.ASSIGNED, value, functions)

    def _shown_not_a_tensor(self, name: str, functions: Sequence[cst.FunctionDef]) -> bool:
        """The scope holding the statement shows ``name`` is no tensor (`names_shown_not_tensors`):
        jukebox stages its ``priors``, modules made in another file, on the GPU with
        ``prior.cuda()`` and back with ``prior.cpu()``, and reads ``prior.n_ctx`` between."""
        scope = functions[0] if functions else self.analysis.module
        names = self._not_tensors.get(scope)
        if names is None:
            names = self._not_tensors[scope] = names_shown_not_tensors(_walk_scope(scope))
        return name in names

    def _names_class(self, node: cst.BaseExpression) -> bool:
        """``FpQuantLinear``, ``layers.QuantLinear``, ``A if cond else B`` of such: a class, by
        the naming convention, not a torch function."""
        if isinstance(node, cst.IfExp):
            return self._names_class(node.body) and self._names_class(node.orelse)
        written = dotted_name(node)
        return written is not None and written.rsplit(".", 1)[-1][:1].isupper()

    def _names_a_class(self, name: str, functions: Sequence[cst.FunctionDef]) -> bool:
        """Every binding of ``name`` assigns it a class (not an instance): calling it constructs."""
        bindings = self.bindings_of(name, functions)
        return bool(bindings) and all(
            kind is Binding.ASSIGNED and isinstance(node, cst.BaseExpression) and self._names_class(node)
            for kind, node in bindings
        )

    def _holds_modules(self, name: str, functions: Sequence[cst.FunctionDef]) -> bool:
        """Every binding of ``name`` is a collection of modules, so its items are modules: what a
        helper named after modules gathers (``get_layers(model, [QuantLinear])``,
        ``find_modules(...)``), or a mapping or list built from ``named_modules()``,
        ``modules()``, ``children()`` or ``named_children()``."""
        bindings = self.bindings_of(name, functions)
        return bool(bindings) and all(
            kind is Binding.ASSIGNED and isinstance(node, cst.BaseExpression) and _gathers_modules(node)
            for kind, node in bindings
        )

    def _known_kind(self, node: cst.BaseExpression) -> Optional[Receiver]:
        """What the flow analysis and the project index tell of the kind of ``node``."""
        value = self.analysis.value_of(node)
        if value.kind is Kind.TENSOR:
            return Receiver.TENSOR
        if value.type_name is not None and value.kind is not Kind.MODULE:
            made = self.analysis.class_of(node)
            if made is not None and made.copies_on_to and made.is_module is False:
                return Receiver.COPY  # pytorch3d's ``Transform3d``: its ``to`` returns a new object
        if value.kind is not Kind.UNKNOWN or value.type_name is not None:
            return Receiver.IN_PLACE  # a module, a container, a device, a loader, an object of a class
        return None

    def _placed(self, node: cst.BaseExpression) -> Optional[Receiver]:
        """A value of unknown kind with a known place: a model's output, reshaped or indexed."""
        return Receiver.LIKELY_TENSOR if self.analysis.value_of(node).place is not Place.UNKNOWN else None

    def _judge_name(self, name: str, functions: Sequence[cst.FunctionDef]) -> Receiver:
        bindings = self.bindings_of(name, functions)
        if not bindings:
            return Receiver.UNKNOWN
        judging = (name, id(functions[0]) if functions else None)
        if judging in self._judging:
            # ``x = x.float()`` asks what ``x`` is again: the answer that changes no verdict
            # (the other bindings of ``x`` decide).
            return Receiver.TENSOR
        self._judging.add(judging)
        try:
            verdicts = {self._judge_binding(kind, node, functions) for kind, node in bindings}
        finally:
            self._judging.discard(judging)
        for verdict in (Receiver.IN_PLACE, Receiver.UNKNOWN, Receiver.GRAPH, Receiver.COPY, Receiver.LIKELY_TENSOR):
            if verdict in verdicts:
                return verdict
        return Receiver.TENSOR

    def _judge_binding(self, kind: Binding, node: Optional[cst.CSTNode], functions: Sequence[cst.FunctionDef]) -> Receiver:
        if kind is Binding.PARAMETER:
            assert isinstance(node, cst.Param)
            if node.annotation is not None:
                return Receiver.UNKNOWN
            owner = next((f for f in functions if any(p is node for p in parameters(f))), None)
            given = _parametrized_values(owner, node.name.value) if owner is not None else None
            if given is not None:
                # ``@pytest.mark.parametrize("prior", [BoxUniform(...), ...])``: what is listed
                outer = tuple(functions[functions.index(owner) + 1:]) if owner in functions else ()
                return self._strongest({self._judge_listed(value, outer) for value in given}) if given else Receiver.UNKNOWN
            fixture = self._fixtures().get(node.name.value)
            if fixture is not None and (not functions or functions[0] is not fixture):
                return self._judge_fixture(fixture)
            return Receiver.LIKELY_TENSOR
        if kind is Binding.UNPACKED:
            # ``images, labels = batch`` (or ``= next(iter(loader))``) unpacks tensors; what
            # an unknown helper returns (``model, optimizer = setup(cfg)``) may be anything.
            if isinstance(node, cst.Call) and dotted_name(node.func) != "next":
                return Receiver.LIKELY_TENSOR if self._judge_made(node, functions) is Receiver.LIKELY_TENSOR else Receiver.UNKNOWN
            return Receiver.LIKELY_TENSOR
        if kind is Binding.LOOP_ITEM:
            # ``for images, labels in loader`` unpacks tensors; a whole item may be a container,
            # and ``zip``, ``product`` or ``.items()`` pair anything.
            if not isinstance(node, cst.For):
                return Receiver.UNKNOWN  # ``for step, batch in enumerate(loader)``: a whole item
            if _yields_parameters(node.iter) or self._iterates_tensor_mapping(node.iter, functions):
                return Receiver.LIKELY_TENSOR  # ``for param in self.parameters()``: tensors
            unpacked = isinstance(node.target, (cst.Tuple, cst.List))
            return Receiver.LIKELY_TENSOR if unpacked and _yields_batches(node.iter) else Receiver.UNKNOWN
        if kind is Binding.ASSIGNED and isinstance(node, cst.BaseExpression):
            if isinstance(node, cst.Call):
                return self._judge_made(node, functions)
            known = self._known_kind(node) or self._placed(node)
            if known is not None:
                return known
            if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)):
                return Receiver.LIKELY_TENSOR
            if isinstance(node, (cst.Attribute, cst.Subscript)):
                return self.judge(node, functions)  # ``f = self.functions[0]`` is what ``self.functions[0]`` is
        return Receiver.UNKNOWN

    def _iterates_tensor_mapping(self, iterable: cst.BaseExpression, functions: Sequence[cst.FunctionDef]) -> bool:
        """``data.items()`` or ``data.values()`` where ``data`` is a parameter, bound nowhere else,
        annotated as a mapping of tensors: ``Dict[str, torch.Tensor]``, directly or through a type
        alias of the module (nequip's ``Type = Dict[str, torch.Tensor]``). A key is never converted."""
        if not (
            isinstance(iterable, cst.Call)
            and not iterable.args
            and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in ("items", "values")
            and isinstance(iterable.func.value, cst.Name)
        ):
            return False
        bindings = self.bindings_of(iterable.func.value.value, functions)
        if len(bindings) != 1 or bindings[0][0] is not Binding.PARAMETER:
            return False
        param = bindings[0][1]
        return isinstance(param, cst.Param) and param.annotation is not None and self._maps_to_tensors(param.annotation.annotation)

    def _maps_to_tensors(self, annotation: cst.BaseExpression) -> bool:
        if isinstance(annotation, cst.Name):
            annotation = _module_alias(self.analysis.module, annotation.value) or annotation
        if not (isinstance(annotation, cst.Subscript) and len(annotation.slice) == 2):
            return False
        if (dotted_name(annotation.value) or "").rsplit(".", 1)[-1] not in _MAPPING_TYPES:
            return False
        item = annotation.slice[1].slice
        if not isinstance(item, cst.Index):
            return False
        kind = self.analysis.qualified_name(item.value) or ""
        return kind in torch_api.LEGACY_TENSOR_TYPES or kind in torch_api.NN_TENSOR_CLASSES

    def _fixtures(self) -> dict[str, cst.FunctionDef]:
        """The pytest fixtures the file defines, by name: a test's parameter of that name
        receives what the fixture returns or yields."""
        if self._fixture_defs is None:
            self._fixture_defs = {}
            for node in walk(self.analysis.module):
                if isinstance(node, cst.FunctionDef) and any(
                    (dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "")
                    .rsplit(".", 1)[-1] == "fixture"
                    for d in node.decorators
                ):
                    self._fixture_defs.setdefault(node.name.value, node)
        return self._fixture_defs

    def _judge_fixture(self, fixture: cst.FunctionDef) -> Receiver:
        """What a fixture gives: its returned or yielded values, judged in its own scope
        (``return GPUBoostingTreeModel.from_context_graph(...)``: an object)."""
        given = [
            node.value
            for node in _walk_scope(fixture)
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression)
        ]
        if not given or (fixture.name.value, id(fixture)) in self._judging:
            return Receiver.UNKNOWN
        self._judging.add((fixture.name.value, id(fixture)))
        try:
            verdicts = {self.judge(value, (fixture,)) for value in given}
        finally:
            self._judging.discard((fixture.name.value, id(fixture)))
        return self._strongest(verdicts)

    def _judge_listed(self, value: cst.BaseExpression, functions: Sequence[cst.FunctionDef]) -> Receiver:
        """A value written in a decorator, which the flow analysis does not read: a call of a
        torch factory makes a tensor."""
        if isinstance(value, cst.Call) and (self.analysis.qualified_name(value.func) or "") in (
            torch_api.FACTORIES | torch_api.RANDOM_FACTORIES | torch_api.DATA_FACTORIES | torch_api.FACTORIES_WITHOUT_DEVICE_KEYWORD
        ):
            return Receiver.TENSOR
        return self.judge(value, functions)

    @staticmethod
    def _strongest(verdicts: set[Receiver]) -> Receiver:
        """The verdict of a value that may be any of ``verdicts``: in place or unknown wins."""
        for verdict in (Receiver.IN_PLACE, Receiver.UNKNOWN, Receiver.GRAPH, Receiver.COPY, Receiver.LIKELY_TENSOR):
            if verdict in verdicts:
                return verdict
        return Receiver.TENSOR

    def _judge_made(self, call: cst.Call, functions: Sequence[cst.FunctionDef]) -> Receiver:
        """What a call returns: a model's output is a tensor, a constructor makes an object."""
        known = self._known_kind(call)
        if known is not None:
            return known
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            made = self.analysis.class_of(call.func.value)
            if made is not None and method in made.makers and made.is_module is False:
                return Receiver.COPY  # ``Transform3d().compose(r, t)``: a new Transform3d
            if method in torch_api.CONVERSION_METHODS or method in SELF_RETURNING_MODULE_METHODS:
                # ``x.float()`` is what ``x`` is; ``self.model.eval()`` is ``self.model``
                return self.judge(call.func.value, functions)
            if method in torch_api.TENSOR_ONLY_METHODS:
                return Receiver.LIKELY_TENSOR  # ``emb.repeat_interleave(n, dim=0)``: only tensors have it
            if method == "get" and 1 <= len(call.args) <= 2 and all(arg.keyword is None and not arg.star for arg in call.args):
                # ``kwargs.get("node_idx")`` looks an item up, as ``kwargs["node_idx"]`` does: no builder
                item = cst.Subscript(call.func.value, [cst.SubscriptElement(cst.Index(call.args[0].value))])
                return self.judge(item, functions)
            if method in torch_api.TENSOR_RETURNING_METHODS:
                # ``out.squeeze(0)``, ``helper(x).mean(0)``: what else has these and converts
                # in place? Only containers that copy or reorder themselves as such.
                receiver = self.judge(call.func.value, functions)
                if receiver in (Receiver.TENSOR, Receiver.LIKELY_TENSOR) or (
                    receiver is Receiver.UNKNOWN and method not in CONTAINER_RETURNING_METHODS
                ):
                    return Receiver.LIKELY_TENSOR
        if self.analysis.qualified_name(call.func) in DGL_GRAPH_MAKERS:
            return Receiver.GRAPH
        callee = dotted_name(call.func)
        if callee is None:
            return self._placed(call) or Receiver.UNKNOWN
        if isinstance(call.func, cst.Name) and self._names_a_class(call.func.value, functions):
            return Receiver.IN_PLACE  # ``linear_func = FpQuantLinear if fp else IntQuantLinear``: a constructor
        last = callee.rsplit(".", 1)[-1]
        if set(words(callee.replace(".", "_"))) & ENCODING_MAKERS and not _given_a_moved_tensor(call):
            return Receiver.IN_PLACE  # ``tokenizer(texts, return_tensors="pt")``: a BatchEncoding
        if last[:1].isupper() or last in OBJECT_MAKERS or last.lstrip("_").startswith(BUILDER_VERBS + ("from_",)):
            return Receiver.IN_PLACE  # a class, a loader, a builder or an alternate constructor (from_...): an object
        if names_in_place_object(last) or _root(call.func) == "self":
            return Receiver.LIKELY_TENSOR  # ``model(x)``, ``self.encoder(x)``, ``self.embed(x)``
        return self._placed(call) or Receiver.UNKNOWN

    # ------------------------------------------------------------- bindings
    def bindings_of(self, name: str, functions: Sequence[cst.FunctionDef]):
        """How ``name`` is bound in the innermost scope that binds it (the module last)."""
        for scope in (*functions, self.analysis.module):
            found = self._scope_bindings(scope).get(name)
            if found:
                return found
        return []

    def binds_locally(self, name: str, functions: Sequence[cst.FunctionDef]) -> bool:
        """Whether assigning ``name`` at the statement keeps it the same variable: bound in the
        innermost function (and not declared global or nonlocal there), or at module level."""
        scope = functions[0] if functions else self.analysis.module
        found = self._scope_bindings(scope).get(name, [])
        declared_elsewhere = (Binding.OTHER, None) in found  # ``global x`` or ``nonlocal x``
        return bool(found) and not declared_elsewhere

    def _scope_bindings(self, scope: Union[cst.FunctionDef, cst.Module]) -> dict[str, list[tuple[Binding, Optional[cst.CSTNode]]]]:
        cached = self._bindings.get(scope)
        if cached is not None:
            return cached
        found: dict[str, list[tuple[Binding, Optional[cst.CSTNode]]]] = {}

        def add(target: cst.CSTNode, kind: Binding, node: Optional[cst.CSTNode]) -> None:
            if isinstance(target, cst.Name):
                found.setdefault(target.value, []).append((kind, node))
            elif isinstance(target, (cst.Tuple, cst.List)):
                if kind is Binding.LOOP_ITEM and _enumerates(node, target):
                    add(target.elements[0].value, Binding.OTHER, node)
                    found.setdefault(getattr(target.elements[1].value, "value", ""), []).append((Binding.LOOP_ITEM, None))
                    return
                for element in target.elements:
                    add(element.value, Binding.LOOP_ITEM if kind is Binding.LOOP_ITEM else Binding.UNPACKED, node)
            elif isinstance(target, cst.StarredElement):
                add(target.value, Binding.OTHER, target)

        if isinstance(scope, cst.FunctionDef):
            for param in parameters(scope):
                add(param.name, Binding.PARAMETER, param)
            for star in (scope.params.star_arg, scope.params.star_kwarg):
                if isinstance(star, cst.Param):
                    add(star.name, Binding.OTHER, star)
        for node in _walk_scope(scope):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    add(target.target, Binding.ASSIGNED, node.value)
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
                add(node.target, Binding.ASSIGNED, node.value)
            elif isinstance(node, cst.For):
                add(node.target, Binding.LOOP_ITEM, node)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                add(node.asname.name, Binding.OTHER, node)
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    found.setdefault(item.name.value, []).append((Binding.OTHER, None))
            elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    bound: cst.BaseExpression = alias.asname.name if alias.asname is not None else alias.name
                    while isinstance(bound, cst.Attribute):
                        bound = bound.value
                    add(bound, Binding.OTHER, node)
            elif isinstance(node, cst.NamedExpr):
                add(node.target, Binding.ASSIGNED, node.value)
        self._bindings[scope] = found
        return found


def reaching_assignment(
    ancestors: Sequence[cst.CSTNode], target: cst.BaseExpression, code: Callable[[cst.CSTNode], str]
) -> Optional[cst.BaseExpression]:
    """The value of the assignment to ``target`` that certainly reaches the statement whose
    ancestors (module first, down to its statement line) are ``ancestors``: the last plain
    ``target = value`` among the statements before it, in its block and the enclosing blocks of
    its function. ``None`` when a statement between binds ``target`` in another way (a tuple
    unpacking, a loop, an ``if`` that may assign it) or nothing before it assigns it."""
    text = code(target)
    for index in range(len(ancestors) - 2, -1, -1):
        block = ancestors[index]
        if isinstance(block, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(block, (cst.For, cst.While)) and ancestors[index + 1] is block.body:
            return None  # an assignment later in the loop's body reaches the next iteration
        if isinstance(block, (cst.Try, cst.TryStar)) and ancestors[index + 1] is not block.body:
            return None  # a handler runs after part of the ``try`` body, which may assign it
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            continue
        current = ancestors[index + 1]
        statements: list[cst.CSTNode] = list(block.body)
        position = next((i for i, statement in enumerate(statements) if statement is current), None)
        if position is None:
            continue
        for statement in reversed(statements[:position]):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in reversed(statement.body):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and code(small.targets[0].target) == text:
                        return small.value
                    if _binds(small, text, code):
                        return None
            elif _binds(statement, text, code):
                return None
    return None


def _binds(node: cst.CSTNode, text: str, code: Callable[[cst.CSTNode], str]) -> bool:
    """Whether ``node`` (a statement) may bind ``text`` anywhere: as an assignment target, a
    loop or ``with`` target, a name defined or imported, or through ``global``/``del``."""
    for found in walk(node):
        targets: list[cst.CSTNode] = []
        if isinstance(found, cst.Assign):
            targets = [t.target for t in found.targets]
        elif isinstance(found, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
            targets = [found.target]
        elif isinstance(found, cst.WithItem) and found.asname is not None:
            targets = [found.asname.name]
        elif isinstance(found, (cst.FunctionDef, cst.ClassDef)):
            targets = [found.name]
        elif isinstance(found, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.Del)):
            if text in code(found):
                return True
        for each in targets:
            for part in walk(each):
                written = code(part) if isinstance(part, cst.BaseExpression) else None
                if written is not None and (written == text or text.startswith((written + ".", written + "["))):
                    return True  # ``x = ...`` rebinds ``x.weight`` too
    return False


def _walk_scope(scope: Union[cst.FunctionDef, cst.Module]) -> Iterator[cst.CSTNode]:
    """The nodes of a function or module body, not those of nested functions, classes or
    comprehensions (their names are their own)."""
    body = scope.body
    stack: list[cst.CSTNode] = list(body.body) if isinstance(body, cst.IndentedBlock) else list(body) if isinstance(body, Sequence) else [body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            continue
        stack.extend(iter_child_nodes(node))


#: Wrappers that yield the items of the iterable they wrap (with an index first, for enumerate).
_ITEM_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "tqdm.tqdm", "tqdm.auto.tqdm"})


def _yields_batches(iterable: cst.BaseExpression) -> bool:
    """``loader``, ``self.train_loader``, ``enumerate(tqdm(loader))``: a loader of batches,
    not a ``zip``, ``product``, ``range`` or ``.items()`` pairing anything."""
    while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in _ITEM_WRAPPERS and iterable.args:
        iterable = iterable.args[0].value
    return isinstance(iterable, (cst.Name, cst.Attribute))


#: ``nn.Module`` methods that iterate over its tensors (with their names, for the ``named_`` ones).
_TENSOR_ITERATORS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})


#: Mapping types of annotations (``typing`` and builtin spellings).
_MAPPING_TYPES = frozenset({"Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"})


def _module_alias(module: cst.Module, name: str) -> Optional[cst.BaseExpression]:
    """The value of a module-level type alias ``name = ...`` (or ``name: TypeAlias = ...``)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name) and target.value == name:
                        return small.value
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                    return small.value
    return None


def _yields_parameters(iterable: cst.BaseExpression) -> bool:
    """``model.parameters()``, ``enumerate(self.named_buffers())``: a module's tensors (a name
    that comes with one is a string, never converted)."""
    while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in _ITEM_WRAPPERS | {"list"} and iterable.args:
        iterable = iterable.args[0].value
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in _TENSOR_ITERATORS
    )


def _parametrized_values(function: cst.FunctionDef, name: str) -> Optional[list[cst.BaseExpression]]:
    """The values ``@pytest.mark.parametrize`` gives the argument ``name`` of ``function``
    (``pytest.param(value, marks=...)`` unwrapped), an empty list when they cannot be read (a
    name, a call), ``None`` when no ``parametrize`` names the argument."""
    for decorator in function.decorators:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and (dotted_name(call.func) or "").endswith("parametrize") and len(call.args) >= 2):
            continue
        first = call.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)):
            names = [element.value.evaluated_value for element in first.elements if isinstance(element.value, cst.SimpleString)]
        elif isinstance(first, cst.SimpleString):
            names = [part.strip() for part in str(first.evaluated_value).split(",")]
        else:
            continue
        if name not in names:
            continue
        listed = call.args[1].value
        if not isinstance(listed, (cst.List, cst.Tuple)):
            return []
        index = names.index(name)
        values: list[cst.BaseExpression] = []
        for element in listed.elements:
            value = element.value
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").endswith("param"):
                parts = [arg.value for arg in value.args if arg.keyword is None]
            elif len(names) > 1 and isinstance(value, (cst.Tuple, cst.List)):
                parts = [part.value for part in value.elements]
            else:
                parts = [value]
            if len(names) > 1 and len(parts) != len(names) or len(names) == 1 and len(parts) != 1:
                return []
            values.append(parts[index])
        return values
    return None


def _enumerates(loop: Optional[cst.CSTNode], target: cst.BaseExpression) -> bool:
    """``for step, batch in enumerate(...)``: the second name is a whole item."""
    return (
        isinstance(loop, cst.For) and loop.target is target and isinstance(target, (cst.Tuple, cst.List))
        and len(target.elements) == 2
        and isinstance(target.elements[1].value, cst.Name)
        and _unwrapped(loop.iter, {"enumerate"}) is not None
    )


def _unwrapped(iterable: cst.BaseExpression, callees: set[str]) -> Optional[cst.Call]:
    """The call of one of ``callees`` inside progress wrappers: ``tqdm(enumerate(loader), total=n)``."""
    while isinstance(iterable, cst.Call) and iterable.args:
        callee = dotted_name(iterable.func)
        if callee in callees:
            return iterable
        if callee not in _ITEM_WRAPPERS or callee in ("enumerate", "iter"):
            return None
        iterable = iterable.args[0].value
    return None


#: ``nn.Module`` methods that iterate over its submodules.
_MODULE_ITERATORS = frozenset({"named_modules", "modules", "children", "named_children"})


def _gathers_modules(value: cst.BaseExpression) -> bool:
    """A collection of modules: ``get_layers(model)`` (a helper named after modules, not a
    constructor), ``dict(model.named_modules())``, ``{n: m for n, m in model.named_children()}``."""
    if isinstance(value, cst.Call):
        callee = dotted_name(value.func)
        if callee is None:
            return False
        last = callee.rsplit(".", 1)[-1]
        if last in ("dict", "list", "OrderedDict") and value.args:
            return _gathers_modules(value.args[0].value)
        if last in _MODULE_ITERATORS:
            return True
        # A helper whose name is a verb and ends in a word for modules (``get_layers``,
        # ``find_modules``); not a model called on its input (``model(x)``, ``get_model_outputs``).
        parts = words(last)
        return len(parts) > 1 and parts[0] in BUILDER_VERBS + ("find", "collect", "gather") and names_in_place_object(parts[-1])
    if isinstance(value, (cst.DictComp, cst.ListComp)):
        return any(_gathers_modules(node.iter) for node in _comprehension_fors(value.for_in))
    return False


def _given_a_moved_tensor(call: cst.Call) -> bool:
    """``extractor(samples.to(device))``: a callee given a tensor it had moved to a device first
    is a module at work, not a tokenizer or feature extractor, which take raw data and place
    their own output (``return_tensors="pt"``)."""
    return any(
        arg.keyword is None
        and isinstance(arg.value, cst.Call)
        and isinstance(arg.value.func, cst.Attribute)
        and arg.value.func.attr.value in ("to", "cuda")
        for arg in call.args
    ) and not any(arg.keyword is not None and arg.keyword.value == "return_tensors" for arg in call.args)


def _comprehension_fors(node: Optional[cst.CompFor]) -> Iterator[cst.CompFor]:
    while node is not None:
        yield node
        node = node.inner_for_in


def _names_in_place_part(node: cst.BaseExpression) -> bool:
    """``trainer.model``, ``components.safety_checker``: a part of the chain names a module."""
    return any(names_in_place_object(part) for part in (dotted_name(node) or "").split(".") if part)


def _names_in_place_key(subscript: cst.Subscript) -> bool:
    """``x["embedding_model"]``: a key that names a module."""
    for element in subscript.slice:
        if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.SimpleString):
            key = element.slice.value.evaluated_value
            if isinstance(key, str) and names_in_place_object(key):
                return True
    return False


def _root(node: cst.BaseExpression) -> Optional[str]:
    """The name an attribute chain or subscript starts from: ``self`` for ``self.a.b[0]``."""
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return node.value if isinstance(node, cst.Name) else None
