"""`python -m vllm_bootdiag.cli` is the `vllm-bootdiag` command too."""

import sys

from . import main

sys.exit(main())
