"""Where an exception's dotted name ends a line's start: `torch.OutOfMemoryError: `.

The patterns that say it, `(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|...)` then `: `, backtrack
into their group in the `regex` module whenever the last part fails: 10 ms for one match
on a 16 KB run of `A.`, and a search tries that at each start (a 16 KB frame line of them:
a minute). Here the same answers come from what the pattern must read, in a few scans:

- the name holds only `\\w` and `.`, and what follows it (`:`, white space or the end)
  neither, so it runs to the end of its run of `[\\w.]` characters: to the text's first
  `:` where one follows it, or to where only white space is left;
- its last part, after its last dot, is `[A-Z]\\w*` and one of the words; each part
  before is `[A-Za-z_]\\w*`, so a search's leftmost start is the first `[A-Za-z_]` after
  the last part that is not one (empty, or led by a digit or a letter outside ASCII), or,
  in the last part, its first `[A-Z]` that leaves room for the word.

`\\w` and `\\s` are the `regex` module's (they differ from `re`'s on a few characters
outside ASCII); the letter classes are ASCII in both, and where a text is ASCII `re`,
faster, reads `\\w` as the `regex` module does.
"""

from __future__ import annotations

import re

import regex

WORDS = ("Error", "Exception", "Exit", "Interrupt")
"""How an exception's class name ends (`collapsed.EXCEPTION`)."""
WORDS_OR_WARNING = ("Error", "Exception", "Warning", "Exit", "Interrupt")
"""The same and a warning's (a row that starts a line of its own: `rejoin._START`)."""

_CANDIDATE = regex.compile(r"(?<=[A-Z]\w*?)(?:" + "|".join(WORDS) + "): ")
"""A word and `: ` with a last part before it (`[A-Z]\\w*`): a run of name characters holds
at most one (a `: ` ends it), so each is read once, the word's run with it."""
_RUN_BACK = regex.compile(r"(?r)[\w.]*")
"""The run of name characters that ends where a candidate is (read backwards)."""
_RUN = regex.compile(r"[\w.]*")
_ASCII_RUN = re.compile(r"[\w.]*")
_BAD_DOT = regex.compile(r"(?r)\.[^A-Za-z_]")
"""The last dot whose part after it cannot be a part of the name's head: empty (another
dot, the head's last included) or led by a digit or a letter outside ASCII."""
_HEAD_START = re.compile(r"[A-Za-z_]")
_LAST_START = re.compile(r"[A-Z]")
_SPACES_TO_END = regex.compile(r"\s*$")


def _start_before(text: str, lo: int, end: int, words: tuple[str, ...]) -> int:
    """The leftmost start at `lo` or after of a name that ends at `end`, where every
    character from `lo` to `end` is a name character; -1 where none can start."""
    word = next((w for w in words if text.endswith(w, lo, end)), None)
    if word is None:
        return -1
    dot = text.rfind(".", lo, end)
    if dot >= 0 and end - dot - 1 > len(word) and "A" <= text[dot + 1] <= "Z":
        # the last part is one: the head starts at or after the last part that is not one
        bad = _BAD_DOT.search(text, lo, dot + 1)
        head = _HEAD_START.search(text, bad.start() + 1 if bad is not None else lo, dot)
        if head is not None:
            return head.start()
    last = _LAST_START.search(text, dot + 1 if dot >= 0 else lo, end - len(word))
    return last.start() if last is not None else -1


def _is_name(text: str, end: int, words: tuple[str, ...]) -> bool:
    """Whether `text[:end]` is such a name, whole."""
    head = text[:end]
    run = _ASCII_RUN if head.isascii() else _RUN
    return run.match(head).end() == end and _start_before(text, 0, end, words) == 0  # type: ignore[union-attr]


def search(text: str, pos: int = 0) -> tuple[int, int] | None:
    """(start, end) of `(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception|Exit|Interrupt): `
    searched in `text` from `pos`, as the `regex` module finds it."""
    for m in _CANDIDATE.finditer(text, pos):
        end = m.end() - 2
        lo = _RUN_BACK.match(text, pos, end).start()  # type: ignore[union-attr]
        start = _start_before(text, lo, end, WORDS)
        if start >= 0:  # (else its last part starts before `pos`)
            return start, end + 2
    return None


def match(text: str) -> bool:
    """Whether `(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception|Exit|Interrupt): ` matches
    at the text's start."""
    colon = text.find(":")
    return (
        colon > 0
        and text.startswith(": ", colon)
        and text.endswith(WORDS, 0, colon)
        and _is_name(text, colon, WORDS)
    )


def starts_line(text: str) -> bool:
    """Whether `(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|...|Warning)(?::|\\s*$)` matches at the
    text's start: an exception's or a warning's name, then a colon or nothing but space."""
    colon = text.find(":")
    if (
        colon > 0
        and text.endswith(WORDS_OR_WARNING, 0, colon)
        and _is_name(text, colon, WORDS_OR_WARNING)
    ):
        return True
    # Where only white space follows: `rstrip` takes a few more characters than `\s` (the
    # `regex` module's) does, none of which can end a name, so the name ends there or not
    # at all.
    end = len(text.rstrip())
    return (
        end > 0
        and text.endswith(WORDS_OR_WARNING, 0, end)
        and _SPACES_TO_END.match(text, end) is not None
        and _is_name(text, end, WORDS_OR_WARNING)
    )
