"""Where vLLM's own arguments start in a user's command line.

A worker's command is rarely a bare `vllm serve`: it runs inside `docker run ...
IMAGE`, behind `env A=1`, `numactl`, `taskset`, `uv run`, or as `python -m
vllm.entrypoints.openai.api_server`. Only the part after `serve`, the module or
the image is vLLM's; everything before it is the user's and is never touched. A
command where no vLLM part can be found (`./start.sh M`) is not parsed at all:
relaunches change its environment, never its argv.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

_CONTAINER_TOOLS = frozenset({"docker", "podman", "nerdctl"})
_CONTAINER_FLAGS = frozenset(
    {
        "--rm",
        "-d",
        "--detach",
        "-i",
        "--interactive",
        "-t",
        "--tty",
        "-it",
        "-ti",
        "--privileged",
        "--init",
        "--read-only",
        "-P",
        "--publish-all",
        "--no-healthcheck",
        "--oom-kill-disable",
        "--sig-proxy",
        "-q",
        "--quiet",
    }
)
"""`docker run` options that take no value; every other option is followed by one
(unless written `--opt=value`)."""


def _is(token: str, name: str) -> bool:
    return os.path.basename(token) == name


def vllm_args_start(tokens: Sequence[str]) -> int | None:
    """The index of the first token that is vLLM's (the model or a flag), or None
    when the command has no part we can read as vLLM's."""
    n = len(tokens)
    for i, t in enumerate(tokens):
        if _is(t, "vllm") and i + 1 < n and tokens[i + 1] == "serve":
            return i + 2
        if t == "-m" and i + 1 < n and tokens[i + 1].startswith("vllm."):
            cut = i + 2
            return cut + 1 if cut < n and tokens[cut] == "serve" else cut
        if os.path.basename(t) in _CONTAINER_TOOLS:
            image = _container_image(tokens, i + 1)
            if image is not None:
                return image + 1
    return None


def _container_image(tokens: Sequence[str], i: int) -> int | None:
    """The index of the image in `docker run [options] IMAGE ...` from `i` (after the
    tool's name), or None when it is not a `run`."""
    if i < len(tokens) and tokens[i] == "container":
        i += 1
    if i >= len(tokens) or tokens[i] != "run":
        return None
    i += 1
    while i < len(tokens):
        t = tokens[i]
        if t == "--":
            return i + 1 if i + 1 < len(tokens) else None
        if not t.startswith("-") or t == "-":
            return i
        i += 1 if _no_separate_value(t) else 2
    return None


def _no_separate_value(option: str) -> bool:
    """Whether a container option stands alone: a flag (`--rm`, `-it`), `--opt=value`,
    or a short option with its value attached (`-p8000:8000`)."""
    if option in _CONTAINER_FLAGS or "=" in option:
        return True
    if option.startswith("--"):
        return False
    return len(option) > 2
