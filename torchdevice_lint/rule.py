"""The base class every rule derives from, and what a rule sees while it runs."""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import ClassVar, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import DeviceChoice, FileAnalysis
from torchdevice_lint.analysis.binding import bound_before
from torchdevice_lint.analysis.operands import assigned_name, bound_names, next_statement_partners, operand_partners
from torchdevice_lint.analysis.tree import functions_holding, is_compound_statement
from torchdevice_lint.findings import Fix, Replacement, Report, Safety


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; ``fixed`` is the expected output of all its fixes."""

    source: str
    fixed: Optional[str] = None
    #: How many findings of the rule the example holds.
    count: int = 1


class RuleContext:
    """What a rule may ask while the engine walks the tree: the analysis and the path."""

    def __init__(self, analysis: FileAnalysis) -> None:
        self.analysis = analysis
        #: The nodes from the module down to (not including) the node being visited.
        self.ancestors: list[cst.CSTNode] = []
        self.reports: list[Report] = []
        self._top_level_index: dict[cst.CSTNode, int] = {statement: index for index, statement in enumerate(analysis.module.body)}

    def statement(self) -> Optional[cst.CSTNode]:
        """The innermost statement that holds the node being visited."""
        for node in reversed(self.ancestors):
            if type(node) is cst.SimpleStatementLine or is_compound_statement(node):
                return node
        return None

    def enclosing_functions(self) -> list[cst.FunctionDef]:
        return functions_holding(self.ancestors)

    def parent(self, depth: int = 1) -> Optional[cst.CSTNode]:
        return self.ancestors[-depth] if len(self.ancestors) >= depth else None

    def chained_call(self, receiver: cst.CSTNode, depth: int = 0) -> Optional[tuple[str, cst.Call]]:
        """The method called on ``receiver`` (``receiver.fill_(0)``), which is the node being
        visited (``depth`` 0) or its ``depth``-th ancestor: the method's name and the call; None
        where ``receiver`` is not the object of a method call."""
        attribute, call = self.parent(depth + 1), self.parent(depth + 2)
        if (
            isinstance(attribute, cst.Attribute)
            and attribute.value is receiver
            and isinstance(call, cst.Call)
            and call.func is attribute
        ):
            return attribute.attr.value, call
        return None

    def device_for(
        self,
        partner: Optional[str] = None,
        operands: Sequence[cst.Name] = (),
        moving: Optional[str] = None,
        computing: bool = True,
    ) -> DeviceChoice:
        """`DeviceBinder.choose`; ``computing`` false for a site that computes nothing with the
        function's tensors (a checkpoint's ``map_location``, the process's default device)."""
        return self.analysis.binder.choose(
            self.statement(), self.enclosing_functions(), partner, operands, moving, computing
        )

    def operand_partners(self, node: cst.BaseExpression) -> list[cst.Name]:
        """The tensors ``node`` (being visited, or one of its ancestors) meets in one operation
        requiring one device, in its statement or, bound to a name, in the next one
        (`analysis.operands`)."""
        imports, values = self.analysis.imports, self.analysis.flow.values
        above = next((self.ancestors[:i] for i in range(len(self.ancestors) - 1, -1, -1) if self.ancestors[i] is node), None)
        above = self.ancestors if above is None else above
        partners = operand_partners(node, above, imports, values)
        name = assigned_name(node, above, imports)
        if partners or name is None:
            return partners
        statement = self.statement()
        index = next((i for i in range(len(self.ancestors) - 1, -1, -1) if self.ancestors[i] is statement), 0)
        block = self.ancestors[index - 1] if index > 0 else None
        if statement is None:
            return []
        functions = self.enclosing_functions()
        function = functions[0] if functions and isinstance(functions[0], cst.FunctionDef) else None
        scope = self.analysis.flow.scopes.get(function) if function is not None else None
        site = self.analysis.flow.statement_order.get(statement, 0)
        existing = (lambda n: bound_before(scope, n, site)) if scope is not None else None
        partners = next_statement_partners(name, statement, block, imports, values, existing=existing)
        if partners and function is not None and scope is not None:
            # a partner bound after the move, computed only from a tensor argument the function
            # never binds again, is where that argument is
            derived = self.analysis.argument_derived_names(function)
            assigned = bound_names(function.body)
            partners = [
                cst.Name(derived[p.value])
                if p.value in derived and not bound_before(scope, p.value, site) and derived[p.value] not in assigned
                else p
                for p in partners
            ]
        return partners

    def report(self, rule: "Rule", node: cst.CSTNode, message: Optional[str] = None, fix: Optional[Fix] = None) -> None:
        top_level = self.ancestors[1] if len(self.ancestors) > 1 else node
        self.reports.append(
            Report(
                code=rule.code,
                message=message or rule.message,
                node=node,
                fix=fix,
                top_level_index=self._top_level_index.get(top_level, 0),
            )
        )


class Rule:
    """One check: its code, message, documentation, examples and fix.

    A subclass defines ``visit_<NodeType>`` methods; the engine calls them in one shared walk.
    Its docstring is its documentation, in the sections What it does / Why is this bad? /
    Example / Use instead / Fix safety.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    #: Text without which the rule cannot fire: files lacking all of them are never parsed.
    needles: ClassVar[tuple[str, ...]]
    #: Off unless selected explicitly (``--select TDL0NN``) or with ``--preview``.
    preview: ClassVar[bool] = False
    #: Judges whether the file runs without an accelerator, so reads `FileAnalysis.cpu_fallback_coming`.
    reads_coming_cpu_fallback: ClassVar[bool] = False
    valid: ClassVar[Sequence[str]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.analysis = context.analysis

    def report(self, node: cst.CSTNode, message: Optional[str] = None, fix: Optional[Fix] = None) -> None:
        self.context.report(self, node, message, fix)

    def device_fix(
        self,
        replacements: Sequence[tuple[cst.CSTNode, Replacement]],
        device: DeviceChoice,
        safety: Safety = Safety.SAFE,
    ) -> Optional[Fix]:
        """The fix writing ``device``; none where the site cannot read it (a local of the same name)."""
        if device.shadowed:
            return None
        return Fix(safety, tuple(replacements), needs_device_binding=device.inserts_binding)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return textwrap.shorten(cls.message, 80)
