"""Settings from ``[tool.torchdevice-lint]`` in ``pyproject.toml``, and how the CLI overrides them.

Discovery: the nearest ``pyproject.toml`` holding a ``[tool.torchdevice-lint]`` table, searched
upward from the first path given (or the current folder); ``--config PATH`` names one instead
and ``--isolated`` uses none. Patterns (``exclude``, ``per-file-ignores``) are relative to the
folder of that file. Any unknown key or bad value is one `ConfigError` naming the key and file.
"""

from __future__ import annotations

import configparser
import difflib
import functools
import keyword
import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from torchdevice_lint.guard import Budget
from torchdevice_lint.patterns import PatternSet, relative_to_root
from torchdevice_lint.rules import ALL_RULES
from torchdevice_lint.settings import DEVICE_STYLES, Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

TABLE = "torchdevice-lint"

#: Folders and files never worth checking (flake8's and Ruff's defaults); ``exclude`` replaces
#: this list, ``extend-exclude`` adds to it.
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", "CVS", "__pycache__", ".tox", ".nox", ".eggs", "*.egg-info",
    ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints", "build", "dist", "site-packages",
)


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    """Everything a run is configured with, whichever file or flag it came from."""

    #: The file the values came from (None: defaults and flags only).
    path: Optional[Path] = None
    #: The folder ``exclude`` and ``per-file-ignores`` patterns are relative to.
    root: Path = field(default_factory=Path.cwd)
    #: Which rules run and how fixes are written, for files no ``per-file-ignores`` pattern matches.
    base: Settings = Settings()
    #: (gitignore-style pattern, codes) pairs, in file order.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    #: The per-file budget: seconds to check one file, and levels of nesting it may have.
    file_timeout: float = Budget.seconds
    max_nesting: int = Budget.depth

    def budget(self) -> Budget:
        return Budget(seconds=self.file_timeout, depth=self.max_nesting)

    # ----------------------------------------------------------------- settings
    def settings(self) -> Settings:
        """The engine settings for files no ``per-file-ignores`` pattern matches."""
        return self.base

    def settings_for(self, path: str) -> Settings:
        """The engine settings for one file: `settings` with the codes its patterns ignore
        (which win even over a longer prefix in ``select``), and its project's isort
        ``lines-after-imports`` and line length (so that what a fix writes keeps the file clean)."""
        folder = os.path.dirname(os.path.abspath(path))
        return self.base.for_file(
            self.ignored_codes_for(path), isort_lines_after_imports(folder), project_line_length(folder), project_layout(folder)
        )

    def ignored_codes_for(self, path: str) -> tuple[str, ...]:
        if not self.per_file_ignores:
            return ()
        relative = relative_to_root(path, self.root)
        codes: list[str] = []
        for pattern, listed in self.per_file_ignores:
            if PatternSet([pattern]).matches(relative):
                codes.extend(listed)
        return tuple(codes)

    @property
    def exclude_patterns(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def overridden(self, **values: Any) -> Config:
        """A copy with the values given on the command line: each named as a field of `Settings`
        or of this class (None: not given; other names are not settings and are left out).

        ``extend_exclude`` adds to the file's list. As in Ruff, a ``select`` given on the command
        line starts the rule selection afresh: the file's ``ignore`` is dropped unless ``ignore``
        is given too (``per-file-ignores`` stay).
        """
        given = {key: value for key, value in values.items() if value is not None and key in _FLAG_FIELDS}
        if "select" in given and "ignore" not in given:
            given["ignore"] = ()
        if "extend_exclude" in given:
            given["extend_exclude"] = self.extend_exclude + tuple(given["extend_exclude"])
        return _with_settings(self, given)


#: The keys of a configuration that are `Settings` fields; the rest are `Config` fields.
_SETTINGS_FIELDS = frozenset(item.name for item in fields(Settings))

#: What the command line may set: the fields of both but where the file is and what it held.
_FLAG_FIELDS = (_SETTINGS_FIELDS | {item.name for item in fields(Config)}) - {"path", "root", "base", "file_ignores"}


def _with_settings(config: Config, values: dict[str, Any]) -> Config:
    """``config`` with ``values`` (field names of `Settings` or `Config`) put in their place."""
    settings = {key: value for key, value in values.items() if key in _SETTINGS_FIELDS}
    rest = {key: value for key, value in values.items() if key not in _SETTINGS_FIELDS}
    return replace(config, base=replace(config.base, **settings), **rest)


# ------------------------------------------------------------------ discovery
@functools.lru_cache(maxsize=None)
def isort_lines_after_imports(folder: str) -> Optional[int]:
    """``lines-after-imports`` of the nearest isort or Ruff configuration above ``folder``
    (``[tool.ruff.lint.isort]``, ``[tool.ruff.isort]`` or ``[tool.isort]`` in pyproject.toml,
    ``ruff.toml``/``.ruff.toml``, ``[isort]``/``[tool:isort]`` in setup.cfg, tox.ini or
    .isort.cfg); None when the nearest one leaves it to the default, or there is none."""
    here = Path(folder)
    for directory in (here, *here.parents):
        found, value = _lines_after_imports_in(directory)
        if found:
            return value if value is not None and value >= 0 else None
    return None


def _lines_after_imports_in(directory: Path) -> tuple[bool, Optional[int]]:
    """(whether ``directory`` holds an isort or Ruff configuration, its lines-after-imports)."""
    tables: list[Any] = []
    for name, paths in (
        ("pyproject.toml", (("tool", "ruff", "lint", "isort"), ("tool", "ruff", "isort"), ("tool", "isort"))),
        ("ruff.toml", (("lint", "isort"), ("isort",))),
        (".ruff.toml", (("lint", "isort"), ("isort",))),
    ):
        document = _toml_file(directory / name)
        if document is None:
            continue
        configures = name != "pyproject.toml" or "ruff" in document.get("tool", {}) or "isort" in document.get("tool", {})
        for keys in paths:
            table: Any = document
            for key in keys:
                table = table.get(key) if isinstance(table, dict) else None
            tables.append(table)
        if configures:
            values = [t.get(k) for t in tables if isinstance(t, dict) for k in ("lines-after-imports", "lines_after_imports")]
            return True, next((v for v in values if isinstance(v, int)), None)
    for name in (".isort.cfg", "setup.cfg", "tox.ini"):
        parser = _ini_file(directory / name)
        if parser is None:
            continue
        for section in ("isort", "tool:isort", "settings"):
            if parser.has_section(section) and (name == ".isort.cfg" or section != "settings"):
                value = parser.get(section, "lines_after_imports", fallback=None)
                return True, int(value) if value is not None and value.lstrip("-").isdigit() else None
    return False, None


#: Black formats at 88 characters unless told otherwise; a ``[tool.black]`` table alone means 88.
BLACK_DEFAULT_LINE_LENGTH = 88


@functools.lru_cache(maxsize=None)
def project_line_length(folder: str) -> Optional[int]:
    """The line length of the nearest folder above ``folder`` whose configuration states one: the
    smallest of Ruff's ``line-length`` and ``lint.pycodestyle.max-line-length``, Black's
    ``line-length`` (88 for a ``[tool.black]`` table without one) and flake8's or pycodestyle's
    ``max-line-length`` (pyproject.toml, ruff.toml, .ruff.toml, setup.cfg, tox.ini, .flake8):
    a line within it passes every checker and no formatter rewraps it. None where no
    configuration states one: there a fix keeps the lines it lengthens within 88 columns
    (`wrapping.UNCONFIGURED_LINE_LENGTH`), unless they were longer already."""
    here = Path(folder)
    for directory in (here, *here.parents):
        lengths = _line_lengths_in(directory)
        if lengths:
            return min(lengths)
    return None


def _line_lengths_in(directory: Path) -> list[int]:
    """Every line length the configuration files of ``directory`` state."""
    lengths: list[Any] = []
    for name in ("pyproject.toml", "ruff.toml", ".ruff.toml"):
        document = _toml_file(directory / name)
        if document is None:
            continue
        tool = document.get("tool", {}) if name == "pyproject.toml" else {"ruff": document}
        if not isinstance(tool, dict):
            continue
        ruff, black, flake8 = (tool.get(key) for key in ("ruff", "black", "flake8"))
        if isinstance(ruff, dict):
            lengths.append(ruff.get("line-length"))
            pycodestyle = _table_at(ruff, "lint", "pycodestyle") or _table_at(ruff, "pycodestyle")
            lengths.append(pycodestyle.get("max-line-length") if pycodestyle else None)
        if isinstance(black, dict):
            lengths.append(black.get("line-length", black.get("line_length", BLACK_DEFAULT_LINE_LENGTH)))
        if isinstance(flake8, dict):
            lengths.append(flake8.get("max-line-length", flake8.get("max_line_length")))
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        parser = _ini_file(directory / name)
        if parser is None:
            continue
        for section in ("flake8", "pycodestyle"):
            for key in ("max-line-length", "max_line_length"):
                value = parser.get(section, key, fallback=None) if parser.has_section(section) else None
                lengths.append(int(value) if value is not None and value.strip().isdigit() else None)
    lengths.append(_yapf_column_limit(directory))
    return [length for length in lengths if isinstance(length, int) and not isinstance(length, bool) and length > 0]


#: yapf's column limit for each of its base styles (``based_on_style``; pep8 without one).
YAPF_COLUMN_LIMITS = {"pep8": 79, "google": 80, "facebook": 80, "yapf": 80}
#: The base styles that write a split call's closing bracket alone on its own line.
_YAPF_DEDENTING_STYLES = frozenset({"facebook"})
#: The base styles that split before the first argument of a call they split.
_YAPF_HANGING_STYLES = frozenset({"yapf"})


@functools.lru_cache(maxsize=None)
def project_layout(folder: str) -> Optional[str]:
    """How the nearest yapf configuration above ``folder`` (``.style.yapf``, ``[yapf]`` in
    setup.cfg, ``[tool.yapf]`` in pyproject.toml, as yapf looks them up) lays out a call it
    splits; None where there is none (Black's and Ruff's layout is assumed).

    ``yapf-aligned``: the arguments one per line, aligned with the opening bracket, the closing
    bracket after the last (pep8, google); ``yapf-hanging``: the arguments one level in on the
    line after the opening bracket, the closing bracket after them
    (``split_before_expression_after_opening_paren``); ``yapf-dedent``: the closing bracket on a
    line of its own (``dedent_closing_brackets``, facebook); ``yapf``: a style whose layout is
    not known here (``indent_closing_brackets``, ``split_before_first_argument``, ...), where a
    fix that would need a line laid out leaves it alone."""
    options = _yapf_options(folder)
    if options is None:
        return None
    base = options.get("based_on_style", "pep8").lower()

    def flag(name: str, default: bool = False) -> bool:
        value = options.get(name)
        return default if value is None else value.strip().lower() in ("true", "1", "yes", "on")

    if base not in YAPF_COLUMN_LIMITS or any(
        flag(name) for name in ("indent_closing_brackets", "split_before_first_argument", "split_all_comma_separated_values",
                                "split_all_top_level_comma_separated_values", "split_arguments_when_comma_terminated")
    ):
        return "yapf"
    if options.get("continuation_indent_width", "4").strip() != "4":
        return "yapf"
    if flag("dedent_closing_brackets", base in _YAPF_DEDENTING_STYLES):
        return "yapf-dedent"
    if flag("split_before_expression_after_opening_paren", base in _YAPF_HANGING_STYLES):
        return "yapf-hanging"
    return "yapf-aligned"


def _yapf_options(folder: str) -> Optional[dict[str, str]]:
    """The options of the nearest yapf configuration above ``folder``."""
    here = Path(folder)
    for directory in (here, *here.parents):
        options = _yapf_options_in(directory)
        if options is not None:
            return options
    return None


def _yapf_options_in(directory: Path) -> Optional[dict[str, str]]:
    """The options of the yapf configuration in ``directory`` itself (keys in lower case, with
    underscores), in yapf's order: ``.style.yapf``, setup.cfg, pyproject.toml."""
    for name, section in ((".style.yapf", "style"), ("setup.cfg", "yapf")):
        parser = _ini_file(directory / name)
        if parser is not None and parser.has_section(section):
            return {key.lower().replace("-", "_"): value for key, value in parser.items(section)}
    document = _toml_file(directory / "pyproject.toml")
    table = _table_at(document, "tool", "yapf") if document is not None else None
    if table is None:
        return None
    return {str(key).lower().replace("-", "_"): str(value) for key, value in table.items()}


def _yapf_column_limit(directory: Path) -> Optional[int]:
    """The column limit of the yapf configuration in ``directory`` itself."""
    options = _yapf_options_in(directory)
    if options is None:
        return None
    value = options.get("column_limit")
    if value is not None:
        return int(value) if value.strip().isdigit() else None
    return YAPF_COLUMN_LIMITS.get(options.get("based_on_style", "pep8").lower())


# The two lookups above climb from every folder of a run to the root, through the same parent
# folders and the same files: each file is read once per process.
@functools.lru_cache(maxsize=None)
def _toml_file(path: Path) -> Optional[dict]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


@functools.lru_cache(maxsize=None)
def _ini_file(path: Path) -> Optional[configparser.ConfigParser]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def _table_at(table: dict, *keys: str) -> Optional[dict]:
    found: Any = table
    for key in keys:
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else None


def find_config(start: Optional[str] = None) -> Optional[Path]:
    """The nearest ``pyproject.toml`` with a ``[tool.torchdevice-lint]`` table, from ``start`` upward."""
    try:
        folder = Path(start or os.getcwd()).resolve()
    except (OSError, RuntimeError):  # a symlink loop: the run names it; look from its folder
        folder = Path(os.path.abspath(start or os.getcwd()))
    if not folder.is_dir():
        folder = folder.parent
    for candidate_folder in (folder, *folder.parents):
        candidate = candidate_folder / "pyproject.toml"
        if candidate.is_file() and _has_table(candidate):
            return candidate
    return None


def _has_table(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if TABLE not in text:
        return False
    try:
        return isinstance(_tool_table(tomllib.loads(text)), dict)
    except tomllib.TOMLDecodeError:
        return True  # let load_config report the broken file rather than silently skip it


def _tool_table(document: Mapping[str, Any]) -> Any:
    tool = document.get("tool")
    return tool.get(TABLE) if isinstance(tool, dict) else None


def resolve_config(paths: Sequence[str], config_path: Optional[str] = None, isolated: bool = False) -> Config:
    """The configuration for a run over ``paths``: ``--config`` if given, else the discovered one."""
    if isolated:
        return Config()
    if config_path is not None:
        return load_config(Path(config_path), required=True)
    first = next((p for p in paths if p != "-"), None)
    found = find_config(first)
    return load_config(found) if found is not None else Config()


# -------------------------------------------------------------------- loading
def load_config(path: Path, required: bool = False) -> Config:
    """Read and check ``[tool.torchdevice-lint]`` in ``path``; raise `ConfigError` on any problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    table = _tool_table(document)
    root = path.resolve().parent
    if table is None:
        if required:
            raise ConfigError(f"{path}: no [tool.{TABLE}] table")
        return Config(path=path, root=root)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
    return _with_settings(Config(path=path, root=root), parse_table(table, str(path)))


_KEYS = (
    "select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "respect-gitignore",
    "device-name", "device-style", "preview", "file-timeout", "max-nesting",
)


def parse_table(table: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Check every key and value; return `Settings` and `Config` field values by name. ``source``
    names the file in errors."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        where = f"{source}: [tool.{TABLE}] {key}"
        if key not in _KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), _KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f"; known keys: {', '.join(_KEYS)}"
            raise ConfigError(f"{source}: [tool.{TABLE}]: unknown key '{key}'{hint}")
        attribute = key.replace("-", "_")
        if key in ("select", "ignore"):
            values[attribute] = check_codes(value, where)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: must be a table of pattern = [codes]")
            values[attribute] = tuple(
                (str(pattern), check_codes(codes, f"{where} '{pattern}'")) for pattern, codes in value.items()
            )
        elif key in ("exclude", "extend-exclude"):
            values[attribute] = _string_list(value, where, "patterns")
        elif key in ("respect-gitignore", "preview"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: must be true or false, not {value!r}")
            values[attribute] = value
        elif key == "device-name":
            values[attribute] = check_device_name(value, where)
        elif key == "device-style":
            values[attribute] = check_device_style(value, where)
        elif key == "file-timeout":
            values[attribute] = check_file_timeout(value, where)
        elif key == "max-nesting":
            values[attribute] = check_max_nesting(value, where)
    return values


def check_file_timeout(value: Any, where: str) -> float:
    """Seconds a file may take: a positive number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"{where}: must be a positive number of seconds, not {value!r}")
    return float(value)


def check_max_nesting(value: Any, where: str) -> int:
    """Levels of nesting a file may have: at least 100, which hand-written code never reaches."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 100:
        raise ConfigError(f"{where}: must be a whole number of levels, at least 100, not {value!r}")
    return value


def check_codes(value: Any, where: str) -> tuple[str, ...]:
    """A list of rule codes or prefixes (``TDL``, ``TDL00``, ``TDL001``), each naming some rule."""
    codes = _string_list(value, where, "rule codes")
    known = [rule.code for rule in ALL_RULES]
    for code in codes:
        if not any(rule_code.startswith(code.upper()) for rule_code in known):
            raise ConfigError(f"{where}: '{code}' is not a rule code or prefix (known: {', '.join(known)})")
    return tuple(code.upper() for code in codes)


def check_device_name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.isidentifier() or keyword.iskeyword(value):
        raise ConfigError(f"{where}: must be a Python identifier such as 'device', not {value!r}")
    return value


def check_device_style(value: Any, where: str) -> str:
    if value not in DEVICE_STYLES:
        choices = " or ".join(repr(style) for style in DEVICE_STYLES)
        raise ConfigError(f"{where}: must be {choices}, not {value!r}")
    return str(value)


def _string_list(value: Any, where: str, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: must be a list of {what} (strings), not {value!r}")
    return tuple(value)
