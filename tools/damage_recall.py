"""Kind recall per damage: every corpus log and every rule example, damaged as users
hand them over (tests/damage/damages.py), classified, compared with the clean answer.

Run from the repository root:

    python tools/damage_recall.py            # a markdown table for the README
    python tools/damage_recall.py --misses   # and every case it gets wrong

Recall counts only the cases where the core sentence survives the damage (for
"keep the last N lines", an evidence line of the clean answer is among them).
The last column is what a worker's usual regex list (tools/regex_baseline.py)
answers on the same damaged failure logs: any answer at all, right or not.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "damage"))
sys.path.insert(0, str(ROOT / "tools"))

import damages  # noqa: E402
from regex_baseline import usual  # noqa: E402

from vllm_bootdiag import classify, corpus, logtail  # noqa: E402
from vllm_bootdiag.rules import RULES  # noqa: E402


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "-"


def corpus_rows(show_misses: bool) -> list[str]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    misses: list[str] = []
    for entry in corpus.entries(ROOT / "corpus"):
        lines = logtail.read_tail(entry.log_path)
        clean = classify(lines)
        for damage in damages.DAMAGES:
            r = damages.check(lines, damage, clean)
            t = tally[damage.name]
            if not r.survived:
                continue
            t[0] += 1
            t[1] += r.kind == r.clean_kind
            t[2] += r.ok
            if clean.primary.is_failure:
                t[3] += 1
                t[4] += usual(damage.apply(list(lines))) is not None
            if show_misses and not r.ok:
                misses.append(
                    f"{damage.name}: {entry.id}: {r.kind} (want {r.clean_kind}) "
                    f"{', '.join(r.wrong_numbers)}"
                )
    out = [
        "| damage | kind recall | kind and numbers | regex list answers (failures) |",
        "|---|---|---|---|",
    ]
    for damage in damages.DAMAGES:
        n, kind, both, fails, answered = tally[damage.name]
        out.append(
            f"| {damage.name} | {_pct(kind, n)} | {_pct(both, n)} | {_pct(answered, fails)} |"
        )
    return out + misses


def example_rows(show_misses: bool) -> list[str]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for rule in RULES:
        for ex in rule.examples:
            clean = classify([ex])
            for damage in damages.DAMAGES:
                if damage.window is not None:
                    continue
                r = damages.check([ex], damage, clean)
                tally[damage.name][0] += 1
                tally[damage.name][1] += r.kind == r.clean_kind
                if show_misses and r.kind != r.clean_kind:
                    misses.append(f"{damage.name}: {rule.id}: {r.kind} (want {r.clean_kind})")
    out = ["| damage | kind recall on rule examples |", "|---|---|"]
    for damage in damages.DAMAGES:
        if damage.window is None:
            n, kind = tally[damage.name]
            out.append(f"| {damage.name} | {_pct(kind, n)} |")
    return out + misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every case it gets wrong")
    args = parser.parse_args(argv)
    print("\n".join(corpus_rows(args.misses)))
    print()
    print("\n".join(example_rows(args.misses)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
