"""Meta-tests over the rule table: the table is data, so check it as data."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import regex

from vllm_bootdiag import corpus, engine, outcomes, rules, versions
from vllm_bootdiag.rules import BY_ID, RULES

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

FAMILIES = {
    "KV": "kv_cache",
    "CM": "cuda_memory",
    "HM": "free_memory",
    "CF": "config",
    "AC": "model_access",
    "EN": "environment",
    "LC": "lifecycle",
    "PF": "platform",
    "DI": "distributed",
    "IN": "install",
    "MF": "model_files",
}
"""Id prefix -> family: its rules live in `rules/<family>.py` or `rules/<family>_<what>.py`."""


def _family_modules() -> dict[str, ModuleType]:
    """Every module of the rules package that holds a RULES table, by short name."""
    found = {}
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"vllm_bootdiag.rules.{info.name}")
        if isinstance(getattr(module, "RULES", None), tuple) and module is not rules:
            found[info.name] = module
    return found


def _family_of(module_name: str) -> str | None:
    for family in FAMILIES.values():
        if module_name == family or module_name.startswith(family + "_"):
            return family
    return None


def test_ids_and_names_are_unique() -> None:
    assert len({r.id for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)


def test_each_rule_lives_in_the_module_of_its_id_prefix() -> None:
    modules = _family_modules()
    for name in modules:
        assert _family_of(name), f"rules/{name}.py is named after no family"
    for rule in RULES:
        homes = [n for n, m in modules.items() if rule in m.RULES]
        assert len(homes) == 1, (rule.id, homes)
        assert _family_of(homes[0]) == FAMILIES[rule.id[:2]], f"{rule.id} is in {homes[0]}"
    assert sum(len(m.RULES) for m in modules.values()) == len(RULES), "a module is not in RULES"


def test_patterns_compile_and_groups_are_outcome_fields() -> None:
    for rule in RULES:
        fields = outcomes.field_names(rule.outcome)
        for pattern in rule.patterns:
            groups = set(regex.compile(pattern).groupindex)
            assert groups <= fields, (rule.id, groups - fields)


def test_ranges_parse_and_reach_supported_releases() -> None:
    supported = [versions.normalize(v) for v in ("0.8.5", "0.14.0", "0.22.0", "0.32.0")]
    for rule in RULES:
        spec = versions.specifier(rule.vllm) if rule.vllm else None
        if spec is not None:
            assert any(spec.contains(v) for v in supported) or rule.vllm.startswith(">="), rule.id


def test_literal_is_cheap_and_in_every_example() -> None:
    for rule in RULES:
        assert "\n" not in rule.literal
        for ex in rule.examples:
            assert rule.literal in ex, rule.id


def test_no_line_is_matched_by_two_rules_of_one_outcome_in_any_release() -> None:
    """A reworded message closes the old range, so within any release an example line
    is matched by exactly one rule of its outcome: siblings never double-count."""
    probes = [versions.normalize(v) for v in ("0.8.5", "0.9.0.1", "0.9.1")] + [
        versions.normalize(f"0.{m}.0") for m in range(10, 33)
    ]
    for rule in RULES:
        for ex in rule.examples:
            for v in probes:
                if not rule.applies_to(v):
                    continue
                same = [
                    r.id
                    for r in RULES
                    if r.outcome == rule.outcome
                    and r.tier == rule.tier  # a tolerant sibling backs an exact one up
                    and r.applies_to(v)
                    and r.match(ex) is not None
                ]
                assert same == [rule.id], (v, ex[:60], same)


# Rules whose message this machine (CPU build, no GPU, no hub) cannot make vLLM print,
# and for which no reconstructed log exists yet. Each is a gap to close, not a pass.
NO_CORPUS_YET = {
    "KV001",
    "KV005",
    "KV006",
    "KV007",
    "EN002",
    "EN003",
    "CF009",
    "KV010",
    "CF008",
    "HM001",
    "HM003",
    "HM004",
    "HM007",
    "CF003",
    "CF007",
    "AC002",
    "AC004",
    "AC005",
    "AC006",
    "AC007",
    "AC008",
}


def _corpus_rule_ids() -> dict[str, set[str]]:
    """rule id -> versions of corpus logs where that rule matched, inside its range (an
    echo never becomes a match: it counts where it reads a line of a log)."""
    seen: dict[str, set[str]] = {}
    echoes = [r for r in RULES if r.role == "echo"]
    for entry in corpus.entries(CORPUS):
        version = versions.normalize(entry.label.vllm_version)
        d = engine.classify_file(entry.log_path)
        for o in d.matches:
            rule = BY_ID[o.rule_id or ""]
            if versions.in_range(version, rule.vllm):
                seen.setdefault(rule.id, set()).add(entry.label.vllm_version)
        lines = entry.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        for rule in echoes:
            if rule.applies_to(version) and any(rule.match(line) is not None for line in lines):
                seen.setdefault(rule.id, set()).add(entry.label.vllm_version)
    return seen


def test_every_rule_has_a_corpus_positive_or_is_a_declared_gap() -> None:
    """An active rule needs a real log (a `preview` rule is one that has none yet)."""
    seen = _corpus_rule_ids()
    # A tolerant rule backs up exact ones on damaged text, which the corpus never is.
    missing = {
        r.id for r in RULES if r.id not in seen and r.status == "active" and r.tier == "exact"
    } - NO_CORPUS_YET
    assert not missing, f"rules with no corpus log in their range: {sorted(missing)}"


def test_declared_gaps_are_still_gaps() -> None:
    """When a log lands for a rule, it must leave NO_CORPUS_YET (keeps the list honest)."""
    seen = _corpus_rule_ids()
    closed = NO_CORPUS_YET & set(seen)
    assert not closed, f"remove from NO_CORPUS_YET, they have corpus logs now: {sorted(closed)}"


def test_literals_sit_where_the_search_looks() -> None:
    """Literals are searched only in the head of a line (scan.SEARCH_WIDTH); leave room for
    a process tag, a level, a timestamp and a container runtime's prefix before it."""
    from vllm_bootdiag.text.triage import SEARCH_WIDTH

    for rule in RULES:
        for ex in rule.examples:
            assert ex.index(rule.literal) + len(rule.literal) < SEARCH_WIDTH - 200, rule.id
