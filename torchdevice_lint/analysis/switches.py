"""A repository's own accelerator switch: the flag, list or count its code tests before moving
to CUDA (``if args.cuda: model.cuda()``, ``if len(gpu_ids) > 0: net.cuda(gpu_ids[0])``,
``if cfg.NUM_GPUS: x = x.cuda()``). A fix of an unguarded move builds its device from that test
(``torch.device("cuda" if args.cuda else "cpu")``) rather than from ``torch.cuda.is_available()``,
which would contradict ``--no-cuda``, ``--gpu_ids -1`` or ``NUM_GPUS=0``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from torchdevice_lint.analysis.devices import looks_like_accelerator_switch
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.tree import walk


@dataclass(frozen=True)
class SwitchGuard:
    #: The switch, dotted: ``args.cuda``, ``self.gpu_mode``, ``gpu_ids``.
    switch: str
    #: The test as the file writes it: ``args.cuda``, ``len(gpu_ids) > 0``.
    test: str
    #: The ``if`` statement or conditional expression.
    node: cst.CSTNode


#: A count of GPUs (``ngpu``, ``num_gpus``): a switch only where the code tests it, since scripts
#: often default it to 1 and choose the accelerator with another flag (pytorch/examples' DCGAN).
_GPU_COUNT = re.compile(r"n(?:um)?_?gpus?")


def named_as_switch(parameter: str) -> bool:
    """A parameter whose name alone makes it the switch: ``gpu_ids``, ``use_cuda``; not a count."""
    return looks_like_accelerator_switch(parameter) and _GPU_COUNT.fullmatch(parameter.lower().lstrip("_")) is None


def switch_in_test(test: cst.BaseExpression) -> Optional[str]:
    """The switch a test asks whether to use the accelerator with: ``S``, ``len(S)``,
    ``len(S) > 0``, ``S > 0`` or ``S >= 1`` for a switch-named ``S`` (never ``S is not None``,
    whose ``None`` often means every GPU, nor a negated test)."""
    subject = test
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        bound = comparison.comparator
        if not isinstance(bound, cst.Integer) or not (
            (isinstance(comparison.operator, cst.GreaterThan) and bound.value == "0")
            or (isinstance(comparison.operator, cst.GreaterThanEqual) and bound.value == "1")
        ):
            return None
        subject = test.left
    if isinstance(subject, cst.Call) and isinstance(subject.func, cst.Name) and subject.func.value == "len":
        if len(subject.args) != 1 or subject.args[0].keyword is not None or subject.args[0].star:
            return None
        subject = subject.args[0].value
    switch = dotted_name(subject)
    return switch if switch is not None and looks_like_accelerator_switch(switch) else None


def moves_to_cuda(node: cst.CSTNode, imports: ImportTable) -> bool:
    """``node`` moves something to CUDA (``x.cuda()``) or calls into ``torch.cuda``."""
    return any(
        isinstance(call, cst.Call)
        and (
            (isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda")
            or (imports.qualified_name(call.func) or "").startswith("torch.cuda.")
        )
        for call in walk(node)
    )


def chooses_cuda(node: cst.CSTNode, imports: ImportTable) -> bool:
    """``node`` names a ``torch.cuda`` type (``torch.cuda.FloatTensor``) or the device
    ``'cuda'``/``'cuda:0'``: what a switch chooses when the moves live elsewhere."""
    for inner in walk(node):
        if isinstance(inner, cst.Attribute) and (imports.qualified_name(inner) or "").startswith("torch.cuda."):
            return True
        if isinstance(inner, cst.SimpleString):
            value = inner.evaluated_value
            if isinstance(value, str) and _CUDA_DEVICE.fullmatch(value):
                return True
    return False


#: A CUDA device as a string: ``"cuda"``, ``"cuda:0"``.
_CUDA_DEVICE = re.compile(r"cuda(?::\d+)?")


def switch_guards(node: cst.CSTNode, module: cst.Module, imports: ImportTable) -> list[SwitchGuard]:
    """The ``if`` statements and conditional expressions in ``node`` whose test is a switch
    (`switch_in_test`) and whose guarded part moves to or chooses CUDA (`moves_to_cuda`:
    ``self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor``)."""
    moving, choosing = [], []
    for inner in walk(node):
        if isinstance(inner, (cst.If, cst.IfExp)):
            switch = switch_in_test(inner.test)
            if switch is None:
                continue
            guard = SwitchGuard(switch, module.code_for_node(inner.test).strip(), inner)
            if moves_to_cuda(inner.body, imports):
                moving.append(guard)
            elif chooses_cuda(inner.body, imports):
                choosing.append(guard)
    return moving + choosing  # a test written beside a move first (`len(gpu_ids) > 0` over `gpu_ids`)


def defines_switch(value: cst.BaseExpression) -> bool:
    """An assignment's value that asks whether CUDA is there: ``not args.no_cuda and
    torch.cuda.is_available()``."""
    return any(
        isinstance(node, cst.Attribute) and node.attr.value == "is_available" for node in walk(value)
    )


def device_from(test: str, torch: str, quote: str) -> str:
    """The device a switch's test chooses: ``torch.device("cuda" if args.cuda else "cpu")``."""
    return f"{torch}.device({quote}cuda{quote} if {test} else {quote}cpu{quote})"
