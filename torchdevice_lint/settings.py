"""Which rules run and how fixes are written: the `Settings` every front end hands the engine."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

from torchdevice_lint.analysis.binding import DEVICE_STYLES
from torchdevice_lint.rule import Rule
from torchdevice_lint.rules import ALL_RULES

__all__ = ["DEVICE_STYLES", "Settings"]


@dataclass(frozen=True)
class Settings:
    """Which rules run and how fixes are written; `torchdevice_lint.config` builds one from a pyproject.

    ``select`` and ``ignore`` take codes or prefixes (``TDL``, ``TDL00``, ``TDL001``); where both
    match a rule, the longer prefix wins, and a tie goes to ``ignore``. A preview rule runs with
    ``preview`` or when ``select`` names its full code. ``file_ignores`` (what ``per-file-ignores``
    turns off for one file) wins over both. The analysis and the rules see the whole value
    (``FileAnalysis.settings``).
    """

    #: Code prefixes to enable; None means every rule that is on by default.
    select: Optional[tuple[str, ...]] = None
    ignore: tuple[str, ...] = ()
    #: Turn on rules still in preview.
    preview: bool = False
    #: How a fix spells a new device binding: ``cuda`` or ``accelerator``.
    device_style: str = "cuda"
    #: Name of the module-level variable a fix binds (None: ``device``, or a free variant).
    device_name: Optional[str] = None
    #: Code prefixes off for this one file (``per-file-ignores``), whatever ``select`` says.
    file_ignores: tuple[str, ...] = ()
    #: Blank lines the file's own isort/ruff configuration puts after imports (its
    #: ``lines-after-imports``), which the inserted device line follows; None: read the file.
    lines_after_imports: Optional[int] = None
    #: The project's line length (its Ruff, Black or flake8 configuration): a line a fix makes
    #: longer than this is laid out over several lines, as the formatter would; None: left long.
    line_length: Optional[int] = None
    #: How the project's formatter lays out a line split at a bracket (`config.project_layout`:
    #: ``yapf-aligned``, ``yapf-hanging``, ``yapf-dedent``, ``yapf``); None: as Black and Ruff.
    layout: Optional[str] = None

    def for_file(
        self,
        ignored: tuple[str, ...],
        lines_after_imports: Optional[int] = None,
        line_length: Optional[int] = None,
        layout: Optional[str] = None,
    ) -> Settings:
        """These settings for a file whose ``per-file-ignores`` patterns turn off ``ignored``
        and whose project configures ``lines_after_imports``, ``line_length`` and ``layout``."""
        if not ignored and (lines_after_imports, line_length, layout) == (
            self.lines_after_imports, self.line_length, self.layout
        ):
            return self
        return replace(
            self, file_ignores=ignored, lines_after_imports=lines_after_imports, line_length=line_length, layout=layout
        )

    def enabled_rules(self) -> list[type[Rule]]:
        return [rule for rule in ALL_RULES if self.is_enabled(rule)]

    def is_enabled(self, rule: type[Rule]) -> bool:
        if _longest_prefix(rule.code, self.file_ignores) is not None:
            return False
        selected = _longest_prefix(rule.code, self.select or ("TDL",))
        ignored = _longest_prefix(rule.code, self.ignore)
        if selected is None or (ignored is not None and len(ignored) >= len(selected)):
            return False
        # A prefix (TDL, TDL01) never turns a preview rule on, in flake8 as here; its full code does.
        return not rule.preview or self.preview or rule.code in {code.strip().upper() for code in self.select or ()}


def _longest_prefix(code: str, prefixes: Sequence[str]) -> Optional[str]:
    matching = [prefix for prefix in prefixes if code.startswith(prefix.strip().upper())]
    return max(matching, key=len) if matching else None
