"""`agentworld play THEME`: play episodes yourself in the terminal.

Input is a tool call in any format the env reads (`get_account(account_id="AC-1001")`, JSON, ...) or
a /command. Plain text is the agent's final answer in the env, so here it is sent only after a
confirmation; nothing typed by accident ends the episode. Line editing, history (kept between
sessions) and tab completion come from readline where the platform has it. Colours are used on a
terminal unless NO_COLOR is set or TERM is dumb (`--color always|never` overrides).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym

from . import envs
from .actions import parse_action
from .errors import did_you_mean
from .prompt import render_prompt, tool_signature

COMMANDS = {
    "/help": "this help",
    "/tools [NAME]": "the tool list, or one tool's full description and parameters",
    "/task": "show the task again",
    "/submit ANSWER": "submit your final answer and end the episode",
    "/reset": "start a new episode (the next seed)",
    "/quit": "leave (Ctrl-D works too)",
}
HISTORY_LENGTH = 1000


class Style:
    """ANSI colours, or none. Prompt colours are wrapped in \\001/\\002 so readline measures the prompt right."""

    CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *names: str, prompt: bool = False) -> str:
        if not self.enabled or not names:
            return text
        start, end = "\033[" + ";".join(self.CODES[n] for n in names) + "m", "\033[0m"
        if prompt:
            start, end = f"\001{start}\002", f"\001{end}\002"
        return f"{start}{text}{end}"


def use_colour(choice: str, stream=sys.stdout) -> bool:
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def tool_details(schema: dict) -> str:
    fn = schema["function"]
    params = fn.get("parameters") or {}
    required = set(params.get("required") or ())
    lines = [tool_signature(schema), textwrap.indent(fn.get("description") or "(no description)", "  ")]
    for name, p in (params.get("properties") or {}).items():
        kind = p.get("type", "any")
        if "enum" in p:
            kind += " one of " + ", ".join(json.dumps(v) for v in p["enum"])
        need = "required" if name in required else "optional"
        lines.append(f"  - {name} ({kind}, {need}){': ' + p['description'] if p.get('description') else ''}")
    return "\n".join(lines)


def explain(verification: dict, task, truncated: bool, max_turns: int) -> list[str]:
    """The verification report in words."""
    lines = []
    if truncated:
        lines.append(f"The episode ran out of turns ({max_turns}) before an answer was submitted.")
    checks = verification.get("checks", {})
    expected, submitted = verification.get("expected_answer"), verification.get("submitted_answer")
    if "answer" in checks:
        how = task.answer_type + (f", within {task.tolerance:g}" if task.answer_type == "number" else "")
        if checks["answer"]:
            lines.append(f"Answer: correct. You submitted {submitted}; the expected answer is {expected} (compared as {how}).")
        elif submitted in (None, "null"):
            lines.append(f"Answer: missing. Nothing was submitted; the expected answer is {expected}.")
        else:
            lines.append(f"Answer: wrong. You submitted {submitted}; the expected answer is {expected} (compared as {how}).")
    if "state" in checks:
        tables = ", ".join(task.state_tables) or "every table"
        if checks["state"]:
            lines.append(f"Database: it ends exactly as the task asks ({tables} match the gold solution replayed on a fresh copy).")
        else:
            lines.append(f"Database: it does not end as the task asks ({tables} differ from the gold solution replayed on a "
                         "fresh copy): a change the task needs is missing, or a change it did not ask for was made.")
    if not checks:
        lines.append("This task has no checks.")
    return lines


class PlaySession:
    """One terminal session: several episodes of one theme, read-eval-print over the env."""

    def __init__(self, env_id: str, seed: int, colour: bool, out=sys.stdout, **make_kwargs: Any):
        self.env = gym.make(env_id, **make_kwargs)
        self.max_turns = make_kwargs.get("max_turns", 20)
        self.seed = seed
        self.style = Style(colour)
        self.out = out
        self.done = True
        self.tools: list[dict] = []

    def say(self, text: str = "", *names: str) -> None:
        print(self.style(text, *names), file=self.out, flush=True)

    @property
    def episode_env(self):
        """The AgentWorldEnv playing this episode (a pool env holds one per theme)."""
        env = self.env.unwrapped
        return getattr(env, "current", None) or env

    # ------------------------------------------------------------------ episode
    def start(self) -> None:
        _, info = self.env.reset(seed=self.seed)
        self.info, self.done = info, False
        self.tools = [t for t in info["tools"] if t["function"]["name"] != "submit"]
        self.say(f"\n== {info['theme']}: episode with seed {self.seed}, difficulty {info['difficulty']}, "
                 f"up to {self.max_turns} turns ==", "bold")
        # what a model is shown (the one prompt): instructions, business rules, tool signatures, call format
        self.say("\n" + render_prompt(info["messages"], info["tools"])[0]["content"], "dim")
        self.show_task()
        self.say("Call a tool, e.g. " + self.example_call() + "; /submit ANSWER to finish; /help for more.", "dim")

    def example_call(self) -> str:
        fn = self.tools[0]["function"] if self.tools else {"name": "tool", "parameters": {}}
        required = (fn.get("parameters") or {}).get("required") or []
        return f"{fn['name']}({', '.join(f'{p}=...' for p in required)})"

    def show_task(self) -> None:
        self.say("\nTask:", "bold")
        self.say(textwrap.indent(self.episode_env.task.instruction, "  "), "yellow")

    def show_tools(self, name: str | None = None) -> None:
        if name:
            match = [t for t in self.tools if t["function"]["name"] == name]
            if not match:
                self.say(f"No tool {name!r}.{did_you_mean(name, [t['function']['name'] for t in self.tools])}", "red")
            else:
                self.say(tool_details(match[0]))
            return
        width = shutil.get_terminal_size((100, 24)).columns
        self.say(f"\nTools ({len(self.tools)}; /tools NAME for one in full):", "bold")
        for t in self.tools:
            sig = tool_signature(t)
            first = (t["function"].get("description") or "").split(". ")[0].strip()
            room = width - len(sig) - 6
            desc = first if len(first) <= room else first[:max(room - 1, 0)] + "…"
            self.say(f"  {self.style(sig, 'cyan')}  {self.style(desc, 'dim') if room > 10 else ''}".rstrip())

    def act(self, action: str) -> None:
        """Send one action to the env and print what came back."""
        before = len(self.info["messages"])
        _, reward, terminated, truncated, self.info = self.env.step(action)
        for m in self.info["messages"][before:]:
            if m["role"] == "tool":
                ok = not m["content"].startswith("Error")
                self.say(f"[{m['name']}] " + pretty(m["content"]), "green" if ok else "red")
        if terminated or truncated:
            self.finish(reward, truncated)

    def finish(self, reward: float, truncated: bool) -> None:
        from .policies.base import gold_actions

        self.done = True
        task = self.episode_env.task
        verification = self.info["verification"]
        passed = verification["passed"]
        self.say(f"\nEpisode over: {'PASSED' if passed else 'NOT PASSED'}, reward {reward:g}.", "bold", "green" if passed else "red")
        for line in explain(verification, task, truncated, self.max_turns):
            self.say("  " + line)
        gold = [f"{c['name']}({', '.join(f'{k}={json.dumps(v)}' for k, v in c['arguments'].items())})" for c in gold_actions(task)]
        self.say("  The gold solution: " + " -> ".join(gold), "dim")
        self.say("/reset for a new episode, /quit to leave.", "dim")

    # ------------------------------------------------------------------ input
    def handle(self, line: str, confirm) -> bool:
        """Handle one input line; False when the session should end."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            return self.command(line)
        if self.done:
            self.say("The episode is over: /reset for a new one, /quit to leave.", "yellow")
            return True
        parsed = parse_action(line)
        if parsed.error is not None:
            self.say(f"Not sent (no turn used): could not read a tool call: {parsed.error}", "red")
            self.say("Write name(arg=value, ...) or {\"name\": ..., \"arguments\": {...}}; /tools lists the tools.", "dim")
            return True
        if parsed.is_response and "/" + line.lower() in {c.split()[0] for c in COMMANDS}:
            self.say(f"Did you mean /{line.lower()}? Plain text is a final answer; commands start with /.", "yellow")
            return True
        if parsed.is_response:
            # Plain text is a final answer in the env; a person typing "help" rarely means that.
            if not confirm(f"Submit {line!r} as your final answer and end the episode? [y/N] "):
                self.say("Not submitted. /help lists the commands.", "dim")
                return True
            self.act(json.dumps({"name": "submit", "arguments": {"answer": line}}))
            return True
        self.act(line)
        return True

    def command(self, line: str) -> bool:
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        if name in ("/quit", "/exit", "/q"):
            return False
        if name in ("/help", "/?"):
            self.say("Commands:", "bold")
            for cmd, what in COMMANDS.items():
                self.say(f"  {cmd:<16} {what}")
            self.say("Anything else is a tool call, e.g. " + self.example_call() + ". Up/Down recall earlier lines.")
        elif name == "/tools":
            self.show_tools(rest or None)
        elif name == "/task":
            self.show_task()
        elif name == "/reset":
            self.seed += 1
            self.start()
        elif name == "/submit":
            if self.done:
                self.say("The episode is over: /reset for a new one.", "yellow")
            elif not rest:
                self.say("Usage: /submit ANSWER", "yellow")
            else:
                self.act(json.dumps({"name": "submit", "arguments": {"answer": rest}}))
        else:
            names = [c.split()[0] for c in COMMANDS]
            self.say(f"Unknown command {name!r}.{did_you_mean(name, names)} /help lists the commands.", "red")
        return True

    def prompt(self) -> str:
        if self.done:
            return self.style("(over) > ", "dim", prompt=True)
        return self.style(f"turn {self.episode_env.turn + 1}/{self.max_turns} > ", "bold", "blue", prompt=True)


def pretty(content: str) -> str:
    """A tool result, JSON shown compactly on one line when it is short, indented when long."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    flat = json.dumps(value, ensure_ascii=False)
    return flat if len(flat) <= 160 else json.dumps(value, ensure_ascii=False, indent=2)


def setup_readline(session: PlaySession):
    """Line editing, history kept between sessions ($AGENTWORLD_PLAY_HISTORY or
    the cache dir) and tab completion; None where readline is missing."""
    try:
        import readline
    except ImportError:
        return None
    from .world import cache_dir

    history = Path(os.environ.get("AGENTWORLD_PLAY_HISTORY") or cache_dir() / "play_history")
    with contextlib.suppress(OSError):  # no history yet
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LENGTH)

    def complete(text: str, state: int):
        words = [c.split()[0] for c in COMMANDS] + [t["function"]["name"] for t in session.tools]
        options = [w for w in words if w.startswith(text)]
        return options[state] if state < len(options) else None

    readline.set_completer_delims(" \t\n(")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")
    return readline, history


def run(args) -> int:
    env_id = envs.registry.gym_id(args.theme)  # a misspelt name fails here, before any terminal is touched
    colour = use_colour(args.color)
    session = PlaySession(env_id, args.seed, colour,
                          difficulty=args.difficulty, max_turns=args.max_turns, task_kind=args.task_kind)
    rl = setup_readline(session) if sys.stdin.isatty() else None

    def confirm(question: str) -> bool:
        try:
            answer = input(session.style(question, "yellow", prompt=True))
        except (EOFError, KeyboardInterrupt):
            session.say()
            return False
        if rl is not None and answer.strip():  # the y/n is not worth recalling with Up
            rl[0].remove_history_item(rl[0].get_current_history_length() - 1)
        return answer.strip().lower() in ("y", "yes")

    session.start()
    try:
        while True:
            try:
                line = input(session.prompt())
            except KeyboardInterrupt:  # Ctrl-C clears the line, like a shell
                session.say("\n(Ctrl-D or /quit to leave)", "dim")
                continue
            except EOFError:
                session.say()
                break
            if not session.handle(line, confirm):
                break
    finally:
        if rl is not None:
            rl[1].parent.mkdir(parents=True, exist_ok=True)
            rl[0].write_history_file(rl[1])
        session.env.close()
    return 0


__all__ = ["PlaySession", "explain", "run", "tool_details", "tool_signature"]
