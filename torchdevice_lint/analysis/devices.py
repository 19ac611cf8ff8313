"""Device strings (``"cuda:1"``) and names that hold a device (``device``, ``self.dev``), read one
way for the flow analysis and every rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

#: Device types a device string may name (``torch.device`` accepts more; these are the ones code
#: written for one machine uses).
DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "npu"})

#: Identifiers that, bound to anything but None, name the run's device.
DEVICE_NAME_HINTS = ("device", "dev")


@dataclass(frozen=True)
class DeviceString:
    """A parsed device string: ``"cuda:1"`` is type ``cuda``, index 1; ``"cpu"`` has no index."""

    type: str
    index: Optional[int] = None


def parse_device(text: str) -> Optional[DeviceString]:
    """The device ``text`` names, or None for a string that is no device (``"cuda_graphs"``)."""
    head, _, index = text.partition(":")
    if head not in DEVICE_TYPES or (index and not index.isdigit()):
        return None
    return DeviceString(head, int(index) if index else None)


def names_cuda(text: str) -> bool:
    """``"cuda"``, ``"cuda:0"``: a string that is a CUDA device."""
    device = parse_device(text)
    return device is not None and device.type == "cuda"


def looks_like_device_name(identifier: str) -> bool:
    """``device``, ``dev``, ``train_device``: a name whose value is a device."""
    lowered = identifier.lower()
    return lowered in DEVICE_NAME_HINTS or lowered.endswith("_device")


#: A flag that asks for the accelerator (``args.cuda``, ``use_gpu``, ``self.on_cuda``).
_ACCELERATOR_FLAG = re.compile(r"cuda|gpu", re.IGNORECASE)


def looks_like_accelerator_flag(identifier: str) -> bool:
    """``cuda``, ``args.use_gpu``: a name whose truth asks for the accelerator."""
    return _ACCELERATOR_FLAG.search(identifier) is not None


def names_a_device(target: cst.BaseExpression) -> bool:
    """An assignment target (``device``, ``self.device``) whose name says it holds a device."""
    if isinstance(target, cst.Name):
        return looks_like_device_name(target.value)
    if isinstance(target, cst.Attribute):
        return looks_like_device_name(target.attr.value)
    return False


#: A switch that turns the accelerator on or off, by its last name part: ``cuda``, ``use_cuda``,
#: ``args.use_gpu``, ``self.gpu_mode``, ``gpu_ids`` (an empty list is the CPU), ``cfg.NUM_GPUS``
#: (0 is the CPU); never one GPU's index (``gpu``, ``gpu_id``, ``args.gpu``), whose 0 is a GPU, nor a
#: tensor's ``is_cuda``.
_ACCELERATOR_SWITCH = re.compile(
    r"(?:(?:use|with|on|enable)_?)?(?:cuda|gpu)(?:_?(?:mode|ids|enabled|on))?|(?:use|with|on)_?gpus|n(?:um)?_?gpus?"
)


def looks_like_accelerator_switch(identifier: str) -> bool:
    """``args.cuda``, ``use_gpu``, ``self.gpu_mode``, ``gpu_ids``, ``cfg.NUM_GPUS``: a name whose
    truth says whether the run uses the accelerator (`looks_like_accelerator_flag` is looser)."""
    last = identifier.rsplit(".", 1)[-1].lower().lstrip("_")
    return last != "gpu" and _ACCELERATOR_SWITCH.fullmatch(last) is not None


#: Text that names a device anywhere (``device``, ``.to(``, ``accelerator``), and words that
#: name one only as whole words.
_DEVICE_TEXTS = ("device", ".to(", "accelerator")
_DEVICE_WORDS = {word: re.compile(rf"\b{word}\b") for word in ("cuda", "mps", "xpu")}
#: Where code may name a device (`_names_device` says whether any does).
_MENTION = re.compile("|".join([*map(re.escape, _DEVICE_TEXTS), *(pattern.pattern for pattern in _DEVICE_WORDS.values())]))
#: A one-line string literal, whose ``#`` starts no comment.
_LINE_STRING = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")


def mentions_device(text: str) -> bool:
    """Whether code names a device, moves anything or calls ``.cuda()``: the text holds
    ``device``, ``.to(``, ``accelerator``, or the word ``cuda``, ``mps`` or ``xpu``, outside
    comments (MiDaS' ONNX export script says ``# select device`` and runs on the CPU).
    Substring tests first: one regular expression of these alternatives tries each at every
    position of a file that has none (0.04 s of the 0.9 s the analysis takes on torch/nn)."""
    if not _names_device(text):
        return False
    if "#" not in text:
        return True
    for mention in _MENTION.finditer(text):
        before = text[text.rfind("\n", 0, mention.start()) + 1 : mention.start()]
        if "#" not in before:
            return True
        code = _LINE_STRING.sub("", before)
        comment = code.find("#")
        if comment < 0 or "'" in code[:comment] or '"' in code[:comment]:
            return True  # on a line of code (in a string, maybe), not in the comment that ends it
    return False


def _names_device(text: str) -> bool:
    if any(part in text for part in _DEVICE_TEXTS):
        return True
    return any(word in text and pattern.search(text) for word, pattern in _DEVICE_WORDS.items())
