"""`agentworld stats`, `agentworld discover`, `agentworld show`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path


def pool_stats() -> dict:
    """Counts over every registered theme (flagships loaded; catalog themes read from the index)."""
    from .. import envs
    from ..envs import catalog, taxonomy

    rows = envs.entries()
    tools = 0
    for e in rows:
        tools += e.n_tools if e.n_tools is not None else len(envs.get_theme(e.id).toolset)
    by_l1: dict[str, int] = {}
    for e in rows:
        by_l1[e.category] = by_l1.get(e.category, 0) + 1
    known_l2 = {c.name for c in taxonomy.L2.values()}
    return {
        "themes": len(rows), "tools": tools,
        "categories": len({e.category for e in rows if e.category in {c.name for c in taxonomy.L1.values()}}),
        "subcategories": len({e.subcategory for e in rows if e.subcategory in known_l2}),
        "flagship": sum(e.source == "flagship" for e in rows),
        "catalog": sum(e.source == "catalog" for e in rows), "toucan": sum(e.source == "toucan" for e in rows),
        "tool_test_pass_rate": catalog.STATS.get("tool_test_pass_rate"),
        "tools_tested": catalog.STATS.get("tools_tested"), "schema_fingerprints": catalog.STATS.get("fingerprints"),
        "per_l1": dict(sorted(by_l1.items())),
    }


def cmd_stats(args) -> int:
    stats = pool_stats()
    if args.json:
        print(json.dumps(stats))
        return 0
    for k, v in stats.items():
        if k != "per_l1":
            print(f"{k:>22}: {v}")
    for k, v in stats["per_l1"].items():
        print(f"{v:>6}  {k}")
    return 0


def cmd_discover(args) -> int:
    """Read every input (shape detected, or --format), run the pipeline, print and save the summary.
    Exit status 1 when no theme was kept; an input of no accepted shape raises InputFormatError (status 2)."""
    from ..errors import ConfigError
    from .formats import read_input, read_mcp
    from .pipeline import discover, write_json_atomic
    from .summary import format_summary, run_summary

    if not args.catalog and not args.mcp:
        raise ConfigError("Expected an input, got none. Give --catalog PATH (a file or folder of tool specs) and/or "
                          "--mcp 'COMMAND' (a live MCP server).")
    inputs = [read_input(args.catalog, args.format, args.name)] if args.catalog else []
    for cmd in args.mcp:
        if not args.quiet:
            print(f"listing the tools of the MCP server {cmd!r} ...", file=sys.stderr)
        inputs.append(read_mcp(cmd, args.name if len(args.mcp) == 1 and not args.catalog else None))
    proposer = None
    if args.llm_url:
        from .llm import openai_proposer

        proposer = openai_proposer(args.llm_url, args.llm_model)
    items = [item for inp in inputs for item in inp.items]
    report = discover(items, args.out, limit=args.limit, rounds=args.rounds, progress=not args.quiet, proposer=proposer)
    summary = run_summary(inputs, args.out, args.limit)
    report.update(ok=summary["ok"], summary=summary)
    write_json_atomic(Path(args.out) / "report.json", report)
    print(format_summary(summary))
    print(f"wrote {args.out}/themes/*.json and {args.out}/report.json (per-tool reasons under summary.tools)")
    if summary["ok"]:
        print(f"use them: agentworld_gym.load_pool({str(args.out)!r})  ->  gym.make('AgentWorld/local.<id>-v0'); from the command "
              f"line, add --pool {shlex.quote(str(args.out))} to any subcommand (agentworld play local.<id> --pool ...)")
    return 0 if summary["ok"] else 1


def cmd_show(args) -> int:
    from .. import envs
    from ..errors import TaskError, UnknownThemeError
    from ..synthesis import synthesize_task

    try:
        theme = envs.get_theme(args.theme)
    except UnknownThemeError:
        return show_external(envs.registry.gym_id(args.theme))  # an unknown name raises here, with did-you-mean
    spec = theme.spec
    print(f"{spec.id}: {spec.title}  [{spec.category} / {spec.subcategory} / {spec.label}]  source={spec.source}")
    print("\nSchema:")
    for t in spec.tables:
        cols = ", ".join(f"{c.name}{' -> ' + c.arg if c.gen == 'fk' else ''}" for c in t.columns)
        print(f"  {t.name} ({t.rows} rows): {cols}")
    print(f"\nTools ({len(theme.toolset)}):")
    for tool in theme.toolset:
        params = ", ".join(f"{p}{'' if p in tool.parameters.get('required', ()) else '?'}" for p in tool.parameters["properties"])
        print(f"  [{tool.mode:<5}] {tool.name}({params})  - {tool.description}")
    print("\nSample tasks:")
    for level in (1, 2, 3):
        try:
            task = synthesize_task(theme, level, args.seed)
        except TaskError as exc:
            print(f"  level {level}: none ({exc})")
            continue
        print(f"  level {level}: {task.instruction}\n      gold: {json.dumps(task.solution)[:300]}  answer: {task.answer!r}")
    return 0


def show_external(gym_id: str) -> int:
    """`agentworld show` for an env whose world lives elsewhere (tau2, a release environment): its tools and tasks,
    read from the env itself (which starts its server); a pool lists how many themes it draws from."""
    import gymnasium as gym

    env = gym.make(gym_id)
    try:
        inner = env.unwrapped
        if not hasattr(inner, "backend"):  # a pool env
            print(f"{gym_id}: a pool drawing one of {len(inner.theme_ids)} themes per reset; `agentworld show THEME` shows one")
            return 0
        tools = inner.backend.tools
        print(f"{gym_id}: external environment {inner.backend.id!r} ({type(inner.backend).__name__})")
        print(f"\nTools ({len(tools)}):")
        for schema in tools:
            fn = schema["function"]
            params = fn.get("parameters", {})
            args = ", ".join(f"{p}{'' if p in params.get('required', ()) else '?'}" for p in params.get("properties", {}))
            first_line = (fn.get("description") or "").strip().split("\n", 1)[0]
            print(f"  {fn['name']}({args})  - {first_line}")
        print(f"\nTasks ({len(inner.tasks)}), the first three:")
        for task in inner.tasks[:3]:
            print(f"  level {task.difficulty}: {task.instruction[:300]}")
        return 0
    finally:
        env.close()


def add_commands(sub) -> None:
    from .formats import SHAPES

    files = [s for s in SHAPES if s != "mcp-command"]
    p = sub.add_parser("stats", help="counts over the registered pool (themes, tools, categories, validation)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=cmd_stats)
    p = sub.add_parser("discover", help="turn your tools (a spec file or a live MCP server) into validated themes")
    p.add_argument("--catalog", default=None, help="a file (or folder of files) of tool specs in any accepted shape, detected by "
                   "shape: " + ", ".join(files))
    p.add_argument("--mcp", action="append", default=[], metavar="COMMAND",
                   help="a live MCP server to read tools from, e.g. --mcp 'python my_server.py' (repeatable)")
    p.add_argument("--format", default=None, choices=files, help="read --catalog as this shape instead of detecting it")
    p.add_argument("--name", default=None, help="theme name for a single-server input (default: the file or command name)")
    p.add_argument("--limit", type=int, default=None, help="at most this many sources")
    p.add_argument("--out", default="discovered", help="output directory (resumable: finished themes are kept)")
    p.add_argument("--rounds", type=int, default=0, help="complexification rounds per theme")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--llm-url", default=None, help="optional OpenAI-compatible endpoint that rewords the forged tools")
    p.add_argument("--llm-model", default="default", help="model name for --llm-url")
    p.set_defaults(func=cmd_discover)
    p = sub.add_parser("show", help="a theme's schema, tools and sample tasks")
    p.add_argument("theme", help="a theme (finance or AgentWorld/finance-v0) or another env (tau2-mock, release-<id>); "
                   "`agentworld list` shows them")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample tasks")
    p.set_defaults(func=cmd_show)
