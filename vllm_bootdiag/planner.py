"""The planner's public names, under the module path they had before the
`planning/` package: `from vllm_bootdiag.planner import plan, Policy` keeps working."""

from .planning import *  # noqa: F403
from .planning import __all__ as __all__
