"""`agentworld serve-openenv THEME`: an OpenEnv server (the openenv extra is imported only when it runs)."""

from __future__ import annotations

from ._common import DEFAULT_HOST


def add_commands(sub) -> None:
    p = sub.add_parser("serve-openenv", help="serve an env over OpenEnv's HTTP/WebSocket API (one world per session)")
    p.add_argument("theme", help="a theme (finance) or an env id (AgentWorld/pool-v0)")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--max-sessions", type=int, default=8, help="concurrent sessions, one world each (default 8)")
    p.add_argument("--idle-timeout", type=float, default=900.0, help="seconds a silent session is kept (default 900)")
    p.add_argument("--tasks", type=int, default=0, help="serve a fixed set of this many tasks, drawn once at start: a reset then "
                   "picks one instead of synthesizing one (a few ms each); 0 = synthesize per reset (default)")
    p.add_argument("--difficulty", type=int, default=1, help="task difficulty 1-5 (default 1)")
    p.add_argument("--workers", type=int, default=1, help="server processes sharing the port (SO_REUSEPORT), one core each; "
                   "a session stays on its process, and --max-sessions bounds each process (default 1)")
    p.set_defaults(func=cmd_serve_openenv)


def cmd_serve_openenv(args) -> int:
    from ..envs.registry import gym_id
    from .openenv import serve

    env_id = gym_id(args.theme)
    where = f"OpenEnv server for {env_id} on http://{args.host}:{args.port} (WebSocket sessions at /ws)"
    if args.workers > 1:
        where += f", {args.workers} worker processes of {args.max_sessions} sessions each"
    print(where, flush=True)
    extra = {}
    if args.tasks > 0:
        from ._common import as_task, draw_tasks

        extra["tasks"] = [as_task(row["task"]) for row in draw_tasks(env_id, args.tasks, difficulty=args.difficulty)]
    if args.workers > 1:
        from .openenv import serve_workers

        serve_workers(env_id, args.workers, args.host, args.port, args.max_sessions, args.idle_timeout,
                      on_ready=lambda: print(f"{args.workers} workers ready", flush=True), difficulty=args.difficulty, **extra)
        return 0
    serve(env_id, args.host, args.port, args.max_sessions, args.idle_timeout, difficulty=args.difficulty, **extra)
    return 0
