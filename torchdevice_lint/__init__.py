"""torchdevice-lint: find and fix PyTorch code that only runs on one kind of machine."""

from torchdevice_lint.engine import Linter, Settings, SourceError, fix_source, lint_source
from torchdevice_lint.findings import Finding, Safety

__version__ = "0.1.0"

__all__ = ["Finding", "Linter", "Safety", "Settings", "SourceError", "fix_source", "lint_source", "__version__"]
