"""`agentworld stats`, `agentworld discover`, `agentworld show`."""

from __future__ import annotations

import json


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
    from .pipeline import discover
    from .sources import read_catalog

    proposer = None
    if args.llm_url:
        from .llm import openai_proposer

        proposer = openai_proposer(args.llm_url, args.llm_model)
    report = discover(read_catalog(args.catalog), args.out, limit=args.limit, rounds=args.rounds, progress=not args.quiet, proposer=proposer)
    short = {k: (len(v) if isinstance(v, list) else v) for k, v in report.items()}
    print(json.dumps(short))
    print(f"wrote {args.out}/themes/*.json and {args.out}/report.json")
    return 0


def cmd_show(args) -> int:
    from .. import envs
    from ..errors import TaskError
    from ..synthesis import synthesize_task

    theme = envs.get_theme(args.theme)
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


def add_commands(sub) -> None:
    p = sub.add_parser("stats", help="counts over the registered pool (themes, tools, categories, validation)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=cmd_stats)
    p = sub.add_parser("discover", help="turn a catalog of real tools/servers into validated themes")
    p.add_argument("--catalog", required=True, help="Toucan/TensorBlock JSONL, a tool-schema JSON/JSONL file, or a directory of them")
    p.add_argument("--limit", type=int, default=None, help="at most this many sources")
    p.add_argument("--out", default="discovered", help="output directory (resumable: finished themes are kept)")
    p.add_argument("--rounds", type=int, default=0, help="complexification rounds per theme")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--llm-url", default=None, help="optional OpenAI-compatible endpoint that rewords the forged tools")
    p.add_argument("--llm-model", default="default", help="model name for --llm-url")
    p.set_defaults(func=cmd_discover)
    p = sub.add_parser("show", help="a theme's schema, tools and sample tasks")
    p.add_argument("theme", help="theme id, e.g. finance (`agentworld list` shows them)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample tasks")
    p.set_defaults(func=cmd_show)
