"""Count safe fixes that read ``.device`` from a name not known to be a tensor (#12).

    python scripts/count_untrusted_device_reads.py PATH [PATH ...] [--limit N] [--show N] [-j N] [--progress N]

Applies the safe fixes of every Python file under PATH in memory, finds each ``name.device``
a fix adds to a line, and judges ``name`` on the original code with rules of its own, not
the binder's: a name is a known tensor when its function (or the module) shows it is one,
through a ``Tensor`` annotation, a tensor method or attribute read on it (``x.size()``,
``x.shape``, ``x.device``...), an assignment from a ``torch.*`` call or a tensor method, or
being a module's first ``forward`` input; and it is not when the code also uses it as a size,
a count, an index, a flag, a mapping or a graph (``torch.zeros(1, batch_size)``, ``range(n)``,
``x[i]``, ``if flag:``, ``batch["x"]``, ``g.num_nodes()``) without a tensor-only method. Prints the count (the acceptance wants 0), and the
first offending lines. Nothing is written to disk. ``-j N`` judges N files at a time, in
worker processes, one file per task; the output is the same as a serial run's, in file order.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import multiprocessing
import re
import sys
import time
from pathlib import Path
from typing import Iterator, NamedTuple, Optional

import libcst as cst
from libcst.metadata import PositionProvider

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.api import fix_source
from torchdevice_lint.files import iter_python_files
from torchdevice_lint.parsing import SourceError

_DEVICE_READ = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.device\b(?!\s*\()")
#: Reads on a name that only a tensor answers (NumPy arrays have ``shape`` and ``dtype`` too,
#: but no fix pairs them with a CUDA device).
_TENSOR_READS = frozenset({"size", "shape", "dim", "view", "device", "dtype", "reshape", "numel", "is_cuda", "get_device"})
_TENSOR_ONLY = torch_api.TENSOR_ONLY_METHODS | {"size", "dim", "view", "is_cuda", "device", "numel", "get_device"}
#: What graphs (DGL, PyG) and mappings answer and tensors do not: a name they are read on is no tensor.
_NOT_ON_TENSORS = frozenset("num_nodes num_edges number_of_nodes ndata edata edge_index in_degrees keys items".split())
_ENTRY_METHODS = ("forward", "__call__", "training_step", "validation_step", "test_step", "predict_step")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--limit", type=int, default=0, help="stop after this many files (0: all)")
    parser.add_argument("--show", type=int, default=20)
    parser.add_argument("--progress", type=int, default=0, metavar="N", help="print progress to stderr every N files")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="judge N files at a time (default 1)")
    options = parser.parse_args(argv)
    files = fixed_files = reads = 0
    offending: list[str] = []
    started = time.monotonic()
    paths = _python_files(options.paths, options.limit)
    with contextlib.ExitStack() as stack:
        if options.jobs > 1:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(options.jobs))
            judged: Iterator[tuple[Path, Optional[Judged]]] = pool.imap(judge_file, paths, chunksize=1)
        else:
            judged = map(judge_file, paths)
        for path, result in judged:
            files += 1
            if options.progress and files % options.progress == 0:
                print(f"  {files} files, {time.monotonic() - started:.0f} s, at {path}", file=sys.stderr, flush=True)
            if result is None:
                continue
            fixed_files += 1
            reads += result.reads
            offending.extend(f"{path}:{line_number}: {name}.device" for line_number, name in result.offending)
    print(f"files: {files}, files a safe fix changes: {fixed_files}, .device reads the fixes add: {reads}")
    print(f"safe fixes reading .device from a name not known to be a tensor: {len(offending)}")
    for line in offending[: options.show]:
        print(f"  {line}")
    return 0


class Judged(NamedTuple):
    """What the safe fixes of one file add: how many ``.device`` reads, and the untrusted ones."""

    reads: int
    offending: list[tuple[int, str]]


def judge_file(path: Path) -> tuple[Path, Optional[Judged]]:
    """``path`` and its judgement; None where no safe fix changes it (or it cannot be read or parsed)."""
    try:
        original = path.read_text(encoding="utf-8")
        fixed = fix_source(original, filename=str(path))
    except (SourceError, UnicodeDecodeError, ValueError, RecursionError):
        return path, None
    if fixed == original:
        return path, None
    added = list(added_device_reads(original, fixed))
    offending = [(line_number, name) for line_number, name in added if not known_tensor(original, line_number, name)]
    return path, Judged(len(added), offending)


def _python_files(paths: list[str], limit: int) -> Iterator:
    count = 0
    for path in iter_python_files(paths):
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        yield Path(path)
        count += 1
        if limit and count >= limit:
            return


def added_device_reads(original: str, fixed: str) -> Iterator[tuple[int, str]]:
    """(line of the fixed file's pair in the original, name) for each ``name.device`` a fix adds."""
    before, after = original.splitlines(), fixed.splitlines()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag not in ("replace", "insert"):
            continue
        old_names = [m.group(1) for line in before[a_start:a_end] for m in _DEVICE_READ.finditer(line)]
        for offset, line in enumerate(after[b_start:b_end]):
            for match in _DEVICE_READ.finditer(line):
                name = match.group(1)
                if name in old_names:
                    old_names.remove(name)
                    continue
                yield min(a_start + offset, max(a_end - 1, a_start)) + 1, name


def known_tensor(source: str, line_number: int, name: str) -> bool:
    module = cst.parse_module(source)
    imports = ImportTable()
    for node in walk(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            imports.add(node)
    if name == "self" or name in imports.aliases:
        return name == "self"  # ``self.device``: the binder's class attribute, not a tensor's
    around: list[Optional[cst.FunctionDef]] = [*_functions_at(module, line_number)]
    for function in around or [None]:
        scope: cst.CSTNode = function if function is not None else module
        if function is not None and name not in _parameters(function) and not _binds(function, name):
            continue  # a name of an enclosing function: judge it there
        tensor, size = _evidence(scope, name, imports)
        if function is not None and (_first_forward_input(function) == name or _passed_a_tensor(module, function, name, imports)):
            tensor = True
        return tensor and not size
    return False


def _functions_at(module: cst.Module, line_number: int) -> list[cst.FunctionDef]:
    """The functions around ``line_number``, innermost first."""
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    around = [
        node
        for node, span in positions.items()
        if isinstance(node, cst.FunctionDef) and span.start.line <= line_number <= span.end.line
    ]
    return sorted(around, key=lambda node: positions[node].start.line, reverse=True)


def _parameters(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def _binds(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is assigned in ``function``, or is the target of one of its ``for`` loops."""
    return any(
        (isinstance(node, cst.Assign) and _assigns(node, name))
        or (isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == name)
        for node in walk(function.body)
    )


def _passed_a_tensor(module: cst.Module, function: cst.FunctionDef, name: str, imports: ImportTable) -> bool:
    """A call of ``function`` in the file passes a tensor (a ``torch.*`` result, or a name
    assigned one) where ``name`` is: ``make_data(torch.zeros(...))``, or, for a method,
    ``self.add_loss(loss, ...)`` with ``loss = torch.tensor(0).cuda()`` (``self`` not passed)."""
    parameters = _parameters(function)
    if name not in parameters:
        return False
    index = parameters.index(name)
    is_method = bool(parameters) and parameters[0] in ("self", "cls")
    tensors = {
        target.target.value
        for node in walk(module)
        if isinstance(node, cst.Assign) and _tensor_expression(node.value, imports)
        for target in node.targets
        if isinstance(target.target, cst.Name)
    }
    for node in walk(module):
        if not isinstance(node, cst.Call):
            continue
        callee = dotted_name(node.func)
        if is_method and callee in (f"self.{function.name.value}", f"cls.{function.name.value}"):
            skipped = 1
        elif not is_method and callee == function.name.value:
            skipped = 0
        else:
            continue
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        keyword = [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == name]
        passed = keyword or positional[index - skipped : index - skipped + 1]
        if any(_tensor_expression(v, imports) or (isinstance(v, cst.Name) and v.value in tensors) for v in passed):
            return True
    return False


def _evidence(scope: cst.CSTNode, name: str, imports: ImportTable) -> tuple[bool, bool]:
    """(shown to be a tensor, used as a size/count/index/flag without a tensor-only method)."""
    tensor = strict = size = False
    if isinstance(scope, cst.FunctionDef):
        for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            if param.name.value == name and param.annotation is not None:
                text = cst.Module([]).code_for_node(param.annotation.annotation)
                if "Tensor" in text:
                    tensor = strict = True
    for node in walk(scope):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
            if node.attr.value in _TENSOR_READS or node.attr.value in _TENSOR_ONLY:
                tensor = True
            if node.attr.value in _TENSOR_ONLY:
                strict = True
            if node.attr.value in _NOT_ON_TENSORS:
                size = True
        if isinstance(node, cst.Assign) and _assigns(node, name) and _tensor_expression(node.value, imports):
            tensor = True
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func)
            is_factory = callee is not None and (
                callee.split(".")[-1] in {"zeros", "ones", "empty", "full", "randn", "rand", "arange", "eye"}
                or callee == "range"
            )
            if is_factory and any(
                arg.keyword is None and isinstance(arg.value, cst.Name) and arg.value.value == name for arg in node.args
            ):
                size = True
        if isinstance(node, cst.SubscriptElement) and isinstance(node.slice, cst.Index):
            if isinstance(node.slice.value, cst.Name) and node.slice.value.value == name:
                size = True
        if isinstance(node, (cst.If, cst.While)) and isinstance(node.test, cst.Name) and node.test.value == name:
            size = True
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
            if any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice):
                size = True  # batch["images"]: a mapping
    return tensor, size and not strict


def _tensor_expression(value: cst.BaseExpression, imports: ImportTable) -> bool:
    if isinstance(value, cst.Call):
        callee = imports.qualified_name(value.func) or ""
        if callee.startswith("torch."):
            return True
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in (
            _TENSOR_ONLY | {"to", "cuda", "float", "half", "long", "clone", "view", "reshape", "transpose", "matmul"}
        ):
            return True
    if isinstance(value, cst.BinaryOperation):
        return _tensor_expression(value.left, imports) or _tensor_expression(value.right, imports)
    return False


def _first_forward_input(function: cst.FunctionDef) -> Optional[str]:
    positional = [*function.params.posonly_params, *function.params.params]
    if function.name.value in _ENTRY_METHODS and len(positional) >= 2 and positional[0].name.value == "self":
        return positional[1].name.value if positional[1].default is None else None
    return None


def _assigns(node: cst.Assign, name: str) -> bool:
    return any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets)


if __name__ == "__main__":
    sys.exit(main())
