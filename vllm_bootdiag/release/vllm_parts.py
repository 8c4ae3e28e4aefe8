"""The parts of argparse's and pydantic's lines that vLLM supplies, checked against vLLM.

`argument --dtype: invalid choice: 'float7' (choose from ...)`: the words are
argparse's, the flag and its choices vLLM's; `1 validation error for
ModelConfig`: the class is vLLM's, and so is the message after pydantic's
`Value error, `. Lines come from the rule's examples and from the newest corpus
logs (the previous release's and this one's): 0.32.0's `--kv-cache-dtype:
invalid choice` line is out of date in 0.33.0, which takes any value there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from packaging.version import Version

from .. import versions
from ..rules import Rule
from . import vllm_flags
from .package_findings import Part
from .source_scan import closest
from .sources import Release

_ARGUMENT = re.compile(r"error: argument (?P<argument>[^:]+?): (?P<message>.+)$")
_CHOICE = re.compile(r"invalid choice: (?P<value>'[^']*'|\S+) \(choose from (?P<choices>.*)\)")
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments: (?P<arguments>.+)$")
_CONFIG = re.compile(r"\d+ validation errors? for (?P<config>\w+)")
_VALUE_ERROR = re.compile(r"Value error, (?P<message>\S.*?)(?: \[type=value_error[^\]]*\])?\s*$")
_FIELD = re.compile(r"^\n([a-z_][a-z0-9_]*)$", re.MULTILINE)
"""The line under pydantic's header naming the field (a model validator's has none)."""
_LINE_PREFIX = re.compile(r"^.*?(?=vllm serve: error: |\d+ validation error|Value error, )")


def corpus_lines(corpus: Path | None, version: Version) -> list[tuple[str, str]]:
    """(where, line) of the newest corpus logs at or before `version` (the previous
    release's and this one's): the argparse and pydantic lines vLLM really printed. An
    older log whose scenario this release's corpus has (`<outcome>__<scenario>__<device>`)
    is superseded: the release's own capture shows what that launch prints now (0.33.0's
    `kv-cache-dtype-fp7` is CacheConfig's error, not 0.32.0's `invalid choice`)."""
    if corpus is None or not corpus.is_dir():
        return []
    found = sorted(
        (v, d) for d in corpus.iterdir() if d.is_dir() and (v := versions.parse_version(d.name))
    )
    older = [d for v, d in found if v < version][-1:]
    same = [d for v, d in found if v == version]
    out = []
    recaptured = {log.stem.split("__", 1)[-1] for d in same for log in d.glob("*.log")}
    for d in older + same:
        for log in sorted(d.glob("*.log")):
            if d not in same and log.stem.split("__", 1)[-1] in recaptured:
                continue
            text = log.read_text("utf-8", "replace")
            lines = text.splitlines()
            for n, line in enumerate(lines, 1):
                if "vllm serve: error: " in line:
                    out.append((f"corpus/{d.name}/{log.name}:{n}", line[-2000:]))
                elif " validation error" in line:  # with the field named under it
                    under = lines[n][:200] if n < len(lines) else ""
                    out.append((f"corpus/{d.name}/{log.name}:{n}", f"{line[-2000:]}\n{under}"))
    return out


def _flag_parts(line: str, where: str, flags: vllm_flags.Flags, v: str) -> list[Part]:
    """An argparse line's flag (and its choices) against the release's flags."""
    m = _ARGUMENT.search(line)
    if m:
        names = [n for n in m["argument"].split("/") if n.startswith("--")]
        flag = next((flags.flags[n] for n in names if n in flags.flags), None)
        text = f"{m['argument']}: {m['message'][:60]}"
        if flag is None:
            return [Part(text, "vllm", "flag", "out_of_date", source=where,
                         detail=f"no {m['argument']} flag in vLLM {v}")]  # fmt: skip
        choice = _CHOICE.search(m["message"])
        if choice is None:
            return [Part(text, "vllm", "flag", "found", (flag.location,), source=where)]
        if flag.kind != "choice":
            how = "takes any value" if flag.kind in ("free", "str") else f"is {flag.kind}"
            return [Part(text, "vllm", "choices", "out_of_date", (flag.location,), source=where,
                         detail=f"{flag.name} {how} in vLLM {v} ({flag.field or 'no choices'}): "
                         "argparse no longer prints `invalid choice` for it")]  # fmt: skip
        listed = {c.strip().strip("'\"") for c in choice["choices"].split(",")}
        have = set(flag.choices or ())
        value = choice["value"].strip("'")
        if value in have:
            return [Part(text, "vllm", "choices", "out_of_date", (flag.location,), source=where,
                         detail=f"{value!r} is a valid {flag.name} in vLLM {v}")]  # fmt: skip
        if listed != have:
            diff = " ".join([*(f"-{c}" for c in sorted(listed - have)),
                             *(f"+{c}" for c in sorted(have - listed))])  # fmt: skip
            return [Part(text, "vllm", "choices", "out_of_date", (flag.location,), source=where,
                         detail=f"{flag.name}'s choices in vLLM {v}: {diff}")]  # fmt: skip
        return [Part(text, "vllm", "choices", "found", (flag.location,), source=where)]
    m = _UNRECOGNIZED.search(line)
    if m:
        known = [a for a in m["arguments"].split() if a in flags.flags]
        if known:
            return [Part(m["arguments"], "vllm", "flag", "out_of_date", source=where,
                         detail=f"{', '.join(known)} is a flag of vLLM {v}")]  # fmt: skip
        return [Part(m["arguments"], "vllm", "flag", "found", source=where,
                     detail=f"not a flag of vLLM {v}, as the line says")]  # fmt: skip
    return []


def _message_parts(
    line: str, where: str, flags: vllm_flags.Flags, release: Release, example: bool, header: bool
) -> list[Part]:
    """A pydantic line's config class (and the field named under it), or, in a rule's
    example, its `Value error, ` message, against vLLM. (A corpus log's message may be
    another package's, json's `Unterminated string`: only examples must be vLLM's.)"""
    v = str(release.version)
    m = _CONFIG.search(line) if header else None
    if m:
        cls = m["config"]
        if cls not in flags.classes:
            return [Part(cls, "vllm", "config class", "out_of_date", source=where,
                         detail=f"no config class {cls} in vLLM {v}")]  # fmt: skip
        out = [Part(cls, "vllm", "config class", "found", (flags.classes[cls],), source=where)]
        name = _FIELD.search(line[m.end() :])
        if name and cls in flags.fields:
            known = name[1] in flags.fields[cls]
            out.append(Part(f"{cls}.{name[1]}", "vllm", "config field",
                            "found" if known else "out_of_date", (flags.classes[cls],),
                            detail=None if known else f"{cls} has no field {name[1]} in vLLM {v}",
                            source=where))  # fmt: skip
        return out
    m = _VALUE_ERROR.search(line)
    if not m or not example:
        return []
    message = m["message"]
    for t in release.search(re.escape(message[:40])) or []:
        return [Part(message, "vllm", "message", "found", (t.location,), source=where)]
    near = closest(wording_of(message), release)
    if near is not None and _renders(near.template.text, message):
        return [Part(message, "vllm", "message", "found", (near.template.location,), source=where)]
    return [Part(message, "vllm", "message", "out_of_date", closest=near, source=where,
                 detail=f"no template of vLLM {v} renders this message")]  # fmt: skip


def wording_of(message: str) -> str:
    """A message as a template (numbers as {}), as source_scan words a rule's example."""
    return re.sub(r"\d+(?:\.\d+)?", "{}", message)


def _renders(template: str, text: str) -> bool:
    """Whether a template's fields can be filled to give `text`, its own words being most of
    it (`{} must be positive` renders any sentence ending so, which says nothing)."""
    parts = re.split(r"\{[^{}]*\}", template)
    if len(parts) > 12 or sum(map(len, parts)) < 0.6 * len(text):
        return False
    pattern = ".*?".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, text, re.DOTALL) is not None


def parts(
    rule: Rule, lines: Sequence[tuple[str, str]], release: Release | None,
    flags: vllm_flags.Flags | None,
) -> list[Part]:  # fmt: skip
    """The vLLM parts of a rule's argparse or pydantic lines (examples, newest corpus logs)."""
    if rule.printed_by not in ("argparse", "pydantic") or release is None or flags is None:
        return []
    known = flags.flags if rule.printed_by == "argparse" else flags.classes
    if not known:
        what = "flags" if rule.printed_by == "argparse" else "config class"
        where = "vllm/engine/arg_utils.py" if what == "flags" else "vllm/config/"
        return [Part(rule.literal, "vllm", what, "not_checkable",
                     detail=f"no {what} in {where} of this release to check against")]  # fmt: skip
    examples = [(f"{rule.id} example {n}", e) for n, e in enumerate(rule.examples, 1)]
    out: list[Part] = []
    seen: set[str] = set()
    for where, line in [*examples, *lines]:
        if rule.literal not in line or rule.match(line) is None:
            continue
        line = _LINE_PREFIX.sub("", line)
        key = re.sub(r"'[^']*'", "''", line)[:200]
        if key in seen:
            continue
        seen.add(key)
        if rule.printed_by == "argparse":
            out += _flag_parts(line, where, flags, str(release.version))
        else:
            example, header = where.startswith(rule.id), "validation error" in rule.literal
            out += _message_parts(line, where, flags, release, example, header)
    once: dict[tuple[str, str, str], Part] = {}
    for p in out:  # one class named by ten logs is one part (the first log's)
        once.setdefault((p.what, p.text, p.status), p)
    return list(once.values())
