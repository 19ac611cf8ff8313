"""torchdevice-lint: find and fix PyTorch code that only runs on one kind of machine.

The Python API, which ``torchdevice-fix`` and the flake8 plugin use themselves:

* `lint_source` (source text or bytes -> sorted list of `Finding`);
* `fix_source` (source -> fixed source, same type);
* `Settings` (which rules, preview, the device style and name a fix uses);
* `Linter` (one `Settings`, reused over many files: ``lint`` and ``fix`` -> `FixResult`);
* `Finding`, `Safety` and `SourceError`.

Settings from a ``pyproject.toml``: ``torchdevice_lint.config.resolve_config([path]).settings()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from torchdevice_lint.api import fix_source, lint_source
    from torchdevice_lint.engine import FixResult, Linter
    from torchdevice_lint.findings import Finding, Safety
    from torchdevice_lint.parsing import SourceError
    from torchdevice_lint.settings import Settings

#: Where each public name lives. Loaded on first use: pytest imports this package for the
#: verifier's plugin in every test run of every project that installs it, and that must not
#: pay for LibCST.
_PUBLIC = {
    "FixResult": "engine",
    "Linter": "engine",
    "Settings": "settings",
    "SourceError": "parsing",
    "fix_source": "api",
    "lint_source": "api",
    "Finding": "findings",
    "Safety": "findings",
}


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'torchdevice_lint' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"torchdevice_lint.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "Finding",
    "FixResult",
    "Linter",
    "Safety",
    "Settings",
    "SourceError",
    "fix_source",
    "lint_source",
    "__version__",
]
