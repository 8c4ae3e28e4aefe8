"""Version detection stays linear on a long run after each wording it reads.

A banner's `version` before 16 KB of `1.` cost the `regex` module's backtracking 0.1 s
(32 KB 0.4 s: quadratic), under the line bound of test_rule_linear on a quiet machine
and over it on a loaded one. At 64 KB a quadratic detector costs seconds, a linear one
milliseconds, so the bound below tells them apart whatever the load."""

from __future__ import annotations

import time

import pytest

from vllm_bootdiag import versions

SIZE = 65_536
BOUND_S = 0.25

WORDINGS = {
    "banner": "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347]  █ ▄ version ",
    "api-server": "INFO 11-29 16:19:50 [x.py:1] vLLM API server version ",
    "engine": "INFO 11-29 16:19:50 [llm_engine.py:1] Initializing a V1 LLM engine (v",
    "vllm-version": "vLLM version ",
}
RUNS = {"dotted": "1.", "dotted-rc": "1.rc", "plus": "1.1+", "dev": ".dev1"}


@pytest.mark.parametrize("run", RUNS.values(), ids=list(RUNS))
@pytest.mark.parametrize("wording", WORDINGS.values(), ids=list(WORDINGS))
def test_detect_is_linear_after_every_wording(wording: str, run: str) -> None:
    line = wording + "1." + run * (SIZE // len(run))
    versions.detect([line])  # (compiles the detectors)
    t0 = time.perf_counter()
    versions.detect([line])
    assert time.perf_counter() - t0 < BOUND_S


def test_the_detectors_still_read_every_wording() -> None:
    for name, wording in WORDINGS.items():
        line = wording + "0.32.0" + (")" if wording.endswith("(v") else "")
        found = versions.detect([line])
        assert found is not None and str(found.version) == "0.32.0", name
    for text, want in (("0.10.1.1", "0.10.1.1"), ("0.9.0rc1.dev12+cu128", "0.9.0rc1.dev12")):
        found = versions.detect(["vLLM version " + text])
        assert found is not None and str(found.version) == want, text
