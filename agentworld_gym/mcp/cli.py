"""`agentworld serve` and `agentworld import` (listed in agentworld_gym.cli.COMMAND_MODULES)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError


def cmd_serve(args) -> int:
    import os

    from .server import serve

    serve(args.theme, transport=args.transport, host=args.host, port=args.port, db_seed=args.db_seed,
          max_sessions=args.max_sessions, auth_token=args.auth_token or os.environ.get("AGENTWORLD_SERVE_TOKEN") or None,
          sessions_per_client=args.sessions_per_client, idle_timeout=args.idle_timeout, read_timeout=args.read_timeout,
          keep_alive=args.keep_alive, max_connections=args.max_connections)
    return 0


def cmd_import(args) -> int:
    if args.source == "agentworld-release":
        from .release import register_release

        if args.path is None:
            raise ConfigError("Expected a release folder: agentworld import agentworld-release PATH (the folder holding environment_mix/ "
                              "or its environments).")
        report = register_release(args.path, build_tasks=not args.no_tasks, unsafe=args.unsafe, progress=not args.json)
        def why(reasons: dict) -> str:
            return f" ({'; '.join(f'{q}: {r}' for q, r in reasons.items())})" if reasons else ""

        report["notes"] = [f"{Path(gid).name}: {r['questions']} questions, {r['loaded']} release tasks loaded, {r['replayed']} replayed to 1.0, "
                           f"{len(r['dropped'])} dropped{why(r['dropped'])}, {len(r['not_replayed'])} not deterministic{why(r['not_replayed'])}, "
                           f"{r['criteria_graded']} success criteria checked, {r['criteria_not_graded']} not graded, "
                           f"{r['synthesized']} synthesized" for gid, r in report["tasks"].items()]
        report["notes"].append(f"remembered in {report['index']}: later processes register these ids on `import agentworld_gym`")
    else:
        from ..suites.tau2 import import_tau2

        report = import_tau2(args.path, replay=args.replay)
    if args.json:
        print(json.dumps(report, indent=None, default=str))
        return 0
    for env_id in report["registered"]:
        print(f"registered {env_id}")
    for name, why in report["failed"].items():
        print(f"not loaded {name}: {why}")
    for line in report.get("notes", []):
        print(line)
    print(f"{len(report['registered'])} registered, {len(report['failed'])} not loaded")
    return 0 if report["registered"] or not report["failed"] else 1


def add_commands(sub) -> None:
    p = sub.add_parser("serve", help="serve a theme as an MCP server (stdio or streamable HTTP)")
    p.add_argument("theme", help="theme id, e.g. finance")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="stdio for a client that starts the server, http for streamable HTTP")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback by default)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port")
    p.add_argument("--db-seed", type=int, default=0, help="which world to build")
    p.add_argument("--max-sessions", type=int, default=256,
                   help="worlds kept at once; the least recently used is dropped and its client told 'session expired'")
    p.add_argument("--auth-token", default=None,
                   help="HTTP: require 'Authorization: Bearer TOKEN' on every request (default: $AGENTWORLD_SERVE_TOKEN, else none)")
    p.add_argument("--sessions-per-client", type=int, default=16,
                   help="worlds one client (an IP address on HTTP) may hold at once; start_session past it is refused")
    p.add_argument("--idle-timeout", type=float, default=900.0,
                   help="seconds without a call after which a session and its world end (its client is told 'session expired')")
    p.add_argument("--read-timeout", type=float, default=30.0, help="HTTP: seconds a request body may take to arrive (else 408)")
    p.add_argument("--keep-alive", type=float, default=5.0, help="HTTP: seconds an idle keep-alive connection stays open")
    p.add_argument("--max-connections", type=int, default=256, help="HTTP: connections served at once (503 beyond)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("import", help="register external environments (Agent-World release, tau2-bench)")
    p.add_argument("source", choices=("agentworld-release", "tau2"), help="what to import: an Agent-World release folder or a tau2-bench domain")
    p.add_argument("path", nargs="?", help="release folder, or a tau2 domain folder it must identify as an installed domain (default: every installed tau2 domain package)")
    p.add_argument("--replay", action="store_true", help="tau2: replay every task's gold actions and report the scores")
    p.add_argument("--unsafe", action="store_true",
                   help="agentworld-release: run tool code WITHOUT the sandbox (only for releases you trust)")
    p.add_argument("--no-tasks", action="store_true",
                   help="agentworld-release: only register; tasks are loaded and replayed at the first gym.make instead")
    p.add_argument("--json", action="store_true", help="print the registered ids (and replay scores) as JSON")
    p.set_defaults(func=cmd_import)
