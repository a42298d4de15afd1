"""The one device jitgrad computes on: the CPU, as the Array API standard's device object
(``t.device``, ``device=`` keywords) and in PyTorch's spelling (``device(type='cpu')``).

>>> import jitgrad as jg
>>> jg.ones(2).device == "cpu", jg.ones(2).device
(True, device(type='cpu'))
"""

from __future__ import annotations


class Device:
    """A device: equal to another of the same type and to its name (``"cpu"``)."""

    __slots__ = ("type",)

    def __init__(self, type: str = "cpu"):  # noqa: A002  PyTorch's and the standard's name
        self.type = type

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return other.split(":")[0] == self.type
        return getattr(other, "type", None) == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __repr__(self) -> str:
        return f"device(type={self.type!r})"

    def __str__(self) -> str:
        return self.type


CPU = Device("cpu")


def check_device(device) -> None:
    """Accept ``None`` and any spelling of the CPU (``"cpu"``, ``jg.Device``, a
    ``torch.device("cpu")``); refuse other devices, naming them."""
    if device is None or CPU == device:
        return
    raise ValueError(f"jitgrad computes on the CPU only; device {device!r} is not available")
