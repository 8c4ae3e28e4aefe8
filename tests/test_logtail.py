"""Tail reading: cost proportional to the tail, bytes never fail, bad paths say why."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from vllm_bootdiag import logtail


def test_last_lines_of_a_file(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_text("".join(f"line {i}\n" for i in range(1000)))
    tail = logtail.read_tail(p, 400)
    assert len(tail) == 400
    assert tail[0] == "line 600" and tail[-1] == "line 999"


def test_short_file_and_no_final_newline(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_bytes(b"a\r\nb\r\nc")
    assert logtail.read_tail(p) == ["a", "b", "c"]


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_bytes(b"")
    assert logtail.read_tail(p) == []


def test_large_file_reads_only_the_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big"
    line = b"x" * 99 + b"\n"
    with p.open("wb") as f:
        for _ in range(200):
            f.write(line * 1000)  # 20 MB
    read_sizes: list[int] = []
    real_open = open

    class Counting(io.BufferedReader):
        def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
            data = super().read(size)
            read_sizes.append(len(data))
            return data

    def counting_open(path: object, mode: str = "r", *a: object, **k: object) -> object:
        if mode == "rb" and str(path) == str(p):
            return Counting(io.FileIO(str(p), "rb"))
        return real_open(path, mode, *a, **k)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", counting_open)
    tail = logtail.read_tail(p, 400)
    assert len(tail) == 400
    assert sum(read_sizes) < 200_000  # 400 lines of 100 bytes, in 64 KiB blocks


def test_invalid_utf8_and_nul_are_replaced(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_bytes(b"ok\n\xff\xfe bad \x00 bytes\n")
    tail = logtail.read_tail(p)
    assert tail[0] == "ok"
    assert "\ufffd" in tail[1] and "\x00" not in tail[1]


def test_huge_single_line_is_cut(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_bytes(b"y" * (50 * 1024 * 1024))
    tail = logtail.read_tail(p)
    assert len(tail) == 1 and len(tail[0]) == logtail.MAX_LINE_CHARS


def test_tqdm_redraws_keep_the_last_state() -> None:
    text = "Loading weights:   0%|  | 0/4\rLoading weights:  50%|# | 2/4\rLoading weights: 100%|##| 4/4\n"
    assert logtail.split_lines(text) == ["Loading weights: 100%|##| 4/4"]


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: d / "missing.log", "no such file"),
        (lambda d: d, "is a directory"),
    ],
)
def test_unreadable_paths_raise_one_line(tmp_path: Path, make, needle: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(logtail.LogReadError, match=needle):
        logtail.read_tail(make(tmp_path))


def test_stream_keeps_bounded_tail() -> None:
    blocks = [f"{i}\n".encode() * 10 for i in range(10_000)]
    tail = logtail.read_tail_stream(iter(blocks), 5)
    assert tail == ["9999"] * 5


def test_stream_from_file_object() -> None:
    stream = io.BytesIO(b"".join(f"l{i}\n".encode() for i in range(100)))
    assert logtail.read_tail_stream(stream, 3) == ["l97", "l98", "l99"]
