"""Fingerprints of synthesized tasks, to show a speed change leaves every task as it was.

    AGENTWORLD_REQUESTS=person python benchmarks/task_fingerprints.py --out /tmp/person.json [--check old.json]

One sha256 per task (`synthesize_task(theme, level, seed, kind, check=True, fallback=True)`) of the task's fields
(id, instruction, answer, solution, program, state hash, ...) and one of its features, over the flagship themes,
levels 1-5, seeds and kinds. `--check` compares with an earlier run and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from agentworld_gym.envs import entries, get_theme

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym.errors import TaskError
from agentworld_gym.synthesis import LEVELS, synthesize_task
from agentworld_gym.synthesis.persona import enabled


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr, ensure_ascii=False).encode()).hexdigest()[:16]


def fingerprints(themes: list[str], kinds: list[str], seeds: int, levels=LEVELS) -> dict[str, list[str]]:
    """{"theme kind level seed": [task fingerprint, features fingerprint]} ("error" and the message's for a TaskError)."""
    out = {}
    for t in themes:
        for kind in kinds:
            for level in levels:
                for seed in range(seeds):
                    try:
                        task = synthesize_task(get_theme(t), level, seed, kind, check=True, fallback=True)
                    except TaskError as exc:
                        out[f"{t} {kind} {level} {seed}"] = ["error", _sha(str(exc))]
                        continue
                    d = task.to_dict()
                    features = d.pop("features")
                    out[f"{t} {kind} {level} {seed}"] = [_sha(d), _sha(features)]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--themes", default="")
    p.add_argument("--kinds", default="graph,programmatic,mixed")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", default="")
    p.add_argument("--check", default="")
    a = p.parse_args()
    themes = a.themes.split(",") if a.themes else sorted(e.id for e in entries() if e.source == "flagship")
    start = time.process_time()
    fp = fingerprints(themes, a.kinds.split(","), a.seeds)
    print(f"{len(fp)} tasks ({'person' if enabled() else 'classic'} requests), {time.process_time() - start:.1f} s CPU")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(fp, f, indent=0, sort_keys=True)
    if a.check:
        with open(a.check) as f:
            old = json.load(f)
        diff = sorted(k for k in old.keys() | fp.keys() if old.get(k, [None])[0] != fp.get(k, [None])[0])
        feat = sorted(k for k in old.keys() & fp.keys() if old[k] != fp[k] and k not in diff)
        print(f"tasks changed: {len(diff)} {diff[:10]}; features only changed: {len(feat)} {feat[:10]}")
        sys.exit(1 if diff or feat else 0)


if __name__ == "__main__":
    main()
