"""The one prompt: how an episode opens for a model, wherever the model meets it.

`agentworld train`, `agentworld bench`, `agentworld play` (what it shows the player), HFPolicy/OpenAIPolicy and every integration
(TRL, verifiers, SkyRL, OpenEnv) open a task's dialogue with `render_prompt`: a system message holding the
theme's instructions and business rules, its tools as one signature a line, and the call format; then the
user's request. A checkpoint is evaluated on the prompt it was trained on; checkpoints record
`PROMPT_VERSION`, and this number changes whenever what `render_prompt` writes changes.

The tool list is compact (names and argument names; full JSON schemas would cost ~1,500 tokens a theme,
most of a small model's context): the argument types and descriptions stay in `info["tools"]`, which
the env validates every call against.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path

from .theme import TOOLS_HEADER, USE_TOOLS

# 1: tool signatures and call format only (no instructions, no business rules): the trainer and bench before version 2.
# 2: the theme's instructions and business rules, then the tool signatures and call format.
PROMPT_VERSION = 2

CALL_FORMAT = ('Reply with one tool call as JSON: {"name": "<tool>", "arguments": {...}}. '
               'Finish with {"name": "submit", "arguments": {"answer": "<answer>"}}.')


def tool_signature(schema: dict) -> str:
    """`name(arg, optional_arg?)` from an OpenAI tool schema ('?' marks an optional argument)."""
    fn = schema.get("function", schema)
    params = fn.get("parameters") or {}
    required = set(params.get("required") or ())
    args = ", ".join(p if p in required else p + "?" for p in (params.get("properties") or {}))
    return f"{fn['name']}({args})"


def tool_signatures(tools: Iterable[dict]) -> str:
    """One line a tool: `- name(arg, optional_arg?)`."""
    return "\n".join(f"- {tool_signature(t)}" for t in tools)


def system_message(instructions: str, tools: Iterable[dict]) -> str:
    """The system message: instructions and rules (an all-in-text system prompt is cut at its tool list), the
    tool signatures, the call format."""
    # the same whichever form the env's system message takes (instructions for chat templates, or all in text)
    instructions = instructions.split(TOOLS_HEADER)[0].strip().removesuffix(USE_TOOLS).strip()
    return f"{instructions}\nTools:\n{tool_signatures(tools)}\n{CALL_FORMAT}"


def render_prompt(env_messages: list[dict], tools: list[dict]) -> list[dict]:
    """The opening of a model's dialogue from the env's opening messages (`info["messages"]`: its system
    message, the user's request) and the tool schemas (`info["tools"]`): [system, user]."""
    system = next((m["content"] for m in env_messages if m["role"] == "system"), "")
    user = next(m for m in env_messages if m["role"] == "user")
    return [{"role": "system", "content": system_message(system, tools)}, {"role": "user", "content": user["content"]}]


PROMPT_FILE = "agentworld_prompt.json"  # beside a saved model: the prompt version it was trained on


def record_prompt_version(model_dir: str | Path) -> Path:
    """Write PROMPT_FILE into a saved model's folder (the trainer does this for every checkpoint)."""
    path = Path(model_dir) / PROMPT_FILE
    path.write_text(json.dumps({"prompt_version": PROMPT_VERSION}))
    return path


def trained_prompt_version(model_dir: str | Path) -> int | None:
    """The prompt version a saved model records (None: it records none, e.g. a model from elsewhere);
    warns when it is not the version this code renders."""
    path = Path(model_dir) / PROMPT_FILE
    if not path.is_file():
        return None
    version = json.loads(path.read_text()).get("prompt_version")
    if version != PROMPT_VERSION:
        warnings.warn(f"{model_dir} was trained on prompt version {version}; this agentworld-gym renders version "
                      f"{PROMPT_VERSION}, so its scores here are not comparable with its training (see agentworld_gym/prompt.py).",
                      stacklevel=2)
    return version


__all__ = ["PROMPT_FILE", "record_prompt_version", "trained_prompt_version", "CALL_FORMAT", "PROMPT_VERSION", "render_prompt", "system_message", "tool_signature", "tool_signatures"]
