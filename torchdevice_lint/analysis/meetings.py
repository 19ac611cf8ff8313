"""Where the flow walk sees device-less factory tensors meet other tensors.

A meeting is judged once per site from the values of its participants: with a tensor on the
device it is a mismatch waiting to happen (``on_device``); with a tensor whose place the caller
chooses (a parameter, what is computed from one) it is one as soon as that caller uses a
device (``unplaced``). A site judged again, when its function is walked again with better
values, replaces what was recorded before.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis.scopes import Meeting
from torchdevice_lint.analysis.tree import iter_child_nodes
from torchdevice_lint.analysis.values import UNKNOWN, Kind, Place, Value

#: An operand of the operation at a site, with its value there.
Participant = tuple[cst.BaseExpression, Value]


class MeetingLog:
    """The meetings found so far, by site, in the two verdicts a rule reads."""

    def __init__(self, values: dict[cst.CSTNode, Value]) -> None:
        #: The flow walk's values, read for the names a fix can take a device from.
        self._values = values
        self.on_device: dict[cst.CSTNode, list[Meeting]] = {}
        self.unplaced: dict[cst.CSTNode, list[Meeting]] = {}

    def record(
        self,
        site: cst.CSTNode,
        participants: Sequence[Participant],
        body: Optional[cst.FunctionDef],
        order: int,
        *,
        judged: bool,
        devices_in_play: bool,
    ) -> None:
        """Judge ``site`` again. ``judged``: False where a mismatch is provoked on purpose
        (``pytest.raises``); ``devices_in_play``: the file names a device or runs modules it does
        not make itself, so a tensor said to be on the device may really be there."""
        self.on_device.pop(site, None)
        self.unplaced.pop(site, None)
        if not judged:
            return
        origins = [origin for _, value in participants if value.is_cpu_factory_tensor for origin in value.origins]
        if not origins:
            return
        device_side = [(expr, value) for expr, value in participants if value.place is Place.DEVICE]
        if device_side and devices_in_play:
            partner = next(
                (expr.value for expr, value in device_side if isinstance(expr, cst.Name) and value.kind is Kind.TENSOR),
                None,
            )
            self.on_device[site] = [Meeting(site, origin, partner, body, order) for origin in origins]
            return
        # A participant that is a CPU factory here and on a device on another path: the
        # factories of the others meet that device there. Not those of a participant that is
        # path-dependent too: both may come from the same branch (``if bounds is None:`` two
        # factories, else two slices of ``bounds``).
        always_cpu = {origin for _, value in participants if value.elsewhere is None for origin in value.origins}
        met_elsewhere = [
            (value.elsewhere, Meeting(site, origin, expr.value if isinstance(expr, cst.Name) else None, body, order))
            for expr, value in participants
            if value.elsewhere is not None
            for origin in origins
            if origin in always_cpu and origin not in value.origins
        ]
        on_device = [meeting for place, meeting in met_elsewhere if place is Place.DEVICE]
        if on_device and devices_in_play:
            self.on_device[site] = on_device
            return
        unplaced = [
            Meeting(site, origin, name, body, order)
            for expr, value in participants
            if value.kind is Kind.TENSOR and value.place is Place.UNKNOWN
            for name in self._unplaced_tensor_names(expr)
            for origin in origins
        ]
        unplaced += [meeting for place, meeting in met_elsewhere if place is Place.UNKNOWN and meeting.partner]
        if unplaced:
            self.unplaced[site] = unplaced

    def _unplaced_tensor_names(self, expression: cst.CSTNode) -> list[str]:
        """The names in ``expression`` (itself, or those inside it, outermost first) bound to a
        tensor of unknown place: where a fix can read the device from."""
        names, pending = [], [expression]
        while pending:
            node = pending.pop(0)
            value = self._values.get(node, UNKNOWN)
            if isinstance(node, cst.Name) and value.kind is Kind.TENSOR and value.place is Place.UNKNOWN:
                names.append(node.value)
            pending.extend(iter_child_nodes(node))
        return names
