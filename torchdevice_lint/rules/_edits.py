"""Building blocks for fixes: small, formatting-preserving node edits."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api

_NO_SPACE = cst.SimpleWhitespace("")


def expression(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


def argument(value: cst.BaseExpression, keyword: Optional[str] = None) -> cst.Arg:
    if keyword is None:
        return cst.Arg(value=value)
    return cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
    )


def without_trailing_comma(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Arguments whose last one carries no comma, so none dangles after a removal."""
    args = list(args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def append_argument(call: cst.Call, new: cst.Arg) -> cst.Call:
    """``call`` with ``new`` added last, keeping a trailing comma and the line break before
    ``)``; in a call laid out one argument per line, ``new`` gets its own line at the
    arguments' indentation (never ``],`` plus trailing spaces and ``dtype=...)`` under it),
    and a trailing comma where ``)`` has a line of its own, as Black and Ruff write arguments
    one per line."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator = _argument_separator(call)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator), whitespace_after_arg=_NO_SPACE)
    comma = last.comma
    if isinstance(separator, cst.ParenthesizedWhitespace) and isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):
        comma = cst.Comma(whitespace_after=last.whitespace_after_arg)
        args.append(new.with_changes(comma=comma, whitespace_after_arg=_NO_SPACE))
    else:
        args.append(new.with_changes(comma=comma, whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def _argument_separator(call: cst.Call) -> cst.BaseParenthesizableWhitespace:
    """What separates the arguments of ``call``: the line break and indentation of a call
    written one argument per line, else one space (also for arguments on one line of their
    own between the brackets, ``torch.LongTensor(\n    len(texts), n\n)``, as Black and Ruff
    write a call that fits there without a trailing comma)."""
    between = [arg.comma.whitespace_after for arg in call.args[:-1] if isinstance(arg.comma, cst.Comma)]
    if between and not any(isinstance(whitespace, cst.ParenthesizedWhitespace) for whitespace in between):
        return cst.SimpleWhitespace(" ")
    for whitespace in (*between, call.whitespace_before_args):
        if isinstance(whitespace, cst.ParenthesizedWhitespace):
            return whitespace
    return cst.SimpleWhitespace(" ")


def method_call(receiver: cst.BaseExpression, method: str, args: Sequence[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=list(args))


def factory_on_device(call: cst.Call, factory: str, device: str) -> cst.Call:
    """The factory ``call`` made on ``device``: ``device=`` added, or ``.to(device)`` for the
    factories that take no ``device=`` (``torch.from_numpy``)."""
    if factory in torch_api.FACTORIES_WITHOUT_DEVICE_KEYWORD:
        return method_call(call, "to", [argument(expression(device))])
    return append_argument(call, argument(expression(device), "device"))
