"""Make the package importable when the tests run from a plain checkout."""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# The plugin's fixture, for runs where torchdevice-lint is not pip-installed
# (installed, the pytest11 entry point provides the same fixture).
from torchdevice_lint.verify.pytest_plugin import torchdevice_verify  # noqa: E402,F401
