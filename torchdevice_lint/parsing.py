"""Source text in, a LibCST module out: every way a file can fail to parse becomes one `SourceError` line."""

from __future__ import annotations

import ast
import codecs
import gc
import io
import re
import textwrap
import threading
import tokenize
import warnings
from contextlib import contextmanager
from typing import Iterator, Union

import libcst as cst

#: A file's contents as the API takes them: text, or raw bytes (which honour a coding line and a BOM).
Source = Union[str, bytes]

#: Physical lines with their endings, as LibCST counts them (``splitlines`` also splits at form feeds).
LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")
BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


#: Allocations between two collections of the young generation while many files are checked
#: (Python's default is 700). A file's syntax tree is some 100,000 objects, none kept past the
#: file, so collecting that often scans the same young trees again and again: about 5% of a run
#: on torch/nn (benchmarks/bench.py).
YOUNG_GENERATION_THRESHOLD = 20_000


def collect_young_objects_less_often() -> None:
    """For a process that checks many files (the CLI and its workers, flake8 with the plugin)."""
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])


class SourceError(Exception):
    """A file that cannot be linted: the message is one line, fit for a report. A message about
    one place starts with `LOCATED`'s ``line:column: `` (a syntax error)."""


#: The start of a message about one place: ``2:24: `` (``cell_2:1:7: `` in a notebook).
LOCATED = re.compile(r"(?:cell_\d+:)?\d+:\d+: ")


#: Byte order marks of encodings Python never reads source in (it would stop at the first line).
_FOREIGN_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def check_decodable(source: Source) -> None:
    """Raise a one-line `SourceError` for bytes Python cannot read as source, whatever text they
    hold, so that such a file is named rather than skipped for lack of ``torch`` in it."""
    if not isinstance(source, bytes):
        return
    for bom, encoding in _FOREIGN_BOMS.items():
        if source.startswith(bom):
            raise SourceError(f"cannot decode: {encoding} text (Python reads source as UTF-8 or its coding line's encoding)")
    if b"\x00" in source:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        source.decode(encoding)
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        raise SourceError(f"cannot decode: {error}") from None


class _ParserAtWork(threading.local):
    active = False


_PARSER_AT_WORK = _ParserAtWork()
_validate_node = cst.CSTNode.__post_init__


def _validate_unless_built_by_parser(node: cst.CSTNode) -> None:
    """LibCST checks every node as it is built, those its own parser builds from valid source
    too: about a quarter of a parse (benchmarks/bench.py, torch/nn). Nodes a fix builds are
    still checked, and so is everything outside `parse_module` (other threads, other code)."""
    if not _PARSER_AT_WORK.active:
        _validate_node(node)


setattr(cst.CSTNode, "__post_init__", _validate_unless_built_by_parser)


@contextmanager
def _nodes_built_by_parser() -> Iterator[None]:
    _PARSER_AT_WORK.active = True
    try:
        yield
    finally:
        _PARSER_AT_WORK.active = False


def parse_module(source: Source) -> cst.Module:
    """`libcst.parse_module` without checking again what the parser built."""
    with _nodes_built_by_parser():
        return cst.parse_module(source)


def parse(source: Source) -> cst.Module:
    """Parse, turning every failure into a one-line `SourceError`."""
    check_decodable(source)
    try:
        return parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(_syntax_error(source, error)) from None
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        raise SourceError(f"cannot decode: {error}") from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None


def _syntax_error(source: Source, error: cst.ParserSyntaxError) -> str:
    """One line: Python's own diagnosis (clearer than LibCST's list of expected tokens), after the
    ``line:column: `` the report puts behind the path (see `torchdevice_lint.output.text.error_line`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<file>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python:
        return f"{python.lineno}:{python.offset}: syntax error: {python.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    else:  # valid Python that this LibCST cannot read (newer syntax, for one)
        detail = error.message.removeprefix("parser error: ")
        return f"LibCST cannot parse this file (Python can): {textwrap.shorten(detail, 100)}"
    return f"{error.raw_line}:{error.raw_column + 1}: syntax error"
