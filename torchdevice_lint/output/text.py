"""flake8-style text lines and unified diffs."""

from __future__ import annotations

import difflib

from torchdevice_lint.findings import Finding, Safety


def format_finding(path: str, finding: Finding) -> str:
    """flake8's ``path:line:col: CODE message``, the column 1-based as flake8 prints it."""
    marker = ""
    if finding.fix_safety is Safety.SAFE:
        marker = " [*]"
    elif finding.fix_safety is Safety.UNSAFE:
        marker = " [unsafe fix]"
    return f"{path}:{finding.line}:{finding.column + 1}: {finding.code} {finding.message}{marker}"


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new = after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))
