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
_ERROR_AT_START_NO_DOT = Lazy(_ERROR_AT_START.pattern.replace(r"(?:[\w.]+\.)?", "", 1))
r"""`_ERROR_AT_START` for a text without a dot, where its `(?:[\w.]+\.)?` cannot match
but would run the whole of a 16 KB run of digits before it gives up."""
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
    """`ERROR_LOOKING.search(text)`, told by one match at the start and three substring
    tests: a search tries every position, 1.4 ms on a 16 KB message (speed's edit)."""
    if len(text) < _LONG:
        inside = any(word in text and s in text for word, s in _ERROR_INSIDE)
    else:
        inside = _ERROR_INSIDE_RE.search(text) is not None
    return (
        inside
        or (_ERROR_AT_START if "." in text else _ERROR_AT_START_NO_DOT).match(text) is not None
    )

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


def is_deterministic(line: str | None) -> bool:
    """Whether an unknown failure ending on `line` would recur on a plain restart."""
    return line is not None and DETERMINISTIC.search(line) is not None


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
