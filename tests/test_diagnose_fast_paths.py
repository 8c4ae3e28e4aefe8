"""diagnose's fast paths give what the long way gives.

A tail with one outcome takes it as the primary without ranking and merging (the long
way returns that very outcome): checked on every outcome of every corpus log, damaged
copies too.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from vllm_bootdiag import classify
from vllm_bootdiag.rules.ruleset import default_rules

diagnose_module = importlib.import_module("vllm_bootdiag.engine.diagnose")
ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted((ROOT / "corpus").glob("*/*.log"))
sys.path.insert(0, str(ROOT / "tests" / "damage"))
import damages  # noqa: E402

RULES = default_rules()


def _tails() -> list[list[str]]:
    out = []
    for log in LOGS:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        out.append(lines)
        out.extend(d.apply(lines) for d in damages.DAMAGES[:6])
    return out


def test_one_outcome_is_the_primary_the_long_way_gives() -> None:
    seen = 0
    for lines in _tails():
        d = classify(lines)
        for o in d.matches:
            assert diagnose_module._merged(diagnose_module._primary([o], RULES), [o]) is o
            seen += 1
        if len(d.matches) == 1:
            assert d.primary == d.matches[0]
    assert seen > 1000


def test_was_eager_is_its_pattern_on_every_corpus_boot_and_near_misses() -> None:
    from vllm_bootdiag import remedy, timeline
    from vllm_bootdiag.text.triage import Tail

    args = [
        timeline.facts(Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS))
        for lines in _tails()[::3]
    ]
    texts = [f.non_default_args for f in args if f.non_default_args is not None]
    texts += [
        "{'enforce_eager': True}",
        "{'enforce_eager':True, 'x': 1}",
        "'enforce_eager' : Truex",
        "enforce_eager: True",
        '{"enforce_eager": True}',
        "{'enforce_eager': False}",
        "",
    ]
    eager = 0
    for text in texts:
        facts = timeline.BootFacts.model_construct(non_default_args=text)
        assert remedy.was_eager(facts) == bool(remedy._EAGER_ARG.search(text)), text
        eager += remedy.was_eager(facts)
    assert eager >= 3 and len(texts) > 50
