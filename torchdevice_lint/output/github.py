"""``--output-format github``: workflow commands that GitHub Actions turns into annotations.

``::warning file=PATH,line=L,col=C,endLine=L,endColumn=C,title=TDL00N::message``, escaped as
the runner expects (``%``, CR and LF in the message; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from torchdevice_lint.output import Entry


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_entry(entry: "Entry") -> str:
    finding = entry.finding
    properties = [f"file={escape_property(entry.path)}", f"line={entry.disk_line}"]
    message = finding.message
    if finding.cell is None:
        properties += [
            f"col={finding.column + 1}",
            f"endLine={finding.end_line}",
            f"endColumn={finding.end_column + 1}",
        ]
    else:  # the annotation sits on the notebook's JSON line; say where in the cell
        message = f"cell {finding.cell}, line {finding.line}, column {finding.column + 1}: {message}"
    properties.append(f"title={escape_property(finding.code)}")
    return f"::warning {','.join(properties)}::{escape_data(message)}"


def write(entries: list["Entry"], stream: TextIO) -> None:
    for entry in entries:
        print(format_entry(entry), file=stream)
