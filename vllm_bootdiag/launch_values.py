"""Launch values the way vLLM and serving workers write them: `32k`, `32K`, `auto`,
`true`/`1`, capture-size lists, `--compilation-config` JSON, `non-default args`
entries. Every value may be hostile (megabytes long, 1e999, nested 100,000 deep):
each failure is a one-line LaunchConfigError, never an OverflowError or a
RecursionError.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import regex

MaxModelLen = int | Literal["auto"]


class LaunchConfigError(ValueError):
    """An argv, env value or log line that does not describe a launch."""


_HUMAN_INT = regex.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT])$")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def clip(text: str) -> str:
    """A value quoted for an error line: hostile values can be megabytes long."""
    return repr(text) if len(text) <= 60 else repr(text[:57]) + "..."


def parse_int(text: str, name: str) -> int:
    """An int the way vLLM reads one: `32768`, `32k` (10**3), `32K` (2**10)."""
    value = text.strip().replace("_", "")
    m = _HUMAN_INT.match(value)
    try:
        if m is None:
            return int(value)
        number, suffix = m[1], m[2]
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        return int(number) * _BINARY[suffix]
    except (ValueError, OverflowError):
        raise LaunchConfigError(f"{name}: not an integer: {clip(text)}") from None


def parse_float(text: str, name: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise LaunchConfigError(f"{name}: not a number: {clip(text)}") from None


def parse_len(text: str) -> MaxModelLen:
    value = text.strip()
    if value.lower() in ("auto", "-1"):
        return "auto"
    return parse_int(value, "max_model_len")


_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
_FALSE = frozenset({"0", "false", "no", "off", "n", "f", ""})


def parse_bool(text: str, name: str) -> bool:
    """A boolean the way workers write one: 1/0, true/false, yes/no, on/off."""
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise LaunchConfigError(f"{name}: not a boolean: {clip(text)}")


def parse_sizes(text: str, name: str) -> tuple[int, ...]:
    parts = [p for p in regex.split(r"[\s,\[\]]+", text.strip()) if p]
    return tuple(parse_int(p, name) for p in parts)


MAX_NESTING = 100
"""Deeper JSON is refused. Where json gives up depends on the Python (3.11 at 1,000
levels, 3.13 past 5,000, 3.14 reads 20,000), so the limit is ours: one answer on all."""


def _nesting(text: str) -> int:
    """How deep the brackets of a JSON text go, strings skipped: one pass, linear."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def take_compilation(text: str, fields: dict[str, Any]) -> bool:
    """Read a `--compilation-config` JSON dict into fields; False if it is not one."""
    if len(text) > 100_000:
        raise LaunchConfigError("--compilation-config: too long")
    try:
        if _nesting(text) > MAX_NESTING:
            raise RecursionError  # the same answer on every Python, whatever its json limit
        value = json.loads(text)
    except RecursionError:
        raise LaunchConfigError("--compilation-config: nested too deeply") from None
    except ValueError:
        if text.lstrip().startswith("{"):
            # vLLM reads a value in braces as JSON and refuses it (engine/arg_utils.py:181,
            # union_dict_and_str, 0.32.0); one that opens a brace and never closes it is no
            # level or mode either. A relaunch carrying it could only fail the same way.
            bad = f"--compilation-config: not valid JSON: {text[:200]!r}"
            raise LaunchConfigError(bad) from None
        return False  # a level (`3`) or another form vLLM reads itself
    if not isinstance(value, dict):
        return False
    sizes = value.pop("cudagraph_capture_sizes", None)
    largest = value.pop("max_cudagraph_capture_size", None)
    mode = value.get("cudagraph_mode")
    if isinstance(mode, str) and len(mode) <= 32:
        fields["cudagraph_mode"] = value.pop("cudagraph_mode").strip().upper()
    try:
        if sizes is not None:
            fields["cudagraph_capture_sizes"] = tuple(int(s) for s in sizes)
        if largest is not None:
            fields["max_cudagraph_capture_size"] = int(largest)
    except (TypeError, ValueError, OverflowError):
        raise LaunchConfigError(
            f"--compilation-config: bad capture sizes in {text[:200]!r}"
        ) from None
    if value:
        fields["compilation_config_other"] = json.dumps(value, separators=(",", ":"))
    return True


def render_unknown(key: str, value: Any) -> list[str]:
    """A `non-default args` entry we do not type -> argv tokens vLLM accepts."""
    flag = "--" + key.replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + key.replace("_", "-")]
    if isinstance(value, (list, tuple)):
        return [flag, *(str(v) for v in value)] if value else []
    if isinstance(value, dict):
        return [flag, json.dumps(value, separators=(",", ":"))]
    text = str(value)
    # `--flag -x` would read -x as a flag of its own: keep such a value attached.
    return [f"{flag}={text}"] if text.startswith("-") else [flag, text]
