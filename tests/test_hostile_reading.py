"""Counting what was read on foreign input: the count a user is told is the lines read,
not what is left after vLLM-style line rejoining."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, classify_file
from vllm_bootdiag.cli import render

# nginx's default `combined` log_format:
# '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
#  "$http_referer" "$http_user_agent"'
NGINX = '192.0.2.{n} - - [01/Dec/2026:10:00:{s:02d} +0000] "GET /v1/models HTTP/1.1" 200 612 "-" "curl/8.5.0"'


def test_an_access_log_counts_every_line_read(tmp_path: Path) -> None:
    lines = [NGINX.format(n=i % 250 + 1, s=i % 60) for i in range(2000)]
    p = tmp_path / "access.log"
    p.write_text("\n".join(lines) + "\n")
    for d in (classify_file(p), classify(lines), classify("\n".join(lines))):
        assert not d.vllm_output_found and d.primary.kind == "unknown"
        assert d.lines_examined == 400  # the default tail, though they rejoin as one line
    assert "(400 lines examined)" in render.diagnosis(classify(lines), wide=False)


def test_one_line_is_one_line() -> None:
    d = classify([NGINX.format(n=1, s=0)])
    assert d.lines_examined == 1
    assert "(1 line examined)" in render.diagnosis(d, wide=True)


@pytest.mark.parametrize("command", ["classify", "watch", "plan"])
def test_a_version_hint_that_is_no_version_is_a_usage_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from vllm_bootdiag.cli import main

    log = str(Path(__file__).resolve().parent.parent / "corpus" / "0.8.5"
              / "invalid_argument__dtype-float7__cpu.log")  # fmt: skip
    assert main([command, "--vllm-version", "latest", log]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--vllm-version" in err and "'latest'" in err
