"""Which rows are error lines, whose message a reflowed paste split over the rows below.

An exception's line or an ERROR record (but pydantic's `N validation errors for Model`
head, whose details follow on lines of their own), told by reading only where the answer
can differ: the rejoin asks it of a line it grows row by row.
"""

from __future__ import annotations

import re

from .damage_check import HEAD as _HEAD
from .exception_names import match as _exception_at_start
from .wrappers import Lazy

_PYDANTIC_HEAD = Lazy(r"\d+ validation errors? for [\w.]+$")


def _is_error(text: str, lead: int = -1) -> bool:
    """An exception line or an ERROR record: the lines whose message a reflow splits.

    Read where it can differ, not whole: the head, the message to its first `:` (where an
    exception's name ends) and the run of name characters that ends it (pydantic's head
    ends the message: `for Model`). A line the rejoin grows row by row is
    asked again after each row: a copy of its message and a search of it each time cost
    400 rows of 16 KB that go on one error 1.1 s. tests/test_rejoin_long_errors.py holds it
    to the plain statement (the message copied, the head searched for). `lead`: where the
    head's indentation and colour codes end (`_LEAD`), when the caller knows it."""
    head = _HEAD.match(text) if lead < 0 else _HEAD_REST.match(text, lead)
    at = head.end() if head is not None else 0
    level = head["level"] if head is not None else None
    if level not in ("ERROR", "CRITICAL") and not (
        text[at : at + 1] in _NAME_STARTS and _exception_at(text, at)
    ):
        return False  # (anchored tests first)
    return not _pydantic_head_ends(text, at)


_LEAD = re.compile(r"[ \t]*(?:\x1b\[[0-9;]*m)*")
_HEAD_REST = re.compile(_HEAD.pattern.removeprefix(_LEAD.pattern))
"""`_HEAD` is `_LEAD` and `_HEAD_REST`: every part after `_LEAD` may be empty, so the match
never gives back what `_LEAD` took, and `_HEAD_REST` matched where it ends is the same head
(a line that a run of colour codes leads, grown row by row, reads the run once)."""
_NAME_RUN_BACK = Lazy(r"(?r)[\w.]*")
_DIGIT = Lazy(r"\d")
"""The `regex` module's name characters and digits, as `_PYDANTIC_HEAD` and
`exception_names` read them."""


def _exception_at(text: str, at: int) -> bool:
    """`_exception_at_start(text[at:])`: it reads the message to its first `:` and the
    character after (`: `), so only that much is copied, not the message."""
    colon = text.find(":", at)
    return colon > at and _exception_at_start(text[at : colon + 2])


def _pydantic_head_ends(text: str, at: int) -> bool:
    """`_PYDANTIC_HEAD.search(text[at:])` (`\\d+ validation errors? for [\\w.]+$`): its
    name runs to the end (or to a last newline), so it is the run of name characters that
    ends the text, with ` for `, the words, a space and a digit right before it."""
    end = len(text) - text.endswith("\n")
    name = _NAME_RUN_BACK.match(text, at, end).start()  # type: ignore[union-attr]
    if name == end or name - 5 < at or not text.startswith(" for ", name - 5):
        return False
    for words in ("validation errors", "validation error"):
        if text.endswith(words, at, name - 5):
            space = name - 5 - len(words) - 1
            return (
                space - 1 >= at and text[space] == " " and _DIGIT.match(text, space - 1) is not None
            )
    return False


_NAME_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
"""How an exception's line (`exception_names.match`) starts: a row that starts otherwise is
not one (and costs no search for its first `:`)."""


_ERROR_WORDS = ("Error", "Exception", "ERROR", "CRITICAL", "Exit", "Interrupt")


def _has_error_word(text: str) -> bool:
    """Whether `text` holds one of `_ERROR_WORDS`: their first letters are looked for
    first, at memchr speed, and only the words whose first letter is there are searched
    for (a 16 KB row without them costs no six searches; one whose only `I` is an `INFO`
    costs one)."""
    if "E" in text and (
        "Error" in text or "Exception" in text or "ERROR" in text or "Exit" in text
    ):
        return True
    return ("C" in text and "CRITICAL" in text) or ("I" in text and "Interrupt" in text)
    # (written out: a generator over `_ERROR_WORDS` costs more than the searches)


def _may_be_error(text: str) -> bool:
    """False only where `_is_error(text)` is: a row without an error word. A long row whose
    head cannot run on (no indent, code or tag leads it) goes to `_is_error` as it is: its
    head and its first `:` cost less there than six searches for the words, which crawl
    through 16 KB of `Err.` (76-180 us a row; release's edit)."""
    if len(text) < 1024 or text[:1] in _LONG_HEAD_LEADS:
        return _has_error_word(text)
    return True


_LONG_HEAD_LEADS = frozenset(" \t\x1b(")
"""How a head that `_HEAD` reads far into a row starts (indent, colour codes, a tag)."""
