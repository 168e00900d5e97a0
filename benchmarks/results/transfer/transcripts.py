"""Why a stage wins or loses on BFCL: each stage's reply to the same items, beside its verdict, with the reply's
shape (plain text, one call, a list of calls, a `submit` call: this suite's finishing habit).

    .venv/bin/python benchmarks/results/transfer/transcripts.py --per-category 1 --only simple_python,multiple,parallel \
        untrained=smollm2-135m sft-s1=hf:runs/transfer/sft64e32-s1/final > benchmarks/results/transfer/transcripts.md
"""

from __future__ import annotations

import argparse
import json


def shape(text: str, names: set[str]) -> str:
    from agentworld_gym.suites import bfcl

    try:
        calls = bfcl.decode(text, names)
    except (ValueError, TypeError, KeyError):
        return "undecodable"
    if not calls:
        return "no call (text)"
    called = [name for c in calls for name in c]
    if "submit" in called:
        return "submit call"
    if not set(called) <= names:
        return "call of an unknown function"
    return "one call" if len(calls) == 1 else f"{len(calls)} calls"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stages", nargs="+", help="NAME=POLICY_SPEC")
    ap.add_argument("--episodes", type=int, default=36, help="the measured subset of each group (transfer.py --episodes)")
    ap.add_argument("--groups", default="simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,"
                    "live_simple,live_multiple,live_parallel,live_parallel_multiple,irrelevance,live_irrelevance",
                    help="the category groups as transfer.py drew them, ';' between groups (run_seeds.sh: one group; the "
                    "first pass's run_bfcl_parts.sh: four groups of three, --episodes 9)")
    ap.add_argument("--only", default="", help="comma-separated categories to show (default: all)")
    ap.add_argument("--per-category", type=int, default=1)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    args = ap.parse_args()
    from agentworld_gym.suites import bfcl
    from agentworld_gym.suites import core as bench

    only = set(args.only.split(",")) - {""}
    measured = [x for g in args.groups.split(";") for x in bench.bfcl_suite(args.episodes, 0, None, g.split(",")).items]
    items, seen = [], {}
    for x in measured:  # the first items of each category in the measured subset
        if (not only or x["category"] in only) and seen.get(x["category"], 0) < args.per_category:
            items.append(x)
            seen[x["category"]] = seen.get(x["category"], 0) + 1
    print(f"# BFCL replies on {len(items)} of the measured items ({args.per_category} per category), greedy\n")
    replies = {}
    for st in args.stages:
        name, spec = st.split("=", 1)
        loaded = bench.load_policy(spec, 0.0, args.max_new_tokens)
        replies[name] = bench._bfcl_replies(items, spec, loaded, 0)
    counts: dict[str, dict[str, int]] = {n: {} for n in replies}
    for i, x in enumerate(items):
        names = {f.get("name") for f in x["functions"]}
        print(f"## {x['id']} ({x['category']})\n\nquestion: {json.dumps(x['question'][-1]['content'])[:300]}\n")
        for name, rs in replies.items():
            s = shape(rs[i], names)
            counts[name][s] = counts[name].get(s, 0) + 1
            print(f"- **{name}** ({'pass' if bfcl.score_bfcl(rs[i], x) else 'fail'}, {s}): `{rs[i][:300]!r}`")
        print()
    print("## Reply shapes\n")
    for name, c in counts.items():
        print(f"- {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))


if __name__ == "__main__":
    main()
