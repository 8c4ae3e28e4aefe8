"""Test-wide settings.

In CI (`CI=true`) hypothesis runs derandomized: a landing must not depend on the draw.
Locally it explores afresh each run, which is where new failures are found.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
