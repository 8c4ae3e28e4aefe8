"""What a worker's last lines or a pasted line still say (issue 7, items 5-7).

Inputs are corpus logs cut short, or single lines rendered from the printer's own
format string (file:line cited in each rule's references)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, logtail

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-0)",
            "gated_model",
        ),
        ("RepositoryNotFoundError", "model_not_found"),
        ("huggingface_hub.errors.RevisionNotFoundError: 404 Client Error.", "revision_not_found"),
        (
            "  Value error, Invalid value for --max-num-seqs: must be positive "
            "[type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
            "invalid_argument",
        ),
        (
            "  Value error, World size (4) is larger than the number of available GPUs (1) in "
            "this node. If this is intentional and you are using: [type=value_error, "
            "input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
            "insufficient_devices",
        ),
        (
            "ValueError: With `vllm serve`, you should provide the model as a positional "
            "argument or in a config file instead of via the `--model` option.",
            "invalid_argument",
        ),
    ],
)
def test_a_single_pasted_line_is_classified_and_failed(line: str, kind: str) -> None:
    d = classify([line])
    assert d.primary.kind == kind
    assert d.failed


def test_the_model_given_as_an_option_names_the_flag() -> None:
    d = classify(
        [
            "ValueError: With vllm serve, you should provide the model as a positional argument "
            "or in a config file instead of via the --model option."
        ]
    )
    assert d.primary.kind == "invalid_argument"
    assert d.primary.model_dump()["argument"] == "--model"


BOOTED = sorted(CORPUS.glob("*/booted__*.log"))


@pytest.mark.parametrize("log", BOOTED, ids=[f"{p.parent.name}/{p.stem}" for p in BOOTED])
def test_a_healthy_boot_cut_before_startup_complete_is_still_booted(log: Path) -> None:
    lines = logtail.read_tail(log)
    cut = next(i for i, line in enumerate(lines) if "Application startup complete" in line)
    d = classify(lines[:cut])
    assert d.primary.kind == "booted", d.primary
    assert not d.failed
    assert d.primary.model_dump()["port"] == classify(lines).primary.model_dump()["port"]


def test_the_route_listing_alone_is_a_healthy_boot() -> None:
    log = CORPUS / "0.32.0" / "booted__smollm135m-eager__cpu.log"
    lines = logtail.read_tail(log)
    start = next(i for i, line in enumerate(lines) if "Available routes are" in line)
    d = classify(lines[start : start + 5])
    assert d.primary.kind == "booted" and d.primary.rule_id == "LC007"


def test_a_server_start_with_a_failure_after_it_is_the_failure() -> None:
    log = CORPUS / "0.32.0" / "booted__smollm135m-eager__cpu.log"
    lines = logtail.read_tail(log)
    cut = next(i for i, line in enumerate(lines) if "Application startup complete" in line)
    d = classify(
        [
            *lines[:cut],
            "RuntimeError: Engine core initialization failed. See root "
            "cause above. Failed core proc(s): {'EngineCore': -9}",
        ]
    )
    assert d.primary.kind == "engine_died"


@pytest.mark.parametrize("version", ["0.27.1", "0.32.0"])
def test_a_kv_budget_below_zero_is_no_kv_memory_without_its_message(version: str) -> None:
    log = CORPUS / version / "no_kv_cache_memory__llama1b-4gib-card__cuda.log"
    lines = [
        line
        for line in logtail.read_tail(log)
        if "No available memory for the cache blocks" not in line
    ]
    d = classify(lines)
    assert d.primary.kind == "no_kv_cache_memory" and d.primary.rule_id == "KV104"
    assert d.primary.model_dump()["available_gib"] == -0.18
    assert d.primary.evidence[0].text.startswith("Available KV cache memory: -0.18 GiB")


def test_a_positive_kv_budget_says_nothing() -> None:
    log = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    d = classify(logtail.read_tail(log))
    assert "KV104" not in [m.rule_id for m in d.matches]
