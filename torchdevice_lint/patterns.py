"""gitignore-style patterns matched against paths relative to a project's root (``exclude``,
``per-file-ignores``, ``.gitignore``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

import pathspec


class PatternSet:
    """gitignore-style patterns (``build/``, ``*.ipynb``, ``/scripts``, ``!keep.py``) relative to one folder."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        return self.spec.match_file(relative + "/" if is_dir and not relative.endswith("/") else relative)

    def verdict(self, relative: str, is_dir: bool = False) -> Optional[bool]:
        """True ignored, False re-included by a ``!`` pattern, None not mentioned."""
        result = self.spec.check_file(relative + "/" if is_dir and not relative.endswith("/") else relative)
        return result.include


def relative_to_root(path: str, root: Path, fallback: Optional[Path] = None) -> str:
    """``path`` in POSIX form relative to ``root``; outside it, relative to ``fallback`` (the folder
    being walked), else just the file's name: folders above the project never match a pattern."""
    absolute = Path(os.path.realpath(path))
    for base in (root, fallback):
        if base is None:
            continue
        try:
            return absolute.relative_to(Path(os.path.realpath(base))).as_posix()
        except ValueError:
            continue
    return absolute.name
