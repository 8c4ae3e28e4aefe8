"""Every number a rule reads comes back exactly, for every rule and example.

For each named group of a rule's example that holds a plain number, hypothesis
writes another number in the same shape (sign, decimals), the line is classified
again, and the outcome field must hold exactly that number.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify
from vllm_bootdiag.rules import RULES, Rule

_PLAIN = regex.compile(r"^-?\d+(?:\.\d+)?$")


def _cases() -> list[tuple[Rule, str, str]]:
    out = []
    for rule in RULES:
        for ex in rule.examples:
            for pattern in rule.compiled:
                m = pattern.search(ex)
                if m is None:
                    continue
                for name, value in m.groupdict().items():
                    if value is not None and _PLAIN.match(value):
                        out.append((rule, ex, name))
                break
    return out


CASES = _cases()


def _lowest(rule: Rule) -> str | None:
    for part in rule.vllm.split(","):
        if part.strip().startswith(">="):
            return part.strip()[2:]
    return None


def test_there_are_numbers_to_check() -> None:
    assert len(CASES) >= 20
    assert {r.id for r, _, _ in CASES} >= {"KV001", "KV004", "KV005", "HM002", "CF001", "CM003"}


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(CASES), st.integers(min_value=0, max_value=99_999), st.integers(1, 9),
       st.integers(0, 9), st.booleans())
def test_numbers_round_trip(case: tuple[Rule, str, str], whole: int, d2: int, d1: int,
                            negative: bool) -> None:
    rule, example, group = case
    pattern = next(p for p in rule.compiled if p.search(example))
    m = pattern.search(example)
    assert m is not None
    old = m[group]
    signed = f"(?P<{group}>-?" in pattern.pattern  # vLLM can print it negative
    decimals = len(old.split(".")[1]) if "." in old else 0
    sign = "-" if signed and (old.startswith("-") or negative) else ""
    if decimals == 0:
        new = f"{sign}{whole}"
    elif decimals == 1:
        new = f"{sign}{whole}.{d1}"
    else:  # two decimals, the last non-zero: valid for %.2f and for round(x, 2) alike
        new = f"{sign}{whole}.{d1}{d2}"
    if sign and new.lstrip("-").strip("0.") == "":
        new = new.lstrip("-")
    if f"(?P<{group}>-\\d" in pattern.pattern:  # only ever negative: a signal's exit code
        new = f"-{whole + 1}"
    line = example[: m.start(group)] + new + example[m.end(group) :]
    d = classify([line], version=_lowest(rule))
    hit = next((o for o in d.matches if o.rule_id == rule.id), None)
    assert hit is not None, line
    got = getattr(hit, group)
    if isinstance(got, str):  # a number that names something: a NUMA node, a device
        want: object = new
    elif isinstance(got, int):
        want = int(new)
    else:
        want = float(new)
    assert got == want, (group, new, got)
