"""LaunchConfig: the `vllm serve` settings that move memory, as one typed value.

A worker launches vLLM from an argv, from its own environment variables, or
both; the log repeats what was set in its `non-default args: {...}` line. The
planner needs the memory settings as numbers whichever way they came, and the
relaunch must go back out the same way, with every other argument untouched.

Only the memory settings are typed. Everything else is kept as raw argv tokens,
in order, and rendered after them. `from_argv(c.to_argv()) == c` always holds,
and `to_argv` is canonical: `--flag=value` comes back as `--flag value`, `32k`
as `32000`, `-tp 2` as `--tensor-parallel-size 2`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .launch_checks import launch_problems
from .launch_names import ENV_NAME, ENV_NAMES, VALUE_FLAGS, VLLM_ENV_NAMES, show
from .launch_reading import args_dict_fields, argv_fields, env_fields, log_args_fields
from .launch_values import (
    LaunchConfigError,
    MaxModelLen,
    parse_bool,
    parse_int,
)

__all__ = [
    "ENV_NAMES",
    "VLLM_ENV_NAMES",
    "LaunchConfig",
    "LaunchConfigError",
    "MaxModelLen",
    "parse_bool",
    "parse_int",
]


class LaunchConfig(BaseModel):
    """The launch settings that move memory, plus everything else untouched.

    None means "not set: vLLM's default for that release". `command` is what
    comes before the flags (`vllm serve`, or `python -m ...api_server`);
    `model` is rendered as the positional after `serve`, else as `--model`.
    `compilation_config_other` is the JSON of any `--compilation-config` keys
    other than the capture sizes and the graph mode, so they survive a relaunch.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: tuple[str, ...] = ("vllm", "serve")
    model: str | None = None
    max_model_len: MaxModelLen | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enforce_eager: bool | None = None
    kv_cache_dtype: str | None = None
    cudagraph_capture_sizes: tuple[int, ...] | None = None
    max_cudagraph_capture_size: int | None = None
    cudagraph_mode: str | None = None
    """`compilation_config.cudagraph_mode` (vLLM's CUDAGraphMode name, upper case)."""
    tensor_parallel_size: int | None = None
    block_size: int | None = None
    kv_cache_memory_bytes: int | None = None
    port: int | None = None
    compilation_config_other: str | None = None
    extra_args: tuple[str, ...] = ()
    passthrough: bool = False
    """The argv has no part we can read as vLLM's (a script, a wrapper): `command`
    holds all of it, `to_argv` gives it back unchanged, and a relaunch changes only
    the environment (`to_env`)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment overrides for the child, as sorted (name, value) pairs (a mapping is
    accepted): the supervisor applies them on every attempt."""

    @field_validator("env", mode="before")
    @classmethod
    def _env_pairs(cls, value: Any) -> Any:
        """A mapping or pairs -> sorted pairs; names must be variable names, values
        free of NUL (the OS rejects them at exec time, far from the cause)."""
        pairs = list(value.items()) if isinstance(value, Mapping) else list(value)
        out: dict[str, str] = {}
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError("env entries are (name, value) pairs")
            name, text = pair
            if not isinstance(name, str) or not ENV_NAME.match(name):
                raise ValueError(f"not an environment variable name: {name!r}")
            if not isinstance(text, str) or "\x00" in text or len(text) > 4096:
                raise ValueError(f"{name}: not a usable environment value")
            out[name] = text
        return tuple(sorted(out.items()))

    def env_vars(self) -> dict[str, str]:
        """`env` as a dict."""
        return dict(self.env)

    # --- reading ---------------------------------------------------------------

    @classmethod
    def from_argv(cls, argv: Sequence[str]) -> LaunchConfig:
        """Parse a `vllm serve MODEL --flag value ...` argv (any leading command).

        The command runs up to and including `serve`, the module after `python
        -m`, or a container's image (see command.py); a bare token right after it
        is the model. Flags we do not type are kept as raw tokens, in order. A
        command with no vLLM part (`./start.sh M`) comes back `passthrough`:
        kept whole, relaunched through its environment only.
        """
        return _validated(cls, argv_fields(argv), "argv")

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], command: Sequence[str] = ("vllm", "serve"), prefix: str = ""
    ) -> LaunchConfig:
        """Read the worker's environment variables (see ENV_NAMES; `prefix` is
        prepended to each name). Empty values count as unset."""
        return _validated(cls, env_fields(env, command, prefix), "env")

    @classmethod
    def from_log_args(cls, text: str, command: Sequence[str] = ("vllm", "serve")) -> LaunchConfig:
        """Read the dict vLLM prints after `non-default args:` (the same text as
        `Diagnosis.facts.non_default_args`); nothing in it is ever evaluated."""
        return _validated(cls, log_args_fields(text, command), "non-default args")

    @classmethod
    def _from_args_dict(cls, args: Mapping[str, Any], command: Sequence[str]) -> LaunchConfig:
        return _validated(cls, args_dict_fields(args, command), "non-default args")

    # --- writing ---------------------------------------------------------------

    def to_argv(self) -> list[str]:
        """The argv to launch: command, model, typed flags, then the rest in order
        (a `passthrough` command comes back as it was given)."""
        argv = list(self.command)
        if self.passthrough:
            return argv
        if self.model is not None:
            if self.command and self.command[-1] == "serve" and not self.model.startswith("-"):
                argv.append(self.model)
            else:
                argv += ["--model", self.model]
        for field, flag in VALUE_FLAGS.items():
            value = getattr(self, field)
            if field != "model" and value is not None:
                argv += [flag, show(value)]
        if self.enforce_eager is not None:
            argv.append("--enforce-eager" if self.enforce_eager else "--no-enforce-eager")
        compilation = self.compilation_config()
        if compilation:
            argv += ["--compilation-config", json.dumps(compilation, separators=(",", ":"))]
        argv += self.extra_args
        return argv

    def to_env(self, prefix: str = "") -> dict[str, str]:
        """The worker environment variables for the typed settings that are set.

        `env`'s overrides come back as they are. `extra_args` and
        `compilation_config_other` have no variable: a worker that launches from
        env alone carries them itself.
        """
        env: dict[str, str] = dict(self.env)
        for field, name in ENV_NAMES.items():
            value = getattr(self, field)
            if value is None:
                continue
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, tuple):
                text = ",".join(str(v) for v in value) or "[]"
            else:
                text = show(value)
            env[prefix + name] = text
        return env

    def compilation_config(self) -> dict[str, Any]:
        """The `--compilation-config` dict this launch passes (empty for none)."""
        out: dict[str, Any] = {}
        if self.compilation_config_other:
            out.update(json.loads(self.compilation_config_other))
        if self.cudagraph_capture_sizes is not None:
            out["cudagraph_capture_sizes"] = list(self.cudagraph_capture_sizes)
        if self.max_cudagraph_capture_size is not None:
            out["max_cudagraph_capture_size"] = self.max_cudagraph_capture_size
        if self.cudagraph_mode is not None:
            out["cudagraph_mode"] = self.cudagraph_mode
        return out

    @property
    def health_port(self) -> int:
        """The port the server listens on (vLLM's default is 8000)."""
        return self.port if self.port is not None else 8000

    def problems(self) -> list[str]:
        """Values vLLM would reject at startup, as sentences (empty when none)."""
        return launch_problems(self)

    def changes_from(self, other: LaunchConfig) -> dict[str, tuple[Any, Any]]:
        """field -> (other's value, this value) for every field that differs."""
        mine, theirs = self.model_dump(), other.model_dump()
        return {k: (theirs[k], v) for k, v in mine.items() if theirs[k] != v}


def _validated(cls: type[LaunchConfig], fields: dict[str, Any], source: str) -> LaunchConfig:
    try:
        return cls.model_validate(fields)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise LaunchConfigError(f"{source}: {where}: {first['msg']}") from None
