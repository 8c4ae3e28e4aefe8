"""Reading a launch: an argv, a worker's environment, or the `non-default args:
{...}` dict vLLM logs, each into the fields of a LaunchConfig (launch.py builds
and validates it). Hostile input is a one-line LaunchConfigError, never a
RecursionError or an OverflowError."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any

import regex

from .command import vllm_args_start
from .launch_names import (
    ALIASES,
    COMPILATION_FLAGS,
    ENV_NAMES,
    FLAG_TO_FIELD,
    VALUE_FLAGS,
    VLLM_ENV_NAMES,
    convert,
)
from .launch_values import LaunchConfigError, parse_bool, render_unknown, take_compilation

_ARG_NAME = regex.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def argv_fields(argv: Sequence[str]) -> dict[str, Any]:
    """The fields of a `vllm serve MODEL --flag value ...` argv (see
    LaunchConfig.from_argv); a command with no vLLM part comes back passthrough."""
    if isinstance(argv, (str, bytes)):
        raise LaunchConfigError("argv: a list of tokens, not one string (split it first)")
    tokens = list(argv)
    if not all(isinstance(t, str) for t in tokens):
        raise LaunchConfigError("argv: every token must be a string")
    cut = vllm_args_start(tokens)
    if cut is None:
        # Nothing here reads as vLLM's arguments: keep it whole, never rewrite it.
        return {"command": tuple(tokens), "passthrough": True}
    fields: dict[str, Any] = {"command": tuple(tokens[:cut])}
    rest = tokens[cut:]
    if rest and not rest[0].startswith("-"):
        fields["model"] = rest.pop(0)
    extra: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if token == "--":
            extra.extend(rest[i - 1 :])
            break
        flag, eq, inline = token.partition("=")
        if not token.startswith("--"):
            flag, eq, inline = token, "", ""
        flag = ALIASES.get(flag, flag)
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")
        if flag in ("--enforce-eager", "--no-enforce-eager"):
            value = flag == "--enforce-eager"
            if eq:
                value = parse_bool(inline, "enforce_eager") == value
            fields["enforce_eager"] = value
            continue
        takes_value = flag in FLAG_TO_FIELD or flag in COMPILATION_FLAGS
        if not takes_value:
            extra.append(token)
            continue
        if eq:
            text = inline
        elif i < len(rest):
            text = rest[i]
            i += 1
        else:
            raise LaunchConfigError(f"{flag} needs a value")
        if flag in COMPILATION_FLAGS:
            if not take_compilation(text, fields):
                extra.extend([token] if eq else [token, text])
            continue
        field = FLAG_TO_FIELD[flag]
        fields[field] = convert(field, text)
    fields["extra_args"] = tuple(extra)
    return fields


def env_fields(env: Mapping[str, str], command: Sequence[str], prefix: str) -> dict[str, Any]:
    """The fields a worker's environment sets (ENV_NAMES; empty values are unset),
    with vLLM's own variables that change a boot kept as the child's `env`."""
    fields: dict[str, Any] = {"command": tuple(command)}
    for field, name in ENV_NAMES.items():
        text = env.get(prefix + name)
        if text is None or text.strip() == "":
            continue
        fields[field] = convert(field, text)
    kept = {n: env[n] for n in VLLM_ENV_NAMES if env.get(n, "").strip() != ""}
    if kept:
        fields["env"] = kept
    return fields


def log_args_fields(text: str, command: Sequence[str]) -> dict[str, Any]:
    """The fields of the dict vLLM prints after `non-default args:`.

    Values are read with `ast.literal_eval`, one at a time, so an entry holding an
    object repr (an enum, a config object) is skipped rather than failing the whole
    line. Nothing is ever evaluated.
    """
    body = text.strip()
    if body.startswith("non-default args:"):
        body = body[len("non-default args:") :].strip()
    if len(body) > 100_000:
        raise LaunchConfigError("non-default args: too long to be a launch line")
    try:
        tree = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise LaunchConfigError("non-default args: not a Python dict") from None
    if not isinstance(tree, ast.Dict):
        raise LaunchConfigError("non-default args: not a Python dict")
    args: dict[str, Any] = {}
    for key_node, value_node in zip(tree.keys, tree.values, strict=True):
        if key_node is None:
            continue
        try:
            key = ast.literal_eval(key_node)
            value = ast.literal_eval(value_node)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(key, str):
            args[key] = value
    return args_dict_fields(args, command)


def args_dict_fields(args: Mapping[str, Any], command: Sequence[str]) -> dict[str, Any]:
    """The fields of vLLM's parsed-argument dict (its `non-default args`)."""
    fields: dict[str, Any] = {"command": tuple(command)}
    extra: list[str] = []
    model = args.get("model_tag", args.get("model"))
    if isinstance(model, str):
        fields["model"] = model
    for key, value in args.items():
        if key in ("model_tag", "model") or value is None:
            continue
        if not _ARG_NAME.match(key):
            continue  # not an argument name vLLM prints (an empty key would render `--`)
        if key == "enforce_eager":
            fields[key] = bool(value)
        elif key == "max_model_len" and value in (-1, "auto", "-1"):
            fields[key] = "auto"
        elif key in VALUE_FLAGS:
            fields[key] = convert(key, str(value)) if isinstance(value, str) else value
        elif key == "compilation_config":
            # Always a value flag: a non-dict (vLLM takes an -O level too) stays raw. Text is
            # read as `from_argv` reads the flag's value (a dict taken, bad JSON refused), so
            # the launch written from it reads back the same.
            text = json.dumps(value) if not isinstance(value, str) else value
            if not (isinstance(value, (dict, str)) and take_compilation(text, fields)):
                extra.extend(["--compilation-config", text])
        else:
            extra.extend(render_unknown(key, value))
    fields["extra_args"] = tuple(extra)
    return fields
