"""Evaluation on Ray: held-out suite episodes per second played serially and on 1, 2 and 4 Ray env workers.

Every row plays the same tasks with the same seeds as the serial baseline measured in the same run (the
`agentworld bench --suite heldout --ray` path, `bench._play_tasks`), and checks that each episode's reward and
turns equal the serial run's. The Ray rows run on a local Ray bound to 127.0.0.1 with 4 CPUs declared
(whatever the machine has: on a 2-core machine 4 workers share 2 cores), or on RAY_ADDRESS's cluster.

    nice -n 10 .venv/bin/python benchmarks/bench_ray.py                      # 300 episodes, oracle
    .venv/bin/python benchmarks/bench_ray.py --episodes 60 --workers 1,2     # quick
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn) -> tuple[list[dict], float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300, help="held-out tasks, one episode each (default: %(default)s)")
    parser.add_argument("--policy", default="oracle", help="a policy spec made per episode in the worker (default: %(default)s)")
    parser.add_argument("--workers", default="1,2,4", help="comma-separated env worker counts (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(RESULTS / "bench_ray.json"))
    args = parser.parse_args()

    import ray

    from agentworld_gym.suites.core import _play_tasks, heldout_suite
    from agentworld_gym.train.ray_rollouts import EnvWorkers

    counts = [int(w) for w in args.workers.split(",")]
    tasks = heldout_suite(args.episodes, args.seed).items
    _play_tasks(tasks[:5], args.policy, args.seed)  # warm imports and theme caches for the serial row
    load0 = os.getloadavg()[0]
    serial, serial_s = timed(lambda: _play_tasks(tasks, args.policy, args.seed))
    rows = [{"mode": "serial", "workers": 0, "episodes": len(serial), "seconds": round(serial_s, 2),
             "episodes_per_s": round(len(serial) / serial_s, 1), "ratio_to_serial": 1.0, "identical": True,
             "load_avg": [round(load0, 2), round(os.getloadavg()[0], 2)]}]
    key = [(r["task_id"], r["reward"], r["turns"], r["success"]) for r in serial]
    if not os.environ.get("RAY_ADDRESS"):
        ray.init(num_cpus=max(counts), include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    for n in counts:
        pool = EnvWorkers(n)
        try:
            _play_tasks(tasks[:4 * n], args.policy, args.seed, workers=pool)  # start the actors and warm their imports
            load0 = os.getloadavg()[0]
            remote, secs = timed(lambda pool=pool: _play_tasks(tasks, args.policy, args.seed, workers=pool))
        finally:
            pool.close()
        rows.append({"mode": "ray", "workers": n, "episodes": len(remote), "seconds": round(secs, 2),
                     "episodes_per_s": round(len(remote) / secs, 1), "ratio_to_serial": round(serial_s / secs, 2),
                     "identical": [(r["task_id"], r["reward"], r["turns"], r["success"]) for r in remote] == key,
                     "load_avg": [round(load0, 2), round(os.getloadavg()[0], 2)]})
    ray.shutdown()

    result = {"policy": args.policy, "episodes": len(tasks), "seed": args.seed, "cpu_count": os.cpu_count(),
              "ray_address": os.environ.get("RAY_ADDRESS") or "local (127.0.0.1)", "rows": rows}
    lines = [f"bench_ray: {len(tasks)} held-out episodes, policy {args.policy}, {os.cpu_count()} cores",
             "| mode | workers | episodes | seconds | episodes/s | x serial | identical to serial | load avg |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    lines += [f"| {r['mode']} | {r['workers']} | {r['episodes']} | {r['seconds']} | {r['episodes_per_s']} | {r['ratio_to_serial']} | "
              f"{'yes' if r['identical'] else 'NO'} | {r['load_avg'][0]}-{r['load_avg'][1]} |" for r in rows]
    print("\n".join(lines))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    if not all(r["identical"] for r in rows):
        raise SystemExit("bench_ray: a Ray run differed from the serial run")


if __name__ == "__main__":
    main()
