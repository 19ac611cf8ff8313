"""Byte fidelity: a fixed file keeps every byte of the lines no fix touched, where LibCST drops some."""

from __future__ import annotations

import difflib
from typing import Any

import libcst as cst

from torchdevice_lint.parsing import BYTE_LINE, LINE, Source, SourceError


def keep_what_libcst_drops(source: Source, original: cst.Module, output: Source) -> Source:
    """``output`` with what LibCST dropped from the untouched input put back, byte for byte.

    LibCST reproduces a file exactly but for two known cases: a form feed in the indentation
    of a line that holds code, and a final lone ``\\r``. When the input has either, the lines
    the fixes left alone are taken from the input itself and an edited line gets its form
    feeds back; any other difference refuses the file rather than change lines no fix touched.
    """
    regenerated = original.bytes if isinstance(source, bytes) else original.code
    if regenerated == source:
        return output
    text = _Text(source)
    before, plain, after = text.lines(source), text.lines(regenerated), text.lines(output)
    if len(before) != len(plain) or not all(map(text.only_dropped, before, plain)):
        raise SourceError("cannot fix: LibCST does not reproduce this file byte for byte")
    restored = []
    matcher = difflib.SequenceMatcher(None, plain, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            restored.extend(before[i1:i2])
        elif tag == "replace":
            # Edited lines, maybe with lines inserted among them: pair each input line with
            # the most similar output line after the previous pair, and give it back its bytes.
            block, start = list(after[j1:j2]), 0
            for index in range(i1, i2):
                ratios = [(difflib.SequenceMatcher(None, plain[index], block[m]).ratio(), m) for m in range(start, len(block))]
                ratio, best = max(ratios, default=(0.0, -1))
                if ratio >= 0.5:
                    block[best] = text.put_back(before[index], plain[index], block[best])
                    start = best + 1
            restored.extend(block)
        else:
            restored.extend(after[j1:j2])
    result = text.empty.join(restored)
    if text.ends_with_lone_cr(source) and not result.endswith((text.cr, text.lf)):
        result += text.cr
    return result


class _Text:
    """Line surgery that works alike on ``str`` and ``bytes``."""

    def __init__(self, sample: Source) -> None:
        def encode(value: str) -> Any:  # str or bytes, as the sample is: the methods mix neither
            return value.encode() if isinstance(sample, bytes) else value

        self.empty, self.feed, self.cr, self.lf = encode(""), encode("\x0c"), encode("\r"), encode("\n")
        self.indent_with_feed, self.indent = encode(" \t\x0c"), encode(" \t")
        self._line = BYTE_LINE if isinstance(sample, bytes) else LINE

    def lines(self, text):
        """Physical lines with their endings (never split at form feeds, unlike ``splitlines``)."""
        return self._line.findall(text)

    def only_dropped(self, line, regenerated) -> bool:
        """LibCST's copy of ``line`` lacks at most form feeds and a final lone CR."""
        bare = line.replace(self.feed, self.empty)
        return regenerated.replace(self.feed, self.empty) in (bare, bare[: -len(self.cr)] if bare.endswith(self.cr) else bare)

    def ends_with_lone_cr(self, text) -> bool:
        return text.endswith(self.cr) and not text.endswith(self.cr + self.lf)

    def put_back(self, line, regenerated, edited):
        """``edited``, a fix of ``regenerated``, with the indentation and final CR ``line`` had."""
        if line == regenerated:
            return edited
        indent = len(line) - len(line.lstrip(self.indent_with_feed))
        kept = len(regenerated) - len(regenerated.lstrip(self.indent))
        if edited[:kept] == regenerated[:kept]:
            edited = line[:indent] + edited[kept:]
        if line.endswith(self.cr) and not edited.endswith((self.cr, self.lf)):
            edited += self.cr
        return edited
