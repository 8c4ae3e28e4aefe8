"""Host names in any case are redacted whole, and code is not taken for a host.

Before: `GPU-NODE-3.CORP.EXAMPLE.COM` became `<host>.EXAMPLE.COM` (the in-house suffix
was cut off first, the domain left), `Node7.Example.org` stayed, and a traceback's source
line `logger.info("...")` became `<host>("...")` (`.info` is a top-level domain).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, logtail
from vllm_bootdiag.redact import redact

ROOT = Path(__file__).resolve().parent.parent
_C10D = "[W1129 16:00:33.412000 socket.cpp:464] [c10d] The client socket has failed to connect to "
_REFUSED = ":29500 (errno: 111 - Connection refused)."
"""torch's c10d warning (socket.cpp) around the host it could not reach."""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        *(
            (f"{_C10D}[{host}]{_REFUSED}", f"{_C10D}[<host>]{_REFUSED}")
            for host in (
                "GPU-NODE-3.CORP.EXAMPLE.COM",
                "Node7.Example.org",
                "gpu7.corp.example.com",
                "gpu7.corp",
            )
        ),
        ("    logger.info(\"Loading weights took %.2f seconds\", t)", None),
        ("    self.app = build_app(args)", None),
        ("    raise torch.cuda.OutOfMemoryError(msg)", None),
    ],
)
def test_hosts_in_any_case_and_code_left_alone(line: str, expected: str | None) -> None:
    assert redact(line) == (line if expected is None else expected)
    assert redact(redact(line)) == redact(line)


def test_a_traceback_keeps_its_source_lines_and_its_answer() -> None:
    """A corpus OOM log's traceback (source lines of frames) comes back with its code."""
    log = ROOT / "corpus" / "0.32.0" / "weight_load_oom__llama1b-weights-v2__cuda.log"
    lines = logtail.read_tail(log)
    out = redact("\n".join(lines)).split("\n")
    code = [a for a, b in zip(lines, out, strict=True) if a.endswith(")") and "(" in a]
    assert code and all(redact(c) == c for c in code if "://" not in c and "/" not in c)
    assert classify(out).primary == classify(lines).primary
