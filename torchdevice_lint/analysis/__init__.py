"""The analysis every rule asks: computed once per file, before the rules run."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis.binding import DeviceBinder, DeviceChoice
from torchdevice_lint.analysis.flow import FlowAnalysis, Meeting, Scope
from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.values import UNKNOWN, Kind, Place, Value

__all__ = ["FileAnalysis", "DeviceChoice", "Kind", "Place", "Value", "Meeting"]


class FileAnalysis:
    """Facts about one parsed file: imports, kinds and places of values, device bindings."""

    def __init__(
        self,
        module: cst.Module,
        device_style: str = "cuda",
        device_name: Optional[str] = None,
        source_text: Optional[str] = None,
    ) -> None:
        """``source_text`` is the module's code when the caller already holds it: rebuilding
        it from the tree costs about a sixth of the whole analysis."""
        self.module = module
        self.imports = ImportTable()
        self.flow = FlowAnalysis(module, self.imports, source_text if source_text is not None else module.code)
        self.binder = DeviceBinder(self.flow, self.imports, device_style, device_name)
        self._meetings_by_origin: Optional[dict[cst.Call, Meeting]] = None

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualified_name(node)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.flow.values.get(node, UNKNOWN)

    def meeting_for_origin(self, factory: cst.Call) -> Optional[Meeting]:
        """How a device-less factory call meets the device, if it does."""
        if self._meetings_by_origin is None:
            self._meetings_by_origin = {}
            for meetings in self.flow.meetings.values():
                for meeting in meetings:
                    self._meetings_by_origin.setdefault(meeting.origin, meeting)
        return self._meetings_by_origin.get(factory)

    def scopes_of(self, functions: Sequence[cst.FunctionDef]) -> list[Scope]:
        return [self.flow.scopes[f] for f in functions if f in self.flow.scopes]
