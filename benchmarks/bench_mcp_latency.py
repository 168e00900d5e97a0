"""MCP call latency over stdio beside a direct in-process tool call, measured in the same run.

A theme is served by `python -m agentworld_gym.mcp serve THEME` (a real subprocess speaking MCP
over stdio); the same read tool with the same arguments is called N times through `MCPToolset`
(the synchronous bridge the env uses) and N times in-process (`Toolset.call` on a private DB copy).

    python benchmarks/bench_mcp_latency.py --calls 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Args:
    theme: str = "finance"
    """theme to serve and call"""
    calls: int = 200
    """timed calls per path (after warm-up)"""
    warmup: int = 20
    """untimed calls per path first"""
    out: str = "benchmarks/results/mcp_latency.json"
    """where the figures are written"""


def make_call(theme):
    """A read tool and valid arguments, taken from a synthesized level-1 task."""
    from agentworld_gym.synthesis import synthesize_task

    for seed in range(100):
        task = synthesize_task(theme, 1, seed)
        call = task.solution[0]
        if not theme.toolset[call["name"]].writes:
            return call["name"], dict(call["arguments"])
    raise RuntimeError("no read call found")


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, value in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(p.parse_args()))

    from agentworld_gym.envs import get_theme

    from agentworld_gym.actions import ToolCall
    from agentworld_gym.mcp.client import MCPToolset
    from agentworld_gym.world import open_copy

    theme = get_theme(args.theme)
    name, arguments = make_call(theme)
    conn = open_copy(theme.world(0).template)
    db = theme.db(conn)
    call = ToolCall(name, arguments)
    direct_result = theme.toolset.call(db, call)

    t = time.perf_counter()
    with MCPToolset([sys.executable, "-m", "agentworld_gym.mcp", "serve", args.theme], start_timeout=60) as ts:
        start_s = time.perf_counter() - t
        mcp_result = ts.call(name, arguments)
        assert mcp_result.content == direct_result.content, "the served tool must answer what the in-process tool answers"
        timed(lambda: ts.call(name, arguments), args.warmup)
        mcp_us = timed(lambda: ts.call(name, arguments), args.calls)
    timed(lambda: theme.toolset.call(db, call), args.warmup)
    direct_us = timed(lambda: theme.toolset.call(db, call), args.calls)
    conn.close()

    med_mcp, med_direct = statistics.median(mcp_us), statistics.median(direct_us)
    rows = {"tool": name, "calls": args.calls, "server_start_s": round(start_s, 2),
            "mcp_stdio_median_us": round(med_mcp, 1), "mcp_stdio_p90_us": round(sorted(mcp_us)[int(0.9 * len(mcp_us))], 1),
            "direct_median_us": round(med_direct, 1), "direct_p90_us": round(sorted(direct_us)[int(0.9 * len(direct_us))], 1),
            "ratio_mcp_over_direct": round(med_mcp / med_direct, 1)}
    print(f"theme={args.theme}  tool={name}  calls={args.calls}  server start {start_s:.2f}s")
    print(f"{'path':<34} {'median':>12} {'p90':>12}")
    print(f"{'MCP over stdio (MCPToolset.call)':<34} {med_mcp:>10,.0f}us {rows['mcp_stdio_p90_us']:>10,.0f}us")
    print(f"{'direct in-process (Toolset.call)':<34} {med_direct:>10,.1f}us {rows['direct_p90_us']:>10,.1f}us")
    print(f"{'ratio MCP / direct':<34} {rows['ratio_mcp_over_direct']:>11.1f}x")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": asdict(args), **rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
