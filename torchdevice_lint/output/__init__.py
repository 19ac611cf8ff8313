"""How findings are shown: one module per ``--output-format``.

Every format takes the same `Entry` list, so the CLI collects entries and hands them over:

* ``full`` (default): the flake8 line, the source line with a caret, and whether a fix exists;
* ``concise``: exactly flake8's ``path:line:col: CODE message`` (plus ``[*]`` when fixable);
* ``json``: one array of objects; ``sarif``: SARIF 2.1.0 for GitHub code scanning;
* ``github``: ``::warning`` workflow commands that annotate a pull request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, TextIO

from torchdevice_lint.findings import Finding

FORMATS = ("full", "concise", "json", "sarif", "github")


@dataclass(frozen=True)
class Entry:
    """A finding as shown: the path as given, the finding, and what a format may quote."""

    path: str
    finding: Finding
    #: The text of the finding's first line (without its newline), for the caret display.
    source_line: str = ""
    #: The line of the file on disk the finding is written on; differs from ``finding.line``
    #: in a notebook, where it is the line of the ``.ipynb`` JSON holding the cell's line.
    file_line: Optional[int] = None

    @property
    def location(self) -> str:
        """``path``, or ``path:cell_N`` in a notebook."""
        return self.path if self.finding.cell is None else f"{self.path}:cell_{self.finding.cell}"

    @property
    def disk_line(self) -> int:
        return self.file_line if self.file_line is not None else self.finding.line


def write_entries(entries: list[Entry], output_format: str, stream: TextIO, color: bool = False) -> None:
    """Print ``entries`` in one of `FORMATS` (the whole document for json and sarif)."""
    from torchdevice_lint.output import github, json_format, sarif, text

    if output_format == "json":
        json_format.write(entries, stream)
    elif output_format == "sarif":
        sarif.write(entries, stream)
    elif output_format == "github":
        github.write(entries, stream)
    else:
        for entry in entries:
            if output_format == "concise":
                print(text.format_finding(entry.location, entry.finding), file=stream)
            else:
                print(text.format_full(entry, color=color), file=stream)
