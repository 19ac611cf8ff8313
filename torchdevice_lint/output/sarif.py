"""``--output-format sarif``: a SARIF 2.1.0 log that GitHub code scanning accepts.

* ``tool.driver.rules`` lists every rule with its id, name, short and full description and
  its whole documentation as help (text and Markdown), as ``--explain`` prints it.
* Artifact URIs are relative to the repository root (the nearest folder upward from the
  current one holding ``.git``, else the current folder) with ``uriBaseId: "%SRCROOT%"``;
  ``originalUriBaseIds`` says where that root was. A file outside the root gets a ``file:`` URI.
* Regions are 1-based; columns count Unicode code points (``columnKind``) and ``endColumn``
  is one past the last character. A notebook finding is placed on the line of the ``.ipynb``
  file that holds the cell's line, and the message names the cell.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TextIO
from urllib.parse import quote

from torchdevice_lint import __version__
from torchdevice_lint.rules import ALL_RULES

if TYPE_CHECKING:
    from torchdevice_lint.output import Entry
    from torchdevice_lint.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT_ID = "%SRCROOT%"
INFORMATION_URI = "https://pypi.org/project/torchdevice-lint/"


def repository_root(start: Optional[str] = None) -> Path:
    folder = Path(start or os.getcwd()).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def sections(rule: "type[Rule]") -> dict[str, str]:
    """The rule's documentation split at its ``## Heading`` lines."""
    found: dict[str, str] = {}
    heading = ""
    for part in re.split(r"^## +(.+)$", rule.documentation(), flags=re.MULTILINE):
        if heading:
            found[heading] = part.strip()
            heading = ""
        else:
            heading = part.strip() if part.strip() in _HEADINGS else ""
    return found


_HEADINGS = ("What it does", "Why is this bad?", "Known problems", "Example", "Use instead", "Options", "Fix safety",
             "References")


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return match.group(1) if match else flat


def rule_descriptor(rule: "type[Rule]") -> dict:
    parts = sections(rule)
    what = parts.get("What it does") or rule.summary()
    why = parts.get("Why is this bad?", "")
    full = " ".join(what.split()) + (" " + " ".join(why.split()) if why else "")
    documentation = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _first_sentence(what)},
        "fullDescription": {"text": full},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["pytorch", "portability", "device"]},
    }


def _artifact(path: str, root: Path) -> dict:
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": ROOT_ID}


def result(entry: "Entry", root: Path, rule_index: dict[str, int]) -> dict:
    finding = entry.finding
    if finding.cell is None:
        region = {
            "startLine": finding.line,
            "startColumn": finding.column + 1,
            "endLine": finding.end_line,
            "endColumn": finding.end_column + 1,
        }
        message = finding.message
    else:
        region = {"startLine": entry.disk_line}
        message = f"cell {finding.cell}, line {finding.line}, column {finding.column + 1}: {finding.message}"
    item: dict[str, Any] = {
        "ruleId": finding.code,
        "level": "warning",
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(entry.path, root), "region": region}}],
        "properties": {
            "fixable": finding.fixable,
            "fixSafety": finding.fix_safety.value if finding.fix_safety is not None else None,
        },
    }
    if finding.code in rule_index:
        item["ruleIndex"] = rule_index[finding.code]
    if finding.cell is not None:
        item["properties"].update(cell=finding.cell, cellLine=finding.line, cellColumn=finding.column + 1)
    return item


def document(entries: list["Entry"], root: Optional[Path] = None) -> dict:
    root = root or repository_root()
    rules = [rule_descriptor(rule) for rule in ALL_RULES]
    rule_index = {rule.code: index for index, rule in enumerate(ALL_RULES)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchdevice-lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {ROOT_ID: {"uri": root.as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [result(entry, root, rule_index) for entry in entries],
            }
        ],
    }


def write(entries: list["Entry"], stream: TextIO, root: Optional[Path] = None) -> None:
    json.dump(document(entries, root), stream, indent=2)
    stream.write("\n")
