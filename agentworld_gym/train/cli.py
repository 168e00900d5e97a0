"""`agentworld train sft|grpo`: the trainer from the command line (flags mirror the config dataclasses)."""

from __future__ import annotations

import dataclasses
import json


def field_docs(cls) -> dict[str, str]:
    """The docstring under each field of a dataclass (the config's one place for what a field means)."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    docs = {}
    for field, doc in zip(body, body[1:], strict=False):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            docs[field.target.id] = " ".join(doc.value.value.split())
    return docs


def _add_config_flags(p, cls, skip=("tasks", "sampler", "examples", "themes", "difficulties")) -> None:
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        text = docs.get(f.name, "").replace("%", "%%")
        if f.type in ("bool", bool):
            p.add_argument(flag, action=__import__("argparse").BooleanOptionalAction, default=f.default, help=text)
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            p.add_argument(flag, type=kind, default=f.default, help=text)
    p.add_argument("--themes", help="comma-separated training themes (default: flagships minus the held-out suite's themes)")
    p.add_argument("--difficulties", default="1,2", help="comma-separated difficulty levels")
    p.add_argument("--tasks-file", help="a JSONL task file to train on instead of synthesized tasks")


def _config(cls, args):
    from ..tasks import load_tasks

    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in vars(args).items() if k in names and k not in ("themes", "difficulties", "tasks")}
    kwargs["themes"] = args.themes.split(",") if args.themes else None
    kwargs["difficulties"] = tuple(int(x) for x in args.difficulties.split(","))
    if args.tasks_file:
        kwargs["tasks"] = load_tasks(args.tasks_file)
    return cls(**kwargs)


def cmd_sft(args) -> int:
    from ..policies.model_source import check_model_source
    from . import SFTConfig, train_sft

    check_model_source(args.model)  # fail before building tasks, not minutes later
    print(json.dumps({"final": train_sft(_config(SFTConfig, args))}))
    return 0


def cmd_grpo(args) -> int:
    from ..policies.model_source import check_model_source
    from . import GRPOConfig, train_grpo

    check_model_source(args.model)  # fail before building tasks, not minutes later
    print(json.dumps({"final": train_grpo(_config(GRPOConfig, args))}))
    return 0


def add_commands(sub) -> None:
    from .grpo import GRPOConfig
    from .sft import SFTConfig

    p = sub.add_parser("train", help="cold-start SFT and multi-environment GRPO for LLM policies")
    tsub = p.add_subparsers(dest="train_command", required=True)
    s = tsub.add_parser("sft", help="SFT on oracle trajectories (loss on assistant tokens only)")
    _add_config_flags(s, SFTConfig)
    s.set_defaults(func=cmd_sft)
    g = tsub.add_parser("grpo", help="multi-environment GRPO (defaults: G=8, 32 tasks/step, clip 0.2/0.28)")
    _add_config_flags(g, GRPOConfig)
    g.set_defaults(func=cmd_grpo)
