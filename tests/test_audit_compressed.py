"""A compressed log cut short (a copy or download stopped, logrotate still writing) yields
what it held; one with nothing decodable is a read error, never "no vLLM output".

Why: a gzip or xz file cut anywhere before its end read as 0 lines ("no vLLM output
found", and `--fail-on-failure` exit 1 for the wrong reason): the reader asked for 64 KB
at a time and lost what a read had gathered when the end-of-file came. Real corpus logs,
compressed with the standard library, cut at a byte count.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest

from vllm_bootdiag import LogReadError, classify_file

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "disk_full__compile-cache-full__cpu.log"
PACKERS: dict[str, Callable[[bytes], bytes]] = {"gz": gzip.compress, "xz": lzma.compress}


@pytest.mark.parametrize("ext", PACKERS)
def test_a_cut_archive_reads_the_lines_it_held(tmp_path: Path, ext: str) -> None:
    whole = PACKERS[ext](KV_LOG.read_bytes())
    path = tmp_path / f"vllm.log.{ext}"
    path.write_bytes(whole[: len(whole) // 2])
    d = classify_file(path)
    assert d.vllm_output_found and d.lines_examined > 20
    assert d.vllm_version == "0.32.0"
    path.write_bytes(whole)
    assert classify_file(path).primary.kind == "disk_full"


@pytest.mark.parametrize(
    "pack", [gzip.compress, bz2.compress, lzma.compress], ids=["gz", "bz2", "xz"]
)
def test_an_archive_cut_before_anything_decodes_is_a_read_error(
    tmp_path: Path, pack: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "vllm.log.z"
    path.write_bytes(pack(KV_LOG.read_bytes())[:12])
    with pytest.raises(LogReadError, match="cut short before anything in it can be read"):
        classify_file(path)


def test_an_empty_archive_holds_no_vllm_output(tmp_path: Path) -> None:
    path = tmp_path / "empty.log.gz"
    path.write_bytes(gzip.compress(b""))
    d = classify_file(path)
    assert not d.vllm_output_found and d.lines_examined == 0
