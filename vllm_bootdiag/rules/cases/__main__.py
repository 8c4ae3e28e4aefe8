"""Write (or check) the per-rule case tables: python -m vllm_bootdiag.rules.cases [--write]."""

from __future__ import annotations

import sys

from .. import RULES
from . import build, dumps, path


def main(argv: list[str]) -> int:
    write = "--write" in argv
    stale = []
    for rule in RULES:
        if rule.status == "retired":
            continue
        text = dumps(build(rule))
        p = path(rule.id)
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            stale.append(rule.id)
            if write:
                p.write_text(text, encoding="utf-8")
    verb = "wrote" if write else "stale"
    print(
        f"{verb}: {len(stale)} of {len(RULES)} case tables"
        + (f" ({', '.join(stale)})" if stale else "")
    )
    return 0 if write or not stale else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
