"""Which files a run covers: named files as given, folders searched for Python files."""

from __future__ import annotations

import os
from typing import Iterator, Sequence

#: Folders never worth descending into (flake8's defaults plus virtual environments).
DEFAULT_EXCLUDES = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "CVS", "__pycache__", ".tox", ".nox", ".eggs", ".venv", "venv",
        "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    }
)

STDIN = "-"


class MissingPath(Exception):
    """A path named on the command line that does not exist."""


def iter_python_files(paths: Sequence[str]) -> Iterator[str | MissingPath]:
    """Each file to check, in a stable order; a `MissingPath` in place of a path that is absent."""
    for path in paths:
        if path == STDIN or os.path.isfile(path):
            yield path
        elif os.path.isdir(path):
            yield from _walk_folder(path)
        else:
            yield MissingPath(path)


def _walk_folder(folder: str) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(root, name)
