"""Check results kept between runs, keyed by everything that decides them.

An entry is the outcome of checking one file's bytes (its findings, or the one-line reason it
could not be checked) under one configuration with one build of the tool. Its key is a SHA-256
of the file bytes, the settings, the tool's version and a digest of its own source (so that a
development checkout whose rules change never reuses stale results) and LibCST's version. The
path is not part of the key: a file that moves or is copied keeps its entry.

Entries are small JSON files (never pickles: a cache folder is not trusted code) under
``<folder>/v1/<first two hex digits>/<key>.json``, each written to a temporary file and renamed
into place, so two runs that overlap see either no entry or a whole one. An entry that cannot
be read or decoded is a miss and is overwritten. Only check mode uses the cache; fixing never does.

The folder is ``$TORCHDEVICE_CACHE_DIR`` if set, else ``.torchdevice_cache`` in the current
folder; it holds a ``.gitignore`` and a ``CACHEDIR.TAG`` so that git and backup tools skip it.
Nothing prunes it: delete the folder to reclaim the space.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional, Union

from torchdevice_lint.findings import Finding, Safety

CACHE_DIR_ENV = "TORCHDEVICE_CACHE_DIR"
DEFAULT_CACHE_DIR = ".torchdevice_cache"
#: Bump when the entry layout changes.
FORMAT = "v1"

_PACKAGE = Path(__file__).resolve().parent
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchdevice-lint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def default_directory() -> str:
    return os.environ.get(CACHE_DIR_ENV) or os.path.join(os.getcwd(), DEFAULT_CACHE_DIR)


@functools.lru_cache(maxsize=None)
def tool_fingerprint() -> str:
    """The tool's version, a digest of its source files, LibCST's and Python's versions."""
    from torchdevice_lint import __version__

    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        relative = path.relative_to(_PACKAGE).as_posix()
        if relative.startswith("verify/"):
            continue  # the runtime verifier never affects a check
        digest.update(relative.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    python = "%d.%d" % sys.version_info[:2]
    return f"{__version__}+{digest.hexdigest()[:16]} libcst {_libcst_version()} python {python}"


def _libcst_version() -> str:
    try:
        return importlib.metadata.version("libcst")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


#: What a cached check holds: the findings, or the one-line reason the file could not be checked.
Outcome = Union[list[Finding], str]


class ResultCache:
    """Look up and store the outcome of checking some bytes under one configuration."""

    def __init__(self, directory: Optional[str] = None, configuration: str = "") -> None:
        self.directory = Path(directory or default_directory())
        self._salt = hashlib.sha256(f"{FORMAT}\0{tool_fingerprint()}\0{configuration}\0".encode()).digest()
        self._prepared = False
        #: False once a write failed (read-only folder, full disk): the run goes on uncached.
        self.writable = True
        self.hits = 0
        self.misses = 0

    def key(self, data: bytes, kind: str = "py") -> str:
        """The entry's name: ``kind`` tells how the bytes are read (``py`` or ``ipynb``)."""
        return hashlib.sha256(self._salt + kind.encode() + b"\0" + data).hexdigest()

    def get(self, data: bytes, kind: str = "py") -> Optional[Outcome]:
        key = self.key(data, kind)
        try:
            raw = self._entry(key).read_bytes()
        except OSError:
            self.misses += 1
            return None
        outcome = _decode(raw, key)
        if outcome is None:
            self.misses += 1
        else:
            self.hits += 1
        return outcome

    def put(self, data: bytes, outcome: Outcome, kind: str = "py") -> None:
        if not self.writable:
            return
        key = self.key(data, kind)
        entry = self._entry(key)
        payload = json.dumps(_encode(key, outcome), separators=(",", ":")).encode()
        temporary = None
        try:
            self._prepare()
            entry.parent.mkdir(exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", dir=entry.parent)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(payload)
            os.replace(temporary, entry)
            temporary = None
        except OSError:
            self.writable = False
        finally:
            if temporary is not None:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass

    # -------------------------------------------------------------- internals
    def _entry(self, key: str) -> Path:
        return self.directory / FORMAT / key[:2] / f"{key}.json"

    def _prepare(self) -> None:
        if self._prepared:
            return
        (self.directory / FORMAT).mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Created by torchdevice-lint\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.directory / name
            if not marker.exists():
                try:
                    marker.write_text(text)
                except OSError:
                    pass
        self._prepared = True


def _encode(key: str, outcome: Outcome) -> dict:
    if isinstance(outcome, str):
        return {"key": key, "error": outcome}
    findings = []
    for finding in outcome:
        fields = dataclasses.asdict(finding)
        if finding.fix_safety is not None:
            fields["fix_safety"] = finding.fix_safety.value
        findings.append(fields)
    return {"key": key, "findings": findings}


def _decode(raw: bytes, key: str) -> Optional[Outcome]:
    """The outcome an entry holds, or None for anything malformed (a corrupt entry is a miss)."""
    try:
        entry = json.loads(raw)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        if "error" in entry:
            error = entry["error"]
            return error if isinstance(error, str) else None
        findings = []
        for fields in entry["findings"]:
            if not isinstance(fields, dict) or set(fields) != _FINDING_FIELDS:
                return None
            if not all(isinstance(fields[name], str) for name in ("code", "message", "fix_withheld")):
                return None
            if not all(type(fields[name]) is int for name in ("line", "column", "end_line", "end_column")):
                return None
            safety = fields["fix_safety"]
            fields["fix_safety"] = Safety(safety) if safety is not None else None
            findings.append(Finding(**fields))
        return findings
    except (ValueError, TypeError, KeyError):
        return None


_FINDING_FIELDS = frozenset(field.name for field in dataclasses.fields(Finding))
