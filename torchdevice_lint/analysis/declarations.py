"""What a file declares, read in one pass before any statement is walked.

The flow walk needs these facts up front: which classes are modules (a base class may come
later in the file or from another file of the project), which functions exist and where they
nest, which names the file calls, and whether it sets a default device. The pass also fills
the file's import table, imports inside functions included.
"""

from __future__ import annotations

import functools
from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.evidence import methods_reached_from
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.project import ProjectView
from torchdevice_lint.analysis.scopes import ClassInfo
from torchdevice_lint.analysis.tree import iter_child_nodes, method_named, walk

#: Methods of a module whose positional inputs arrive on the module's device.
ENTRY_METHODS = frozenset({"forward", "training_step", "validation_step", "test_step", "predict_step"})

#: Calls that make the file's factories land on a device of its choosing.
_DEFAULT_DEVICE_SETTERS = frozenset({"set_default_device", "set_default_tensor_type"})

#: Where a function is defined: the function and the class whose bodies hold it (None: none).
Parents = tuple[Optional[cst.FunctionDef], Optional[cst.ClassDef]]


class Declarations:
    """The classes, functions and imports of one file, and how its classes relate to torch."""

    def __init__(self, module: cst.Module, imports: ImportTable, project: Optional[ProjectView] = None) -> None:
        self.imports = imports
        self.project = project
        self.classes: dict[str, ClassInfo] = {}
        #: Functions defined at the module level, by name (the first definition wins).
        self.functions: dict[str, cst.FunctionDef] = {}
        #: Every function of the file, in source order, with where it is defined.
        self.parents: dict[cst.FunctionDef, Parents] = {}
        #: Names this file calls: its own functions and classes that it runs itself.
        self.called_names: set[str] = set()
        self.sets_default_device = False
        self._module = module
        self._collect(module, None, None)
        self._judge_classes()

    @functools.cached_property
    def run_by_the_file(self) -> set[str]:
        """Functions and classes of the file its own top-level code runs, directly or through
        functions that it runs (``main()`` under ``if __name__ == "__main__":``). A helper only
        other functions call (gpytorch's ``_psd_safe_cholesky`` under ``psd_safe_cholesky(A)``,
        101d3729b3) runs where their callers' callers put their tensors."""
        called_in = self._names_called_by_functions
        pending: list[str] = []
        stack: list[cst.CSTNode] = list(self._module.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                pending.append(node.func.value)
            stack.extend(node.children)
        run: set[str] = set()
        while pending:
            name = pending.pop()
            if name in run:
                continue
            run.add(name)
            pending.extend(called_in.get(name, ()))
        return run

    @functools.cached_property
    def _names_called_by_functions(self) -> dict[str, set[str]]:
        """Top-level function -> the plain names it calls (``main`` -> ``{"train", "Net"}``)."""
        return {
            name: {n.func.value for n in walk(function.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
            for name, function in self.functions.items()
        }

    def runs_own_modules(self) -> bool:
        """The file runs the modules it makes itself: its top-level code does, or one of its
        functions calls a module it got from a class or a helper of the file (``model, args =
        _load_model()`` then ``model(x, n)``: torchmetrics' NISQA, a model the metric runs on
        the CPU; a test that builds a module of its own and runs it)."""
        if self.run_by_the_file & (self.classes.keys() | self.functions.keys()):
            return True
        makers = {name for name, info in self.classes.items() if info.is_module}
        while True:  # helpers that build one, through helpers that do
            more = {name for name, names in self._names_called_by_functions.items() if names & makers} - makers
            if not more:
                break
            makers |= more
        for function in self.parents:  # methods too: a test method that builds a module and runs it
            made: set[str] = set()
            called: set[str] = set()
            for node in walk(function.body):
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
                    func = node.value.func
                    if isinstance(func, cst.Name) and func.value in makers:
                        made |= {n.value for target in node.targets for n in walk(target.target) if isinstance(n, cst.Name)}
                elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                    called.add(node.func.value)
            if made & called:
                return True
        return False

    def _collect(self, node: cst.CSTNode, function: Optional[cst.FunctionDef], klass: Optional[cst.ClassDef]) -> None:
        for child in iter_child_nodes(node):
            # ``type(...) is``: ``isinstance`` on LibCST's abstract-base-class instances is slow,
            # and this visits every node of the file (none of these classes has subclasses).
            if type(child) is cst.Name:
                continue  # the commonest node, and a leaf
            if type(child) is cst.Import or type(child) is cst.ImportFrom:
                self.imports.add(child, function or klass)
                if self.project is not None and type(child) is cst.ImportFrom and type(child.names) is cst.ImportStar:
                    module = (dotted_name(child.module) if child.module is not None else "") or ""
                    if function is None and klass is None:
                        self.imports.add_star_import(self.project.torch_names_of_star_import("." * len(child.relative) + module))
            elif type(child) is cst.FunctionDef:
                self.parents[child] = (function, klass)
                if function is None and klass is None:
                    self.functions.setdefault(child.name.value, child)
                self._collect(child, child, None)
                continue
            elif type(child) is cst.ClassDef:
                self.classes[child.name.value] = ClassInfo(
                    child, None, method_named(child, "to") is not None, running_methods=methods_reached_from(child, ENTRY_METHODS)
                )
                self._collect(child, function, child)
                continue
            elif type(child) is cst.Call:
                func = child.func
                if type(func) is cst.Name:
                    self.called_names.add(func.value)
                called = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
                if called in _DEFAULT_DEVICE_SETTERS and self.imports.qualified_name(func) == f"torch.{called}":
                    self.sets_default_device = True
            self._collect(child, function, klass)

    def _judge_classes(self) -> None:
        """Whether each class is an ``nn.Module``, to a fixed point: a base may be declared below."""
        for _ in range(len(self.classes) + 1):
            changed = False
            for info in self.classes.values():
                verdict = self._is_module_class(info.node)
                if verdict != info.is_module:
                    info.is_module, changed = verdict, True
            if not changed:
                break

    def is_autograd_function(self, node: cst.ClassDef) -> bool:
        """A subclass of ``torch.autograd.Function``."""
        return any(
            base.keyword is None
            and self.imports.qualified_name(base.value) in ("torch.autograd.Function", "torch.autograd.function.Function")
            for base in node.bases
        )

    def imported_project_class(self, node: cst.BaseExpression):
        """The class of another file of the project that ``node`` names through an import."""
        dotted = dotted_name(node) if self.project is not None else None
        if dotted is None or self.project is None or dotted.partition(".")[0] in self.classes:
            return None
        if (self.imports.qualified_name(node) or "").startswith("torch."):
            return None  # torch's own classes are known by name, even when linting torch
        return self.project.class_named(dotted)

    def _is_module_class(self, node: cst.ClassDef) -> Optional[bool]:
        verdict: Optional[bool] = False
        for base in node.bases:
            if base.keyword is not None:
                continue
            imported = self.imported_project_class(base.value)
            if imported is not None:
                if imported.is_module:
                    return True
                verdict = None if imported.is_module is None else verdict
                continue
            qualified = self.imports.qualified_name(base.value)
            if qualified is not None:
                if torch_api.is_torch_nn_module_class(qualified) or qualified in torch_api.THIRD_PARTY_MODULE_BASES:
                    return True
                if not qualified.startswith("torch.") and qualified not in ("typing.Generic", "abc.ABC"):
                    verdict = None
                continue
            if isinstance(base.value, cst.Name):
                local = self.classes.get(base.value.value)
                if local is not None:
                    if local.is_module:
                        return True
                    if local.is_module is None:
                        verdict = None
                    continue
                if base.value.value in ("object", "Exception", "dict", "list", "tuple"):
                    continue
            verdict = None
        return verdict
