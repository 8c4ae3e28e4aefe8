"""`python -m vllm_bootdiag` is the `vllm-bootdiag` command."""

import sys

from .cli import main

sys.exit(main())
