"""Properties of redaction: it is idempotent, and a redacted log classifies as the original.

The corpus logs are already redacted, so each is first made "dirty" again: every marker is
put back as a value a real machine would have printed (a user's venv, an address, a model
directory), with names hypothesis picks. Redacting that must remove every such value and
leave the diagnosis as it was.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify
from vllm_bootdiag.redact import redact
from vllm_bootdiag.text.tail import read_tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
_TAILS: dict[Path, str] = {}

names = st.from_regex(r"[a-z][a-z0-9]{3,9}", fullmatch=True)
octets = st.integers(1, 254)


def _tail(path: Path) -> str:
    if path not in _TAILS:
        _TAILS[path] = "\n".join(read_tail(path)) + "\n"
    return _TAILS[path]


def _dirty(text: str, user: str, team: str, ip: tuple[int, int, int]) -> tuple[str, list[str]]:
    """The log as the machine printed it, and the identifying values put in."""
    address = f"10.{ip[0]}.{ip[1]}.{ip[2]}"
    home = f"/home/{user}"
    values = {
        "<venv>": f"{home}/.venvs/vllm-{team}",
        "<python>": f"{home}/.pyenv/versions/3.11.7",
        "<models>": f"/mnt/{team}/models",
        "<home>": f"/Users/{user}",
        "<ip>": address,
        "<tmp>": "/tmp",
    }
    for marker, value in values.items():
        text = text.replace(marker, value)
    return text, [f"/{user}", f"/{team}/", address]


def _same_answer(d: Any) -> dict[str, Any]:
    """What a worker acts on: the kind, the rule, every number, the version and the phase."""
    p = d.primary
    numbers = {
        k: v for k, v in p.model_dump().items() if isinstance(v, (int, float, bool)) or v is None
    }
    return {
        "kind": p.kind,
        "rule_id": p.rule_id,
        "numbers": numbers,
        "evidence_lines": [e.line for e in p.evidence],
        "version": d.vllm_version,
        "phase": d.phase,
        "failed": d.failed,
    }


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(LOGS), names, names, st.tuples(octets, octets, octets))
def test_redacted_log_classifies_as_the_original(
    log: Path, user: str, team: str, ip: tuple[int, int, int]
) -> None:
    dirty, identifying = _dirty(_tail(log), user, team, ip)
    clean = redact(dirty)
    for value in identifying:
        assert value not in clean, (log.name, value)
    assert _same_answer(classify(clean)) == _same_answer(classify(dirty)), log.name
    assert redact(clean) == clean


_FRAGMENTS = st.sampled_from(
    [
        "/home/alice/x", "/Users/bob/y", "~/m", "/mnt/t/z", "/tmp/q", "/root/.cache",
        "http://h.acme.com:80/p", "redis://:pw@c.acme.io/0", "https://docs.vllm.ai/a",
        "u@acme.com", "10.1.2.3", "fe80::1", "00:1a:2b:3c:4d:5e", "AKIAIOSFODNN7EXAMPLE",
        "password=x", "HF_TOKEN=hf_abcdefghijklmnopqrstu", "Bearer abcdefghij", "api_key=k",
        "<redacted>", "<home>", "<ip>", "<host>", "<token>", "[core.py:1510]", "0.10.1.1",
        "\x1b[32m", "\x1b[0m", " ", "\n", "\r\n", ":", "/", "@", "=", "'", '"', ".", "-", "~",
    ]
)  # fmt: skip
_TEXT = st.lists(st.one_of(_FRAGMENTS, st.text(max_size=8)), max_size=25).map("".join)
_MARKER_PIECES = st.sampled_from(
    ["<red", "redac", "ted>", "acted", "d> ", "<", ">", "host", "ip", "<tok", "en>", "home"]
)
_LITERALS = st.lists(st.one_of(_MARKER_PIECES, st.text(min_size=1, max_size=6)), max_size=4)


@settings(max_examples=400, deadline=None)
@given(_TEXT, _LITERALS)
def test_redaction_is_idempotent(text: str, literals: list[str]) -> None:
    once = redact(text, literals)
    assert redact(once, literals) == once


@settings(max_examples=200, deadline=None)
@given(_TEXT, _LITERALS)
@example("<__>", ["_"])  # marker-shaped text that is not a marker: the literal goes
def test_literals_are_gone_unless_part_of_a_marker(text: str, literals: list[str]) -> None:
    out = redact(text, literals)
    markers = {"<redacted>", "<home>", "<ip>", "<host>", "<token>", "<user>", "<email>",
               "<venv>", "<python>", "<tmp>", "<work>", "<storage>", "<mac>"}  # fmt: skip
    stripped = re.sub(r"\[[\w.-]{1,80}\.py:\d{1,6}\]", "\x00", out)  # kept: vLLM's refs
    for m in sorted(markers, key=len, reverse=True):
        stripped = stripped.replace(m, "\x00")
    for lit in literals:
        if lit and not any(lit in m for m in markers) and "\x00" not in lit:
            assert lit not in stripped, (lit, out)
