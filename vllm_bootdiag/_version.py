"""The package version, in one place: read by hatchling at build time and by `__version__`.

A literal rather than `importlib.metadata`, which would import `email` on every start.
"""

__version__ = "0.1.0"
