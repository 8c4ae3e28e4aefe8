"""The wrappers tools put around every line of a log, and how to take them off.

CI pages, timestamps, markdown, compose, journald, docker's json-file driver,
stern and kubectl, launchers and vLLM-based frameworks each add a prefix (or a
whole record) of their own. The patterns are anchored at the start of a line, so
each costs one match per line, and none matches a line vLLM printed itself. Names in
them are bounded by what their tools allow (a Kubernetes pod name is at most 253
characters, a container's 63): an unbounded run would be retried at each of its lengths
on a 16 KB line of name characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

import regex

if TYPE_CHECKING:
    import json


class Lazy:
    """A `regex` pattern compiled on its first use, not at import: most tails are clean,
    and for them normalize runs none of the per-line repairs these patterns serve (the
    `regex` module compiles about four times slower than `re`). `pattern` is the source;
    after the first use each method is the compiled pattern's own (no extra call)."""

    match: Callable[..., regex.Match[str] | None]
    search: Callable[..., regex.Match[str] | None]
    fullmatch: Callable[..., regex.Match[str] | None]
    finditer: Callable[..., Iterator[regex.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:
        if name not in _METHODS:
            raise AttributeError(name)
        compiled = regex.compile(self.pattern)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub")

_A = r"(?:\x1b\[[0-9;]{0,32}m){0,8}"
"""Colour codes a tool puts around its own prefix (compose, stern): a few, bounded, so a
16 KB run of them is not scanned (and backtracked) by each prefix's pattern in turn."""

PREFIXES: tuple[tuple[str, Lazy], ...] = (
    # `docker logs -t`, Kubernetes/CRI `<ts> stdout F `, GitHub Actions raw logs.
    (
        "runtime_stamp",
        Lazy(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]+"
            r"(?:(?:stdout|stderr)[ \t]+[FP][ \t]+)?"
        ),
    ),
    # CI web-log pages: `  | ` (optionally a line number) before every line.
    ("ci_gutter", Lazy(r"[ \t]{0,8}(?:\d{1,7}[ \t]{1,4})?\|(?: |$)")),
    (
        "bracket_stamp",
        Lazy(r"\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\][ \t]?"),
    ),
    ("markdown_quote", Lazy(r"(?:>(?: |(?=>)|$)){1,16}")),
    # docker compose v2 `service-1  | `, v1 `project_service_1  | `.
    (
        "compose_prefix",
        Lazy(_A + r"[A-Za-z0-9][\w.-]{0,200}?[-_]\d+[ \t]+\|" + _A + r"(?: |$)" + _A),
    ),
    # journald short format: `Mon DD HH:MM:SS host unit[pid]: `, or its short-iso variant.
    (
        "journald_prefix",
        Lazy(
            r"(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d"
            r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
            r" [\w.-]{1,253} [\w@./-]{1,256}\[\d+\]: "
        ),
    ),
    # stern `pod container `, kubetail `[pod] `, `kubectl logs --prefix` `[pod/p/c] `.
    (
        "stern_prefix",
        Lazy(
            _A
            + r"(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?-(?:[a-z0-9]{5}|\d{1,3})"
            + _A
            + r" "
            + _A
            + r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
            + _A
            + r" "
            r"|\[(?:pod/)?[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?-(?:[a-z0-9]{5}|\d{1,3})"
            r"(?:/[a-z0-9-]{1,63})?\] )"
        ),
    ),
    # Launchers and supervisors: `2026-01-02 03:04:05.678 [Error] (Process) `,
    # Python's default `2026-01-02 03:04:05,678 - name - ERROR - `.
    (
        "launcher_prefix",
        Lazy(
            r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
            r"(?: \[[A-Za-z]{3,12}\](?: \((?![^)]*pid=)[^()\s]{1,40}\))? | - [\w.]+ - [A-Z]+ - )"
        ),
    ),
    # vLLM-based frameworks tag each stage's output.
    ("stage_tag", Lazy(r"\[(?i:stage)[-_ ]?\d+\] ")),
)
PREFIX_NAMES = frozenset(name for name, _ in PREFIXES)
ANY_PREFIX = Lazy("|".join(f"(?:{p.pattern})" for _, p in PREFIXES))

FENCE = Lazy(r"[ \t]*+(?:```|~~~)[\w+.-]*[ \t]*|[ \t]*+</?(?:details|summary)>.*")
_CARET_CODE = r"(?:\^\[|␛)\[[0-9;?]*[A-Za-z]"
_CARET_CSI = re.compile(f"{_CARET_CODE}(?:{_CARET_CODE})*")
_ONE_CARET = re.compile(_CARET_CODE)
ESC_CSI = Lazy(r"\x1b\[[0-9;?]*[A-Za-z](?:\x1b\[[0-9;?]*[A-Za-z])*")
_BARE_SGR = Lazy(r"(?:\[(?:\d{1,3}(?:;\d{1,3})*)?m)+")
"""Colour codes (a run at once: one replacement for a 16 KB run of them) in caret notation,
with their ESC byte, and with it lost."""
_RESETS = (Lazy(regex.escape("[0m")), Lazy(regex.escape("[0;0m")))
"""Colour resets that lost their ESC byte, each a literal: searched without a stop at
each `[0` of a 16 KB run of them (where one pattern for both stops 8,192 times), and in
a 16 KB line faster than `"[0m" in text` (12 us)."""


def _has_reset(text: str) -> bool:
    if len(text) < 1024:
        return "[0m" in text or "[0;0m" in text
    if "m" not in text:  # (memchr: a 16 KB line of stamps or of `[0` costs a search 20 us)
        return False
    return bool(_RESETS[0].search(text)) or (";" in text and bool(_RESETS[1].search(text)))


_FENCE_AT = r"(?=(?P<indent>[ \t]*))(?P=indent)(?:```|~~~|</?details>|</?summary>)"
"""A fence or a <details> tag after its indent, the indent taken whole (a lookahead is
atomic): a 16 KB run of spaces costs one pass, not a retry at each of its lengths."""
_PREFIX_AT_START = r"\n(?:" + ANY_PREFIX.pattern + r"|\{|" + _FENCE_AT + ")"
"""`PREFIX_AT_START`: a wrapper at the start of any line of "\n" + the lines joined. The two
patterns below split it (a search for it finds a match exactly when one of them does), so
each line start costs a one-character test: the wrappers that need a `|` are looked for only
when the text has one, and the others only at a line that starts with a character one of
them can. Nothing but the tests searches with the whole of it: it is compiled (1 ms) only
when asked for, by `__getattr__` below."""


def __getattr__(name: str) -> Any:
    if name == "PREFIX_AT_START":
        compiled = globals()["PREFIX_AT_START"] = re.compile(_PREFIX_AT_START)
        return compiled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_PIPED = ("ci_gutter", "compose_prefix")
PIPE_PREFIX_AT_START = re.compile(
    r"\n(?:" + "|".join(f"(?:{p.pattern})" for n, p in PREFIXES if n in _PIPED) + ")"
)
OTHER_PREFIX_AT_START = re.compile(
    r"\n(?=[0-9a-z\[>{ \t`~<\x1bJFMASOND])(?:"
    + "|".join(f"(?:{p.pattern})" for n, p in PREFIXES if n not in _PIPED)
    + r"|\{|"
    + _FENCE_AT
    + ")"
)


_NAMED_PREFIX = Lazy("|".join(f"(?P<{name}>{p.pattern})" for name, p in PREFIXES))
"""`ANY_PREFIX` with each wrapper's name on its branch: one match says which (the first
in order that matches, as the loop below would find it; none of them can match empty)."""


def strip_prefixes(text: str) -> tuple[str, list[str]]:
    """Peel wrappers off the front, outermost first, as long as one matches. Each is
    matched where the last ended (no pattern looks behind its start), and the text is cut
    once: 16 KB of quote markers were copied and matched by four patterns eight times."""
    names: list[str] = []
    pos = 0
    for _ in range(8):
        m = _NAMED_PREFIX.match(text, pos)
        if m is None or m.end() == pos or m.lastgroup is None:
            break
        names.append(m.lastgroup)
        pos = m.end()
    return (text[pos:] if pos else text), names


def prefix_end(text: str, count: int) -> int:
    """Where the first `count` wrappers `strip_prefixes` peels off `text` end (0: none)."""
    pos = 0
    for _ in range(count):
        m = _NAMED_PREFIX.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
    return pos


def json_log(text: str) -> list[str] | None:
    """docker's json-file driver: `{"log":"...\\n","stream":"stderr","time":"..."}`."""
    if not text.startswith("{") or ('"log"' not in text and '"MESSAGE"' not in text):
        return None
    decoder = _decoder()
    rows: list[str] = []
    pos, end = 0, len(text.rstrip())
    while pos < end:  # records run together when a paste lost the newlines between them
        try:
            record, pos = decoder.raw_decode(text, pos)
        except ValueError:
            if not rows:
                return None
            rows.append(text[pos:])  # what follows the last whole record, as it is
            break
        inner = record.get("log", record.get("MESSAGE")) if isinstance(record, dict) else None
        if not isinstance(inner, str):
            return None
        rows.extend(inner.removesuffix("\n").replace("\r\n", "\n").split("\n"))
        spaces = _SPACES.match(text, pos)  # (always matches: ` *`)
        pos = spaces.end() if spaces else pos
    return rows


@cache
def _decoder() -> json.JSONDecoder:
    """json's decoder, imported past json_log's test: a tail with no such line never
    loads json (1.3 ms at import)."""
    import json

    return json.JSONDecoder()


_SPACES = re.compile(" *")


_AS_CODE = (
    bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", b"A" * 52),
    b"0123456789;?",
)
"""Bytes read as a code reads them: each letter as `A`, its parameters left out."""


def _may_hold_code(text: str) -> bool:
    """Whether a text may hold a caret code: `^[[` or `␛[` (whose UTF-8 ends in byte 0x9b),
    parameters, a letter, so with the parameters left out and each letter read as `A` its
    bytes hold `[[A` or `\x9b[A`, between the first and the last `A`. A translation and
    byte searches in C (7-40 us on 16 KB), where the pattern stops at each `^[[` of a run
    of them (275 us)."""
    data = text.encode("utf-8", "surrogatepass").translate(*_AS_CODE)
    end = data.rfind(b"A") + 1
    if not end:
        return False
    start = max(data.find(b"A") - 2, 0)
    return data.find(b"[[A", start, end) >= 0 or data.find(b"\x9b[A", start, end) >= 0


def ansi_text(text: str) -> str | None:
    """Colour codes pasted in caret notation (`^[[0;36m`), or with the ESC byte lost."""
    if ("^" in text and "^[[" in text) or ("␛" in text and "␛[" in text):
        if len(text) >= 1024:
            if not _may_hold_code(text):
                return text
            # The code the text opens with, cut by str.replace, is the whole answer when
            # what is left holds no code (as in `logline.strip_codes`: it holds no `^` or
            # `␛` but its first, so any other would be left whole). 16 KB of one code:
            # 4 us, not 80.
            first = _ONE_CARET.search(text, 0, 256)
            if first is not None:
                cut = text.replace(first[0], "")
                if ("^[" not in cut and "␛" not in cut) or _ONE_CARET.search(cut) is None:
                    return cut
        return _CARET_CSI.sub("", text)
    if "\x1b" not in text and "[" in text and _has_reset(text):
        return _BARE_SGR.sub("", text)
    return None  # (one-character tests first: they run at memchr speed, a longer one 100x slower)
