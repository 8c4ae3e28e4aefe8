"""Install outcomes: the Python environment cannot run this vLLM.

A module that is not installed, a compiled extension built against another
torch (an undefined symbol), a CUDA library the loader cannot find, an
extension without the ops this device needs, Triton missing where the chosen
model runner needs it. Restarting runs the same files: it cannot succeed.
"""

from typing import Literal

from .base import Category, _Outcome


class BrokenInstall(_Outcome):
    """The installed packages are incomplete or were built for something else."""

    CATEGORY = Category.ENVIRONMENT
    kind: Literal["broken_install"] = "broken_install"
    module: str | None = None
    """The Python module or op namespace (`vllm._C`, `triton`)."""
    symbol: str | None = None
    """The missing symbol, attribute or op."""
    library: str | None = None
    """The shared object the loader could not open or link (`libcudart.so.12`)."""
    detail: str | None = None
