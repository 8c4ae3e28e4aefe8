"""Human output in 80 columns: a person reads it in a terminal or a CI page, so long
evidence and remediation lines are wrapped under a hanging indent; `--wide` prints every
line whole (for grep, or a wide terminal).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis

WIDTH = 80
INDENT = "  "
EVIDENCE_LINES = 4
"""Wrapped lines of one evidence line shown before it is cut with "..." (not under --wide)."""

_HIDDEN = frozenset({"kind", "rule_id", "evidence", "category", "retry_same_config_can_succeed"})
_UNKNOWN_HIDDEN = frozenset({"last_error_line", "last_error_line_number"})
"""`unknown`'s error line is printed once, as its evidence, not again among its numbers."""


def wrap(text: str, wide: bool, indent: str = INDENT, max_lines: int | None = None) -> str:
    """`text` in WIDTH columns, continuation lines indented; unchanged when `wide`."""
    if wide:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= WIDTH:
            out.append(line)
            continue
        out.extend(
            textwrap.wrap(
                line,
                WIDTH,
                subsequent_indent=indent,
                break_long_words=True,
                break_on_hyphens=False,
                drop_whitespace=True,
                max_lines=max_lines,
                placeholder=" ...",
            )
            or [line[:WIDTH]]
        )
    return "\n".join(out)


def outcome_line(outcome: Any) -> str:
    """`kind: field=value, ...` with only the numbers this outcome carries."""
    kind: str = getattr(outcome, "kind", "")
    hidden = _HIDDEN | (_UNKNOWN_HIDDEN if kind == "unknown" else frozenset())
    # The fields as they are (numbers, strings, tuples of names: what model_dump would
    # give): a dump would build the outcome's serializer, which a person's output never needs.
    numbers = {
        k: v
        for k in type(outcome).model_fields
        if k not in hidden and (v := getattr(outcome, k)) is not None
    }
    if not numbers:
        return kind
    return kind + ": " + ", ".join(f"{k}={v}" for k, v in numbers.items())


def diagnosis(d: Diagnosis, wide: bool) -> str:
    """The outcome and its numbers, version and phase, one evidence line, the remediation."""
    p = d.primary
    if not d.vllm_output_found:
        return wrap(
            f"no vLLM output found ({d.lines_examined} "
            f"line{'' if d.lines_examined == 1 else 's'} examined): "
            "this does not look like a vllm serve log",
            wide,
        )
    restart = "yes" if p.retry_same_config_can_succeed else "no"
    lines = [
        wrap(outcome_line(p), wide),
        wrap(
            f"vLLM {d.vllm_version or 'unknown'}; last phase: {d.phase or 'none'}; "
            f"category: {p.category.value}; restart on the same config can succeed: {restart}",
            wide,
        ),
    ]
    if p.evidence:
        ev = p.evidence[0]
        lines.append(wrap(f"line {ev.line}: {ev.text}", wide, max_lines=EVIDENCE_LINES))
    # how the answer was reached: an earlier boot left out, a version hint the log contradicts
    lines.extend(wrap(f"note: {n}", wide) for n in d.notes)
    if d.remediation:
        lines.append(wrap(f"next: {d.remediation}", wide))
    return "\n".join(lines)


def shell(prefix: str, words: list[str], wide: bool, *, quoted: bool = False) -> str:
    """A command a person pastes into a shell, in WIDTH columns: quoted words, broken only
    between words with a ` \\` continuation, so the wrapped lines still paste as one command."""
    import shlex

    if not quoted:
        words = [shlex.quote(w) for w in words]
    if wide:
        return prefix + " ".join(words)
    indent = " " * len(prefix)
    lines: list[str] = []
    line = prefix
    for word in words:
        if line.strip() and len(line) + 1 + len(word) + 2 > WIDTH:
            lines.append(line + " \\")
            line = indent + word
        else:
            line = line + word if line == prefix else line + " " + word
    lines.append(line)
    return "\n".join(lines)
