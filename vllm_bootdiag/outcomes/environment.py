"""Environment outcomes: the machine, not the launch, is at fault (disk, devices)."""

from typing import Literal

from .base import Category, _Outcome


class _Environment(_Outcome):
    CATEGORY = Category.ENVIRONMENT


class DiskFull(_Environment):
    """No space left on a device while downloading or compiling."""

    kind: Literal["disk_full"] = "disk_full"
    path: str | None = None
