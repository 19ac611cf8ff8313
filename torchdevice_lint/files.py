"""Which files a run covers: named files as given, folders searched for Python files and notebooks.

Folders are walked in a stable order, skipping what ``exclude`` / ``extend-exclude`` name
(gitignore-style patterns relative to the configuration's folder) and, unless
``respect-gitignore = false``, what ``.gitignore`` files (and ``.git/info/exclude``) ignore.
A file named on the command line is checked unless ``exclude`` matches it, as in flake8;
``.gitignore`` only prunes the folder walk.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Iterator, Optional, Sequence

from torchdevice_lint.analysis.project import FileFacts, ProjectIndex, project_files
from torchdevice_lint.config import DEFAULT_EXCLUDE, Config
from torchdevice_lint.patterns import PatternSet, relative_to_root

#: File name endings a folder walk picks up.
SOURCE_SUFFIXES = (".py", ".ipynb")

STDIN = "-"


class MissingPath(Exception):
    """A path named on the command line that cannot be checked; ``reason`` says why in one line."""

    def __init__(self, path: str, reason: str = "no such file or directory") -> None:
        super().__init__(path)
        self.path, self.reason = path, reason

    def __str__(self) -> str:
        return self.path


def describe(error: OSError) -> str:
    """An OSError in one line, spelled as the rest of our messages (``no such file or directory``)."""
    text = error.strerror or str(error)
    return text[:1].lower() + text[1:]


class _Walker:
    def __init__(self, config: Optional[Config]) -> None:
        self.config = config or Config()
        self.root = Path(self.config.root).resolve()
        self.exclude = PatternSet(self.config.exclude_patterns if config is not None else DEFAULT_EXCLUDE)
        self.respect_gitignore = self.config.respect_gitignore
        #: Folder (absolute) -> its .gitignore patterns, or None where it has none.
        self._gitignores: dict[Path, Optional[PatternSet]] = {}
        self._repo_roots: dict[Path, Optional[Path]] = {}

    # ------------------------------------------------------------- exclusion
    def excluded(self, path: str, is_dir: bool, top: Optional[Path] = None) -> bool:
        relative = relative_to_root(path, self.root, top)
        return relative not in (".", "") and self.exclude.matches(relative, is_dir)

    def gitignored(self, path: Path, is_dir: bool, top: Optional[Path] = None) -> bool:
        if not self.respect_gitignore:
            return False
        ignored: Optional[bool] = None
        # Shallowest first, so a deeper .gitignore (or a later pattern) has the last word.
        for folder in reversed(self._gitignore_folders(path.parent, top)):
            patterns = self._gitignore(folder)
            if patterns is None:
                continue
            verdict = patterns.verdict(path.relative_to(folder).as_posix(), is_dir)
            if verdict is not None:
                ignored = verdict
        return bool(ignored)

    def _gitignore_folders(self, folder: Path, top: Optional[Path] = None) -> list[Path]:
        """``folder`` and its parents up to the repository root (outside a repository: up to ``top``,
        the folder the walk started from)."""
        stop = self._repo_root(folder) or top or folder
        folders = [folder]
        while folders[-1] != stop and folders[-1].parent != folders[-1]:
            folders.append(folders[-1].parent)
        return folders

    def _repo_root(self, folder: Path) -> Optional[Path]:
        if folder not in self._repo_roots:
            found = None
            for candidate in (folder, *folder.parents):
                if (candidate / ".git").exists():
                    found = candidate
                    break
            self._repo_roots[folder] = found
        return self._repo_roots[folder]

    def _gitignore(self, folder: Path) -> Optional[PatternSet]:
        if folder not in self._gitignores:
            lines: list[str] = []
            sources = [folder / ".gitignore"]
            if self._repo_root(folder) == folder:
                sources.append(folder / ".git" / "info" / "exclude")
            for source in sources:
                try:
                    lines.extend(source.read_text(encoding="utf-8", errors="replace").splitlines())
                except OSError:
                    continue
            self._gitignores[folder] = PatternSet(lines) if lines else None
        return self._gitignores[folder]

    # ------------------------------------------------------------------ walk
    def walk(self, folder: str) -> Iterator[str]:
        top = Path(folder).resolve()
        for root, dirs, files in os.walk(folder):
            base = Path(root).resolve()
            dirs[:] = sorted(
                d
                for d in dirs
                if not self.excluded(os.path.join(root, d), True, top) and not self.gitignored(base / d, True, top)
            )
            for name in sorted(files):
                if is_leftover_temporary(os.path.join(root, name)):
                    _remove(os.path.join(root, name))
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                if os.path.islink(path) and os.path.isfile(path):
                    # A link inside the tree reaches a file the walk checks at its own path; one
                    # leaving it reaches someone else's file. Only a link named on the command line
                    # is followed; a broken one is yielded, to be named.
                    continue
                if not self.excluded(path, False, top) and not self.gitignored(base / name, False, top):
                    yield path


#: What `torchdevice_lint.runner.write_atomically` names its temporary files.
TEMPORARY_PREFIX, TEMPORARY_SUFFIX = ".torchdevice-", ".tmp"

#: A temporary file is renamed milliseconds after it is written; one older than this was left
#: by a run that was killed, and the next walk through its folder removes it.
LEFTOVER_AGE_S = 60


def is_leftover_temporary(path: str) -> bool:
    name = os.path.basename(path)
    if not (name.startswith(TEMPORARY_PREFIX) and name.endswith(TEMPORARY_SUFFIX)):
        return False
    try:
        return time.time() - os.lstat(path).st_mtime > LEFTOVER_AGE_S
    except OSError:
        return False


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def iter_python_files(paths: Sequence[str], config: Optional[Config] = None) -> Iterator[str | MissingPath]:
    """Each file to check, in a stable order; a `MissingPath` in place of a path that is absent.

    Folders yield their ``.py`` and ``.ipynb`` files; a named file is yielded whatever its suffix.
    Each file comes once, by its real path: a file named twice, or named and also reached by a
    folder, is checked at its first mention.
    """
    walker = _Walker(config)
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            yield path
            continue
        try:
            os.stat(path)
        except OSError as error:
            yield MissingPath(path, describe(error))
            continue
        if os.path.isfile(path):
            candidates: Iterator[str] = iter(() if walker.excluded(path, False) else (path,))
        elif os.path.isdir(path):
            candidates = iter(() if walker.excluded(path, True) else walker.walk(path))
        else:
            candidates = iter((path,))  # a FIFO or device: reading it says why it cannot be checked
        for candidate in candidates:
            real = os.path.realpath(candidate)
            if real not in seen:
                seen.add(real)
                yield without_dot_prefix(candidate)


def without_dot_prefix(path: str) -> str:
    """``x.py`` for ``./x.py``: the spelling Ruff and a user's editor use for the same file."""
    while path.startswith("./") and len(path) > 2:
        path = path[2:].lstrip("/")
    return path


#: Real path -> (hash of its text, its facts), for every file the indexes of this process scanned:
#: flake8 over folders without a project marker indexes each folder a file is in as its own
#: project, with the packages below it (a file four packages deep is in five such indexes).
_SCANNED: dict[str, tuple[int, FileFacts]] = {}


@functools.lru_cache(maxsize=16)
def index_of_project(root: str) -> ProjectIndex:
    """The index of the project in ``root``, built once per process (the flake8 plugin)."""
    return ProjectIndex.build(project_files(root, walk_files), _SCANNED)


def walk_files(folder: str) -> Iterator[str]:
    """The Python files of a folder, walked with the default configuration."""
    return (path for path in iter_python_files([folder]) if isinstance(path, str))
