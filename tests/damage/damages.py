"""The damage a log suffers between `vllm serve` and the user who hands it over.

Each damage is a function from the lines vLLM printed to the lines a user has:
a terminal or editor wrapped them, a paste lost the end of a sentence, its
backticks or newlines, a worker kept only the last lines, a tool wrapped every
line in its own prefix. The damage suite and `tools/damage_recall.py` run every
corpus log and every rule example through each one. They damage real logs: no
log text is made up here.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from vllm_bootdiag import Diagnosis, classify, logtail

Lines = list[str]


@dataclass(frozen=True)
class Damage:
    name: str
    apply: Callable[[Lines], Lines]
    window: int | None = None
    """Only the last `window` lines survive it (None: every line does)."""
    lossy: bool = False
    """Text is lost, so numbers are compared only where the damaged result has one."""
    rows: bool = False
    """It makes rows of each line (a wrap) and can make more than `classify` reads (the last
    400): the clean answer it must keep is then that of the lines whose rows are all read."""


def _hard_wrap(width: int) -> Callable[[Lines], Lines]:
    def wrap(lines: Lines) -> Lines:
        return [line[i : i + width] for line in lines for i in range(0, max(len(line), 1), width)]

    return wrap


def _twice(
    first: Callable[[Lines], Lines], then: Callable[[Lines], Lines]
) -> Callable[[Lines], Lines]:
    """A paste wrapped twice: a terminal's wrapped rows (`first`) copied into an e-mail or a
    ticket that wraps them again (`then`)."""
    return lambda lines: then(first(lines))


def _fold(width: int) -> Callable[[Lines], Lines]:
    def fold(lines: Lines) -> Lines:
        out: Lines = []
        for line in lines:
            out.extend(
                textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [line]
            )
        return out

    return fold


_ERROR_LINE = re.compile(r"(?:^|\] |\) )(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception): ")


def _reflow(lines: Lines) -> Lines:
    """An error message split at its sentences, as pasted into a chat or a ticket."""
    out: Lines = []
    for line in lines:
        if _ERROR_LINE.search(line):
            out.extend(re.sub(r"\. (?=[A-Z])", ".\n", line).split("\n"))
        else:
            out.append(line)
    return out


_TAIL_CLAUSES = re.compile(
    r" (?:Try (?:increasing|lowering|reducing|decreasing)|Please |See https?://|Decrease "
    r"|To (?:allow|fix|enable)|This happens|On the CPU backend|Increase )"
)


def cut_tail_clause(lines: Lines) -> Lines:
    """Every message cut before its advice: the paste stops after the core sentence."""
    return [line[: m.start()] if (m := _TAIL_CLAUSES.search(line)) else line for line in lines]


def strip_backticks(lines: Lines) -> Lines:
    return [line.replace("`", "") for line in lines]


_OPEN_PAREN = re.compile(r", \((?=-?\d+(?:\.\d+)? GiB )")


def drop_paren(lines: Lines) -> Lines:
    """The unbalanced `(` before vLLM's GiB figure, lost by a renderer or a hand."""
    return [_OPEN_PAREN.sub(", ", line) for line in lines]


def collapse(lines: Lines) -> Lines:
    """The error block (last 30 lines) pasted without its newlines."""
    return [" ".join(lines[-30:])]


def _last(n: int) -> Callable[[Lines], Lines]:
    return lambda lines: lines[-n:]


def _prefix(prefix: str) -> Callable[[Lines], Lines]:
    return lambda lines: [prefix + line for line in lines]


def json_file(lines: Lines) -> Lines:
    return [
        json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-01-02T03:04:05.1Z"})
        for line in lines
    ]


def markdown(lines: Lines) -> Lines:
    return ["> ```text", *("> " + line for line in lines), "> ```"]


_TAG = re.compile(r"^\(([^)]*pid=\d+)\) ")
_LEVEL = re.compile(r"(?<![\w\x1b])(ERROR|WARNING|INFO)(?= \d\d-\d\d )")


def caret_ansi(lines: Lines) -> Lines:
    """Colours pasted from a terminal in caret notation, as vLLM's colour formatter sets them."""
    out: Lines = []
    for line in lines:
        line = line.replace("\x1b", "^[")
        line = _TAG.sub(r"^[[0;36m(\1)^[[0;0m ", line)
        out.append(_LEVEL.sub(r"^[[31m\1^[[0m", line))
    return out


def no_break_spaces(lines: Lines) -> Lines:
    """Copied from a rendered page (a chat client, a web view of a CI log): every space a
    no-break space."""
    return [line.replace(" ", "\xa0") for line in lines]


def cat_n(lines: Lines) -> Lines:
    """Shared "with line numbers": `cat -n` (a right-aligned number and a tab on each row)."""
    return [f"{n:6d}\t{line}" for n, line in enumerate(lines, 1)]


def cr_line_ends(lines: Lines) -> Lines:
    """Saved with classic-Mac line ends, or a terminal capture that kept only the carriage
    returns: every line ends in `\\r` alone, the log one string."""
    return ["".join(line + "\r" for line in lines)]


_OPENING = re.compile(r"(^|[\s(\[{=])(['\"])")


def smart_quotes(lines: Lines) -> Lines:
    """Pasted through a chat client or a word processor: typographic quotes for straight
    ones (an opening one after a space, a bracket or `=`, a closing one or apostrophe
    elsewhere)."""

    def curl(line: str) -> str:
        line = _OPENING.sub(lambda m: m[1] + ("\u2018" if m[2] == "'" else "\u201c"), line)
        return line.replace("'", "\u2019").replace('"', "\u201d")

    return [curl(line) for line in lines]


def html_escaped(lines: Lines) -> Lines:
    """Scraped from a web page's HTML source: `&amp;` `&lt;` `&gt;` `&quot;` `&#x27;`."""
    return [html.escape(line) for line in lines]


DAMAGES: tuple[Damage, ...] = (
    Damage("wrap80", _hard_wrap(80)),
    Damage("wrap100", _hard_wrap(100)),
    Damage("wrap120", _hard_wrap(120)),
    Damage("fold100", _fold(100)),
    Damage("reflow", _reflow),
    Damage("cut_tail_clause", cut_tail_clause, lossy=True),
    Damage("strip_backticks", strip_backticks),
    Damage("drop_paren", drop_paren),
    Damage("collapse", collapse, window=30),
    Damage("last1", _last(1), window=1, lossy=True),
    Damage("last5", _last(5), window=5, lossy=True),
    Damage("last20", _last(20), window=20, lossy=True),
    Damage("ci_gutter", _prefix("  | ")),
    Damage("bracket_stamp", _prefix("[2026-01-02T03:04:05Z] ")),
    Damage("actions_stamp", _prefix("2026-01-02T03:04:05.1234567Z ")),
    Damage("caret_ansi", caret_ansi),
    Damage("markdown", markdown),
    Damage("compose", _prefix("vllm-1  | ")),
    Damage("journald", _prefix("Jan 02 03:04:05 gpu-node-3 vllm[2811]: ")),
    Damage("json_file", json_file),
    Damage("stern", _prefix("vllm-7d9f8b6c5-x2x7q vllm ")),
    Damage("launcher", _prefix("2026-01-02 03:04:05.678 [Error] (Process) ")),
    Damage("stage_tag", _prefix("[Stage-0] ")),
    Damage("no_break_spaces", no_break_spaces),
    Damage("cat_n", cat_n),
    Damage("code_block", _prefix("    ")),  # markdown's code block by indentation
    Damage("wrap120_wrap80", _twice(_hard_wrap(120), _hard_wrap(80)), rows=True),
    Damage("wrap100_wrap72", _twice(_hard_wrap(100), _hard_wrap(72)), rows=True),
    Damage("cr_line_ends", cr_line_ends),
    # A terminal's rows, then a tool's stamp on each row (the screen logged or pasted
    # through a CI page, journald, compose or a runtime): wrapped first, then stamped.
    Damage("wrap80_ci_gutter", _twice(_hard_wrap(80), _prefix("  | ")), rows=True),
    Damage(
        "wrap80_journald",
        _twice(_hard_wrap(80), _prefix("Jan 02 03:04:05 gpu-node-3 vllm[2811]: ")),
        rows=True,
    ),
    Damage(
        "wrap100_bracket_stamp",
        _twice(_hard_wrap(100), _prefix("[2026-01-02T03:04:05Z] ")),
        rows=True,
    ),
    Damage("wrap100_compose", _twice(_hard_wrap(100), _prefix("vllm-1  | ")), rows=True),
    Damage(
        "wrap120_actions_stamp",
        _twice(_hard_wrap(120), _prefix("2026-01-02T03:04:05.1234567Z ")),
        rows=True,
    ),
    Damage("smart_quotes", smart_quotes),
    Damage("html_escaped", html_escaped),
    Damage("cat_n_wrap100", _twice(cat_n, _hard_wrap(100)), rows=True),  # `cat -n` in a terminal
    Damage("code_block_wrap100", _twice(_prefix("    "), _hard_wrap(100)), rows=True),
)
BY_NAME = {d.name: d for d in DAMAGES}


# --- checking one damaged log against its clean classification ----------------------------


@dataclass(frozen=True)
class Result:
    damage: str
    survived: bool
    """The core sentence (an evidence line of the clean primary) is still in the input."""
    clean_kind: str
    kind: str
    wrong_numbers: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.kind == self.clean_kind and not self.wrong_numbers


def answer(lines: Lines) -> tuple[object, ...]:
    """What a repair must keep of a tail's classification: the kind, vLLM's numbers, the
    version and the phase."""
    d = classify(lines)
    return (d.primary.kind, numbers(d.primary), d.vllm_version, d.phase)


def numbers(outcome: object) -> dict[str, object]:
    """The numbers an outcome carries (ints and floats, None left out)."""
    fields = type(outcome).model_fields  # type: ignore[attr-defined]
    out: dict[str, object] = {}
    for name in fields:
        value = getattr(outcome, name)
        if name.endswith("line_number"):
            continue  # damage renumbers the input: lines are not numbers vLLM printed
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = value
    return out


def survives(clean: Diagnosis, n_lines: int, damage: Damage) -> bool:
    if damage.window is None:
        return True
    lines = [e.line for e in clean.primary.evidence]
    return any(line > n_lines - damage.window for line in lines)


def lines_read(lines: Lines, damage: Damage) -> Lines:
    """The lines whose rows are all among the last 400 that `classify` reads of the damaged
    copy (every line, for a damage that is not `rows`)."""
    if not damage.rows:
        return lines
    made = 0
    for k in range(len(lines) - 1, -1, -1):
        made += len(damage.apply([lines[k]]))
        if made > logtail.DEFAULT_LINES:
            return lines[k + 1 :]
    return lines


def check(lines: Lines, damage: Damage, clean: Diagnosis) -> Result:
    damaged = classify(damage.apply(list(lines)))
    read = lines_read(lines, damage)
    if len(read) < len(lines):
        clean = classify(read)
    want, got = numbers(clean.primary), numbers(damaged.primary)
    if damage.lossy:
        wrong = tuple(k for k, v in got.items() if k in want and want[k] != v)
    else:
        wrong = tuple(k for k, v in want.items() if got.get(k) != v)
    return Result(
        damage.name,
        survives(clean, len(lines), damage),
        clean.primary.kind,
        damaged.primary.kind,
        wrong,
    )
