"""How every command prints: one JSON document with `--json`, or short human text."""

from __future__ import annotations

from typing import Any


def emit(data: Any, as_json: bool, text: str) -> None:
    """Print `data` as one line of JSON, or `text` for a person."""
    if as_json:
        import json  # here: human output needs no json

        print(json.dumps(data, indent=None, sort_keys=False, default=str))
    else:
        print(text)
