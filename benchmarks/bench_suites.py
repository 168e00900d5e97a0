"""`agentworld bench` on every suite with one policy: the figures behind the README's suite table.

    python benchmarks/bench_suites.py [--policy oracle] [--suites heldout bfcl tau2] [--out benchmarks/results/suites]

Writes <out>/<suite>_<policy>.json/.md/.png per suite (a finished suite is skipped on rerun, so a
killed run resumes), each score with n, a 95% interval and the best null baseline on the same items.
The tau2 suite replays every task of every installed domain (~25 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentworld_gym.suites.core import SUITES, run_suite, save_result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="oracle", help="policy spec (default: %(default)s)")
    ap.add_argument("--suites", nargs="*", default=list(SUITES), help="suites to run (default: all)")
    ap.add_argument("--runs", type=int, default=1, help="runs per suite (default: %(default)s)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "suites"), help="results folder (default: %(default)s)")
    args = ap.parse_args()
    tag = args.policy.replace(":", "_").replace("/", "_").replace("@", "_")
    for suite in args.suites:
        stem = Path(args.out) / f"{suite}_{tag}"
        if stem.with_suffix(".json").is_file():
            continue
        result = run_suite(suite, args.policy, runs=args.runs)
        save_result(result, stem)
        print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
