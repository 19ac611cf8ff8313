"""What the other files of the walked project say about the names a file imports.

A rule looking at ``net.to(device)`` or ``net.cuda()`` needs to know what ``net`` is when its
class comes from another file of the project (``from .models import Net``): an ``nn.Module``
(following its bases from file to file), a class with its own ``to`` or ``cuda``, or what a
helper such as ``build_model()`` returns.

The index is built once per run from every ``.py`` file of the project by a line scanner, not
a parser: it reads top-level class headers, the ``to``/``cuda`` methods defined in them, the
imports, the ``return SomeClass(...)`` lines of top-level functions, and the parameters of a
class's ``forward`` that it only turns into Python values (``p.tolist()``). That costs about a
hundredth of parsing the files, so the index never weighs on a run. What the scanner cannot
read (a base class built by a call, a star import) stays unknown, and unknown never decides.

Rules ask through `ProjectView` (``FileAnalysis.project``), one per linted file::

    view.class_named("Net")            # the ProjectClass the file's name ``Net`` refers to
    view.class_named("models.Net")     # through ``import models`` or ``from . import models``
    view.instance_of("build_model")    # the class a call of that name constructs or returns

and each `ProjectClass` answers ``is_module`` (True, False, or None when a base comes from
outside the project), ``defines_to``, ``defines_cuda``, ``converts_in_place`` and
``cuda_without_to`` (its own ``cuda()`` but no ``to()``: rewriting ``.cuda()`` as
``.to(device)`` would skip its own code). A file linted alone (stdin, the Python API) gets a
view over its own text only: it still sees its own classes.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import io
import json
import keyword
import os
import re
import stat
import textwrap
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.contract import DATA_LOADING_FUNCTIONS, builds_batches_by_bases
from torchdevice_lint.analysis.devices import mentions_device

#: Methods of a class that tell how its conversions behave.
TRACKED_METHODS = ("to", "cuda")
#: Files that mark the top of a project, for a file linted without its folder.
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
#: Past this many files, a project is indexed no further (a home folder linted by mistake).
MAX_INDEXED_FILES = 20_000
#: Larger files are generated code, never the home of a class another file imports.
MAX_INDEXED_BYTES = 2_000_000
#: Re-exports followed from file to file before giving up (``__init__`` chains, cycles).
MAX_HOPS = 8
#: Bases that make a class neither a module nor unknown.
_PLAIN_BASES = frozenset({"object", "Exception", "dict", "list", "tuple", "typing.Generic", "abc.ABC", "ABC", "Generic"})

_CLASS = re.compile(r"^class[ \t]+(\w+)[ \t]*(?:\(([^()]*(?:\([^()]*\)[^()]*)*)\))?[ \t]*:", re.MULTILINE)
_TOP_LEVEL = re.compile(r"^[^\s#@)\]}'\"]", re.MULTILINE)
_METHOD = re.compile(r"^[ \t]+def[ \t]+(to|cuda)[ \t]*\(", re.MULTILINE)
_ANY_METHOD = re.compile(r"^[ \t]+def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_FUNCTION = re.compile(r"^def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_RETURN = re.compile(r"^[ \t]+return\b[ \t]*(.*)$", re.MULTILINE)
_RETURNED_CALL = re.compile(r"([A-Za-z_][\w.]*)[ \t]*\(")
_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)", re.MULTILINE
)
#: What follows ``def name`` when it takes one parameter, annotated or not, without a default.
_ONE_PARAMETER = re.compile(r"[ \t]*(\w+)[ \t]*(?::[ \t]*[\w.]+[ \t]*)?,?[ \t]*\)")
#: A returned device: ``next(m.parameters()).device``, ``x.device``, ``torch.device("cpu")``.
_DEVICE_VALUE = re.compile(r"(?:.*[\w)\]]\.device|(?:torch\.)?device\(.*\))")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*(?:\\\n[^\n]*)*)", re.MULTILINE)
_COMMENT = re.compile(r"#[^\n]*")
#: Libraries whose code only runs with CUDA: Triton kernels, TensorRT engines (also
#: built by torch2trt), PyCUDA, CuPy.
CUDA_ONLY_LIBRARIES = ("triton", "tensorrt", "torch_tensorrt", "torch2trt", "pycuda", "cupy")
#: A module-level import of one, outside any block (so the module cannot load without it).
_CUDA_ONLY_IMPORT = re.compile(rf"^(?:import|from)[ \t]+(?:{'|'.join(CUDA_ONLY_LIBRARIES)})\b", re.MULTILINE)
#: ``extension = CUDAExtension``: a setup file choosing the extension's kind.
_CUDA_EXTENSION_SWITCH = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*CUDAExtension[ \t]*$", re.MULTILINE)
#: ``raise NotImplementedError('Cuda is not available')``: a setup file refusing to build without CUDA.
_RAISES_WITHOUT_CUDA = re.compile(r"^[ \t]*raise\b.*\b(?:cuda|CUDA|Cuda|GPU|gpu)\b", re.MULTILINE)
#: A compiled extension built from CUDA sources (a ``setup.py``'s ``CUDAExtension("pkg._ext", ...)``):
#: a module importing it at module level runs its kernels, which exist only for CUDA tensors.
_CUDA_EXTENSION = re.compile(r"\bCUDAExtension[ \t]*\([ \t\n]*(?:name[ \t]*=[ \t]*)?[rbu]?['\"]([\w.]+)['\"]")

#: A setuptools/distutils ``Extension('nms.gpu_nms', ['nms/nms_kernel.cu', 'nms/gpu_nms.pyx'], ...)`` (the
#: py-faster-rcnn setup.py, its ``.cu`` compiled with nvcc): its name and the written-out list of its sources.
_SOURCES_EXTENSION = re.compile(
    r"\bExtension[ \t]*\([ \t\n]*(?:name[ \t]*=[ \t]*)?[rbu]?['\"]([\w.]+)['\"][ \t\n]*,[ \t\n]*"
    r"(?:sources[ \t]*=[ \t]*)?\[([^\]]*)\]"
)
#: A CUDA source among them.
_CUDA_SOURCE = re.compile(r"\.cu['\"]")

#: The old ``torch.utils.ffi`` build (fpn.pytorch's ``create_extension('_ext.roi_crop', ...,
#: with_cuda=with_cuda)``): CUDA only where the file also sets ``with_cuda = True`` somewhere.
_FFI_EXTENSION = re.compile(r"\bcreate_extension[ \t]*\([ \t\n]*(?:name[ \t]*=[ \t]*)?[rbu]?['\"]([\w.]+)['\"]")
_FFI_WITH_CUDA = re.compile(r"\bwith_cuda[ \t]*=[ \t]*True\b")
#: Calls that turn a tensor into Python values (or a host copy read as such) and end its life as a tensor.
_HOST_METHODS = frozenset({"tolist", "item", "numpy"})
#: Calls a host conversion may follow: ``p.detach().cpu().numpy()``.
_HOST_CHAIN = frozenset({"detach", "cpu"})
#: Builtins whose result is a Python value: ``len(p)``, ``int(p)``.
_HOST_BUILTINS = frozenset({"len", "int", "float"})
#: What a host conversion (or a return as given) looks like in a line: ``p.cpu().numpy()``,
#: ``len(p)``, ``return p`` (to spare tokenizing others).
_HOST_USE = re.compile(
    r"\b(\w+)[ \t]*(?:\.(?:detach|cpu)\(\))*\.(?:tolist|item|numpy)\(\)|\b(?:len|int|float)\([ \t]*(\w+)[ \t]*\)"
    r"|\breturn[ \t]+(\w+)\b"
)
#: Words that may follow a returned name and still combine it (``return p in q``): not a return as given.
_COMBINING_WORDS = frozenset({"and", "or", "in", "is", "not"})
#: A line that refuses a tensor off CUDA: ``assert x.is_cuda``, ``assert(x.is_cuda == True)``,
#: ``assert x.device.type == "cuda"``, or ``if not x.is_cuda:`` / ``elif x.is_cuda == False:``
#: followed by ``raise`` (a CuPy or compiled kernel's autograd Function).
_REFUSES_CPU = re.compile(
    r"^([ \t]+)(?:assert[ \t(]*[\w.\[\]]+\.(?:is_cuda\b(?![ \t]*(?:==|is)[ \t]*False|[ \t]*(?:!=|is[ \t]+not)[ \t]*True)"
    r"|device\.type[ \t]*==[ \t]*['\"]cuda['\"])"
    r"|(?:el)?if[ \t(]+(?:not[ \t]+[\w.\[\]]+\.is_cuda|[\w.\[\]]+\.is_cuda[ \t]*(?:==|is)[ \t]*False)[ \t)]*:"
    r"[ \t]*(?:raise\b|(?:#[^\n]*)?\n\1[ \t]+raise\b))",
    re.MULTILINE,
)
#: Methods whose refusal makes every use of the class CUDA-only (an autograd Function's or a module's forward).
_REFUSING_METHODS = frozenset({"forward", "__call__"})
#: Code that may choose by device (``if x.is_cuda:``, ``torch.cuda.is_available()``, ``x.device.type ==``):
#: a caller doing this may keep a CPU path around what refuses one.
_CHOOSES_BY_DEVICE = re.compile(r"\bis_cuda\b|\bis_available\(|\.type[ \t]*==|\bdevice[ \t]*==")
#: An optional import (MONAI's ``cp, has_cp = optional_import("cupy")``) does not count: the module
#: has a path without the library (MONAI's type_conversion.py converts to CuPy only when asked).
#: How a method's return value starts when it is a new object of the class, not ``self``.
_COPY_MAKERS = ("self.clone(", "copy.copy(self", "copy.deepcopy(self", "deepcopy(self", "type(self)(", "self.__class__(")
#: Marks, among a class's tracked methods, a ``to`` that returns a copy on some path.
COPYING_TO = "to:copy"
#: Marks a method of such a class that returns a new object of the class: ``makes:compose``.
MAKES = "makes:"


@dataclass(frozen=True)
class FileFacts:
    """What the scanner read in one file."""

    #: Class name -> (its bases as written, the tracked methods it defines).
    classes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict)
    #: Local name -> what it was imported as: ``a.b.C``, or ``..a.C`` for a relative import.
    imports: dict[str, str] = field(default_factory=dict)
    #: Top-level function -> the names it calls in its ``return X(...)`` lines, when every
    #: return of it has that shape.
    returns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The module imports Triton, TensorRT, PyCUDA or CuPy at module level, outside any block:
    #: its code is built on CUDA-only libraries (Triton kernels and their tuning, TensorRT engines).
    needs_cuda: bool = False
    #: Top-level functions of one parameter that return a device on every path
    #: (``return next(module.parameters()).device``, ``return torch.device("cpu")``).
    device_functions: frozenset[str] = frozenset()
    #: What the file imports at module level, outside any block (``a.b.C``, ``..a.C``).
    top_level_imports: frozenset[str] = frozenset()
    #: Compiled extensions the file (a ``setup.py``) builds from CUDA sources: ``pkg.ops._cuda_ext``.
    cuda_extensions: frozenset[str] = frozenset()
    #: Class name -> the positions (after ``self``) of the parameters of its own ``forward`` that
    #: it only turns into Python values (``p.tolist()``, ``len(p)``) or returns as given (``return
    #: p``): a tensor given there meets nothing.
    host_only_inputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: Top-level functions and classes that refuse tensors off CUDA: a function, or a class's
    #: ``forward``, that asserts ``x.is_cuda`` or raises when ``not x.is_cuda`` (a CuPy or compiled
    #: kernel), those of the file that call one without choosing by device (``Function.apply``), and
    #: module-level aliases of one (``deform_conv = DeformConvFunction.apply``).
    refuses_cpu: frozenset[str] = frozenset()
    #: The backend each ``init_process_group(...)`` call of the file names, lower-cased (``nccl``,
    #: ``gloo``), ``?`` for one not written out as a plain string (a name, a conditional, none).
    process_group_backends: frozenset[str] = frozenset()
    #: The module builds a CUDA extension when it is imported: a module-level
    #: ``torch.utils.cpp_extension.load(...)`` whose sources hold a ``.cu`` file (rosinality's
    #: stylegan2 ``op/upfirdn2d.py``): nvcc must be there, or the import fails.
    compiles_cuda_on_import: bool = False
    #: The modules the file star-imports at module level (``.fcn8s``, ``models``): what they
    #: import, it re-exports (`ProjectView.torch_names_of_star_import`).
    star_imports: frozenset[str] = frozenset()
    #: Top-level function of two positional parameters or more -> the positions of those its body
    #: never moves (`_kept_positions`): a tensor given there meets the others where it is.
    kept_arguments: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: The names (as the file writes them: ``box_ops.masks_to_boxes``) the file calls where they
    #: work off the device: inside data loading (``__getitem__``, ``collate_fn``), or with the
    #: result moved to the device at once (``dcf.hann2d(sz).to(device)``).
    cpu_callees: frozenset[str] = frozenset()
    #: The file names a device, moves anything or calls ``.cuda()`` (`mentions_device`).
    names_device: bool = False
    #: The file makes CUDA the default for new tensors: ``torch.set_default_tensor_type(
    #: 'torch.cuda.FloatTensor')`` (NeuS' ``exp_runner.py``), ``torch.set_default_device("cuda")``.
    sets_cuda_default: bool = False

    def as_json(self) -> list:
        classes = {name: [list(bases), sorted(methods)] for name, (bases, methods) in sorted(self.classes.items())}
        returns = {k: list(v) for k, v in sorted(self.returns.items())}
        return [
            classes,
            dict(sorted(self.imports.items())),
            returns,
            self.needs_cuda,
            sorted(self.device_functions),
            sorted(self.top_level_imports),
            sorted(self.cuda_extensions),
            {name: list(positions) for name, positions in sorted(self.host_only_inputs.items())},
            sorted(self.refuses_cpu),
            sorted(self.process_group_backends),
            self.compiles_cuda_on_import,
            sorted(self.star_imports),
            {name: list(positions) for name, positions in sorted(self.kept_arguments.items())},
            sorted(self.cpu_callees),
            self.names_device,
            self.sets_cuda_default,
        ]


def scan(text: str) -> FileFacts:
    """The facts of one file's source text (never raises)."""
    tops = [match.start() for match in _TOP_LEVEL.finditer(text)]
    classes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    class_spans = []
    for match in _CLASS.finditer(text):
        bases = tuple(
            base
            for base in (_COMMENT.sub("", part).strip() for part in (match.group(2) or "").split(","))
            if base and "=" not in base and re.fullmatch(r"[\w.]+", base)
        )
        classes[match.group(1)] = (bases, frozenset())
        class_spans.append((match.end(), _next_top(tops, match.end()), match.group(1)))
    for method in _METHOD.finditer(text):
        for start, end, name in class_spans:
            if start <= method.start() < end:
                bases, methods = classes[name]
                found = {method.group(1)}
                if method.group(1) == "to" and _returns_a_copy(text, method.start(), end, name):
                    found.add(COPYING_TO)
                classes[name] = (bases, methods | found)
                break
    for start, end, name in class_spans:
        bases, methods = classes[name]
        if COPYING_TO in methods:  # its other methods that return a new object of the class
            makers = {
                f"{MAKES}{method.group(1)}"
                for method in _ANY_METHOD.finditer(text, start, end)
                if method.group(1) not in TRACKED_METHODS and _makes_own_class(text, method.start(), end, name)
            }
            classes[name] = (bases, methods | makers)
    returns = {}
    device_functions = set()
    kept_arguments = {}
    for function in _FUNCTION.finditer(text):
        body = text[function.end() : _next_top(tops, function.end())]
        kept = _kept_positions(body)
        if kept:
            kept_arguments[function.group(1)] = kept
        if _ONE_PARAMETER.match(body) and _returns_a_device(_method_body(text, function.start(), _next_top(tops, function.end()))):
            device_functions.add(function.group(1))
        called = []
        for line in _RETURN.finditer(body):
            call = _RETURNED_CALL.match(line.group(1))
            if call is None:
                break
            called.append(call.group(1))
        else:
            if called:
                returns[function.group(1)] = tuple(called)
    needs_cuda = bool(_CUDA_ONLY_IMPORT.search(text))
    imports, top_level_imports = _imports(text)
    return FileFacts(
        classes,
        imports,
        returns,
        needs_cuda,
        frozenset(device_functions),
        frozenset(top_level_imports.values()),
        _cuda_extensions(text) if "Extension" in text or "create_extension" in text else frozenset(),
        _host_only_inputs(text, class_spans) if "def forward" in text else {},
        _refuses_cpu(text, tops) if "is_cuda" in text or "device.type" in text else frozenset(),
        _process_group_backends(text) if "init_process_group" in text else frozenset(),
        "cpp_extension" in text and _compiles_cuda_on_import(text),
        frozenset(module for key, module in top_level_imports.items() if key.startswith("*")),
        kept_arguments,
        _cpu_callees(text, [(start, end) for start, end, name in class_spans if builds_batches_by_bases(list(classes[name][0]), name)]),
        mentions_device(text),
        "set_default_" in text and _sets_cuda_default(text),
    )


#: A call making CUDA the default device of new tensors.
_CUDA_DEFAULT = re.compile(
    r"^[ \t]*(?:\w+\.)*(?:set_default_tensor_type[ \t]*\([ \t]*['\"]?torch\.cuda\.|set_default_device[ \t]*\([ \t]*['\"]cuda)",
    re.MULTILINE,
)


def _sets_cuda_default(text: str) -> bool:
    """`FileFacts.sets_cuda_default`: a `_CUDA_DEFAULT` line outside triple-quoted strings (a
    docstring's example sets nothing)."""
    return any(
        text.count('"""', 0, match.start()) % 2 == 0 and text.count("'''", 0, match.start()) % 2 == 0
        for match in _CUDA_DEFAULT.finditer(text)
    )


def _is_test_file(path: str) -> bool:
    """A test module (``test_*.py``, ``*_test.py``, ``conftest.py``) or a file under ``tests/``."""
    name = os.path.basename(path)
    parts = path.replace(os.sep, "/").split("/")
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or any(
        part in ("test", "tests") for part in parts[:-1]
    )


#: A call of ``init_process_group`` (``dist.init_process_group(``), not a definition of one.
_INIT_PROCESS_GROUP = re.compile(r"(?<!def )\binit_process_group[ \t]*\(")
#: A backend written out as a plain string, the whole of its argument: ``"nccl"`` then ``,`` or ``)``.
_BACKEND_LITERAL = re.compile(r"[ \t\n]*[rbu]?(['\"])(\w+)\1[ \t\n]*(?:,|$)")


#: A module-level call of ``load``/``load_inline`` (``op = load("upfirdn2d", sources=[...])``).
_JIT_LOAD = re.compile(r"^(?:\w+[ \t]*=[ \t]*)?(?:\w+\.)*load(?:_inline)?[ \t]*\(", re.MULTILINE)


#: ``load_inline(..., cuda_sources=kernel)``: CUDA code compiled by nvcc (not ``None`` or empty).
_INLINE_CUDA = re.compile(r"\bcuda_sources[ \t]*=[ \t]*(?!None\b|\[\]|\(\)|''|\"\")")


def _compiles_cuda_on_import(text: str) -> bool:
    """`FileFacts.compiles_cuda_on_import`: a ``load(`` or ``load_inline(`` call at column 0 whose
    arguments (up to the matching parenthesis) name a ``.cu`` source or give ``cuda_sources``."""
    for match in _JIT_LOAD.finditer(text):
        end = _arguments_end(text, match.end(), 4000)
        if _CUDA_SOURCE.search(text, match.end(), end) or _INLINE_CUDA.search(text, match.end(), end):
            return True
    return False


def _arguments_end(text: str, start: int, limit: int) -> int:
    """Just past the parenthesis closing the call whose arguments begin at ``start`` (its
    opening one just before), or where ``limit`` characters of them ran out."""
    depth, end = 1, start
    while depth and end < len(text) and end - start < limit:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return end


#: A function that builds batches on the CPU (`contract.is_data_loading`): its ``def`` line.
_DATA_LOADING_DEF = re.compile(rf"^[ \t]*def[ \t]+\w*(?:{'|'.join(DATA_LOADING_FUNCTIONS)})\w*[ \t]*\(", re.MULTILINE)
#: A call of a name that is not a method of a value (``box_ops.masks_to_boxes(``, not ``x.sum(``).
_NAMED_CALL = re.compile(r"(?<![\w.)\]'\"])([A-Za-z_][\w.]*)[ \t]*\(")
#: A call's closing parenthesis, then reshapes or indexing, then a move to a device.
_MOVED_AT_ONCE = re.compile(
    r"\)(?:[ \t]*\.[ \t]*\w+[ \t]*\([^()\n]*\)|[ \t]*\[[^\[\]\n]*\])*[ \t]*\.[ \t]*(?:to|cuda|pin_memory)[ \t]*\("
    rf"(?![ \t]*(?:dtype[ \t]*=|{'|'.join(re.escape(dtype) for dtype in sorted(torch_api.DTYPES))}))"
)
#: The dotted name just before a call's opening parenthesis.
_CALLEE_BEFORE = re.compile(r"(?<![\w.)\]])([A-Za-z_][\w.]*)[ \t]*$")


def _cpu_callees(text: str, dataset_spans: Iterable[tuple[int, int]]) -> frozenset[str]:
    """`FileFacts.cpu_callees`: names called in the body of a data-loading function or of any
    method of a Dataset (``plot``, ``_load_target``: ``dataset_spans``), and names called whose
    result the same expression moves to the device (`_MOVED_AT_ONCE`)."""
    callees: set[str] = set()
    definitions = [definition.start() for definition in _DATA_LOADING_DEF.finditer(text)] if any(
        word in text for word in DATA_LOADING_FUNCTIONS
    ) else []
    definitions += [method.start() for start, end in dataset_spans for method in _ANY_METHOD.finditer(text, start, end)]
    for start in sorted(set(definitions)):
        for line in _method_body(text, start, len(text)):
            callees.update(name for name in _NAMED_CALL.findall(line) if not name.startswith(("self.", "super")))
    if ".to(" in text or ".cuda(" in text or ".pin_memory(" in text:
        for moved in _MOVED_AT_ONCE.finditer(text):
            opening = _opening_parenthesis(text, moved.start())
            callee = _CALLEE_BEFORE.search(text, max(0, opening - 200), opening) if opening > 0 else None
            if callee is not None and not callee.group(1).startswith(("self.", "super")):
                callees.add(callee.group(1))
    return frozenset(callees - _BUILTIN_CALLS)


#: Calls that are no function of a project: builtins and the constructors of Python values.
_BUILTIN_CALLS = frozenset(dir(builtins))


def _opening_parenthesis(text: str, closing: int) -> int:
    """Where the parenthesis that the one at ``closing`` closes opens (-1 past 2,000 characters)."""
    depth = 0
    for position in range(closing, max(-1, closing - 2000), -1):
        depth += {")": 1, "(": -1}.get(text[position], 0)
        if depth == 0:
            return position
    return -1


#: A line that may move what it reads to another device: a conversion (``p.to(d)``, ``p.cuda()``,
#: ``p.type_as(x)``), a copy made with a device (``torch.as_tensor(p, device=d)``, ``to_device(p, d)``).
_MOVE_WORDS = re.compile(r"\.(?:to|cuda|type_as)\(|device|as_tensor\(|tensor\(|\bto\(")
#: An identifier (or a number).
_WORD = re.compile(r"\w+")
#: A string literal of one line: its words are no code.
_STRING = re.compile(r"""(['"])(?:\\.|(?!\1).)*\1""")
#: A name, and the member read off it if any (``p.device``).
_READ = re.compile(r"\b(\w+)\b(?:[ \t]*\.[ \t]*(\w+))?")
#: Members that read a tensor's place or shape, and move nothing.
_PLACE_MEMBERS = frozenset({"device", "dtype", "shape", "ndim", "is_cuda", "size", "dim"})


def _kept_positions(function: str) -> tuple[int, ...]:
    """The positions of a top-level function's positional parameters that its body never moves
    (``function``: its text from just past ``def name(``): no line reading one holds a conversion
    (``p.to(image.device)``, ``p.cuda()``, ``p.type_as(x)``) or a device (``torch.as_tensor(p,
    device=d)``), reads of the parameter's own place or shape aside. Kornia's ``draw_convex_polygon
    (images, polygons, colors)`` keeps all three, and checks they share a device; its ``draw_line``
    moves its points to the image's device. Only functions of two such parameters or more, the
    ones that can meet."""
    end = _arguments_end(function, 0, 2000)
    parameters = []
    for part in _top_level_parts(_COMMENT.sub("", function[: end - 1])):
        written = re.match(r"[ \t\n]*(\w+)", part)
        if written is None or part.strip().startswith("*"):
            break  # ``*args``, keyword-only parameters: no position to read
        parameters.append(written.group(1))
    if len(parameters) < 2:
        return ()
    body = function[end:]
    read = set(_WORD.findall(body))
    moved: set[str] = set()  # names a line that may move them reads for more than their place
    line_end = -1
    for match in _MOVE_WORDS.finditer(body):
        if match.start() < line_end:
            continue  # the line is read already
        line_end = body.find("\n", match.end())
        line_end = len(body) if line_end < 0 else line_end
        line = _STRING.sub("''", _COMMENT.sub("", body[body.rfind("\n", 0, match.start()) + 1 : line_end]))
        moved.update(name for name, member in _READ.findall(line) if member not in _PLACE_MEMBERS)
    kept = [position for position, name in enumerate(parameters) if name in read and name not in moved]
    return tuple(kept) if len(kept) >= 2 else ()


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (a signature's parameters)."""
    parts, depth, start = [], 0, 0
    for index, character in enumerate(text):
        depth += character in "([{"
        depth -= character in ")]}"
        if character == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip() and part.strip() != "/"]


def _process_group_backends(text: str) -> frozenset[str]:
    """`FileFacts.process_group_backends`: for each call, the ``backend=`` argument (or the first
    positional one) when it is a plain string, else ``?`` (``"nccl" if cuda else "gloo"``, a name,
    none given: torch then picks per device)."""
    found = set()
    for match in _INIT_PROCESS_GROUP.finditer(text):
        line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        if "#" in line:
            continue  # a comment
        end = _arguments_end(text, match.end(), 2000)
        arguments = text[match.end() : end - 1]
        keyword = re.search(r"\bbackend[ \t]*=(?!=)", arguments)
        if keyword is not None:
            value = arguments[keyword.end() :]
        elif re.match(r"[ \t\n]*\w+[ \t]*=(?!=)", arguments) is None:
            value = arguments  # the first argument is positional: the backend
        else:
            value = ""
        literal = _BACKEND_LITERAL.match(value)
        found.add(literal.group(2).lower() if literal is not None else "?")
    return frozenset(found)


def _refuses_cpu(text: str, tops: list[int]) -> frozenset[str]:
    """The top-level functions and classes of the file that refuse tensors off CUDA (see
    `FileFacts.refuses_cpu`)."""
    spans: dict[str, tuple[int, int]] = {}
    for match in re.finditer(r"^(?:def|class)[ \t]+(\w+)", text, re.MULTILINE):
        spans[match.group(1)] = (match.start(), _next_top(tops, match.end()))
    found: set[str] = set()
    for refusal in _lines_matching(text, _REFUSES_CPU, ("is_cuda", "device.type")):
        for name, (start, end) in spans.items():
            if start <= refusal.start() < end:
                if text.startswith("class", start):  # only in the method that every use runs
                    methods = [m for m in _ANY_METHOD.finditer(text, start, refusal.start())]
                    if not methods or methods[-1].group(1) not in _REFUSING_METHODS:
                        break
                found.add(name)
                break
    while found:  # the file's callers that do not choose by device, and its aliases (``f = Function.apply``)
        names = "|".join(sorted(found))
        calls = re.compile(rf"\b(?:{names})(?:\.apply)?[ \t]*\(")
        more = {
            name
            for name, (start, end) in spans.items()
            if name not in found
            and calls.search(text, start, end)
            and not _CHOOSES_BY_DEVICE.search(text, start, end)
        }
        aliases = re.finditer(rf"^(\w+)[ \t]*=[ \t]*(?:{names})(?:\.apply)?[ \t]*(?:#[^\n]*)?$", text, re.MULTILINE)
        more |= {alias.group(1) for alias in aliases} - found
        if not more:
            break
        found |= more
    return frozenset(found)


def _host_only_inputs(text: str, class_spans: list) -> dict[str, tuple[int, ...]]:
    """Class name -> the positions of the parameters its own ``forward`` only converts to
    Python values (`_host_only_positions`)."""
    found: dict[str, tuple[int, ...]] = {}
    at = text.find("def forward")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        indent = text[line_start:at]
        after = text[at + 11 : at + 12]
        # a method (not a function at the top, nor ``def forward_hook``)
        if indent and not indent.strip(" \t") and not (after.isalnum() or after == "_"):
            for start, end, name in class_spans:
                if start <= at < end:
                    # two forwards in one class (one per branch): neither is read
                    found[name] = () if name in found else _host_only_positions(text, line_start, end, len(indent))
                    break
        at = text.find("def forward", at + 11)
    return {name: positions for name, positions in found.items() if positions}


def _host_only_positions(text: str, start: int, end: int, indent: int) -> tuple[int, ...]:
    """The positional parameters (after ``self``) of the method at ``start`` whose every use is a
    conversion to Python values: ``p.tolist()``, ``p.item()``, ``p.numpy()`` (after ``.detach()``
    or ``.cpu()``), ``len(p)``, ``int(p)``, ``float(p)``, or a return as given (``return p``,
    ``return p, q``: the caller gets its own tensor back). One use at least; a parameter passed
    on, combined, indexed or bound again is not. Read from the method's tokens (strings and
    comments do not count), nested functions included."""
    stop = text.find("\n", start)
    while 0 <= stop < end:  # the method ends at the next line indented no deeper than its ``def``
        following = text.find("\n", stop + 1)
        line = text[stop + 1 : following if following >= 0 else len(text)]
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) <= indent:
            break
        stop = following
    source = text[start : stop if 0 <= stop < end else end]
    if not any(marker in source for marker in (".tolist()", ".item()", ".numpy()", "len(", "int(", "float(", "return")):
        return ()
    signature = re.match(r"[ \t]*def[ \t]+forward[ \t]*\(([^)]*)", source)
    written = set(re.findall(r"(?:^|,)[ \t\n]*(\w+)", signature.group(1))) if signature else set()
    if not written & {name for pair in _HOST_USE.findall(source) for name in pair}:
        return ()  # the usual forward: no parameter converted, no tokenizing
    try:
        tokens = [
            token
            for token in tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline)
            if token.type in (tokenize.NAME, tokenize.OP)
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ()
    # The signature: from ``forward(`` to its closing parenthesis.
    depth, close = 0, None
    for index, token in enumerate(tokens[2:], start=2):
        depth += token.string in "([{" and token.type == tokenize.OP
        depth -= token.string in ")]}" and token.type == tokenize.OP
        if depth == 0:
            close = index
            break
    if close is None:
        return ()
    parameters: list[str] = []
    depth = 0
    for previous, token in zip(tokens[2:close], tokens[3:close]):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif depth == 0 and token.type == tokenize.NAME and previous.string in ("(", ","):
            parameters.append(token.string)
        elif depth == 0 and token.string in ("*", "**", "/"):
            break  # ``*args``, keyword-only parameters: no position to read
    if not parameters or parameters[0] != "self":
        return ()
    body = tokens[close + 1 :]
    strings = [token.string for token in body]
    positions = []
    for position, name in enumerate(parameters[1:]):
        uses = [index for index, token in enumerate(body) if token.type == tokenize.NAME and token.string == name]
        if uses and all(_host_use(strings, index) for index in uses):
            positions.append(position)
    return tuple(positions)


def _host_use(strings: list[str], index: int) -> bool:
    """The name at ``strings[index]`` (the method body's token texts) is converted to Python
    values there and used no further."""
    if index and strings[index - 1] == ".":
        return True  # ``self.p``, ``other.p``: an attribute, not the parameter
    before = index - 1
    while before >= 2 and strings[before] == "," and strings[before - 1].isidentifier():
        before -= 2  # ``return q, p``: names before it in the returned tuple
    if before >= 0 and strings[before] == "return":
        # ``return p``, ``return p, q`` (then the next statement, if any): given back as it came.
        following = strings[index + 1] if index + 1 < len(strings) else None
        return following is None or following == "," or (following.isidentifier() and following not in _COMBINING_WORDS)
    if index >= 2 and strings[index - 1] == "(" and strings[index - 2] in _HOST_BUILTINS:
        return (index < 3 or strings[index - 3] != ".") and strings[index + 1 : index + 2] == [")"]
    at = index + 1
    while strings[at : at + 4][:1] == ["."] and len(strings) > at + 3:
        method, call = strings[at + 1], strings[at + 2 : at + 4]
        if call != ["(", ")"]:
            return False
        if method in _HOST_METHODS:
            return True
        if method not in _HOST_CHAIN:
            return False
        at += 4
    return False


def _cuda_extensions(text: str) -> frozenset[str]:
    """The extensions a setup file builds from CUDA sources: ``CUDAExtension('pkg._ext', ...)``,
    a plain ``Extension('nms.gpu_nms', ['nms/nms_kernel.cu', 'nms/gpu_nms.pyx'])`` whose written-out
    sources hold a ``.cu`` file (py-faster-rcnn's Cython wrapper of an nvcc-built kernel; a
    ``cpu_nms.pyx`` beside it, without one, is no CUDA extension), and an ``extension = CUDAExtension`` switch (DCNv2's, from ``CppExtension``) called as
    ``extension('_ext', ...)`` where the file also raises when CUDA is missing (``raise
    NotImplementedError('Cuda is not available')``): its C++ build has no CPU path either."""
    found = set(_CUDA_EXTENSION.findall(text))
    found.update(name for name, sources in _SOURCES_EXTENSION.findall(text) if _CUDA_SOURCE.search(sources))
    if _FFI_WITH_CUDA.search(text):
        found.update(_FFI_EXTENSION.findall(text))
    if _RAISES_WITHOUT_CUDA.search(text):
        for variable in set(_CUDA_EXTENSION_SWITCH.findall(text)):
            called = re.compile(rf"\b{re.escape(variable)}[ \t]*\([ \t\n]*(?:name[ \t]*=[ \t]*)?[rbu]?['\"]([\w.]+)['\"]")
            found.update(called.findall(text))
    return frozenset(found)


def _method_body(text: str, start: int, end: int) -> list[str]:
    """The stripped lines of the method whose ``def`` line starts at ``start``, without its
    docstrings and other triple-quoted strings, nor the bodies of functions nested in it
    (diffusers' ``DiffusionPipeline.to`` has helpers that ``return False``)."""
    lines = text[start:end].splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    body: list[str] = []
    nested: Optional[int] = None  # the indentation of a nested def being skipped
    in_string = False
    for line in lines[1:]:
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        quotes = stripped.count('"""') + stripped.count("'''")
        if in_string or quotes:
            in_string ^= quotes % 2 == 1
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if depth <= indent:
            break  # the next method of the class
        if nested is not None and depth > nested:
            continue
        nested = depth if stripped.startswith(("def ", "async def ", "class ")) else None
        if nested is None:
            body.append(stripped)
    return body


def _returned_values(body: list[str]) -> list[str]:
    return [_COMMENT.sub("", line[len("return"):]).strip() for line in body if re.match(r"return\b", line)]


def _returns_a_device(body: list[str]) -> bool:
    """Every return of a function (its stripped lines) gives a device: ``<x>.device`` or
    ``torch.device(...)``."""
    returned = _returned_values(body)
    return bool(returned) and all(_DEVICE_VALUE.fullmatch(value) for value in returned)


def _makes_own_class(text: str, start: int, end: int, owner: str) -> bool:
    """Every return of the method is a new object of class ``owner``: ``return Owner(...)``,
    ``return self.clone()``, or a name bound to one (``out = Owner(device=d) ... return out``:
    pytorch3d's ``Transform3d.compose``)."""
    body = _method_body(text, start, end)
    values = _returned_values(body)
    makers = (*_COPY_MAKERS, f"{owner}(")
    for value in values:
        if value.startswith(makers):
            continue
        if value.isidentifier() and any(
            re.match(rf"{value}\s*=\s*({'|'.join(map(re.escape, makers))})", line) for line in body
        ):
            continue
        return False
    return bool(values)


def _returns_a_copy(text: str, start: int, end: int, owner: str) -> bool:
    """Whether the method of class ``owner`` whose ``def`` line starts at ``start`` returns, on
    some path, an object other than ``self``: ``other = self.clone() ... return other``
    (pytorch3d's ``Transform3d.to``), ``return copy.copy(self)``, ``return Boxes(...)``."""
    body = _method_body(text, start, end)
    for value in _returned_values(body):
        if value.isidentifier() and not keyword.iskeyword(value) and value != "self":
            # ``out = super().to(dest); return out``: the object itself, as a module's ``to`` returns
            if not any(re.match(rf"{value}\s*=\s*(self\s*(#.*)?$|super\(\))", line) for line in body):
                return True
        if value.startswith((*_COPY_MAKERS, f"{owner}(")):
            return True
    return False


def _next_top(tops: list[int], position: int) -> int:
    """Where the next top-level statement after ``position`` starts (the end of a block)."""
    for start in tops:
        if start > position:
            return start
    return 1 << 62


def _imports(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """Local name -> what it was imported as: every import of the file, and those written at
    module level outside any block (at the start of a line), where a star import counts too
    (keyed ``*module``: it names nothing, but the module loads)."""
    imports: dict[str, str] = {}
    top_level: dict[str, str] = {}
    for match in _FROM_IMPORT.finditer(text):
        at_top = text[match.start()] not in " \t"
        dots, module, names = match.groups()
        names = _COMMENT.sub("", names).replace("\\\n", " ").strip("() \t\n")
        for item in names.split(","):
            parts = item.split()
            if parts == ["*"] and at_top:
                # binds no name this index follows, but loads the module all the same (BiSeNet's
                # modules/bn.py: ``from .functions import *``, which JIT-builds CUDA sources)
                top_level[f"*{dots}{module or ''}"] = f"{dots}{module or ''}"
            if not parts or parts[0] == "*":
                continue
            local = parts[2] if len(parts) == 3 and parts[1] == "as" else parts[0]
            target = f"{module}.{parts[0]}" if module else parts[0]
            imports[local] = dots + target
            if at_top:
                top_level[local] = dots + target
    for match in _IMPORT.finditer(text):
        at_top = text[match.start()] not in " \t"
        for item in _COMMENT.sub("", match.group(1)).replace("\\\n", " ").split(","):
            parts = item.split()
            if not parts:
                continue
            if len(parts) == 3 and parts[1] == "as":
                local, target = parts[2], parts[0]
            else:
                local = target = parts[0].split(".", 1)[0]
            imports[local] = target
            if at_top:
                top_level[local] = target
    if "\ntry" in text or text.startswith("try"):
        fallback = _imports_with_fallback(text)
        top_level.update(fallback)
        imports.update(fallback)  # the ``try`` side, not what the ``except`` wrote over it
    return imports, top_level


#: A module-level ``try:`` block and its ``except`` clauses, each with its indented body.
#: The lines of an indented block: blank ones, and ones that start with spaces or tabs before
#: their text. The two kinds never overlap and a line splits one way only: a block followed by
#: no ``except`` (``try:`` ... ``finally:``) fails in linear time, not by trying every split of
#: every line's indentation (pytorch/rl's examples/replay-buffers script held the scan for minutes).
_BLOCK = r"(?:[ \t]*\n|[ \t]+[^ \t\n][^\n]*\n)+"
_TRY = re.compile(
    rf"^try[ \t]*:[ \t]*(?:#[^\n]*)?\n({_BLOCK})((?:except\b[^\n]*:[ \t]*(?:#[^\n]*)?\n{_BLOCK})+)", re.MULTILINE
)
_EXCEPT = re.compile(rf"^except\b[^\n]*:[ \t]*(?:#[^\n]*)?\n({_BLOCK})", re.MULTILINE)
#: A statement that binds nothing: ``sys.path.insert(0, './ops')``, ``warnings.warn(...)``.
_BARE_CALL = re.compile(r"[\w.]+\(.*\)")


def _imports_with_fallback(text: str) -> dict[str, str]:
    """Module-level imports that load the same module on every path: a ``try:`` importing
    names and ``except`` clauses importing the same names from the same module reached another
    way (``from .correlation import correlation`` / ``sys.path.insert(0, './correlation');
    import correlation``; ``from .utils import f`` / ``from utils import f``). An ``except`` that
    binds something else (``cupy = None``) or imports another module (a CPU twin) leaves the
    import optional. Local name -> what the ``try`` imports."""
    found: dict[str, str] = {}
    for block in _lines_matching(text, _TRY, ("try:", "try :")):
        tried = _block_imports(block.group(1))
        if not tried:
            continue
        clauses = [_block_imports(clause.group(1)) for clause in _EXCEPT.finditer(block.group(2))]
        if clauses and all(
            clause is not None
            and clause.keys() == tried.keys()
            and all(_same_module(tried[name], clause[name]) for name in tried)
            for clause in clauses
        ):
            found.update(tried)
    return found


def _lines_matching(text: str, pattern: re.Pattern, words: tuple[str, ...]) -> list[re.Match]:
    """``pattern``'s matches at the starts of the lines holding one of ``words`` (cheaper than
    trying a line-anchored pattern at every line of a long file)."""
    starts = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(word, at + len(word))
    return [match for match in (pattern.match(text, start) for start in sorted(starts)) if match]


def _block_imports(body: str) -> Optional[dict[str, str]]:
    """What a block made only of imports and bare calls imports (None: it does anything else)."""
    found: dict[str, str] = {}
    for line in body.splitlines():
        for statement in _COMMENT.sub("", line).split(";"):
            statement = statement.strip()
            if not statement or _BARE_CALL.fullmatch(statement):
                continue
            if not statement.startswith(("import ", "from ")) or "(" in statement or statement.endswith("\\"):
                return None
            found.update(_imports(statement)[0])
    return found


def _same_module(one: str, other: str) -> bool:
    """Two import targets that may name one module: one's dotted name ends the other's (the
    package-relative and the ``sys.path`` spelling)."""
    one, other = one.lstrip("."), other.lstrip(".")
    return one == other or one.endswith("." + other) or other.endswith("." + one)


@dataclass(frozen=True)
class ProjectClass:
    """A class of the project, with what its conversions do."""

    path: str
    name: str
    #: True when an ``nn.Module`` (through bases of any file of the project), False when
    #: certainly not, None when a base comes from outside the project and torch.
    is_module: Optional[bool]
    #: It or one of its project bases defines ``to``.
    defines_to: bool
    #: It or one of its project bases defines ``cuda``.
    defines_cuda: bool
    #: Its own ``to`` (or a project base's) returns a new object on some path, not ``self``.
    copies_on_to: bool = False
    #: For such a class: its methods that return a new object of the class (``compose``).
    makers: frozenset[str] = frozenset()
    #: The positions (after ``self``) of its own ``forward``'s parameters that it only turns
    #: into Python values (``p.tolist()``) or returns as given: a tensor given there meets nothing.
    host_only_inputs: tuple[int, ...] = ()

    @property
    def converts_in_place(self) -> bool:
        """``obj.to(device)`` moves the object itself: a module, or a class with its own ``to``
        (one that returns ``self``, or nothing)."""
        return bool(self.is_module) or (self.defines_to and not self.copies_on_to)

    @property
    def cuda_without_to(self) -> bool:
        """Its own ``cuda()`` but no ``to()``: ``.cuda()`` cannot become ``.to(device)``."""
        return self.defines_cuda and not self.defines_to


class ProjectIndex:
    """The facts of every Python file of the walked project, by real path."""

    def __init__(self, files: dict[str, FileFacts], texts: Optional[dict[str, int]] = None) -> None:
        self.files = files
        #: Path -> ``hash`` of the text its facts were scanned from, for files this process read.
        self._texts = texts or {}
        #: ``a.b.c`` (every dotted tail of each file's path) -> the files it may name.
        self._by_module: dict[str, list[str]] = {}
        for path in files:
            parts = os.path.splitext(path)[0].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            for start in range(max(1, len(parts) - 6), len(parts)):
                self._by_module.setdefault(".".join(parts[start:]), []).append(path)

    @classmethod
    def build(cls, paths: Iterable[str], scanned: Optional[dict[str, tuple[int, FileFacts]]] = None) -> "ProjectIndex":
        """Index the ``.py`` files among ``paths`` (unreadable ones are left out). ``scanned``:
        real path -> (``hash`` of its text, its facts), shared by the indexes one process builds
        of overlapping file sets; a file whose text is the same is not scanned again."""
        files: dict[str, FileFacts] = {}
        texts: dict[str, int] = {}
        for path in paths:
            if len(files) >= MAX_INDEXED_FILES:
                break
            if not path.endswith(".py"):
                continue
            real = os.path.realpath(path)
            try:
                info = os.stat(real)  # before opening: opening a FIFO would wait for a writer
                if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_INDEXED_BYTES:
                    continue
                with open(real, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                continue
            digest = hash(text)
            known = scanned.get(real) if scanned is not None else None
            if known is not None and known[0] == digest:
                files[real] = known[1]
            else:
                files[real] = scan(text)
                if scanned is not None:
                    scanned[real] = (digest, files[real])
            texts[real] = digest
        return cls(files, texts)

    def facts_of(self, path: str, text: str) -> FileFacts:
        """The facts of ``text``, the file at real path ``path`` as it is being linted: those
        indexed when the index read the same text (the usual case: flake8 and the CLI lint
        what is on disk), else scanned again."""
        facts = self.files.get(path)
        if facts is not None and self._texts.get(path) == hash(text):
            return facts
        return scan(text)

    @functools.cached_property
    def functions_called_off_the_device(self) -> frozenset[tuple[str, str]]:
        """(path, name) of the top-level functions of the project that some file calls where they
        work off the device (`FileFacts.cpu_callees`)."""
        resolver = ProjectView(self, None, "")
        found = set()
        for path, facts in self.files.items():
            for callee in facts.cpu_callees:
                home = resolver.home_of(path, callee)
                if home is not None:
                    found.add(home)
        return frozenset(found)

    @functools.cached_property
    def sets_cuda_default(self) -> bool:
        """A file of the project other than a test makes CUDA the default device."""
        return any(facts.sets_cuda_default and not _is_test_file(path) for path, facts in self.files.items())

    @functools.cached_property
    def files_naming_a_device(self) -> frozenset[str]:
        return frozenset(path for path, facts in self.files.items() if facts.names_device)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of every fact: findings cached under another fingerprint are not reused."""
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(json.dumps([path, self.files[path].as_json()], separators=(",", ":")).encode())
        return digest.hexdigest()[:16]

    @functools.cached_property
    def builds_cuda_on_import(self) -> bool:
        """A file of the project builds a CUDA extension when imported (`FileFacts.compiles_cuda_on_import`)."""
        return any(facts.compiles_cuda_on_import for facts in self.files.values())

    @functools.cached_property
    def process_group_backends(self) -> frozenset[str]:
        """The backends the project's ``init_process_group`` calls name (`FileFacts.process_group_backends`)."""
        return frozenset(backend for facts in self.files.values() for backend in facts.process_group_backends)

    @functools.cached_property
    def cuda_extensions(self) -> frozenset[str]:
        """The compiled CUDA extensions the project builds, as paths: ``pkg/ops/_cuda_ext``."""
        return frozenset(name.replace(".", "/") for facts in self.files.values() for name in facts.cuda_extensions)

    def module_file(self, dotted: str, importer: str) -> Optional[str]:
        """The file an absolute module name names, nearest to ``importer`` when several may."""
        candidates = self._by_module.get(dotted)
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return max(candidates, key=lambda path: len(os.path.commonpath([path, importer])))

    def relative_file(self, level: int, dotted: str, importer: str) -> Optional[str]:
        folder = os.path.dirname(importer)
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        base = os.path.join(folder, *dotted.split(".")) if dotted else folder
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if candidate in self.files:
                return candidate
        return None


EMPTY_INDEX = ProjectIndex({})


class ProjectView:
    """The project seen from one file: resolves that file's names to classes of the project.

    The file's own facts come from the text being linted (not the copy on disk); the other
    files' from the index.
    """

    def __init__(self, index: ProjectIndex, path: Optional[str], text: str) -> None:
        self.index = index
        self.path = os.path.realpath(path) if path else "<stdin>"
        self._own = index.facts_of(self.path, text)
        self._text = text
        self._classes: dict[tuple[str, str], Optional[ProjectClass]] = {}

    def class_named(self, dotted: str) -> Optional[ProjectClass]:
        """The project class the file's name ``dotted`` refers to, if it is one."""
        target = self._resolve(self.path, dotted, 0)
        if target is None or target[0] != "class":
            return None
        return self._class(target[1], target[2], frozenset())

    def class_home(self, dotted: str, path: Optional[str] = None) -> Optional[tuple[str, str, tuple[str, ...]]]:
        """Where the class that ``dotted`` names (in the file at ``path``, by default the linted
        one) is defined, in another file of the project: its path, its name and its bases as written."""
        target = self._resolve(path or self.path, dotted, 0)
        if target is None or target[0] != "class" or target[1] == self.path:
            return None
        return target[1], target[2], tuple(self._facts(target[1]).classes[target[2]][0])

    def instance_of(self, callee: str) -> Optional[ProjectClass]:
        """The class a call of ``callee`` makes: the class itself, or the one a project helper
        returns on every path (``return Net(cfg)``) when that is one class of the project."""
        target = self._resolve(self.path, callee, 0)
        if target is None:
            return None
        if target[0] == "class":
            return self._class(target[1], target[2], frozenset())
        if target[0] != "function":
            return None
        made = set()
        for returned in self._facts(target[1]).returns.get(target[2], ()):
            found = self._resolve(target[1], returned, 0)
            if found is None or found[0] != "class":
                return None
            made.add(self._class(found[1], found[2], frozenset()))
        return made.pop() if len(made) == 1 else None

    @functools.cached_property
    def needs_cuda(self) -> bool:
        """The file is built on CUDA-only libraries: it imports Triton, TensorRT, PyCUDA or CuPy
        at module level, or imports there a module of the project that does (unsloth's MoE
        tests, benchmark and autotuner import the Triton kernels' tuning module). One step only:
        a package importing such a module somewhere below it is not CUDA-only for that. A module
        that compiles CUDA sources when imported counts at any depth (`_imports_a_cuda_build`)."""
        if self._built_on_cuda(self.path):
            return True
        for imported in self._own.top_level_imports:
            module = self._module_file(self.path, imported)
            if module is not None and self._built_on_cuda(module[0]):
                return True
        return self._imports_a_cuda_build(self.path, set())

    def _imports_a_cuda_build(self, path: str, seen: set[str]) -> bool:
        """The file builds a CUDA extension on import, or imports at module level, at any depth,
        a module of the project that does: the import fails without nvcc, so everything above
        it does too (stylegan2's ``generate.py`` -> ``model`` -> ``op`` -> ``op/upfirdn2d.py``).
        Unlike the one step of the other facts, this one is not a guess about use."""
        if not self.index.builds_cuda_on_import and not self._own.compiles_cuda_on_import:
            return False
        if self._facts(path).compiles_cuda_on_import:
            return True
        seen.add(path)
        for imported in self._facts(path).top_level_imports:
            module = self._module_file(path, imported)
            if module is not None and module[0] not in seen and self._imports_a_cuda_build(module[0], seen):
                return True
        return False

    @functools.cached_property
    def nccl_only(self) -> bool:
        """Every ``init_process_group`` call of the project (this file's text included) names the
        ``"nccl"`` backend as a plain string (vq-vae-2's ``backend="NCCL"``), and there is one: its
        collectives take only CUDA tensors. One choosing ``"nccl" if cuda else "gloo"``, or naming
        no backend, keeps a CPU path."""
        backends = self.index.process_group_backends | self._own.process_group_backends
        return backends == {"nccl"}

    @functools.cached_property
    def uses_cuda_only_code(self) -> bool:
        """The file uses, from a module of the project it imports at module level, a function or
        class that refuses tensors off CUDA (`FileFacts.refuses_cpu`: ``from .ops import corr``,
        or ``import ops`` and ``ops.corr(...)``; pytorch-pwc's correlation layer). One step only.
        Read from asserts and raises, not from an import that cannot load without CUDA: its
        moves stay reported, without a fix, rather than left alone as `needs_cuda`'s."""
        for imported in self._own.top_level_imports:
            module = self._module_file(self.path, imported)
            if module is not None and self._uses_refusing(imported, *module):
                return True
        return False

    def _uses_refusing(self, imported: str, path: str, rest: str) -> bool:
        """The linted file's import ``imported`` (of ``rest`` in the module at ``path``) names,
        or brings a module whose name the file uses with, a function or class refusing CPU tensors."""
        refusing = self._facts(path).refuses_cpu
        if not refusing:
            return False
        if rest:
            return rest.split(".")[0] in refusing
        names = "|".join(sorted(refusing))
        return any(
            target == imported and re.search(rf"\b{re.escape(local)}\.(?:{names})\b", self._text)
            for local, target in self._own.imports.items()
        )

    def torch_names_of_star_import(self, module: str) -> dict[str, str]:
        """``from models import *`` (``module`` as written, ``..models`` for a relative one) of
        a project module that imports torch: the names of torch it brings (``torch``, ``nn``),
        which a file leaning on the star import uses without importing torch itself. A package
        whose ``__init__`` only star-imports its modules (``from .fcn8s import *``) passes on
        what they import."""
        return self._torch_names_through_stars(self.path, module, set())

    def _torch_names_through_stars(self, path: str, module: str, seen: set[str]) -> dict[str, str]:
        found = self._module_file(path, module)
        if found is None or found[1] or found[0] in seen:
            return {}
        seen.add(found[0])
        facts = self._facts(found[0])
        names: dict[str, str] = {}
        for starred in sorted(facts.star_imports):
            names.update(self._torch_names_through_stars(found[0], starred, seen))
        names.update(
            (local, target) for local, target in facts.imports.items() if target == "torch" or target.startswith("torch.")
        )
        return names

    def _built_on_cuda(self, path: str) -> bool:
        """The file imports a CUDA-only library, or a compiled CUDA extension of the project
        (Occupancy Networks' ``from ._cuda_ext import grid_pooling_forward``), at module level."""
        facts = self._facts(path)
        return facts.needs_cuda or any(self._names_cuda_extension(path, imported) for imported in facts.top_level_imports)

    def _names_cuda_extension(self, path: str, imported: str) -> bool:
        extensions = self.index.cuda_extensions
        if not extensions:
            return False
        level = len(imported) - len(imported.lstrip("."))
        parts = imported[level:].split(".")
        if level:
            folder = os.path.dirname(path)
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            prefix = folder.replace(os.sep, "/").split("/")
        else:
            prefix = []
        for cut in range(len(parts), 0, -1):
            module = "/".join([*prefix, *parts[:cut]])
            if any(module == extension or module.endswith("/" + extension) for extension in extensions):
                return True
        return False

    def returns_a_device(self, callee: str) -> bool:
        """``callee`` (a name of the file) is a function of the project, of one parameter, that
        returns a device on every path: tianshou's ``torch_device(module)``."""
        target = self._resolve(self.path, callee, 0)
        return target is not None and target[0] == "function" and target[2] in self._facts(target[1]).device_functions

    def kept_arguments(self, callee: str) -> tuple[int, ...]:
        """The positions at which ``callee`` (a name of the file), a function of another file of
        the project, never moves what it is given (`FileFacts.kept_arguments`)."""
        home = self.home_of(self.path, callee)
        if home is None or home[0] == self.path:
            return ()
        return self._facts(home[0]).kept_arguments.get(home[1], ())

    def called_off_the_device(self, function: str) -> bool:
        """A file of the project calls the top-level function ``function`` of this file where it
        works on the CPU: in data loading (Deformable-DETR's ``masks_to_boxes`` in a Dataset's
        ``__getitem__``), or moving its result to the device at once (pytracking's
        ``dcf.get_reg_filter(...).to(self.params.device)``)."""
        return (self.path, function) in self.index.functions_called_off_the_device

    def cuda_made_the_default(self) -> bool:
        """A file of the project makes CUDA the default device of new tensors (an entry script's
        ``torch.set_default_tensor_type('torch.cuda.FloatTensor')``): factories without a device
        may well be on the GPU."""
        return self.index.sets_cuda_default

    def device_named_elsewhere(self) -> bool:
        """Another file of the project names a device: the modules this file defines may be
        moved there by code it does not hold (a library's trainer, a training script)."""
        return bool(self.index.files_naming_a_device - {self.path})

    def imports_project_module(self, imported: str) -> bool:
        """``imported`` (a dotted name the file imports) is in a module of the project."""
        return self._module_file(self.path, imported) is not None

    # -------------------------------------------------------------- internals
    def _module_file(self, path: str, imported: str) -> Optional[tuple[str, str]]:
        """The file of the project an import of the file at ``path`` reads, and what remains of
        ``imported`` (``a.b.C`` or ``..a.C``) inside it: the longest prefix that is a module of
        the project."""
        level = len(imported) - len(imported.lstrip("."))
        parts = imported[level:].split(".") if imported[level:] else []
        for cut in range(len(parts), -1 if level else 0, -1):
            module = ".".join(parts[:cut])
            if level:
                found = self.index.relative_file(level, module, path)
            else:
                found = self.index.module_file(module, path)
            if found is not None and found != path:
                return found, ".".join(parts[cut:])
        return None

    def _facts(self, path: str) -> FileFacts:
        if path == self.path:
            return self._own
        return self.index.files.get(path) or FileFacts()

    def home_of(self, path: str, dotted: str, hops: int = 0) -> Optional[tuple[str, str]]:
        """Where the name ``dotted`` that the file at ``path`` calls is defined, if in the project:
        (the file, the name there), followed through imports and re-exports. The file's own
        names are its own (a builtin never reaches here: `FileFacts.cpu_callees` has none)."""
        if hops > MAX_HOPS:
            return None
        head, _, rest = dotted.partition(".")
        imported = self._facts(path).imports.get(head)
        if imported is None:
            return None if rest else (path, head)
        module = self._module_file(path, f"{imported}.{rest}" if rest else imported)
        if module is None or not module[1]:
            return None
        return self.home_of(module[0], module[1], hops + 1)

    def _resolve(self, path: str, dotted: str, hops: int) -> Optional[tuple[str, ...]]:
        """What ``dotted`` names in the file at ``path``: ("class", path, name),
        ("function", path, name) or ("module", path)."""
        if hops > MAX_HOPS:
            return None
        facts = self._facts(path)
        head, _, rest = dotted.partition(".")
        if not rest and head in facts.classes:
            return ("class", path, head)
        if not rest and (head in facts.returns or head in facts.device_functions):
            return ("function", path, head)
        imported = facts.imports.get(head)
        if imported is None:
            return None
        module = self._module_file(path, f"{imported}.{rest}" if rest else imported)
        if module is None:
            return None
        found, remaining = module
        return self._resolve(found, remaining, hops + 1) if remaining else ("module", found)

    def _class(self, path: str, name: str, seen: frozenset) -> ProjectClass:
        key = (path, name)
        cached = self._classes.get(key)
        if cached is not None:
            return cached
        bases, methods = self._facts(path).classes[name]
        is_module: Optional[bool] = False
        defines = set(methods)
        for base in bases:
            verdict, inherited = self._base(path, base, seen | {key})
            defines |= inherited - {COPYING_TO} if "to" in methods else inherited  # its own to() decides
            if verdict:
                is_module = True
            elif verdict is None and is_module is False:
                is_module = None
        makers = frozenset(method[len(MAKES):] for method in defines if method.startswith(MAKES))
        host_only = self._facts(path).host_only_inputs.get(name, ())
        found = ProjectClass(
            path, name, is_module, "to" in defines, "cuda" in defines, COPYING_TO in defines, makers, host_only
        )
        self._classes[key] = found
        return found

    def _base(self, path: str, base: str, seen: frozenset) -> tuple[Optional[bool], set[str]]:
        """Whether a base class makes a module, and the tracked methods it brings."""
        facts = self._facts(path)
        head, _, rest = base.partition(".")
        imported = facts.imports.get(head)
        if imported is not None and not imported.startswith("."):
            qualified = f"{imported}.{rest}" if rest else imported
            if qualified == "torch.nn.Module" or torch_api.is_torch_nn_module_class(qualified):
                return True, set()
            if qualified in torch_api.THIRD_PARTY_MODULE_BASES:
                return True, set()
            if qualified in _PLAIN_BASES or qualified.startswith("torch."):
                return False, set()
        if base in _PLAIN_BASES:
            return False, set()
        target = self._resolve(path, base, 0)
        if target is None or target[0] != "class" or (target[1], target[2]) in seen:
            return None, set()
        found = self._class(target[1], target[2], seen)
        inherited = {
            name
            for name, present in (("to", found.defines_to), ("cuda", found.defines_cuda), (COPYING_TO, found.copies_on_to))
            if present
        } | {f"{MAKES}{method}" for method in found.makers}
        return found.is_module, inherited


def index_for_run(arguments: Iterable[str], walked: Iterable[str], walk: Callable[[str], Iterable[str]]) -> ProjectIndex:
    """The index of one run: the files it walks, and for each file named on its own (as
    pre-commit names the changed files), every file of the project it belongs to, listed by
    ``walk(folder)``."""
    paths = list(walked)
    for root in sorted({project_root(argument) for argument in arguments if os.path.isfile(argument)}):
        paths.extend(project_files(root, walk))
    return ProjectIndex.build(paths)


def project_files(root: str, walk: Callable[[str], Iterable[str]]) -> Iterable[str]:
    """The Python files of the project in ``root`` (a folder `project_root` gave): what ``walk``
    yields under a marked folder; under an unmarked one (a script in a home or temporary folder)
    only its own files and those of the packages in it, since everything below such a folder can
    be tens of thousands of unrelated files (a lone script in /tmp took a minute to check)."""
    if is_marked(root):
        return walk(root)
    return _loose_files(root)


def _loose_files(folder: str) -> Iterable[str]:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".py"):  # what cannot be read as a file, the index leaves out
            yield entry.path
        elif entry.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            yield from _loose_files(entry.path)


def is_marked(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS)


def project_root(path: str) -> str:
    """The folder of the project a lone file belongs to: the nearest one above it holding a
    ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``, else the file's own folder."""
    folder = start = os.path.dirname(os.path.realpath(path))
    while True:
        if is_marked(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent
