"""Lifecycle outcomes: a process died without a cause, the server came up, or nothing matched.

`unknown` is an answer with retry semantics, not None: its last error-looking
line is the best lead a person has.
"""

import re
from typing import ClassVar, Literal

from pydantic import computed_field

from ..text.wrappers import Lazy
from .base import Category, Plan, _Outcome

ERROR_LOOKING = Lazy(
    r"^(?:[\w.]+\.)?(?:[A-Z]\w*?)?(?:Error|Exception|Exit|Interrupt|Unsupported)\b"
    r"|(?:^|: )error: |^Error: "
    r"|: undefined symbol: |: cannot open shared object file"
    r"|^(?:Segmentation fault|Bus error|Aborted|Killed)\b"
    r"|^terminate called after throwing"
)
"""A line that reads as an error when no rule matched: a Python exception line (any
class ending in Error/Exception, torch's `Unsupported`), argparse's `error:`, the
dynamic loader's failures, a fatal signal the shell reported, a C++ abort."""

_ERROR_AT_START = Lazy(
    r"(?:[\w.]+\.)?(?:[A-Z]\w*?)?(?:Error|Exception|Exit|Interrupt|Unsupported)\b"
    r"|error: |Error: |(?:Segmentation fault|Bus error|Aborted|Killed)\b"
    r"|terminate called after throwing"
)
"""ERROR_LOOKING's alternatives that start a line, matched at its start: the long way,
which `looks_like_error` and `error_looking_at_start` tell without running it (the
`regex` module backtracks through a 16 KB run of `a.` quadratically: 20-80 ms a line)."""

_DOTTED_RUN = Lazy(r"[\w.]*")
r"""The run of word characters and dots a text starts with (the `regex` module's `\w`, as
the patterns read it): where a `(?:[\w.]+\.)?<name>\b` at the start can match."""
_ASCII_RUN = re.compile(r"[A-Za-z0-9_.]*")
r"""`_DOTTED_RUN` for an ASCII text (`regex`'s `\w` is `[A-Za-z0-9_]` there), in `re`,
which runs a class of ASCII characters twice as fast."""


def _names_ending_parts(names: tuple[str, ...], upper_first: bool) -> re.Pattern[str]:
    r"""A pattern that finds, in a dotted run reversed, a part of it that `(?:[\w.]+\.)?
    (?:[A-Z]\w*?)?(?:<names>)\b` (`upper_first`) or `(?:[\w.]+\.)?(?:<names>)\b` reads
    at the run's start, where the run is what `_DOTTED_RUN` reads.

    Read forwards: a part (the text between two dots) that ends with a name, since `\b`
    holds only where a dot or the run's end follows it (the run holds word characters and
    dots only); that is the name, or (`upper_first`) starts with `[A-Z]` before it; and
    starts the run or follows a dot that is not the run's first character (`[\w.]+\.`
    ends on that dot). In the run `[^.]` is `\w`. Reversed, each name is a literal the
    search finds by its first character, its part's end a fixed lookbehind: a search
    forwards would try every position of a 16 KB run of `a.` (1-3 ms; this, 10-400 us)."""
    ends = "|".join(f"{n[::-1]}(?<![^.]{n[::-1]})" for n in names)
    start = r"(?:[^.]*[A-Z])?" if upper_first else ""
    return re.compile(f"(?:{ends}){start}(?:\\.(?=.)|\\Z)")


_EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Unsupported")
_DETERMINISTIC_WORDS = (
    "ImportError", "ModuleNotFoundError", "NotImplementedError", "SyntaxError",
    "IndentationError", "TabError", "Unsupported",
)  # fmt: skip
_EXCEPTION_NAME = _names_ending_parts(_EXCEPTION_WORDS, upper_first=True)
"""ERROR_LOOKING's (and `_ERROR_AT_START`'s) exception name at the start."""
_DETERMINISTIC_NAME = _names_ending_parts(_DETERMINISTIC_WORDS, upper_first=False)
"""DETERMINISTIC's class name at the start."""
_ENDS = {
    _EXCEPTION_NAME: (_EXCEPTION_WORDS, tuple(w + "." for w in _EXCEPTION_WORDS)),
    _DETERMINISTIC_NAME: (_DETERMINISTIC_WORDS, tuple(w + "." for w in _DETERMINISTIC_WORDS)),
}
"""Each pattern's names, and each followed by a dot: a run that neither ends with a name
nor holds one before a dot has no part that ends with one."""

_SIGNAL_AT = Lazy(r"(?:Segmentation fault|Bus error|Aborted|Killed)\b")
_AT_START = ("error: ", "Error: ", "terminate called after throwing")
_LOOKING_AT_START = (
    *_AT_START,
    ": error: ",
    ": undefined symbol: ",
    ": cannot open shared object file",
)
"""ERROR_LOOKING's literal alternatives, where a match at a text's start finds them."""


NAME_MAX = 512
"""The longest run of word characters and dots a line starts with that is read whole for
an exception's name (vLLM's and torch's longest qualified names are about 100 characters).
In a longer run only names that end on a dot within its first NAME_MAX + 1 characters are
read, so a 16 KB run costs what 512 characters do, not a search of all of it."""


def _named_at_start(name: re.Pattern[str], text: str) -> bool:
    r"""`^(?:[\w.]+\.)?<name>\b` matched at the text's start, told by `name` searched in the
    dotted run the text starts with, reversed (`_names_ending_parts`); exact where that run
    is at most NAME_MAX characters long, and for every name that ends on a dot inside the
    bound (the cut keeps that dot, so the name still ends its part)."""
    bound = NAME_MAX + 1
    runs = _ASCII_RUN if text.isascii() else _DOTTED_RUN
    found = runs.match(text, 0, bound)
    run = found[0] if found is not None else ""
    if len(run) > NAME_MAX:  # past the bound: only names that end on a dot inside it
        run = run[: run.rfind(".") + 1]
    names, ends = _ENDS[name]
    if not run.endswith(names) and ("." not in run or not any(end in run for end in ends)):
        return False  # no part ends with a name (substring tests: C speed, no search)
    return name.search(run[::-1]) is not None


def _starts_like_error(text: str) -> bool:
    r"""`_ERROR_AT_START.match(text) is not None`, linear (tests/test_error_looking_linear)."""
    return (
        text.startswith(_AT_START)
        or _named_at_start(_EXCEPTION_NAME, text)
        or _SIGNAL_AT.match(text) is not None
    )


def error_looking_at_start(text: str) -> bool:
    """`ERROR_LOOKING.match(text) is not None`, linear (what boots reads of a message)."""
    return (
        text.startswith(_LOOKING_AT_START)
        or _named_at_start(_EXCEPTION_NAME, text)
        or _SIGNAL_AT.match(text) is not None
    )


_ERROR_INSIDE = (
    ("error:", ": error: "),
    ("undefined", ": undefined symbol: "),
    ("shared", ": cannot open shared object file"),
)
"""(a word of it, the text): the word, with no space, is looked for first (a needle with
a space crawls through a 16 KB run of spaces or backticks in CPython's search)."""


_ERROR_INSIDE_RE = re.compile(": (?:" + "|".join(re.escape(s[2:]) for _, s in _ERROR_INSIDE) + ")")
"""The three wordings at once, for a long text: `re`'s literal search is linear, where
CPython's substring search crawls (35 us a 16 KB run of `(` for `shared`, of backticks for
a needle with a space: their bloom-filter bits collide); on a short text three substring
tests cost less."""
_LONG = 1024


def looks_like_error(text: str) -> bool:
    """`ERROR_LOOKING.search(text)`, told by what starts the text and three substring
    tests: a search tries every position, 1.4 ms on a 16 KB message (speed's edit), and
    the match at the start backtracks quadratically through a run of `a.`."""
    if len(text) < _LONG:
        inside = any(word in text and s in text for word, s in _ERROR_INSIDE)
    else:  # searched from the first colon (each wording starts with one): a 16 KB message
        # with none costs one character's search (0.2 us), not the pattern's (10 us)
        at = text.find(":")
        inside = at >= 0 and _ERROR_INSIDE_RE.search(text, at) is not None
    return inside or _starts_like_error(text)

_ERROR_WORDS = (
    "rror", "xception", "Exit", "Interrupt", "Unsupported", "ERROR", "CRITICAL", "Abort",
    "Killed", "Segmentation", "terminate", "undefined", "shared",
)  # fmt: skip
"""A part of every wording ERROR_LOOKING reads, and of the levels a record's `is_error`
reads: kept beside them, so a new wording gets its word here too."""


def may_look_like_error(raw: str) -> bool:
    """False only for a raw line whose message can neither look like an error nor be an
    error record: a short line (under `_LONG`) holding none of `_ERROR_WORDS`. With colour
    codes the words may be cut, and on a long line thirteen searches cost more than
    parsing it, so both are answered True. A pasted log that lost its newlines splits into
    75,000 records, and parsing each costs more than these tests."""
    if len(raw) >= _LONG or "\x1b" in raw:
        return True
    for word in _ERROR_WORDS:  # noqa: SIM110 (a loop: any() over a generator costs 2x here)
        if word in raw:
            return True
    return False


DETERMINISTIC = Lazy(
    r"^(?:[\w.]+\.)?(?:ImportError|ModuleNotFoundError|NotImplementedError|SyntaxError"
    r"|IndentationError|TabError|Unsupported)\b"
    r"|: undefined symbol: |: cannot open shared object file"
)
"""Last error lines that a relaunch on the same files and flags reproduces exactly:
an import that fails, code that says it is not implemented, a syntax error, a
library the loader cannot find or link, a construct torch.compile does not support."""


_DETERMINISTIC_INSIDE = re.compile(r": (?:undefined symbol: |cannot open shared object file)")


def is_deterministic(line: str | None) -> bool:
    """Whether an unknown failure ending on `line` would recur on a plain restart:
    `DETERMINISTIC.search(line)`, its class name told as `looks_like_error` tells its own
    (linear on a 16 KB run of `a.`)."""
    return line is not None and (
        _DETERMINISTIC_INSIDE.search(line) is not None
        or _named_at_start(_DETERMINISTIC_NAME, line)
    )


class EngineDied(_Outcome):
    """A worker or engine process vanished without printing a cause.

    A negative exit code is the signal that killed it (-9: the kernel's OOM
    killer, most often). A restart may succeed if the pressure was transient.
    """

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 20
    PLAN: ClassVar[Plan] = "restart_once"
    kind: Literal["engine_died"] = "engine_died"
    process: str | None = None
    exit_code: int | None = None


class Booted(_Outcome):
    """The API server came up."""

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 5
    FAILURE = False
    CONTEXT = (("port", "port"),)
    kind: Literal["booted"] = "booted"
    port: int | None = None

    @property
    def is_failure(self) -> bool:
        return False


class Unknown(_Outcome):
    """Nothing we know matched; the last error-looking line is the best lead.

    It is still an answer with retry semantics: a restart may help a transient
    failure, but not one whose last error is deterministic (`is_deterministic`).
    """

    CATEGORY = Category.UNKNOWN
    RETRYABLE = True
    RANK = 0
    PLAN: ClassVar[Plan] = "restart_once"
    kind: Literal["unknown"] = "unknown"
    last_error_line: str | None = None
    last_error_line_number: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def retry_same_config_can_succeed(self) -> bool:
        return self.last_error_line is None or not is_deterministic(self.last_error_line)

    @property
    def is_failure(self) -> bool:
        return self.last_error_line is not None
