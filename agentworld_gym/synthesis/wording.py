"""Instruction wording shared by every synthesis kind.

Only tool metadata is used (a tool's `phrase`, else its description) plus humanized field names,
so the text never names a tool, table or column identifier: `credit_limit` becomes "credit limit"
and `account_id` becomes "account".
"""

from __future__ import annotations

import re
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
    """Whether a humanized field name reads as a plural ('stars', 'attendees'; not 'status', 'address')."""
    last = phrase.split()[-1] if phrase.split() else ""
    return len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ics", "news"))


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
        text = _PLACEHOLDER.sub(lambda m: parts.get(m.group(1), ""), t.phrase)
    else:
        what = t.description.split(". ")[0].rstrip(".") or "carry out the request"
        what = what[:1].lower() + what[1:]
        extra = [v for v in parts.values() if v]
        text = what + (f" (for {', '.join(extra)})" if extra else "")
    text = re.sub(r"\s+([,.;:])", r"\1", " ".join(text.split()))
    return re.sub(r"\b(\w+) \1\b", r"\1", text)  # "the the", "of of" from empty optional slots


def argument_text(theme: Theme, t: Tool, param: str, value: Any) -> str:
    """A directly given argument: entity keys read as '<noun> <value>', other values as themselves."""
    key = theme.key_of(param) if param in t.consumes else None
    return f"{noun_of(key)} {show(value)}" if key else show(value)


def labelled_text(theme: Theme, t: Tool, param: str, value: Any) -> str:
    """A directly given fact with what it is: 'account AC-1033', 'category dining'."""
    key = theme.key_of(param) if param in t.consumes else None
    return f"{noun_of(key)} {show(value)}" if key else f"{humanize(param)} {show(value)}"


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
