"""Where the code itself shows a place is the CPU, so the device-agnostic contract does not hold.

The contract says tensors from the caller live on the caller's device. Data loading runs on
the CPU by design (a ``Dataset.__getitem__``, a collate function, DataLoader workers), and a
branch taken when CUDA is missing is the CPU by construction.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from torchdevice_lint.analysis.imports import dotted_name

#: Functions that build batches on the CPU, before anything moves them.
_DATA_LOADING_FUNCTIONS = ("__getitem__", "__iter__", "__next__", "collate")
#: Words in an ``if`` test that make its branches a choice between CPU and device.
_AVAILABILITY_WORDS = ("is_available", "cpu")


def is_data_loading(function: cst.FunctionDef) -> bool:
    """``__getitem__``, ``collate_fn``: functions that build batches on the CPU."""
    return any(word in function.name.value for word in _DATA_LOADING_FUNCTIONS)


def runs_on_cpu(module: cst.Module, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside data loading (a Dataset, a collate function) or a branch of an availability test."""
    for node in ancestors:
        if isinstance(node, cst.FunctionDef) and is_data_loading(node):
            return True
        if isinstance(node, cst.ClassDef) and any(
            (dotted_name(base.value) or "").endswith("Dataset") for base in node.bases
        ):
            return True
        if isinstance(node, (cst.If, cst.IfExp)):
            test = module.code_for_node(node.test)
            if any(word in test for word in _AVAILABILITY_WORDS):
                return True
    return False
