"""Every corpus log classifies to its label. Ids are `<version>/<stem>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import corpus, versions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

ENTRIES = corpus.entries(CORPUS)


def test_the_corpus_is_not_empty() -> None:
    assert len(ENTRIES) >= 5


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_log_classifies_to_its_label(entry: corpus.Entry) -> None:
    assert corpus.sha256(entry.log_path) == entry.label.log_sha256, "log edited after capture"
    result = corpus.check_entry(entry)
    assert result.ok, "; ".join(result.mismatches)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_label_is_consistent_with_its_file(entry: corpus.Entry) -> None:
    kind, _scenario, device = entry.log_path.stem.split("__")
    assert entry.label.expected["kind"] == kind
    assert entry.label.device == device
    assert entry.label.log == entry.log_path.name
    assert entry.log_path.parent.name == entry.label.vllm_version
    assert versions.parse_version(entry.label.vllm_version) is not None
    prov = entry.label.provenance
    if prov.kind == "reconstructed":
        assert prov.frame and prov.built_lines, "a reconstructed log names its frame and lines"
        assert device == "cuda"
    else:
        assert prov.argv and prov.package_version == entry.label.vllm_version


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_label_is_complete_and_reviewed(entry: corpus.Entry) -> None:
    """Every number the classifier reads is in the label (so a change to any of them
    fails the corpus test), and a person has read it against the log."""
    assert entry.label.reviewed, "run `vllm-bootdiag corpus --write-expected`, read, then review"
    assert entry.label.expected == corpus.expected_from(entry)
