"""The flake8 adapter: flake8 hands over the file's lines and we lint them through the public API.

flake8 decides which codes to show (``select``, ``ignore``, ``per-file-ignores``, ``# noqa``,
``exclude``). Our own settings come from flake8's configuration (``setup.cfg``, ``tox.ini`` or
``.flake8``, section ``[flake8]``) or its command line:

* ``torchdevice-preview = true`` (``--torchdevice-preview``): also run rules still in preview
  (a preview rule's full code in ``select`` or ``extend-select`` runs that one; a prefix such
  as ``TDL`` does not, as in ``torchdevice-fix``);
* ``torchdevice-device-style = cuda|accelerator`` and ``torchdevice-device-name = NAME``:
  accepted and checked, so one configuration serves ``flake8`` and ``torchdevice-fix``;
  they shape fixes, which flake8 does not apply.

One engine (`Linter`: settings, rules) serves every file of a flake8 process; it is built
once the options are known. Each file is judged with the classes of its project (the folder
above it holding ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``), indexed once per
flake8 process; a file read from stdin is judged alone.

* ``torchdevice-file-timeout = SECONDS`` and ``torchdevice-max-nesting = LEVELS``: the
  per-file budget, as ``file-timeout`` and ``max-nesting`` of ``torchdevice-fix``.

A file past its budget (generated code nested thousands of levels deep, or one that takes
longer than the timeout) gets one ``TDL999 too complex to check (...)`` at line 1 instead of
the checks, so flake8 goes on with the other files and exits 1. So does a file Python cannot
decode that flake8 reads anyway as Latin-1 (``TDL999 cannot decode: ...``, as
``torchdevice-fix`` names it); one with NUL bytes is flake8's own E999. ``--select TDL``
shows TDL999; ``--extend-ignore TDL999`` hides it.

A ``# noqa`` anywhere on a multi-line statement covers all of it, as in ``torchdevice-fix``
(flake8 alone only joins the lines of strings and backslash continuations); flake8's
``--disable-noqa`` turns that off too.
"""

from __future__ import annotations

import argparse
import ast
import os
from typing import Any, Callable, ClassVar, Iterator, Optional, Sequence

from torchdevice_lint import __version__
from torchdevice_lint.analysis.project import ProjectIndex, project_root
from torchdevice_lint.api import lint_file
from torchdevice_lint.config import (
    DEVICE_STYLES,
    ConfigError,
    check_device_name,
    check_device_style,
    check_file_timeout,
    check_max_nesting,
)
from torchdevice_lint.engine import Linter
from torchdevice_lint.files import index_of_project
from torchdevice_lint.guard import Budget, TooComplex, allow_deep_trees_in_host, within_budget
from torchdevice_lint.notebook import is_notebook
from torchdevice_lint.parsing import SourceError, check_decodable, collect_young_objects_less_often
from torchdevice_lint.rules import ALL_RULES
from torchdevice_lint.settings import Settings

#: The code of the one line a file past its budget gets.
#: A file not checked, with the reason: past its budget, or not decodable as Python source.
NOT_CHECKED = "TDL999"


class TorchDevicePlugin:
    name = "torchdevice-lint"
    version = __version__

    #: Set once per flake8 run by `parse_options`.
    settings: ClassVar[Settings] = Settings()
    budget: ClassVar[Budget] = Budget()
    #: The engine every file of this process is linted with.
    linter: ClassVar[Linter] = Linter(settings)

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str = "stdin") -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--torchdevice-preview",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="torchdevice-lint: also run rules still in preview",
        )
        manager.add_option(
            "--torchdevice-device-style",
            default="cuda",
            parse_from_config=True,
            help=f"torchdevice-lint: device idiom of fixes ({' or '.join(DEVICE_STYLES)}; default: cuda)",
        )
        manager.add_option(
            "--torchdevice-device-name",
            default=None,
            parse_from_config=True,
            help="torchdevice-lint: name of the device variable fixes bind (default: device)",
        )
        manager.add_option(
            "--torchdevice-file-timeout",
            default=Budget.seconds,
            parse_from_config=True,
            help=f"torchdevice-lint: seconds one file may take (default: {Budget.seconds:g})",
        )
        manager.add_option(
            "--torchdevice-max-nesting",
            default=Budget.depth,
            parse_from_config=True,
            help=f"torchdevice-lint: levels of nesting a file may have (default: {Budget.depth})",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        from flake8.exceptions import ExecutionError

        try:
            style = check_device_style(
                options.torchdevice_device_style,
                "flake8 option torchdevice-device-style ([flake8] section or --torchdevice-device-style)",
            )
            name = options.torchdevice_device_name
            if name is not None:
                name = check_device_name(
                    name, "flake8 option torchdevice-device-name ([flake8] section or --torchdevice-device-name)"
                )
            budget = Budget(
                seconds=check_file_timeout(
                    _number(options.torchdevice_file_timeout, float), "flake8 option torchdevice-file-timeout"
                ),
                depth=check_max_nesting(
                    _number(options.torchdevice_max_nesting, int), "flake8 option torchdevice-max-nesting"
                ),
            )
        except ConfigError as error:
            raise ExecutionError(f"torchdevice-lint: {error}") from None
        cls.budget = budget
        allow_deep_trees_in_host()  # before flake8 parses the first file, here and in its workers
        collect_young_objects_less_often()
        # As in torchdevice-fix, a preview rule named by its full code runs; flake8 filters the rest.
        named = [
            code.strip().upper()
            for code in [*(getattr(options, "select", None) or ()), *(getattr(options, "extend_select", None) or ())]
        ]
        preview_named = tuple(rule.code for rule in ALL_RULES if rule.preview and rule.code in named)
        cls.settings = Settings(
            select=("TDL", *preview_named) if preview_named else None,
            preview=bool(options.torchdevice_preview),
            device_style=style,
            device_name=name,
        )
        cls.linter = Linter(cls.settings, noqa=not getattr(options, "disable_noqa", False))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)

        def check() -> list:
            notebook = is_notebook(self.filename)
            return lint_file(source, self.linter, notebook=notebook, project=self._project(), path=self.filename)

        try:
            self._check_decodable()
        except SourceError as error:
            if "\x00" not in source:  # with NUL bytes flake8 fails the file itself (E999)
                yield 1, 0, f"{NOT_CHECKED} {error}", type(self)
            return
        try:
            findings = within_budget(source, check, self.budget)
        except (TooComplex, RecursionError) as error:
            reason = error if isinstance(error, TooComplex) else TooComplex("nested too deeply to analyse")
            yield 1, 0, f"{NOT_CHECKED} {reason}", type(self)
            return
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for finding in findings:
            yield finding.line, finding.column, f"{finding.code} {finding.message}", type(self)

    def _check_decodable(self) -> None:
        """flake8 reads a file it cannot decode as Latin-1; judge the bytes on disk as
        torchdevice-fix does, so that both skip such a file."""
        if self.filename not in ("stdin", "-") and os.path.isfile(self.filename):
            with open(self.filename, "rb") as handle:
                check_decodable(handle.read())

    def _project(self) -> Optional[ProjectIndex]:
        """The index of the file's project, built on first use in this process; a file read
        from stdin is judged alone."""
        if self.filename in ("stdin", "-") or not os.path.isfile(self.filename):
            return None
        return index_of_project(project_root(self.filename))


def _number(value: Any, convert: Callable[[str], Any]) -> Any:
    """An option's value as a number (flake8 hands over configuration values as text)."""
    try:
        return convert(value)
    except (TypeError, ValueError):
        return value  # the check names the option and the bad value
