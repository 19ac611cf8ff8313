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
    """``call`` with ``new`` added last, keeping a trailing comma and its line break."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new.with_changes(comma=last.comma))
    return call.with_changes(args=args)


def method_call(receiver: cst.BaseExpression, method: str, args: Sequence[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=list(args))


def factory_on_device(call: cst.Call, factory: str, device: str) -> cst.Call:
    """The factory ``call`` made on ``device``: ``device=`` added, or ``.to(device)`` for the
    factories that take no ``device=`` (``torch.from_numpy``)."""
    if factory in torch_api.FACTORIES_WITHOUT_DEVICE_KEYWORD:
        return method_call(call, "to", [argument(expression(device))])
    return append_argument(call, argument(expression(device), "device"))
