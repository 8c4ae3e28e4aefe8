"""A NUL inside a fed line is dropped, as classify drops it: the line is read without it."""

from __future__ import annotations

from vllm_bootdiag import BootWatcher, classify

_BANNER = "INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version 0.11.0"
_ERROR = "vllm serve: error: argument --max-num-seqs: invalid int value: 'abc'"


def _fed(lines: list[str]) -> tuple[list[bool], str]:
    w = BootWatcher()
    reports = [w.feed(line) is not None for line in lines]
    return reports, w.diagnosis().primary.kind


def test_a_nul_inside_a_line_is_read_as_classify_reads_it() -> None:
    clean = _fed([_BANNER, _ERROR])
    assert clean == ([False, True], "invalid_argument")
    for at in (0, 20, 37, len(_ERROR)):
        lines = [_BANNER, _ERROR[:at] + "\x00" + _ERROR[at:]]
        assert _fed(lines) == clean
        assert classify(lines).primary.kind == "invalid_argument"
    assert _fed(["\x00" + _BANNER, "\x00\x00", _ERROR + "\x00\n"])[1] == "invalid_argument"
