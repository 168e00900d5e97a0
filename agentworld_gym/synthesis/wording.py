"""Instruction wording shared by every synthesis kind.

Only tool metadata is used (a tool's `phrase`, else its description) plus humanized field names,
so the text never names a tool, table or column identifier: `credit_limit` becomes "credit limit"
and `account_id` becomes "account".
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..theme import Theme, humanize, noun_of
from ..tools import Tool

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def plural(noun: str) -> str:
    if noun.endswith(("ss", "us", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("s"):  # series, news, analytics
        return noun
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def is_plural(phrase: str) -> bool:
    """Whether a humanized field name reads as a plural ('stars', 'attendees'; not 'status', 'address',
    nor a quantity in a unit: 'duration in minutes')."""
    words = phrase.split()
    last = words[-1] if words else ""
    if len(words) > 2 and words[-2] == "in" and last in _UNITS.values():
        return False
    return len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ics", "news"))


# A column's last word that is a unit: "duration_min" reads "duration in minutes".
_UNITS = {"min": "minutes", "mins": "minutes", "minutes": "minutes", "sec": "seconds", "secs": "seconds",
          "seconds": "seconds", "ms": "milliseconds", "hr": "hours", "hrs": "hours", "hours": "hours", "days": "days",
          "kb": "KB", "mb": "MB", "gb": "GB", "bytes": "bytes", "usd": "USD", "eur": "EUR", "pct": "percent",
          "percent": "percent", "km": "kilometres", "kg": "kilograms", "cm": "centimetres", "mm": "millimetres", "px": "pixels"}
# what a unit measures, the word before it: "duration_min" -> "duration in minutes"; elsewhere the unit is
# the thing counted and reads as it is ("gpu hours", "total minutes", "credit hours")
_MEASURES = {"duration", "size", "length", "runtime", "latency", "estimate", "elapsed", "timeout", "age", "weight",
             "height", "width", "depth", "distance", "price", "cost", "amount", "fee", "budget", "interval", "delay",
             "ttl", "uptime", "downtime", "storage", "memory", "capacity", "time", "wait", "retention", "balance",
             "limit", "quota", "salary", "spend", "revenue", "value", "usage", "battery", "speed", "lead", "window"}
# "<verb> at/on" columns whose verb happens rather than is done to the record: "when the session started"
_HAPPENS = {"started", "ended", "finished", "began", "arrived", "departed", "happened", "occurred", "landed",
            "expired", "joined", "left", "stopped", "failed", "succeeded", "completed", "lapsed"}
# the noun of a verb of _HAPPENS (and its present form) before "time"/"date": "started_at" -> "start time"
_MOMENT_NOUNS = {"started": "start", "starts": "start", "began": "start", "begins": "start", "ended": "end", "ends": "end",
                 "finished": "finish", "finishes": "finish", "arrived": "arrival", "arrives": "arrival", "departed": "departure",
                 "departs": "departure", "expired": "expiry", "expires": "expiry", "opens": "opening", "closes": "closing"}
_PARTICIPLES = {"sent", "paid", "held", "made", "done", "seen", "taken", "written", "built", "run", "born", "begun",
                "sold", "bought", "read", "set", "shown", "given", "won", "lost", "met", "kept", "found"}


def _moment(name: str) -> tuple[str, str] | None:
    """('last scanned', 'at') for a column saying when something happened ('last_scanned_at',
    'posted_on', 'expiresAt'); None for any other column."""
    words = humanize(name).split()
    if len(words) < 2 or words[-1] not in ("at", "on"):
        return None
    return " ".join(words[:-1]), words[-1]


@lru_cache(maxsize=65536)
def field_name(name: str) -> str:
    """A column as a user names it: 'credit_limit' -> 'credit limit', 'duration_min' -> 'duration in
    minutes', 'size_mb' -> 'size in MB', 'posted_on' -> 'posted date', 'started_at' -> 'start time'."""
    words = humanize(name).split()
    if len(words) >= 2 and words[-1] in _UNITS and words[-2] in _MEASURES:
        return " ".join(words[:-1]) + " in " + _UNITS[words[-1]]
    moment = _moment(name)
    if moment:
        *before, verb = moment[0].split()
        return " ".join([*before, _MOMENT_NOUNS.get(verb, verb), "time" if moment[1] == "at" else "date"])
    return " ".join(words)


def when(name: str, subject: str) -> str | None:
    """The question for a column saying when something happened, asked of `subject`: 'Tell me when
    session SE-1003 started.', '... when bank transaction BN-1008 was posted.', '... when certificate
    CE-1 expires.'; None for other columns (and for 'at'/'on' columns whose verb is not plain)."""
    moment = _moment(name)
    if moment is None:
        return None
    *before, verb = moment[0].split()
    adverbs = " ".join(before)  # "last" of "last scanned at"
    if before and not all(w in ("last", "first", "most", "recently", "originally") for w in before):
        return None  # "check in at", "event start at": not a verb phrase
    if verb in _HAPPENS:
        text = f"{adverbs} {verb}"
    elif verb in _PARTICIPLES or (verb.endswith("ed") and len(verb) > 3):
        text = f"was {adverbs} {verb}"
    elif verb == "due":
        text = "is due"
    elif verb.endswith("s") and not verb.endswith(("ss", "us", "is")) and len(verb) > 3:
        text = f"{adverbs} {verb}"  # "expires", "starts"
    else:
        return None
    return sentence(f"Tell me when {subject} {text}")


def field_question(field: str, subject: str, value: Any, of: str = "of") -> str:
    """'What is the balance of account AC-1?'; a plural field agrees with its verb, and a plural count
    field is asked as a count ('How many stars does the project ... have?')."""
    if not is_plural(field):
        return f"What is the {field} {of} {subject}?"
    if isinstance(value, int) and not isinstance(value, bool) and of == "of":
        return f"How many {field} does {subject} have?"
    return f"What are the {field} {of} {subject}?"


def entity_noun(theme: Theme, param: str) -> str:
    """The noun for an entity-key parameter: 'from_account_id' -> 'account'."""
    return noun_of(theme.key_of(param) or param)


def show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "?", "!")) else ".")


def clause(theme: Theme, t: Tool, parts: dict[str, str]) -> str:
    """The tool's action as a clause, with `parts` (already-worded arguments) filled in.

    Uses the tool's `phrase`; a tool without one is worded from its description, so generated
    tools never leak their name.
    """
    if t.phrase:
        text = _PLACEHOLDER.sub(lambda m: parts.get(m.group(1), ""), _natural(t.phrase, parts))
    else:
        what = t.description.split(". ")[0].rstrip(".") or "carry out the request"
        what = what[:1].lower() + what[1:]
        extra = [v for v in parts.values() if v]
        text = what + (f" (for {', '.join(extra)})" if extra else "")
    text = re.sub(r"\s+([,.;:])", r"\1", " ".join(text.split()))
    return re.sub(r"\b(\w+) \1\b", r"\1", text)  # "the the", "of of" from empty optional slots


def _natural(phrase: str, params) -> str:
    """A tool phrase with the parameters it names as stored ('with duration ms {duration_ms}') named as
    a user would ('with duration in milliseconds {duration_ms}'); placeholders are left alone."""
    for p in params:
        raw, name = humanize(p), field_name(p)
        if raw != name:
            phrase = re.sub(rf"(?<![{{\w]){re.escape(raw)}(?![\w}}])", name, phrase)
    return phrase


def argument_text(theme: Theme, t: Tool, param: str, value: Any) -> str:
    """A directly given argument: entity keys read as '<noun> <value>', other values as themselves."""
    key = theme.key_of(param) if param in t.consumes else None
    return f"{noun_of(key)} {show(value)}" if key else show(value)


def labelled_text(theme: Theme, t: Tool, param: str, value: Any) -> str:
    """A directly given fact with what it is: 'account AC-1033', 'category dining'."""
    key = theme.key_of(param) if param in t.consumes else None
    return f"{noun_of(key)} {show(value)}" if key else f"{field_name(param)} {show(value)}"


def described(noun: str, of: str | None, extra: list[str]) -> str:
    """A noun phrase that pins an entity down by what the user knows about it:
    'the account of card CD-1001', 'the customer with email a@b.org', 'the transactions of account AC-1 with category dining'."""
    text = f"the {noun}" + (f" of {of}" if of else "")
    return text + (f" with {' and '.join(extra)}" if extra else "")


def goal(requests: list[str], question: str) -> str:
    """One request as a user states it: what they want done, then what they want to know."""
    parts = []
    if requests:
        parts.append(sentence("Please " + _listed(_distinct(requests))))
    parts.append(question)
    return " ".join(parts)


def _distinct(requests: list[str]) -> list[str]:
    """A request that opens like an earlier one says it is another ('record a new app' twice reads
    'record a new app, record another app with term order'), so two requests never read as one."""
    out: list[str] = []
    for r in requests:
        if any(r.startswith(o) or r.split()[:5] == o.split()[:5] for o in out):
            r = re.sub(r"\ba new\b", "another", r, count=1) if re.search(r"\ba new\b", r) else "also " + r
        out.append(r)
    return out


def _listed(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
