"""torchdevice-lint: find and fix PyTorch code that only runs on one kind of machine.

The Python API, which ``torchdevice-fix`` and the flake8 plugin use themselves:

* `lint_source` (source text or bytes -> sorted list of `Finding`);
* `fix_source` (source -> fixed source, same type);
* `Settings` (which rules, preview, the device style and name a fix uses);
* `Linter` (one `Settings`, reused over many files: ``lint`` and ``fix`` -> `FixResult`);
* `Finding`, `Safety` and `SourceError`.

Settings from a ``pyproject.toml``: ``torchdevice_lint.config.resolve_config([path]).settings()``.
"""

from torchdevice_lint.engine import FixResult, Linter, Settings, SourceError, fix_source, lint_source
from torchdevice_lint.findings import Finding, Safety

__version__ = "0.1.0"

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
