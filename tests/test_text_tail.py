"""Tail reading: cost proportional to the tail, bytes never fail, bad paths say why,
and anything that is not a regular file is read as a stream."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import tail as text_tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


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


def test_old_import_path_is_the_new_module() -> None:
    assert (
        logtail.read_tail is text_tail.read_tail and logtail.LogReadError is text_tail.LogReadError
    )


def test_first_line_is_the_file_line_number(tmp_path: Path) -> None:
    p = tmp_path / "log"
    p.write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    t = text_tail.read(p, 400)
    assert t.first_line == 601 and t.lines[0] == "line 601"
    assert text_tail.read(p, 5000).first_line == 1
    assert text_tail.read(p, 400, number_lines=False).first_line is None


def test_first_line_not_counted_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "log"
    p.write_bytes(b"x" * 99 + b"\n" * 1 + b"y\n" * 100_000)
    monkeypatch.setattr(text_tail, "COUNT_LIMIT_BYTES", 1000)
    t = text_tail.read(p, 10)
    assert t.lines == ["y"] * 10 and t.first_line is None


def test_first_line_of_a_stream() -> None:
    stream = io.BytesIO(b"".join(f"l{i}\n".encode() for i in range(1, 100_001)))
    t = text_tail._read_stream(stream, 3, "s")
    assert t.lines == ["l99998", "l99999", "l100000"] and t.first_line == 99_998


@pytest.mark.parametrize("bad", [0, -5, 10**12, True, 2.5])
def test_lines_out_of_range_is_a_value_error(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="from 1 to"):
        text_tail.read(tmp_path, bad)  # type: ignore[arg-type]


def test_fifo_with_a_writer_is_read_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = KV_LOG.read_bytes()

    def write() -> None:
        with open(fifo, "wb") as w:
            w.write(data)

    t = threading.Thread(target=write)
    t.start()
    tail = text_tail.read(fifo, 400)
    t.join()
    assert tail.lines == logtail.split_lines(data.decode(), 400) and tail.first_line == 1


def test_dev_stdin_from_a_pipe_is_read() -> None:
    """`cat LOG | reader /dev/stdin`: the path is a pipe with st_size 0, not an empty file."""
    code = "from vllm_bootdiag.text import tail; t = tail.read('/dev/stdin'); print(len(t.lines), t.lines[-1])"
    r = subprocess.run(
        [sys.executable, "-c", code], input=KV_LOG.read_bytes(), capture_output=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    last = KV_LOG.read_text().splitlines()[-1]
    assert r.stdout.decode().strip() == f"{len(KV_LOG.read_text().splitlines())} {last}"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc")
def test_proc_file_with_size_zero_is_read() -> None:
    assert os.stat("/proc/self/status").st_size == 0
    lines = text_tail.read_tail("/proc/self/status")
    assert any(line.startswith("Name:") for line in lines)


@pytest.mark.parametrize(
    ("fmt", "compress"),
    [("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)],
)
def test_compressed_logs_are_decompressed(tmp_path: Path, fmt: str, compress) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "vllm.log.z"
    p.write_bytes(compress(KV_LOG.read_bytes()))
    t = text_tail.read(p, 20)
    assert t.compression == fmt
    assert t.lines == logtail.read_tail(KV_LOG, 20)
    assert t.first_line == len(KV_LOG.read_text().splitlines()) - 19


def test_compressed_stdin_is_decompressed() -> None:
    data = gzip.compress(KV_LOG.read_bytes())
    assert text_tail._read_stream(io.BytesIO(data), 5, "stdin").lines == logtail.read_tail(
        KV_LOG, 5
    )


def test_gzip_cut_short_keeps_what_it_held(tmp_path: Path) -> None:
    big = b"".join(f"line {i}\n".encode() for i in range(200_000))
    data = gzip.compress(big)
    p = tmp_path / "cut.gz"
    p.write_bytes(data[: len(data) // 2])
    t = text_tail.read(p, 3)
    assert t.compression == "gzip" and len(t.lines) == 3
    assert all(line.startswith("line ") for line in t.lines[:-1])


def test_corrupt_gzip_is_a_read_error(tmp_path: Path) -> None:
    p = tmp_path / "bad.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 200)
    with pytest.raises(text_tail.LogReadError, match="corrupt gzip"):
        text_tail.read(p)


@pytest.mark.parametrize(("magic", "fmt"), [(b"\x28\xb5\x2f\xfd", "zstd"), (b"PK\x03\x04", "zip")])
def test_unsupported_archives_say_so(tmp_path: Path, magic: bytes, fmt: str) -> None:
    p = tmp_path / "log.bin"
    p.write_bytes(magic + b"\x00" * 100)
    with pytest.raises(text_tail.LogReadError, match=f"{fmt}-compressed"):
        text_tail.read(p)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_endless_device_is_refused_not_read_forever() -> None:
    with pytest.raises(text_tail.LogReadError, match="character device"):
        text_tail.read("/dev/zero")
    assert text_tail.read_tail(os.devnull) == []


def test_stream_memory_is_bounded_by_the_tail() -> None:
    """A long stream with no newlines keeps at most the byte budget, not the stream."""
    seen: list[int] = []

    def blocks():  # type: ignore[no-untyped-def]
        for _ in range(2000):  # 128 MiB
            yield b"z" * 65536

    data, dropped = text_tail._stream_tail(blocks(), 10)
    seen.append(len(data))
    assert seen[0] <= text_tail._budget(10) + 65536 and dropped == 0


def _source(part: str) -> bool:
    """A logger record's source, `[file.py:N]`, is in the part."""
    return re.search(r"\.py:\d{1,6}\]", part) is not None


def _rows_reference(line: str) -> list[str]:
    """`returns.rows` the long way, a step per part: a line whose parts hold two that are
    neither blank nor a bar's frame is lines, a frame after a frame, a blank part or a bare
    tag drawing over it, the part after a last `\\r` no row, nor the empty one between a
    record and its two returns; any other is its last redraw."""
    parts = line.split("\r")
    frames = ["%|" in p or "/s]" in p or "/it]" in p for p in parts]
    if sum(1 for p, f in zip(parts, frames, strict=True) if p.strip() and not f) < 2:
        return [_last_redraw_reference(line)]
    # A record's line end kept as two returns (a copy of its `\r\n`) is one line end.
    i = 0
    while i + 2 < len(parts):
        if parts[i + 1] == "" and (parts[i + 2] or i + 3 == len(parts)) and _source(parts[i]):
            del parts[i + 1]
        i += 1
    frames = ["%|" in p or "/s]" in p or "/it]" in p for p in parts]
    out = []
    for i, part in enumerate(parts):
        over = i + 1 < len(parts) and frames[i + 1]
        if over and (frames[i] or not part.strip() or re.fullmatch(r"\s*\([^()]*\)\s*", part)):
            continue
        if part or i + 1 < len(parts):
            out.append(part)
    return out


_PARTS = ["\n", "\r\n", "\r", " ", "█", "x" * 9000, "\x00", "ok", "%|", "1.5it/s]",
          "(EngineCore pid=1) ", "INFO 01-02 03:04:05 [a.py:1] x"]  # fmt: skip
"""Text, line ends, carriage returns, a bar's marks, a tag and a record to build texts of."""


def _split_reference(text: str, lines: int | None) -> list[str]:
    """split_lines as first written: every line through the redraw and the cut."""
    out = text.replace("\r\n", "\n").split("\n")
    if out and out[-1] == "":
        out.pop()
    out = [row for line in out for row in (_rows_reference(line) if "\r" in line else [line])]
    if lines is not None and len(out) > lines:
        out = out[-lines:]
    return [line[: text_tail.MAX_LINE_CHARS] for line in out]


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_PARTS),
            st.text(max_size=20),
        ),
        max_size=12,
    ),
    st.one_of(st.none(), st.integers(1, 5)),
)
def test_split_lines_fast_paths_agree_with_the_plain_one(
    parts: list[str], lines: int | None
) -> None:
    """Lines are only redrawn and cut where some line needs it; the result is the same."""
    text = "".join(parts)
    assert text_tail.split_lines(text, lines) == _split_reference(text, lines)


@given(st.binary(max_size=64))
def test_decode_drops_nuls_as_it_did(data: bytes) -> None:
    assert text_tail.decode(data) == data.decode("utf-8", errors="replace").replace("\x00", "")


def _last_redraw_reference(line: str) -> str:
    """`_last_redraw` as first written: every `\\r`-part tested."""
    if "\r" not in line:
        return line
    parts = [p for p in line.split("\r") if p.strip()]
    return parts[-1] if parts else ""


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["\r", " ", "\t", "\u3000", "\x1c", "\x85", "x", "ok "]),
            st.text(max_size=6),
        ),
        max_size=16,
    ).map("".join)
)
def test_a_redrawn_line_keeps_what_its_parts_say(line: str) -> None:
    line = line.replace("\n", "")
    assert text_tail._last_redraw(line) == _last_redraw_reference(line)


def test_a_run_of_carriage_returns_is_not_split() -> None:
    """16 KB of `\\r` (or of `\\r` and a space): no part is made, one per character."""
    for line in ("\r" * 16384, "\r " * 8192, "x" + "\r" * 16383, "\r" * 16383 + "y"):
        assert text_tail._last_redraw(line) == _last_redraw_reference(line)
    real_split = str.split
    calls = []

    class Line(str):
        def split(self, *a, **k):  # type: ignore[no-untyped-def]
            calls.append(a)
            return real_split(self, *a, **k)

    assert text_tail._last_redraw(Line("\r" * 16384)) == ""
    assert calls == []
