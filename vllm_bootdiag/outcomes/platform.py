"""Platform outcomes: the machine cannot run this build or this launch as asked.

The GPU architecture is one the build has no kernels for, the driver is older
than the CUDA runtime the build needs, there is no accelerator at all, fewer
devices than the parallel layout asks for, or no attention backend that serves
the model on this device. A relaunch on the same machine and config fails the
same way, so the planner gives up with the rule's remediation as advice.
"""

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from ..text.wrappers import Lazy
from .base import Category, Names, _Outcome

_SM = Lazy(r"^(?:sm_?)?(\d{1,3})[a-z]?$")
_DOTTED = Lazy(r"^(\d{1,3})\.(\d)$")


def _to_capability(value: Any) -> Any:
    """'sm_120', '120', '12.0' -> '12.0': torch prints both spellings of one number."""
    if isinstance(value, str):
        text = value.strip()
        if _DOTTED.match(text):
            return text
        m = _SM.match(text)
        if m:
            digits = m[1]
            return f"{digits[:-1]}.{digits[-1]}" if len(digits) > 1 else f"{digits}.0"
    return value


def _to_count(value: Any) -> Any:
    """'[0, 1]' -> 2: vLLM prints the list of what is available, not its length."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        inner = value.strip()[1:-1].strip()
        return len([x for x in inner.split(",") if x.strip()]) if inner else 0
    return value


Capability = Annotated[str, BeforeValidator(_to_capability)]


class _Platform(_Outcome):
    CATEGORY = Category.ENVIRONMENT


class GpuArchUnsupported(_Platform):
    """The build has no kernels for this GPU's architecture (compute capability)."""

    kind: Literal["gpu_arch_unsupported"] = "gpu_arch_unsupported"
    compute_capability: Capability | None = None
    """As `major.minor` (torch prints `sm_120` in one warning and `12.0` in another)."""
    supported_archs: Names = ()
    """The architectures the installed torch was built for, as printed (`sm_90`)."""
    device_name: str | None = None


class DriverTooOld(_Platform):
    """The NVIDIA driver is older than the CUDA runtime the build was compiled against."""

    kind: Literal["driver_too_old"] = "driver_too_old"
    driver_version: str | None = None
    """As torch prints it: cudaDriverGetVersion, the newest CUDA the driver supports
    (1000 x major + 10 x minor: `12080` is CUDA 12.8)."""
    runtime_version: str | None = None


class NoAccelerator(_Platform):
    """No usable accelerator: no GPU visible, no driver, or no platform detected."""

    kind: Literal["no_accelerator"] = "no_accelerator"
    device_type: str | None = None
    device_count: int | None = None


class InsufficientDevices(_Platform):
    """The parallel layout (TP x PP) needs more devices than this node has visible."""

    CATEGORY = Category.CONFIG
    kind: Literal["insufficient_devices"] = "insufficient_devices"
    requested: int | None = None
    available: Annotated[int | None, BeforeValidator(_to_count)] = None


class AttentionBackendUnsupported(_Platform):
    """No attention backend can serve this model (head size, dtype) on this device."""

    CATEGORY = Category.CONFIG
    kind: Literal["attention_backend_unsupported"] = "attention_backend_unsupported"
    backend: str | None = None
    head_size: int | None = None
    dtype: str | None = None
    detail: str | None = None
    """vLLM's reasons per backend, as printed."""
