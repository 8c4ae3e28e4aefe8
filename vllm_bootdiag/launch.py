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

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any

import regex
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .command import vllm_args_start
from .launch_values import (
    LaunchConfigError,
    MaxModelLen,
    parse_bool,
    parse_float,
    parse_int,
    parse_len,
    parse_sizes,
    render_unknown,
    take_compilation,
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

_VALUE_FLAGS: dict[str, str] = {
    "model": "--model",
    "max_model_len": "--max-model-len",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "kv_cache_dtype": "--kv-cache-dtype",
    "tensor_parallel_size": "--tensor-parallel-size",
    "block_size": "--block-size",
    "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
    "port": "--port",
}
_FLAG_TO_FIELD = {flag: field for field, flag in _VALUE_FLAGS.items()}
_ALIASES = {"-tp": "--tensor-parallel-size"}
_COMPILATION_FLAGS = ("--compilation-config", "-O")
_GRAPH_KEYS = ("cudagraph_capture_sizes", "max_cudagraph_capture_size")

ENV_NAMES: dict[str, str] = {
    "model": "MODEL_NAME",
    "max_model_len": "MAX_MODEL_LEN",
    "gpu_memory_utilization": "GPU_MEMORY_UTILIZATION",
    "max_num_seqs": "MAX_NUM_SEQS",
    "max_num_batched_tokens": "MAX_NUM_BATCHED_TOKENS",
    "enforce_eager": "ENFORCE_EAGER",
    "kv_cache_dtype": "KV_CACHE_DTYPE",
    "cudagraph_capture_sizes": "CUDAGRAPH_CAPTURE_SIZES",
    "max_cudagraph_capture_size": "MAX_CUDAGRAPH_CAPTURE_SIZE",
    "tensor_parallel_size": "TENSOR_PARALLEL_SIZE",
    "block_size": "BLOCK_SIZE",
    "kv_cache_memory_bytes": "KV_CACHE_MEMORY_BYTES",
    "port": "PORT",
}
"""Field -> the environment variable a serving worker reads it from (the names
the common serverless vLLM workers use)."""

VLLM_ENV_NAMES: tuple[str, ...] = (
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "VLLM_USE_V2_MODEL_RUNNER",
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "PYTORCH_CUDA_ALLOC_CONF",
)
"""vLLM's own environment variables that change what a boot reserves or accepts:
`from_env` keeps them in `LaunchConfig.env`, so the planner knows (for one) whether
the CUDA-graph estimate was subtracted, and a relaunch carries them."""

_ENV_NAME = regex.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def _convert(field: str, text: str) -> Any:
    """An argv or env string -> the field's typed value."""
    if field == "max_model_len":
        return parse_len(text)
    if field == "gpu_memory_utilization":
        return parse_float(text, field)
    if field == "enforce_eager":
        return parse_bool(text, field)
    if field == "cudagraph_capture_sizes":
        return parse_sizes(text, field)
    if field in ("model", "kv_cache_dtype"):
        return text
    return parse_int(text, field)


def _show(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


class LaunchConfig(BaseModel):
    """The launch settings that move memory, plus everything else untouched.

    None means "not set: vLLM's default for that release". `command` is what
    comes before the flags (`vllm serve`, or `python -m ...api_server`);
    `model` is rendered as the positional after `serve`, else as `--model`.
    `compilation_config_other` is the JSON of any `--compilation-config` keys
    other than the two capture-size ones, so they survive a relaunch.
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
            if not isinstance(name, str) or not _ENV_NAME.match(name):
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
        if isinstance(argv, (str, bytes)):
            raise LaunchConfigError("argv: a list of tokens, not one string (split it first)")
        tokens = list(argv)
        if not all(isinstance(t, str) for t in tokens):
            raise LaunchConfigError("argv: every token must be a string")
        cut = vllm_args_start(tokens)
        if cut is None:
            # Nothing here reads as vLLM's arguments: keep it whole, never rewrite it.
            return _validated(cls, {"command": tuple(tokens), "passthrough": True}, "argv")
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
            flag = _ALIASES.get(flag, flag)
            if flag.startswith("--"):
                flag = "--" + flag[2:].replace("_", "-")
            if flag in ("--enforce-eager", "--no-enforce-eager"):
                value = flag == "--enforce-eager"
                if eq:
                    value = parse_bool(inline, "enforce_eager") == value
                fields["enforce_eager"] = value
                continue
            takes_value = flag in _FLAG_TO_FIELD or flag in _COMPILATION_FLAGS
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
            if flag in _COMPILATION_FLAGS:
                if not take_compilation(text, fields):
                    extra.extend([token] if eq else [token, text])
                continue
            field = _FLAG_TO_FIELD[flag]
            fields[field] = _convert(field, text)
        fields["extra_args"] = tuple(extra)
        return _validated(cls, fields, "argv")

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], command: Sequence[str] = ("vllm", "serve"), prefix: str = ""
    ) -> LaunchConfig:
        """Read the worker's environment variables (see ENV_NAMES; `prefix` is
        prepended to each name). Empty values count as unset."""
        fields: dict[str, Any] = {"command": tuple(command)}
        for field, name in ENV_NAMES.items():
            text = env.get(prefix + name)
            if text is None or text.strip() == "":
                continue
            fields[field] = _convert(field, text)
        kept = {n: env[n] for n in VLLM_ENV_NAMES if env.get(n, "").strip() != ""}
        if kept:
            fields["env"] = kept
        return _validated(cls, fields, "env")

    @classmethod
    def from_log_args(cls, text: str, command: Sequence[str] = ("vllm", "serve")) -> LaunchConfig:
        """Read the dict vLLM prints after `non-default args:` (the same text as
        `Diagnosis.facts.non_default_args`).

        Values are read with `ast.literal_eval`, one at a time, so an entry
        holding an object repr (an enum, a config object) is skipped rather than
        failing the whole line. Nothing is ever evaluated.
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
        return cls._from_args_dict(args, command)

    @classmethod
    def _from_args_dict(cls, args: Mapping[str, Any], command: Sequence[str]) -> LaunchConfig:
        fields: dict[str, Any] = {"command": tuple(command)}
        extra: list[str] = []
        model = args.get("model_tag", args.get("model"))
        if isinstance(model, str):
            fields["model"] = model
        for key, value in args.items():
            if key in ("model_tag", "model") or value is None:
                continue
            if key == "enforce_eager":
                fields[key] = bool(value)
            elif key == "max_model_len" and value in (-1, "auto", "-1"):
                fields[key] = "auto"
            elif key in _VALUE_FLAGS:
                fields[key] = _convert(key, str(value)) if isinstance(value, str) else value
            elif key == "compilation_config":
                # Always a value flag: a non-dict (vLLM takes an -O level too) stays raw.
                text = json.dumps(value) if not isinstance(value, str) else value
                if not (isinstance(value, dict) and take_compilation(text, fields)):
                    extra.extend(["--compilation-config", text])
            else:
                extra.extend(render_unknown(key, value))
        fields["extra_args"] = tuple(extra)
        return _validated(cls, fields, "non-default args")

    # --- writing ---------------------------------------------------------------

    def to_argv(self) -> list[str]:
        """The argv to launch: command, model, typed flags, then the rest in order
        (a `passthrough` command comes back as it was given)."""
        argv = list(self.command)
        if self.passthrough:
            return argv
        if self.model is not None:
            if self.command and self.command[-1] == "serve":
                argv.append(self.model)
            else:
                argv += ["--model", self.model]
        for field, flag in _VALUE_FLAGS.items():
            value = getattr(self, field)
            if field != "model" and value is not None:
                argv += [flag, _show(value)]
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
                text = _show(value)
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
        return out

    @property
    def health_port(self) -> int:
        """The port the server listens on (vLLM's default is 8000)."""
        return self.port if self.port is not None else 8000

    def problems(self) -> list[str]:
        """Values vLLM would reject at startup, as sentences (empty when none)."""
        out: list[str] = []
        g = self.gpu_memory_utilization
        if g is not None and not 0 < g <= 1:
            out.append(f"gpu_memory_utilization {g} is not in (0, 1]")
        for name in (
            "max_num_seqs",
            "max_num_batched_tokens",
            "tensor_parallel_size",
            "block_size",
        ):
            v = getattr(self, name)
            if v is not None and v < 1:
                out.append(f"{name} {v} is below 1")
        if isinstance(self.max_model_len, int) and self.max_model_len < 1:
            out.append(f"max_model_len {self.max_model_len} is below 1")
        if self.max_cudagraph_capture_size is not None and self.max_cudagraph_capture_size < 1:
            out.append("max_cudagraph_capture_size is below 1")
        if self.cudagraph_capture_sizes is not None and any(
            s < 1 for s in self.cudagraph_capture_sizes
        ):
            out.append("a cudagraph capture size is below 1")
        if self.kv_cache_memory_bytes is not None and self.kv_cache_memory_bytes < 1:
            out.append("kv_cache_memory_bytes is below 1")
        if self.port is not None and not 0 < self.port < 65536:
            out.append(f"port {self.port} is not in 1-65535")
        if (
            self.max_num_seqs is None
            and self.max_num_batched_tokens is not None
            and self.max_num_batched_tokens < 256
        ):
            out.append(
                f"max_num_batched_tokens {self.max_num_batched_tokens} is below vLLM's default "
                f"max_num_seqs (256)"
            )
        if (
            self.max_num_seqs is not None
            and self.max_num_batched_tokens is not None
            and self.max_num_batched_tokens < self.max_num_seqs
        ):
            out.append(
                f"max_num_batched_tokens {self.max_num_batched_tokens} is below "
                f"max_num_seqs {self.max_num_seqs}"
            )
        return out

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
