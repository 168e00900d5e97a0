"""Build the grader's paraphrase corpus: answers written the way models write them, right and wrong.

    python benchmarks/make_grader_corpus.py [--out tests/fixtures/grader_corpus.jsonl] [--per-gold 3] [--seed 0]

Gold values come from the project's own tasks: every answer of the frozen held-out suite
(agentworld_gym/suites/heldout) and of synthesized tasks (`synthesize_task` on every flagship theme, levels
1-5, seeds 0-7, kind "mixed", db_seed 0). Each gold gets `per-gold` right answers and `per-gold` wrong
answers drawn (seeded) from the templates of its type below: sentences, markdown, quoted values, units
and currency, other date formats, lists joined by "and", and on the wrong side near-misses, hedges,
supersets, run-on words and other candidates. Every record keeps the task's instruction as `context`
(values it states are no answer; its words may follow a number). `tests/fixtures/grader_hand.jsonl`
holds hand-written adversarial cases; both files are read by tests/test_grading.py and
benchmarks/bench_grader.py.

No task records a percentage yet, so the percent items take numeric golds of the same tasks and
declare them percentages (marked `"declared": "percent"`). No sampled task has a yes/no answer either,
so the bool items turn sampled answer tasks into yes/no questions ("Is it true that the title of ...
is "X"?") asked once with the gold (True) and once with another task's value (False). Sets are
rare (programmatic "which k ..." tasks), so each set gold gets three times `per-gold` answers.

The output is deterministic in (seed, per-gold, code): re-running rewrites the same file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]


@dataclass
class Args:
    out: str = "tests/fixtures/grader_corpus.jsonl"
    per_gold: int = 3
    """right answers and wrong answers made per gold value"""
    seed: int = 0
    synth_seeds: int = 8
    """synthesized tasks per flagship theme and level"""


# --------------------------------------------------------------------------------------------
# Gold values


def heldout_golds() -> list[dict]:
    out = []
    for f in sorted((ROOT / "agentworld_gym/suites/heldout").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            t = json.loads(line)
            if t["answer_type"] not in ("none", "facts"):
                out.append({"gold": t["answer"], "answer_type": t["answer_type"], "context": t["instruction"], "source": f"heldout:{t['id']}"})
    return out


def synthesized_golds(seeds: int) -> list[dict]:
    from agentworld_gym.envs import FLAGSHIPS, get_theme
    from tqdm import tqdm

    import agentworld_gym  # noqa: F401  (registers the themes)
    from agentworld_gym.errors import AgentWorldError
    from agentworld_gym.synthesis import synthesize_task

    out = []
    for theme_id in tqdm(sorted(FLAGSHIPS), desc="synthesizing"):
        theme = get_theme(theme_id)
        for level in range(1, 6):
            for seed in range(seeds):
                try:
                    t = synthesize_task(theme, level, seed, "mixed", fallback=True)
                except AgentWorldError:
                    continue
                if t.answer_type not in ("none", "facts"):
                    out.append({"gold": t.answer, "answer_type": t.answer_type, "context": t.instruction, "source": f"synth:{t.id}"})
    return out


# --------------------------------------------------------------------------------------------
# Writing a value the way a model does


def fmt_number(x: float, rng: random.Random, money: bool = False) -> str:
    """A number as a model writes it: with or without thousands separators, decimals kept."""
    if float(x).is_integer() and not money:
        n = int(x)
        return rng.choice([f"{n:,}", str(n), f"{n:,}"])
    return rng.choice([f"{x:,.2f}", f"{x:.2f}", f"{x:,.2f}"]) if money else rng.choice([f"{x:,}", repr(float(x))])


def field_words(context: str) -> tuple[str, str]:
    """(field, unit noun) guessed from a question "What is the <field> of ..." / "How many <noun> ..."."""
    low = context.rstrip("?.").lower()
    if low.startswith("how many "):
        noun = low[len("how many "):].split(" ")[0]
        return noun, noun
    for lead in ("what is the ", "what are the ", "what's the "):
        if lead in low:
            rest = low.split(lead, 1)[1]
            field = rest.split(" of ")[0].split(" for ")[0].strip()
            return field, field.split()[-1] if field else "value"
    return "answer", ""


def weekday(d: dt.date) -> str:
    return d.strftime("%A")


def date_forms(d: dt.date, rng: random.Random) -> str:
    m = MONTHS[d.month - 1]
    forms = [d.isoformat(), f"{m} {d.day}, {d.year}", f"{d.day} {m[:3]} {d.year}", f"{d.year}/{d.month:02d}/{d.day:02d}",
             f"{d.month:02d}/{d.day:02d}/{d.year}", f"{m[:3]}. {d.day}, {d.year}", f"{weekday(d)}, {m} {d.day}, {d.year}",
             f"{d.day} {m} {d.year}", f"{m} {d.day}{_ordinal(d.day)}, {d.year}", f"{d.day:02d}.{d.month:02d}.{d.year}"]
    if d.day > 12:
        forms.append(f"{d.day}/{d.month}/{d.year}")  # day first, unambiguous
    return rng.choice(forms)


def _ordinal(n: int) -> str:
    return "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


SENTENCE = [
    "The answer is {v}.", "{v}", "**{v}**", "The {field} is {v}.", "It's {v}.", "Answer: {v}", "`{v}`",
    "I checked, and the {field} is **{v}**.", "The {field} is `{v}`.", "Here's what I found:\n\n**{Field}:** {v}",
    "- **{Field}:** {v}", "Final answer: {v}", "The {field} comes to {v}.", "Result: **{v}**",
    "Based on the records, the {field} is {v}.", "{v}\n\nLet me know if you need anything else.",
    "The {field} is {v}. Let me know if you need anything else.", "Sure! The {field} is {v}.",
]


def sentence(v: str, field: str, rng: random.Random) -> tuple[str, str]:
    t = rng.choice(SENTENCE)
    return t.format(v=v, field=field, Field=field[:1].upper() + field[1:]), "sentence:" + t[:24]


# --------------------------------------------------------------------------------------------
# Right and wrong answers per type: each maker returns (answer, template name)


def right_number(g: float, ctx: str, rng: random.Random, percent: bool = False):
    field, unit = field_words(ctx)
    v = fmt_number(g, rng)
    if percent:
        pick = rng.choice(["pct", "percent", "sentence_pct", "bare"])
        return {"pct": (f"{v}%", "pct"), "percent": (f"{v} percent", "percent-word"),
                "sentence_pct": (f"The {field} is {v}%.", "sentence-pct"), "bare": (v, "bare")}[pick]
    pick = rng.choice(["sentence", "sentence", "unit", "money", "code", "total", "count", "float"])
    if pick == "unit" and unit:
        return f"{v} {unit}", "unit-word"
    if pick == "money" and not float(g).is_integer():
        return rng.choice([f"${fmt_number(g, rng, True)}", f"{fmt_number(g, rng, True)} USD", f"USD {fmt_number(g, rng, True)}"]), "currency"
    if pick == "code":
        return f"The {field} is **{v}** in total.", "bold-total"
    if pick == "count" and ctx.lower().startswith("how many") and unit:
        return f"There are {v} {unit}.", "there-are"
    if pick == "float" and float(g).is_integer():
        return f"{int(g):,}.00", "trailing-zeros"
    return sentence(v, field, rng)


def wrong_number(g: float, ctx: str, rng: random.Random, percent: bool = False):
    field, unit = field_words(ctx)
    v = fmt_number(g, rng)
    near = g + rng.choice([1, -1, 10, -10, 100]) if float(g).is_integer() else round(g + rng.choice([0.1, -0.1, 1, -1, 0.5]), 2)
    other = fmt_number(near, rng)
    makers = [
        (lambda: other, "near-miss"), (lambda: f"The {field} is {other}.", "near-miss-sentence"),
        (lambda: f"{v} or {other}", "hedge-or"), (lambda: f"either {v} or {other}", "hedge-either"),
        (lambda: f"{v} mayb", "run-on-mayb"), (lambda: f"{v} maybe", "hedge-maybe"), (lambda: f"about {v}", "hedge-about"),
        (lambda: f"approximately {v}", "hedge-approx"), (lambda: f"{v}?", "question"), (lambda: f"Is it {v}?", "question"),
        (lambda: f"{v} lol", "run-on-garbage"), (lambda: f"{v} asdf qwerty", "run-on-garbage"), (lambda: f"{v} xyz", "run-on-garbage"),
        (lambda: f"It is not {v}.", "negation"), (lambda: f"between {v} and {other}", "hedge-range"),
        (lambda: f"{v}, {other}", "two-values"), (lambda: f"The {field} is {other} (previously {v}).", "two-values"),
        (lambda: "I don't know.", "no-answer"), (lambda: "0", "constant"), (lambda: f"~{v}", "hedge-tilde"),
        (lambda: f"{v} or so", "hedge-or-so"), (lambda: f"at least {v}", "hedge-bound"),
    ]
    if not percent:
        makers.append((lambda: f"{v}%", "percent-for-number"))
        makers.append((lambda: f"The {field} is {v}%.", "percent-for-number"))
    else:
        makers.append((lambda: f"{other}%", "near-miss-pct"))
    f, name = rng.choice(makers)
    return f(), name


def right_date(g: str, ctx: str, rng: random.Random):
    field, _ = field_words(ctx)
    d = dt.date.fromisoformat(g[:10])
    v = date_forms(d, rng)
    pick = rng.choice(["bare", "sentence", "sentence", "on"])
    if pick == "bare":
        return v, "date-bare"
    if pick == "on":
        return f"It was on {v}.", "date-on"
    return sentence(v, field, rng)


def wrong_date(g: str, ctx: str, rng: random.Random):
    field, _ = field_words(ctx)
    d = dt.date.fromisoformat(g[:10])
    shift = rng.choice([1, -1, 7, 30, 365, -365])
    other = d + dt.timedelta(days=shift)
    v, o = date_forms(d, rng), date_forms(other, rng)
    makers = [
        (lambda: o, "near-miss"), (lambda: f"The {field} is {o}.", "near-miss-sentence"), (lambda: f"{v} or {o}", "hedge-or"),
        (lambda: f"either {v} or {o}", "hedge-either"), (lambda: f"around {v}", "hedge-around"), (lambda: f"{v}?", "question"),
        (lambda: f"{MONTHS[d.month - 1]} {d.year}", "missing-day"), (lambda: f"{v} maybe", "hedge-maybe"),
        (lambda: f"{v} and {o}", "superset"), (lambda: f"not {v}", "negation"), (lambda: f"{v} asdf", "run-on-garbage"),
        (lambda: f"{MONTHS[d.month - 1]} {d.day}", "missing-year"),
    ]
    if d.month != d.day and d.day <= 12:  # the month and day swapped, written as ISO
        makers.append((lambda: dt.date(d.year, d.day, d.month).isoformat(), "swapped-month-day"))
    f, name = rng.choice(makers)
    return f(), name


def _id_variant(g: str, rng: random.Random) -> str:
    head, _, digits = g.rpartition("-") if "-" in g else (g.rstrip("0123456789"), "", g[len(g.rstrip("0123456789")):])
    if not digits:
        return g + "1"
    n = int(digits) + rng.choice([1, -1, 10, 2])
    return f"{head}-{n:0{len(digits)}d}" if "-" in g else f"{head}{n:0{len(digits)}d}"


def right_id(g: str, ctx: str, rng: random.Random):
    field, _ = field_words(ctx)
    pick = rng.choice(["lower", "nodash", "sentence", "sentence", "code", "bare"])
    if pick == "lower":
        return g.lower(), "id-lower"
    if pick == "nodash":
        return g.replace("-", ""), "id-no-dash"
    if pick == "code":
        return f"It's `{g}`.", "id-code"
    if pick == "bare":
        return g, "bare"
    return sentence(g, field, rng)


def wrong_id(g: str, ctx: str, rng: random.Random):
    o = _id_variant(g, rng)
    ctx_ids = [w.strip("?.,") for w in ctx.split() if "-" in w and any(c.isdigit() for c in w) and w.strip("?.,") != g]
    makers = [(lambda: o, "near-miss"), (lambda: f"It's {o}.", "near-miss-sentence"), (lambda: f"{g} or {o}", "hedge-or"),
              (lambda: f"{g} and {o}", "superset"), (lambda: f"{g}, {o}", "two-values"), (lambda: f"maybe {g}", "hedge-maybe"),
              (lambda: f"{g}?", "question"), (lambda: f"Not {g}.", "negation"), (lambda: g[:-1], "truncated"),
              (lambda: f"{g} asdf", "run-on-garbage")]
    if ctx_ids:
        makers.append((lambda: ctx_ids[0], "echo-instruction"))
        makers.append((lambda: f"The answer is {ctx_ids[0]}.", "echo-instruction"))
    f, name = rng.choice(makers)
    return f(), name


def right_text(g: str, ctx: str, rng: random.Random):
    field, _ = field_words(ctx)
    pick = rng.choice(["quoted", "bold", "sentence", "sentence", "case", "called"])
    if pick == "quoted":
        return f'The {field} is "{g}".', "quoted"
    if pick == "bold":
        return f"**{field[:1].upper() + field[1:]}:** {g}", "bold-label"
    if pick == "case":
        return rng.choice([g.upper(), g.lower(), g.title()]), "case"
    if pick == "called":
        return f'It\'s called "{g}".', "called"
    return sentence(g, field, rng)


def wrong_text(g: str, ctx: str, others: list[str], rng: random.Random):
    field, _ = field_words(ctx)
    words = g.split()
    other = rng.choice([o for o in others if o.lower() != g.lower()] or ["something else"])
    near = (" ".join(words[:-1]) if len(words) > 1 else g[:-1]) or "x"
    makers = [(lambda: near, "truncated"), (lambda: f"The {field} is {near}.", "truncated-sentence"),
              (lambda: other, "other-value"), (lambda: f"The {field} is {other}.", "other-value-sentence"),
              (lambda: f"{g} or {other}", "hedge-or"), (lambda: f"{g} and {other}", "superset"), (lambda: f"{g}, {other}", "two-values"),
              (lambda: f"maybe {g}", "hedge-maybe"), (lambda: f"{g}?", "question"), (lambda: f"Not {g}.", "negation"),
              (lambda: g + "s", "near-miss"), (lambda: f'"{g}" or "{other}"', "hedge-or-quoted"),
              (lambda: f"{g} definitely-wrong", "run-on-garbage")]
    f, name = rng.choice(makers)
    return f(), name


def _join(items: list[str], rng: random.Random) -> tuple[str, str]:
    pick = rng.choice(["and", "comma", "bullets", "ampersand", "sentence", "json", "numbered"])
    if pick == "and":
        return (", ".join(items[:-1]) + " and " + items[-1]) if len(items) > 1 else items[0], "joined-and"
    if pick == "comma":
        return ", ".join(items), "joined-comma"
    if pick == "bullets":
        return "\n".join(f"- {x}" for x in items), "bullets"
    if pick == "ampersand":
        return " & ".join(items), "ampersand"
    if pick == "json":
        return json.dumps(items), "json-list"
    if pick == "numbered":
        return "\n".join(f"{i}. {x}" for i, x in enumerate(items, 1)), "numbered"
    lead = rng.choice(["They are", "The answer is", "Those are", "Here they are:"])
    return f"{lead} " + ((", ".join(items[:-1]) + ", and " + items[-1]) if len(items) > 1 else items[0]) + ".", "sentence-list"


def right_set(g: list, ctx: str, rng: random.Random):
    items = [str(x) for x in g]
    rng.shuffle(items)
    if rng.random() < 0.2:
        items = [x.lower() for x in items]
    return _join(items, rng)


def wrong_set(g: list, ctx: str, rng: random.Random):
    items = [str(x) for x in g]
    rng.shuffle(items)
    extra = _id_variant(items[0], rng) if any(c.isdigit() for c in items[0]) else items[0] + " extra"
    pick = rng.choice(["missing", "extra", "extra", "replaced", "hedge"])
    if pick == "missing" and len(items) > 1:
        return _join(items[:-1], rng)[0], "missing-item"
    if pick == "replaced":
        return _join(items[:-1] + [extra], rng)[0], "replaced-item"
    if pick == "hedge" and len(items) > 1:
        return ", ".join(items[:-1]) + " or " + items[-1], "hedge-or"
    return _join(items + [extra], rng)[0], "superset"


YES = ["Yes", "yes", "Yes.", "True", "true", "Yes, it is.", "**Yes**", "Yes, that's right."]
NO = ["No", "no", "No.", "False", "false", "No, it isn't.", "**No**", "No, it is not."]


def right_bool(g: bool, ctx: str, rng: random.Random):
    return rng.choice(YES if g else NO), "bool"


def wrong_bool(g: bool, ctx: str, rng: random.Random):
    pick = rng.choice(["opposite", "opposite", "hedge", "both"])
    if pick == "opposite":
        return rng.choice(NO if g else YES), "opposite"
    if pick == "hedge":
        return rng.choice(["Maybe", "Probably yes" if not g else "Probably no", "Not sure", "Yes?" if not g else "No?"]), "hedge"
    return rng.choice(["Yes or no", "Yes and no", "True/False"]), "both"


def make(gold: dict, rng: random.Random, n: int, texts: list[str]) -> list[dict]:
    from agentworld_gym.grading import answer_type_of

    kind = gold.get("declared") or answer_type_of(gold["gold"], gold["answer_type"])
    g, ctx = gold["gold"], gold["context"]
    right, wrong = {
        "number": (lambda: right_number(float(g), ctx, rng), lambda: wrong_number(float(g), ctx, rng)),
        "percent": (lambda: right_number(float(g), ctx, rng, True), lambda: wrong_number(float(g), ctx, rng, True)),
        "date": (lambda: right_date(g, ctx, rng), lambda: wrong_date(g, ctx, rng)),
        "id": (lambda: right_id(g, ctx, rng), lambda: wrong_id(g, ctx, rng)),
        "text": (lambda: right_text(g, ctx, rng), lambda: wrong_text(g, ctx, texts, rng)),
        "set": (lambda: right_set(g, ctx, rng), lambda: wrong_set(g, ctx, rng)),
        "bool": (lambda: right_bool(g, ctx, rng), lambda: wrong_bool(g, ctx, rng)),
    }[kind]
    out, seen = [], set()
    for correct, maker in ((True, right), (False, wrong)):
        for _ in range(n * 4):
            if sum(r["correct"] == correct for r in out) >= n:
                break
            answer, template = maker()
            if answer in seen:
                continue
            seen.add(answer)
            out.append({"type": kind, "declared": gold.get("declared", gold["answer_type"]), "gold": g, "context": ctx, "answer": answer,
                        "correct": correct, "template": template, "source": gold["source"]})
    return out


def yes_no_golds(golds: list[dict], rng: random.Random, n: int = 120) -> list[dict]:
    """Yes/no questions from sampled answer tasks: "is the answer X?" with the gold (True) or another value (False)."""
    scalar = [g for g in golds if isinstance(g["gold"], (str, int, float)) and g["context"].startswith("What is the ")]
    out = []
    for i, g in enumerate(rng.sample(scalar, min(n, len(scalar)))):
        truth = i % 2 == 0
        value = g["gold"] if truth else rng.choice([o["gold"] for o in scalar if o["gold"] != g["gold"]])
        ctx = "Is it true that the " + g["context"][len("What is the "):].rstrip("?") + f' is "{value}"? Answer yes or no.'
        out.append({"gold": truth, "answer_type": "bool", "context": ctx, "source": g["source"] + "#yes-no"})
    return out


def main(args: Args) -> None:
    rng = random.Random(args.seed)
    golds = heldout_golds() + synthesized_golds(args.synth_seeds)
    # percent: numeric golds declared as percentages (no task records one yet; see the module docstring)
    numeric = [g for g in golds if g["answer_type"] == "number"]
    golds += [dict(g, declared="percent", source=g["source"] + "#percent") for g in rng.sample(numeric, min(80, len(numeric)))]
    texts = sorted({g["gold"] for g in golds if isinstance(g["gold"], str)})
    golds += yes_no_golds(golds, rng)
    records = []
    for gold in golds:
        records += make(gold, rng, args.per_gold * (3 if gold["answer_type"] == "set" else 1), texts)
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for i, r in enumerate(records):
            f.write(json.dumps({"n": i, **r}, ensure_ascii=False, sort_keys=True) + "\n")
    from collections import Counter

    counts = Counter((r["type"], r["correct"]) for r in records)
    print(f"{len(records)} answers from {len(golds)} golds -> {out}")
    for (t, c), n in sorted(counts.items()):
        print(f"  {t:8} {'right' if c else 'wrong'} {n}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in vars(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    main(Args(**vars(p.parse_args())))
