"""The `agentworld` command line.

Core commands live here; feature modules add their own through `add_commands(subparsers)`
(listed in COMMAND_MODULES) so each idea keeps one home.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

import gymnasium as gym

from . import envs
from .checks import check_values
from .errors import AgentWorldError, ConfigError
from .policies.llm import DTYPES
from .train.ray_rollouts import add_ray_options

# Modules that contribute subcommands: each defines add_commands(subparsers).
COMMAND_MODULES: tuple[str, ...] = ("agentworld_gym.arena.cli", "agentworld_gym.train.cli", "agentworld_gym.mcp.cli",
                                    "agentworld_gym.synthesis.cli", "agentworld_gym.discovery.cli",
                                    "agentworld_gym.integrations.cli")


def cmd_list(args) -> int:
    rows = [
        {"id": envs.env_id(e.id), "theme": e.id, "category": e.category, "subcategory": e.subcategory,
         "n_tools": e.n_tools if e.n_tools is not None else len(envs.get_theme(e.id).toolset), "source": e.source}
        for e in envs.entries()
        if args.source is None or e.source == args.source
    ]
    if args.source in (None, "release"):  # Agent-World release environments remembered by `agentworld import`
        from .mcp.registration import env_id_for, read_index

        rows += [{"id": env_id_for(rid), "theme": f"release-{rid}", "category": e.get("taxonomy", {}).get("L1", "?"),
                  "subcategory": " / ".join(e.get("taxonomy", {}).get(k, "?") for k in ("L2", "L3")), "n_tools": e.get("n_tools", 0),
                  "source": "release"}
                 for rid, e in read_index().items()]
    if args.json:
        print(json.dumps(rows, indent=None))
        return 0
    width = max((len(r["id"]) for r in rows), default=10)
    for r in rows:
        print(f"{r['id']:<{width}}  {r['n_tools']:>3} tools  {r['category']} / {r['subcategory']}  [{r['source']}]")
    print(f"{len(rows)} environments")
    return 0


def cmd_play(args) -> int:
    from .play import run

    return run(args)


def bench_env(env_id: str, policy_spec: str, episodes: int, seed: int = 0, nulls: bool = False, device: str | None = None,
              dtype: str | None = None, **make_kwargs) -> dict:
    """Run `episodes` episodes of one env with one policy; returns the summary dict `bench` prints.
    With nulls, the null baselines play the same seeds (the same tasks) and the best one is reported."""
    from tqdm import tqdm

    from .policies import make_policy, run_episode
    from .suites.core import check_device, wilson

    env = gym.make(env_id, **make_kwargs)
    policy = make_policy(policy_spec, env=env, seed=seed, device=check_device(device), dtype=dtype)
    results = [run_episode(env, policy, seed=seed + i) for i in tqdm(range(episodes), desc=f"{env_id} {policy_spec}", leave=False, disable=None)]
    n = max(len(results), 1)
    wins = sum(r["success"] for r in results)
    summary = {
        "env": env_id, "policy": policy_spec, "episodes": len(results),
        "success_rate": wins / n, "ci95": [round(v, 4) for v in wilson(wins, len(results))],
        "mean_reward": sum(r["reward"] for r in results) / n,
        "mean_turns": sum(r["turns"] for r in results) / n,
    }
    if nulls:
        from .policies.null import null_policies

        rates = {name: sum(run_episode(env, p, seed=seed + i)["success"] for i in range(episodes)) / n
                 for name, p in tqdm(null_policies(seed).items(), desc="null baselines", leave=False, disable=None)}
        best = max(rates, key=lambda k: (rates[k], k == "do-nothing"))
        summary["best_null"] = {"name": best, "success": rates[best]}
    env.close()
    return summary


def env_options(env_id: str, options: dict) -> dict:
    """The options given on the command line (not None) that the env's factory takes; an option it does not
    take is a ConfigError naming what it does take (a tau2 domain has no difficulty, a theme no judge)."""
    import inspect

    given = {k: v for k, v in options.items() if v is not None}
    entry = gym.spec(env_id).entry_point
    factory = gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry
    params = inspect.signature(factory).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return given  # the env checks its own keywords (AgentWorldEnv: check_env_args)
    unknown = [k for k in given if k not in params]
    if unknown:
        takes = [f"--{k.replace('_', '-')}" for k in options if k in params]
        raise ConfigError(f"Expected options that {env_id} takes ({', '.join(takes) or 'none of --difficulty/--user/--judge'}), "
                          f"got --{unknown[0].replace('_', '-')}. Drop it for this env.")
    return given


def cmd_bench(args) -> int:
    if args.suite:
        from .suites.core import cmd_suite

        return cmd_suite(args)
    if getattr(args, "ray", None) is not None:
        raise ConfigError("Expected --suite heldout or all with --ray, got --env (one env plays its episodes in order). "
                          "Use --suite heldout --ray, or drop --ray.")
    if args.env is None:
        raise AgentWorldError("Expected --env THEME (e.g. finance or AgentWorld/finance-v0) or a suite from `agentworld bench --suite`.")
    episodes = args.episodes if args.episodes is not None else 20
    env_id = envs.registry.gym_id(args.env)
    options = {"difficulty": args.difficulty, "user": getattr(args, "user", None), "judge": getattr(args, "judge", None)}
    summary = bench_env(env_id, args.policy, episodes, args.seed, nulls=not args.no_nulls, device=args.device, dtype=args.dtype,
                        **env_options(env_id, options))
    if args.json:
        print(json.dumps(summary))
    else:
        lo, hi = summary["ci95"]
        null = summary.get("best_null")
        print(f"{summary['env']}  policy={summary['policy']}  n={summary['episodes']}  "
              f"success={summary['success_rate']:.3f} [95% {lo:.3f}, {hi:.3f}]  reward={summary['mean_reward']:.3f}  "
              f"turns={summary['mean_turns']:.2f}" + (f"  best null={null['success']:.3f} ({null['name']})" if null else ""))
    return 0


def cmd_demo(args) -> int:
    """A tour: the pool, one oracle episode, and an oracle-vs-random table over the flagship themes."""
    from collections import Counter

    from .policies import OraclePolicy, run_episode
    from .wrappers.chat import tool_call_arguments

    all_entries = envs.entries()
    print(f"== The pool: {len(all_entries)} registered environments ==")
    for category, n in sorted(Counter(e.category for e in all_entries).items()):
        print(f"  {n:>5}  {category}")

    print("\n== One episode on AgentWorld/finance-v0 (difficulty 2), played by the oracle ==")
    env = gym.make("AgentWorld/finance-v0", difficulty=2)
    result = run_episode(env, OraclePolicy(env), seed=args.seed)
    for m in result["info"]["messages"][1:]:
        content = m["content"] if m["role"] != "assistant" or not m.get("tool_calls") else json.dumps(
            [{"name": c["function"]["name"], "arguments": tool_call_arguments(c)} for c in m["tool_calls"]])
        print(f"  [{m['role']}{' ' + m['name'] if m.get('name') else ''}] {content[:300]}")
    print(f"  -> reward {result['reward']}, verification {json.dumps(result['info']['verification']['checks'])}")
    env.close()

    flagship = [e.id for e in all_entries if e.source == "flagship"]
    print(f"\n== Oracle vs random on {len(flagship)} flagship themes ({args.episodes} episodes each, difficulty 1) ==")
    print(f"  {'env':<32} {'oracle':>7} {'random':>7} {'turns(oracle)':>14}")
    for theme_id in flagship:
        oracle = bench_env(envs.env_id(theme_id), "oracle", args.episodes, args.seed)
        rand = bench_env(envs.env_id(theme_id), "random", args.episodes, args.seed)
        print(f"  {envs.env_id(theme_id):<32} {oracle['success_rate']:>7.2f} {rand['success_rate']:>7.2f} {oracle['mean_turns']:>14.2f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentworld", description="Agent-World tool-use environments for Gymnasium.")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors (anywhere on the line; or AGENTWORLD_DEBUG=1)")
    parser.add_argument("--pool", action="append", metavar="DIR",
                        help="register the themes `agentworld discover --out DIR` kept, for any subcommand (anywhere on the line, "
                             "repeatable; or AGENTWORLD_POOL=DIR[:DIR...]); their names start with 'local.'")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list the registered environments")
    p.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    p.add_argument("--source", help="only themes from this source (flagship, toucan, ...)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("play", help="play episodes yourself in the terminal (/help inside)")
    p.add_argument("theme", help="a theme (finance) or env id (AgentWorld/finance-v0, tau2-mock, release-<id>); `agentworld list` shows them")
    p.add_argument("--difficulty", type=int, default=1, help="task difficulty 1-5 (default: %(default)s)")
    p.add_argument("--task-kind", default="graph", choices=("graph", "programmatic", "mixed", "rules"), help="how tasks are synthesized (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode; /reset moves to the next (default: %(default)s)")
    p.add_argument("--max-turns", type=int, default=20, help="turns before the episode is cut off (default: %(default)s)")
    p.add_argument("--color", default="auto", choices=("auto", "always", "never"),
                   help="colours: auto uses them on a terminal unless NO_COLOR is set (default: %(default)s)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("demo", help="a short tour: the pool, an oracle episode, a benchmark table")
    p.add_argument("--episodes", type=int, default=10, help="episodes per flagship theme and policy in the table")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("bench", help="evaluate a policy on an env or a benchmark suite",
                       description="Evaluate a policy on one env (--env) or a suite (--suite). Suite scores carry n, "
                                   "mean +- std over --runs, a 95%% interval and the best null baseline on the same items.")
    p.add_argument("--env", help="theme or env to run, e.g. finance or AgentWorld/finance-v0 (default: none; give --env or --suite)")
    p.add_argument("--suite", choices=("heldout", "bfcl", "tau2", "all"),
                   help="a benchmark suite instead of one env; 'all' runs every suite into one --out folder with an HTML summary "
                        "(default: none)")
    p.add_argument("--policy", default="oracle",
                   help="oracle | random | smollm2-135m | hf:<model> | openai:<model>@<base_url> (default: %(default)s)")
    p.add_argument("--heldout", choices=("v2", "v3"), default="v2",
                   help="suite heldout: which freeze; v2 the classic requests the published training figures used, v3 the same "
                        "themes with a person's requests (tasks v3) (default: %(default)s)")
    p.add_argument("--categories", nargs="+", metavar="NAME",
                   help="suite: BFCL categories (any the bfcl-eval package ships), tau2 domains or held-out L1 categories; "
                        "with --suite all each suite takes the names it knows (default: every single-turn BFCL category, "
                        "every installed tau2 domain, every held-out category)")
    p.add_argument("--episodes", type=int, default=None,
                   help="env: episodes to play (default 20); suite: items sampled stratified over categories and "
                        "difficulty levels (default: every item)")
    p.add_argument("--runs", type=int, default=1, help="suite: repeat the policy's run and report mean +- std (default: %(default)s)")
    p.add_argument("--temperature", type=float, default=0.0, help="suite: LLM sampling temperature, 0 = greedy (default: %(default)s)")
    p.add_argument("--bfcl-path", help="suite bfcl: a folder of BFCL_v4_*.json + possible_answer/ instead of the installed "
                                       "bfcl-eval package's data (default: the package's)")
    p.add_argument("--out", help="suite: write OUT.json (one row per item), OUT.md and OUT.png; --suite all: a folder "
                                 "(default: no files; --suite all: bench-<policy>/)")
    p.add_argument("--no-nulls", action="store_true", help="skip the null baselines (default: run them on the same tasks)")
    p.add_argument("--device", help="torch device of an hf:/smollm2-135m policy: cpu, cuda or cuda:N (default: cuda when visible, else cpu)")
    p.add_argument("--dtype", choices=DTYPES, help="weights of an hf:/smollm2-135m policy: bfloat16 or float16 halve memory and "
                                                   "speed up inference (tokens differ slightly from float32) (default: float32)")
    p.add_argument("--difficulty", type=int, default=None, help="env: task difficulty 1-5, for envs that synthesize tasks (default: the env's own, 1)")
    p.add_argument("--user", help="tau2 (suite or env) or a theme env: who plays the user holding the task's private facts: scripted | "
                                  "solo (the agent reads the whole task; labelled so) | smollm2-135m | hf:<model> | openai:<model>@<url> "
                                  "(default: scripted for tau2, solo for themes)")
    p.add_argument("--judge", help="tau2: a policy spec that grades nl_assertions, reported apart from the reward (default: not graded)")
    p.add_argument("--seed", type=int, default=0, help="seed of the episodes and of --episodes sampling (default: %(default)s)")
    add_ray_options(p, "suite heldout (or all: its heldout part): its episodes")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table (default: a table)")
    p.set_defaults(func=cmd_bench)

    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    for each in all_parsers(parser):
        each.formatter_class = DefaultsHelpFormatter
    return parser


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless it is empty (None, False) or already named."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        if any(action.default is empty for empty in (None, False, argparse.SUPPRESS)) or "default" in text or not (action.option_strings or action.nargs == "?"):
            return text
        return f"{text} (default: %(default)s)".lstrip()


def all_parsers(parser: argparse.ArgumentParser):
    """The parser and every subcommand's parser, depth first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases repeat a parser
                yield from all_parsers(sub)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is accepted anywhere on the line (and as AGENTWORLD_DEBUG=1): a traceback instead of one line
    debug = "--debug" in argv or os.environ.get("AGENTWORLD_DEBUG", "") not in ("", "0")
    argv, pools = pool_options([a for a in argv if a != "--debug"])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_values(vars(args), getattr(args, "train_command", None) or args.command, option_labels(parser, args))  # before any work
        from .discovery.load import load_pool

        for folder in pools:  # discovered themes, named like any other theme in every subcommand
            load_pool(folder)
        return args.func(args) or 0
    except KeyboardInterrupt:
        print("agentworld: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"agentworld: error: {one_line_error(exc)}", file=sys.stderr)
        return 2 if isinstance(exc, (AgentWorldError, gym.error.Error)) else 1


def option_labels(parser: argparse.ArgumentParser, args) -> dict[str, str]:
    """dest -> the option string the user typed it with (the longest: --difficulty, not -d), for the command run."""
    path = [args.command] + ([args.train_command] if getattr(args, "train_command", None) else [])
    for each in all_parsers(parser):
        if each.prog.split()[1:] == path:
            return {a.dest: max(a.option_strings, key=len) if a.option_strings else a.dest for a in each._actions}
    return {}


def pool_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """`--pool DIR` / `--pool=DIR` taken from anywhere on the line (like --debug), plus $AGENTWORLD_POOL's folders."""
    rest, pools = [], [p for p in os.environ.get("AGENTWORLD_POOL", "").split(os.pathsep) if p]
    items = iter(argv)
    for arg in items:
        if arg == "--pool":
            pools.append(next(items, ""))
        elif arg.startswith("--pool="):
            pools.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    if "" in pools:
        raise SystemExit("agentworld: error: --pool needs a folder written by `agentworld discover --out DIR`")
    return rest, pools


def one_line_error(exc: BaseException) -> str:
    """The error without a traceback: our typed errors are phrased for users and printed whole (some list
    the accepted choices below their first line); others get their type, first line and a pointer to --debug."""
    message = str(exc).strip()
    first = message.splitlines()[0] if message else ""
    if isinstance(exc, (AgentWorldError, gym.error.Error)):
        return message or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None:  # a missing or unwritable path needs no traceback
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    return f"{type(exc).__name__}: {first} (run with --debug for the traceback)"


if __name__ == "__main__":
    sys.exit(main())
