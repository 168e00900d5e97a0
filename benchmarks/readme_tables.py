"""Regenerate the README's benchmark-suite tables from the committed results.

    python benchmarks/readme_tables.py [--check]

Reads benchmarks/results/suites/*_oracle.json (bench_suites.py), results/bfcl/agreement.json
(bfcl_agreement.py) and results/tau2/<domain>.json (bench_tau2_replay.py), and rewrites the README
between the `<!-- suite-tables:start -->` and `<!-- suite-tables:end -->` markers. --check exits 1
when the README is out of date instead of writing it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
START, END = "<!-- suite-tables:start -->", "<!-- suite-tables:end -->"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def suites_table() -> list[str]:
    lines = ["| suite (`agentworld bench --suite S --policy oracle`) | items | oracle [95% interval] | best null baseline | wall s |",
             "|---|---|---|---|---|"]
    for path in sorted((RESULTS / "suites").glob("*_oracle.json")):
        r = json.loads(path.read_text())
        row = r["overall"]["all"]
        lo, hi = row["ci95"]
        null = row.get("best_null", {})
        skipped = len(r.get("notes", {}).get("skipped_items", {}))
        lines.append(f"| {r['suite']} | {r['n_items']:,}{f' (+{skipped} ungradable, skipped)' if skipped else ''} | "
                     f"{pct(row['success_mean'])} [{pct(lo)}, {pct(hi)}] | {pct(null.get('success', 0))} ({null.get('name', '-')}) | "
                     f"{r.get('wall_s', '')} |")
    return lines


def agreement_line() -> list[str]:
    path = RESULTS / "bfcl" / "agreement.json"
    if not path.is_file():
        return []
    a = json.loads(path.read_text())
    t = a["total"]
    multi = sum(r["items"] for c, r in a["categories"].items() if c.startswith("multi_turn_"))
    return [f"BFCL graders vs the `bfcl-eval` {a['bfcl_eval_version']} package's own checkers (`ast_checker`; `multi_turn_checker` "
            f"for the {multi} multi-turn items): "
            f"**{t['answers'] - t['disagreements']:,} of {t['answers']:,} verdicts agree** ({t['disagreements']} disagreements) on "
            f"{t['items']:,} items of {len(a['categories'])} categories — reference answers, other acceptable answers "
            f"and perturbed wrong ones ({t['accepted']:,} accepted, {t['rejected']:,} rejected by BFCL); {len(a['skipped'])} items "
            "no answer can pass are skipped and listed (`benchmarks/bfcl_agreement.py`, `benchmarks/results/bfcl/agreement.md`)."]


def tau2_table() -> list[str]:
    rows = [json.loads(p.read_text()) for p in sorted((RESULTS / "tau2").glob("*.json"))]
    if not rows:
        return []
    lines = ["| tau2 domain | tasks | gold replay = 1.0, no unrecovered refused gold call | refused gold calls (recovered later) | "
             "do-nothing passes | checks graded | wall s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['domain']} | {r['tasks']} | {r['passed']}/{r['tasks']} | {len(r['gold_with_errors'])} "
                     f"({len(r['gold_errors_recovered'])}) | {r['do_nothing']['passed']}/{r['do_nothing']['n']} | "
                     f"{', '.join(r['graded_checks'])} | {r['wall_s']} |")
    for r in rows:
        for f in r["failures"]:
            errors = "; ".join(f"{e['name']}: {e['error']}" for e in f["gold_errors"]) or "none"
            lines += ["", f"{r['domain']} task {f['task']} scores {f['reward']} but is flagged: its gold trajectory ends in a refused "
                          f"call ({errors}), so its state check proves nothing (`benchmarks/results/tau2/{r['domain']}.json`)."]
    return lines


def render() -> str:
    parts = [START, *suites_table(), "", *agreement_line(), "", *tau2_table(), END]
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the README is out of date (default: rewrite it)")
    args = ap.parse_args()
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        sys.exit(f"README.md has no {START} ... {END} block")
    new = text[:text.index(START)] + render() + text[text.index(END) + len(END):]
    if args.check:
        sys.exit(0 if new == text else 1)
    readme.write_text(new, encoding="utf-8")
    print(render())


if __name__ == "__main__":
    main()
