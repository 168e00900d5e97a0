"""The grader: reads an answer the way models write it and compares it with the gold by the answer's type.

One place compares answers (`answers_match`, used by `tasks.verify`, synthesis and every suite).
The rules, in order:

1. The answer's type comes from the task (`Task.answer_type`). A task that says only "text" (older
   task files) is read by its gold value: an ISO date is a `date`, a key like `AC-1001` an `id`
   (`answer_type_of`). A task file with no type gets one from its gold value the same way.
2. A structured answer (a number, a bool, a list) is compared directly.
3. A written answer is searched for the *candidate values of the answer's type*: numbers (with
   thousands separators, currency symbols or codes, units, "million"), dates in their usual written
   forms, ids (any case, with or without the dash), yes/no. Markdown, quotes, code marks and tags are
   read through. Values the instruction itself states are not candidates (restating "account
   AC-1001" is not an answer) unless they are the gold, nor is a value written as the instruction
   writes it ("... by 1": an echo of the request).
4. The answer is right when there is exactly one distinct candidate, it equals the gold, the value's
   sentence holds no hedge ("or", "maybe", "about", a negation, ...) and no sentence holds doubt
   ("probably", "?"), and after the value, in its clause, come only units and words of the question
   ("7140 mayb" fails). A number with "%" answers only a `percent` task.
5. Lists: every gold item and no other candidate, in any order, joined by commas, "and", bullets.
6. Text: the gold, as a whole, in the answer: alone, quoted or emphasised, or after "is"/":" at the
   end of its sentence, with nothing but punctuation after it in that sentence.

`reply_claim` classifies a final reply as claiming success or failure (a small, fixed list of
phrases); `tasks.verify` fails a reply whose claim contradicts the episode's expected outcome.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from functools import lru_cache
from typing import Any

# The types a task may declare. facts: imported free-text answers (every fact must be stated).
ANSWER_TYPES = ("number", "percent", "date", "id", "text", "set", "bool", "facts", "none")

# An answer this long (characters, or items of a list) matches no task's answer; refusing it up front keeps
# verification of a pathological 100,000-character answer cheap.
MAX_ANSWER_SIZE = 10_000
_SHORT = 200  # replies up to this long are remembered (`_number_reading`, `_text`): short answers repeat, long ones rarely

_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_ID = re.compile(r"[A-Za-z]{1,8}[-_]?\d{2,}")


def answer_type_of(value: Any, declared: str | None = None) -> str:
    """The type a gold `value` is graded as: `declared` when it is specific, else read off the value
    (a "text" gold that is an ISO date grades as a date, one shaped like a key as an id)."""
    if declared not in (None, "text", "number"):
        return declared
    if declared == "number":
        return "number"
    if value is None:
        return "none" if declared is None else "text"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number" if declared is None else "text"
    if isinstance(value, (list, tuple)):
        return "set" if declared is None else "text"
    if isinstance(value, str):
        return _text_type(value) if len(value) <= _SHORT else _text_type.__wrapped__(value)
    return "text"


@lru_cache(maxsize=16384)
def _text_type(value: str) -> str:  # `answer_type_of` a string (remembered for short ones: list items are typed per reply)
    if _ISO_DATE.fullmatch(value.strip()):
        return "date"
    if _ID.fullmatch(value.strip()):
        return "id"
    return "text"


# --------------------------------------------------------------------------------------------
# Reading through markdown and quotes

_QUOTES = "\"'“”‘’`«»"
_EMPHASIS = re.compile(r"\*\*\*(.+?)\*\*\*|\*\*(.+?)\*\*|__(.+?)__|`([^`\n]+)`|\*([^*\n]+)\*")
_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|(?<![\w])\'([^\'\n]{1,200})\'(?![\w])|‘([^’\n]{1,200})’|«([^»\n]{1,200})»')


_MARKUP = re.compile(r"[*_`<>#•>\u2212\u00a0\u202f]|^[ \t]*(?:[-+]|\d{1,2}[.)])\s", re.M)


def _plain(text: str) -> str:
    """Markdown read through: emphasis and code marks, headings, quote marks and bullets dropped."""
    if not _MARKUP.search(text):  # most answers have none: skip the rewrites
        return text.strip()
    text = text.replace("\u2212", "-").replace("\u00a0", " ").replace("\u202f", " ")
    text = _EMPHASIS.sub(lambda m: next(g for g in m.groups() if g is not None), text)
    text = re.sub(r"</?[A-Za-z_][\w-]{0,20}>", " ", text)  # <answer>...</answer>
    text = re.sub(r"(?m)^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+•]\s+|\d{1,2}[.)]\s+)", "", text)
    return text.strip()


def _text(x: Any) -> str:
    """Case, spacing, surrounding quotes and closing punctuation do not count (lower(), not casefold():
    positions in the lowered text are positions in the original)."""
    s = x if type(x) is str else str(x)
    return _normal_text(s) if len(s) <= _SHORT else _normal_text.__wrapped__(s)


@lru_cache(maxsize=16384)
def _normal_text(x: str) -> str:  # `_text` of a string (remembered for short ones: answers and guesses repeat)
    s = " ".join(x.lower().split())
    return s.strip().strip(_QUOTES).strip().rstrip(".!").strip().strip(_QUOTES).strip()


# --------------------------------------------------------------------------------------------
# Hedges and the words a number may carry

# Words that make an answer a hedge or a denial when they stand outside the value itself.
_HEDGE = re.compile(
    r"\b(?:or|either|maybe|mayb|perhaps|possibly|probably|prob|likely|unlikely|unsure|guess|guessing|approximately|approx|"
    r"roughly|around|about|nearly|almost|somewhere|between|might|could be|may be|i think|i believe|not|no idea|unknown|"
    r"unclear|uncertain|cannot|can't|couldn't|isn't|wasn't|aren't|don't|doesn't|didn't|n/a|none|nothing|idk|possibly|"
    r"estimate|estimated|ish|plus|minus|over|under|more than|less than|at least|at most|(?<!add )(?<!adds )(?<!added )up to|range)\b|\?|~|≈|±"
)
_CLAUSE_END = re.compile(r"[,;:()\[\]]|\s[-–—]\s|[.!](?:\s|$)|\n")

# Words that may follow a number in its clause: units, currencies, scale and filler. Words of the
# question are allowed too ("8,907 views" for "What is the views of ...").
_UNITS = frozenset(" ".join([
    "usd eur gbp jpy cad aud chf cny inr dollars dollar euros euro pounds pound yen cents cent bucks",
    "ms msec millisecond milliseconds s sec secs second seconds min mins minute minutes h hr hrs hour hours",
    "day days week weeks month months year years yr yrs",
    "kg g mg lb lbs oz ton tons tonnes km m cm mm mi mile miles ft feet inch inches l ml litre litres liter liters",
    "gb mb kb tb bytes byte kbps mbps gbps hz khz mhz ghz px pixels points pts point",
    "items item units unit records record entries entry rows row results result times time",
    "total in overall all altogether together so far each apiece exactly precisely currently now today net gross per",
    "the a an of for on at as by it this that them these those there here there's k thousand million millions billion billions bn mn",
]).split())
_SCALE = {"k": 1e3, "thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9}
_CURRENCY = r"(?:[$€£¥₹]|(?:US|CA|AU)\$|\b(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|CNY|INR)\s?)"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+(?:'[a-z]+)?", text.casefold())


def _stem(word: str) -> str:
    for end in ("ies", "es", "s"):
        if word.endswith(end) and len(word) > len(end) + 2:
            return word[: -len(end)] + ("y" if end == "ies" else "")
    return word


@lru_cache(maxsize=4096)
def _context_words(context: str) -> frozenset[str]:
    """The question's words (stemmed): they may follow a number, and a hedge word the question uses
    ("the estimated gpu hours", "the decision with query about") is no hedge in the answer."""
    return frozenset(_stem(w) for w in _words(context))


# In the sentences around the value's own, only doubt counts as a hedge ("The rules don't allow that;
# the owner is CU-1003." negates another clause, not the answer).
_DOUBT = re.compile(r"\b(?:maybe|mayb|perhaps|possibly|probably|likely|unsure|not sure|guess|guessing|approximately|approx|roughly|"
                    r"i think|i believe|no idea|unknown|unclear|uncertain|estimate|estimated|unverified|unconfirmed|tentative|tentatively|"
                    r"assuming|if i'm right|if correct|not certain|if i(?:'ve| have)? \w+ (?:it |them |this |that )?(?:correctly|right))\b|\?|~|≈|±")


def _hedged(text: str, context: str = "", spans: list[tuple[int, int]] | None = None) -> bool:
    """Whether `text` (the value blanked out at `spans`) hedges: any hedge word in the value's sentence,
    doubt anywhere. A hedge word the question itself uses is part of the question's wording."""
    low = text.lower()
    asked = _context_words(context)
    if spans:
        a, b = min(x for x, _ in spans), max(y for _, y in spans)
        starts = [m.end() for m in re.finditer(r"[.;!]\s|\n", low[:a])]
        end = re.search(r"[.;!](?:\s|$)|\n", low[b:])
        own = low[starts[-1] if starts else 0: b + (end.start() if end else len(low) - b)]
    else:
        own = low

    def counts(m: re.Match) -> bool:
        return not (len(m.group(0)) >= 5 and _stem(m.group(0)) in asked)

    return any(counts(m) for m in _HEDGE.finditer(own)) or any(counts(m) for m in _DOUBT.finditer(low))


def _runs_on(after: str, context: str) -> bool:
    """Whether the words after a value, up to the end of its clause, are more than units and words of
    the question ("7140 mayb", "4638 probably"); after a sentence break, whether the next sentence
    does not start like one (a capital letter)."""
    m = _CLAUSE_END.search(after)
    clause = after[: m.start()] if m else after
    allowed = _context_words(context)
    if any(w not in _UNITS and _stem(w) not in allowed for w in _words(clause)):
        return True
    if re.search(r"[^\w\s%$€£¥₹/+\-}\]\"'`]", clause.replace(".", "")):  # stray symbols in the value's clause (closing brackets and quotes are fine)
        return True
    if m and m.group(0).strip() in (".", "!") and after[m.end():].strip():
        rest = after[m.end():].lstrip()
        return not (rest[0].isupper() or rest[0] in "(*_#>-\n")
    return False


def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the `spans` blanked out (so a hedge word inside a value, "About happy technology",
    does not count); positions stay where they were."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


# --------------------------------------------------------------------------------------------
# Candidates of each type: (value, start, end, flag)

_NUMBER = re.compile(
    rf"(?P<cur>{_CURRENCY})?\s?(?P<sign>[-+])?(?P<cur2>{_CURRENCY})?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<pct>\s?(?:%|percent\b|per cent\b|pct\b))?"
    r"(?:\s?(?P<scale>k|thousand|million|mn|bn|billion)\b)?"
)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?", re.I)
_VERSION = re.compile(r"\b\d+\.\d+\.\d+(?:\.\d+)*\b")
_WORD_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}


def _number_candidates(text: str) -> list[tuple[float, int, int, bool]]:
    """Numbers written in `text` (not the digits of an id, a date, a time or a version), with whether each is a percentage."""
    blocked = bytearray(len(text) + 1)  # positions inside an id, a time, a version or a date (a mask: linear in the text)
    for a, b in [(m.start(), m.end()) for rx in (_ID_IN_TEXT, _TIME, _VERSION) for m in rx.finditer(text)] + [(a, b) for _, a, b in _date_candidates(text)]:
        blocked[a:b] = b"\x01" * (b - a)
    out = []
    for m in _NUMBER.finditer(text):
        s, e = m.start("num"), m.end("num")
        if blocked[s] or blocked[e - 1]:
            continue
        glued_before = s > 0 and (text[s - 1].isalnum() or text[s - 1] in "_.")
        glued_after = e < len(text) and text[e].isalpha() and not m.group("pct") and not m.group("scale")
        unit_after = e < len(text) and re.match(r"[a-z]{1,4}\b", text[e:], re.I) and _words(text[e:])[0] in _UNITS
        if (glued_before or glued_after) and not unit_after:
            continue  # part of a word ("mp3", "2nd"), except a unit written on the number ("15kg", "5min")
        value = float(m.group("num").replace(",", ""))
        if m.group("sign") == "-":
            value = -value
        if m.group("scale"):
            value *= _SCALE[m.group("scale").lower()]
        out.append((value, m.start(), m.end(), bool(m.group("pct"))))
    if not out:
        for m in re.finditer(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", text, re.I):
            out.append((float(_WORD_NUMBERS[m.group(1).lower()]), m.start(), m.end(), False))
    return out


_ID_IN_TEXT = re.compile(r"(?<![\w-])[A-Za-z]{1,8}[-_]?\d{2,}(?![\w-])")


def _id_key(x: str) -> str:
    return re.sub(r"[-_\s]", "", x.casefold())


def _id_candidates(text: str) -> list[tuple[str, int, int]]:
    return [(_id_key(m.group(0)), m.start(), m.end()) for m in _ID_IN_TEXT.finditer(text)]


_MONTHS = {m: i for i, names in enumerate([
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")], 1) for m in names}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DATE_FORMS = [
    re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<a>\d{1,2})[-/.](?P<b>\d{1,2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)"),  # 2026-03-04, 2026/03/04, 2026-03-04T10:00:00
    re.compile(r"(?<![\d/.-])(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?!\d)"),  # 03/04/2026, 04.03.2026
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(?P<y>\d{{4}})\b", re.I),  # March 4, 2026
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?P<y>\d{{4}})\b", re.I),  # 4 March 2026, 4th of March, 2026
]


def _date_candidates(text: str) -> list[tuple[_dt.date, int, int]]:
    """Dates written in `text`. A numeric day/month form reads month first (03/04/2026 is March 4) with
    "/" and day first with "." or "-" (04.03.2026 is March 4), and the other way when that is the only
    valid reading (a "month" above 12)."""
    out, taken = [], bytearray(len(text) + 1)  # positions a date found by an earlier form already covers
    for i, rx in enumerate(_DATE_FORMS):
        for m in rx.finditer(text):
            if taken[m.start()]:
                continue
            g = m.groupdict()
            y = int(g["y"])
            if i == 0:
                tries = [(int(g["a"]), int(g["b"]))]
            elif i == 1:
                a, b = int(g["a"]), int(g["b"])
                tries = [(a, b), (b, a)] if g["sep"] == "/" else [(b, a), (a, b)]
            else:
                tries = [(_MONTHS[g["mon"].lower()], int(g["day"]))]
            for month, day in tries:
                try:
                    out.append((_dt.date(y, month, day), m.start(), m.end()))
                    taken[m.start():m.end()] = b"\x01" * (m.end() - m.start())
                    break
                except ValueError:
                    continue
    return out


def _gold_date(value: Any) -> tuple[_dt.date, tuple[int, int] | None] | None:
    m = _ISO_DATE.fullmatch(str(value).strip())
    if not m:
        return None
    try:
        day = _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
    clock = (int(m.group(4)), int(m.group(5))) if m.group(4) and (int(m.group(4)), int(m.group(5))) != (0, 0) else None
    return day, clock


def _times(text: str) -> set[tuple[int, int]]:
    out = set()
    for m in re.finditer(r"\b(\d{1,2}):(\d{2})(?::\d{2})?\s?([ap])?\.?m?\.?", text, re.I):
        h, mi = int(m.group(1)), int(m.group(2))
        if m.group(3):
            h = h % 12 + (12 if m.group(3).lower() == "p" else 0)
        out.add((h, mi))
    return out


# --------------------------------------------------------------------------------------------
# Comparing


@lru_cache(maxsize=4096)
def _context_ids(context: str) -> frozenset:
    return frozenset(k for k, *_ in _id_candidates(context))


@lru_cache(maxsize=4096)
def _context_dates(context: str) -> frozenset:
    return frozenset(d for d, *_ in _date_candidates(context))


def _exclude_context(cands: list, gold_keys: set, context_keys: set, text: str, context: str) -> list:
    """Candidates less the values the instruction states (unless they are the gold, or listed among
    the answers: "DO-1022, DO-1041 and RE-1004") and less any value written as the instruction writes
    it, with the word before it (an echo of the request)."""
    return [c for c in cands if (c[0] in gold_keys or c[0] not in context_keys or _listed(text, c[1])) and not _restated(text, c, context)]


def _listed(text: str, start: int) -> bool:
    """Whether the value at `start` follows a list separator (a comma, "and", "or", "&", a bullet)."""
    return bool(re.search(r"(?:[,;&]|\band|\bor|^\s*[-*•]|\n)\s*$", text[max(0, start - 12): start]))


def _one_value(text: str, cands: list, gold, context: str) -> bool:
    """The rule for a scalar: exactly one distinct candidate, equal to the gold, no hedge around it,
    nothing but units and the question's words after it in its clause."""
    if not cands or len({c[0] for c in cands}) != 1 or cands[0][0] != gold:
        return False
    if _hedged(_outside(text, [(c[1], c[2]) for c in cands]), context, [(c[1], c[2]) for c in cands]):
        return False
    return not _runs_on(text[max(c[2] for c in cands):], context)


def _number_match(expected: Any, got: str, context: str, tolerance: float, percent: bool) -> bool:
    gold = _as_number(expected)
    if gold is None:
        return False
    values = (_number_reading if len(got) <= _SHORT else _number_reading.__wrapped__)(got, context, percent)
    # `_one_value` with every candidate close to the gold as one value: right when all of them are
    return values is not None and all(math.isclose(v, gold, rel_tol=1e-9, abs_tol=tolerance) for v in values)


@lru_cache(maxsize=16384)
def _number_reading(got: str, context: str, percent: bool) -> tuple[float, ...] | None:
    """The numbers a reply gives as its one value (`_one_value` less the comparison with the gold, which is all that
    depends on it): its candidates not restating the request, when there are some, none a percentage (for a plain
    number), unhedged and followed only by units and the question's words; else None. Remembered: the same replies
    (a theme's frequent answers, which synthesis checks every candidate task against) are read again and again."""
    text = _plain(got)
    cands = [c for c in _number_candidates(text) if not _restated(text, c, context)]
    if not cands or (not percent and any(c[3] for c in cands)):  # a plain number: a percentage is another kind of value
        return None
    spans = [(c[1], c[2]) for c in cands]
    if _hedged(_outside(text, spans), context, spans) or _runs_on(text[max(c[2] for c in cands):], context):
        return None
    return tuple(c[0] for c in cands)


def _restated(text: str, cand: tuple, context: str) -> bool:
    """Whether a candidate restates the request ("orders above 500", "increase ... by 1"): the word
    before it and the value, as written, are in the instruction. A bare value restates nothing."""
    before = re.search(r"(\S+)\s*$", text[max(0, cand[1] - 60): cand[1]])  # the word just before (a bounded look back)
    said = text[cand[1]:cand[2]].strip()
    return bool(context) and before is not None and f"{before.group(1)} {said}".lower() in context.lower()


_PLAIN_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


def _as_number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        try:
            return float(x)
        except OverflowError:  # an integer beyond float range is no answer to a numeric task
            return None
    if isinstance(x, str):
        if _PLAIN_NUMBER.fullmatch(x.strip()):  # a plain number, the common case
            return float(x.replace(",", ""))
        cands = _number_candidates(_plain(x)) if len(x) <= 100 else []
        return cands[0][0] if len(cands) == 1 else None
    return None


def _date_match(expected: Any, got: str, context: str) -> bool:
    gold = _gold_date(expected)
    if gold is None:
        return _text(expected) == _text(got)
    day, clock = gold
    text = _plain(got)
    cands = _exclude_context(_date_candidates(text), {day}, _context_dates(context), text, context)
    if not _one_value(text, cands, day, context):
        return False
    if clock is not None:  # a gold with a time of day: the answer must give that time, and no other
        return _times(text) == {clock}
    return True


def _id_match(expected: Any, got: str, context: str) -> bool:
    if not any(ch.isdigit() for ch in got):
        return False  # no id without digits ("yes", "done")
    gold = _id_key(str(expected))
    text = _plain(got)
    cands = _exclude_context(_id_candidates(text), {gold}, _context_ids(context), text, context)
    return _one_value(text, cands, gold, context)


_BOOL_HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|likely|guess|i think|i believe|not sure|unsure|might|could be|either)\b|\?")
_YES = {"yes", "true", "y", "yep", "yeah", "correct", "affirmative"}
_NO = {"no", "false", "n", "nope", "negative"}


def _bool_match(expected: Any, got: str) -> bool:
    text = _plain(got).casefold()
    if _text(text) in ("1", "0"):
        return (_text(text) == "1") == bool(expected)
    words = _words(text)
    if _BOOL_HEDGE.search(text):
        return False
    said = {True for w in words if w in _YES} | {False for w in words if w in _NO}
    negated = any(w in ("not", "isn't", "wasn't", "aren't", "doesn't", "don't", "didn't", "never") or w.endswith("n't") for w in words)
    if said == {True} and not negated:
        return bool(expected)
    if said == {False}:
        return not expected
    return False


def _text_match(expected: Any, got: str, context: str) -> bool:
    gold = _text(expected)
    if not gold:
        return False
    if _text(got) == gold:
        return True
    raw = got.replace("\u00a0", " ")
    text = re.sub(r"[ \t]+", " ", _plain(raw))
    folded = text.lower()
    spans = [(m.start(), m.end()) for m in re.finditer(r"(?<!\w)" + re.escape(gold) + r"(?!\w)", folded)] if gold in folded else []
    if not spans:
        return False
    # quoted or emphasised values are the candidates when there are any (a "Title:" label is not one)
    marked = [next(g for g in m.groups() if g is not None) for rx in (_EMPHASIS, _QUOTED) for m in rx.finditer(raw)]
    marked = {_text(x) for x in marked if _text(x) and not x.strip().endswith(":")}
    if _hedged(_outside(folded, spans), context, spans):
        return False
    if gold in marked:
        return marked == {gold}  # another quoted value beside the gold is a second candidate
    for a, b in spans:  # after "is"/":" at the end of its sentence, or first and followed by "is ..."
        before, after = folded[:a].rstrip(), text[b:]
        if re.search(r"(?:\band|&|,|\+)$", before):  # "Y and X", "Y, X": another value before the gold
            return False
        # the sentence ends after the gold (a parenthesis may follow), or a new sentence or line starts
        ends = re.match(r"[\"'”’»)]*[ \t]*(?:\([^()]*\))?[ \t]*(?:[.!]*\s*$|[.!]+\s+[A-Z(*_#>-]|[.!]*[ \t]*\n)", after)
        led = not before or re.search(r"(?:\bis|\bare|\bwas|\bwere|:|=|\bcalled|\bnamed|\btitled|\breads|\bit's|\bthat's|\bcomes? to)$", before)
        if led and ends:
            return True
        if not before and re.match(r"\s*(?:is|was|are)\b", after):
            return True
    return False


def _items_of(x: Any) -> list:
    if isinstance(x, (list, tuple, set)):
        return list(x)
    return [x]


def _set_match(expected: Any, got: Any, context: str, tolerance: float) -> bool:
    gold = _items_of(expected)
    if not gold:
        return _text(got) in ("", "none", "[]")
    item_type = answer_type_of(gold[0]) if all(answer_type_of(g) == answer_type_of(gold[0]) for g in gold) else "text"
    if isinstance(got, (list, tuple, set)):
        if len(got) != len(set(map(_text, got))) or len(got) != len(gold):
            return False
        return _same_items(gold, [str(g) for g in got], item_type, tolerance)
    text = _plain(str(got))
    # the items first: most replies (a theme's frequent answers, checked against every candidate task) miss them,
    # and building the hedge test's pattern of the gold items costs more than finding them
    return _items_found(gold, item_type, text, context) and not _hedged(
        re.sub(r"(?<!\w)(?:" + "|".join(re.escape(_text(g)) for g in gold) + r")(?!\w)", " ", text.lower()), context)


def _items_found(gold: list, item_type: str, text: str, context: str) -> bool:
    """Whether `text` gives exactly the gold items (of `item_type`) of a list answer, hedges aside (`_set_match`)."""
    if item_type == "id":
        keys = {_id_key(str(g)) for g in gold}
        found = {k for k, *_ in _exclude_context(_id_candidates(text), keys, _context_ids(context), text, context)}
        return found == keys
    if item_type == "number":
        nums = [float(g) for g in gold]
        found = [c[0] for c in _number_candidates(text) if not _restated(text, c, context)]
        return sorted(set(found)) == sorted(set(nums)) and len(found) == len(set(found))
    if item_type == "date":
        days = {_gold_date(g)[0] for g in gold if _gold_date(g)}
        return {d for d, *_ in _date_candidates(text)} == days
    # text items: each gold item in place, and between and after them only separators
    folded = " ".join(text.casefold().split())
    spans = []
    for g in sorted({_text(x) for x in gold}, key=len, reverse=True):
        m = re.search(r"(?<!\w)" + re.escape(g) + r"(?!\w)", _outside(folded, spans))
        if not m:
            return False
        spans.append((m.start(), m.end()))
    first = min(a for a, _ in spans)
    rest = _outside(folded[first:], [(a - first, b - first) for a, b in spans])
    return not re.sub(r"\b(?:and|the)\b|[\s,;&.'\"\[\]()*•+-]|\d+[.)]", "", rest)


def _same_items(gold: list, got: list[str], item_type: str, tolerance: float) -> bool:
    left = list(got)
    for g in gold:
        hit = next((x for x in left if answers_match(g, x, item_type, tolerance)), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


def answers_match(expected: Any, got: Any, answer_type: str, tolerance: float = 0.01, context: str = "") -> bool:
    """Whether `got` (as a model wrote it) is the gold `expected` of a task of `answer_type`.

    `context` is the task's instruction: values it states are not candidates, and its words may
    follow a number ("8,907 views"). See the module docstring for the rules.
    """
    if got is None:
        return False
    if isinstance(got, (str, list, tuple, dict)) and len(got) > MAX_ANSWER_SIZE:
        return False
    kind = answer_type_of(expected, answer_type)
    if kind == "none":
        return True
    if isinstance(got, str) and kind not in ("set", "facts") and _text(got) == _text(expected):
        return True  # the gold as it is written (a replay, most answers): no search needed
    if kind == "facts":  # imported free-text answers: the facts the gold chain produced must all be stated
        said = _text(" ".join(map(str, got)) if isinstance(got, (list, tuple)) else got)
        return bool(expected) and all(_text(f) in said for f in expected)
    if kind == "set":
        return _set_match(expected, got, context, tolerance)
    if isinstance(got, (list, tuple, set)):
        return len(got) == 1 and answers_match(expected, next(iter(got)), answer_type, tolerance, context)
    if isinstance(got, dict):
        return False
    if kind == "bool":
        return got is expected if isinstance(got, bool) else isinstance(got, (str, int)) and _bool_match(expected, str(got))
    if kind in ("number", "percent"):
        if isinstance(got, (int, float)) and not isinstance(got, bool):
            gold = _as_number(expected)
            return gold is not None and math.isclose(float(got), gold, rel_tol=1e-9, abs_tol=tolerance)
        return isinstance(got, str) and _number_match(expected, got, context, tolerance, kind == "percent")
    got = str(got)
    if kind == "date":
        return _date_match(expected, got, context)
    if kind == "id":
        return _id_match(expected, got, context)
    return _text_match(expected, got, context)


# --------------------------------------------------------------------------------------------
# What a final reply claims

# Phrases by which a reply says the request was not carried out. Checked first: "I updated two of
# them but could not change the third" claims a failure.
_FAILURE = re.compile(
    r"\b(?:could ?n[o']t|can ?n[o']t|cannot|was ?n[o']t able|were ?n[o']t able|unable to|not able to|failed|fails|failure|"
    r"did ?n[o']t (?:go through|work|succeed|make|change|update|apply|complete)|not (?:been )?(?:possible|allowed|permitted|completed|made|applied|updated|changed|processed)|"
    r"no changes? (?:was|were|has been|have been) made|(?:made|changed|updated) nothing|nothing (?:was|has been) (?:changed|updated|done)|"
    r"is ?n[o']t (?:allowed|permitted|possible)|are ?n[o']t (?:allowed|permitted)|(?:was|were|been|is) (?:refused|rejected|denied|blocked)|"
    r"refuse[sd]?|rejects?|declined?|do(?:es)? not allow|does ?n[o']t allow|won't allow|prohibit(?:s|ed)?|forbid(?:s|den)?|"
    r"unfortunately|i'?m sorry|i apologi[sz]e|an error|errors? occurred)\b",
    re.I,
)
# "no errors", "without any problems": a failure word that says there was none.
_NO_FAILURE = re.compile(r"\b(?:no|without(?: any)?|zero) (?:errors?|failures?|issues?|problems?)\b", re.I)
_SUCCESS = re.compile(
    r"\b(?:done|all set|completed?|success(?:ful(?:ly)?)?|succeeded|"
    r"(?:has|have|had) been (?:\w+ed|set|made|sent|paid|shut|put|reset|built|rebuilt|split|frozen|written|rewritten|undone)|"
    r"i(?:'ve| have)? (?:\w+ed|set|made|sent|paid|put|reset|split|froze|wrote|rewrote|undid)|is now|are now|now (?:shows|reads|has|is)|"
    r"(?:is|are|was|were) (?:now )?\w+ed|"
    r"went through|took effect|processed|confirmed|updated|changed|cancell?ed|deleted|removed|created|added|marked|"
    r"refunded|transferred|scheduled|assigned|closed|opened|archived|approved)\b",
    re.I,
)


def reply_claim(text: Any, context: str = "") -> str | None:
    """"failure" when a final reply says the request (or part of it) was not carried out, "success"
    when it says it was, None when it says neither (a bare value, an empty reply). A fixed list of
    phrases, so the same reply always gets the same verdict; see docs/grading.md.

    `context` is the request: a failure word that is a value it asks for ("mark the payment as
    failed", "block card CA-1003") is a status, not a failure."""
    if not isinstance(text, str) or not text.strip():
        return None
    plain = _NO_FAILURE.sub(" ", _plain(text))
    asked = {w[:4] for w in _context_words(context) if len(w) >= 4}
    if any(m.group(0).split()[-1].lower()[:4] not in asked for m in _FAILURE.finditer(plain)):
        return "failure"
    if _SUCCESS.search(plain):
        return "success"
    return None


__all__ = ["ANSWER_TYPES", "MAX_ANSWER_SIZE", "answer_type_of", "answers_match", "reply_claim"]
