"""Discovery from a live world: probe a backend's tools, find which outputs feed which inputs, and
synthesize tasks whose ground truth comes from replaying the gold chain on a fresh state.

Works on any `Backend` (an MCP server, a tau2 domain, an Agent-World release environment):
  1. probe: call every tool a few times on one fresh state, with arguments taken from earlier
     outputs (a parameter `table_name` takes values of output fields `table_name` / `name`), from
     the schema (enum, default, examples given by the caller), else sampled from the schema;
  2. determinism: replay the same probe sequence on a second fresh state; a tool whose output
     differs is nondeterministic and excluded (reported);
  3. graph: an edge A -> B when a value A returned was accepted by B (3 = a required argument,
     2 = an optional one); A -> B = 1 otherwise;
  4. tasks: weight-biased walks over the graph, each run on a fresh state; the gold chain is
     replayed on another fresh state and kept only when it gives the same outputs and state. With
     tasks v3 on (`synthesis.persona.enabled`), also only when every call before the last feeds a
     later one (each gold call is needed), and the request is a
     goal in a person's words (a reason, then what they want known or done with the facts they know;
     a value from an earlier result is described by where it comes from), never a numbered script.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import ToolCall
from ..spaces import sample_value
from ..synthesis.persona import enabled
from ..tasks import Task
from ..theme import humanize

STRONG, WEAK, INDEPENDENT = 3, 2, 1


@dataclass
class DiscoveryReport:
    tools: list[str]
    graph: dict[str, dict[str, int]]
    nondeterministic: list[str]
    unprobed: dict[str, str]  # tool -> why no probe succeeded
    writes: list[str]
    tasks: list[Task] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"tools": self.tools, "graph": self.graph, "nondeterministic": self.nondeterministic,
                "unprobed": self.unprobed, "writes": self.writes, "tasks": [t.to_dict() for t in self.tasks]}


def _data(result) -> Any:
    """A tool result's data; text that is a Python literal (some servers print repr()) is parsed."""
    data = result.data
    if isinstance(data, str):
        try:
            return ast.literal_eval(data.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return data
    return data


def _fields(data: Any, out: dict[str, list], depth: int = 0) -> None:
    """Collect scalar values by field name from a (nested) output."""
    if depth > 3:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            scalars = [v] if _scalar(v) else [x for x in v[:20] if _scalar(x)] if isinstance(v, list) else []
            for x in scalars:  # a field, or a list of ids under a plural name ("books": ["B-1", ...])
                if x not in out.setdefault(str(k), []):
                    out[str(k)].append(x)
            if not scalars:
                _fields(v, out, depth + 1)
    elif isinstance(data, list):
        for item in data[:20]:
            _fields(item, out, depth + 1)


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, bool)


def _source(param: str, pool: dict[str, list]) -> str | None:
    """The output field that feeds `param`: the same name, or a name it ends with (table_name <- name)."""
    if pool.get(param):
        return param
    for k in sorted(pool, key=len, reverse=True):
        if pool[k] and (param.endswith("_" + k) or k.endswith("_" + param) or param.rsplit("_", 1)[0] == k.rstrip("s")):
            return k
    return None


class _Filler:
    def __init__(self, rng: np.random.Generator, examples: dict[str, dict[str, list]]):
        self.rng, self.examples = rng, examples
        self.pool: dict[str, list] = {}  # field -> values seen in outputs
        self.origin: dict[tuple[str, str], str] = {}  # (field, repr(value)) -> tool that produced it

    def observe(self, tool: str, data: Any) -> None:
        found: dict[str, list] = {}
        _fields(data, found)
        for k, vs in found.items():
            for v in vs:
                self.origin.setdefault((k, repr(v)), tool)
                if v not in self.pool.setdefault(k, []):
                    self.pool[k].append(v)

    def fill(self, tool: str, schema: dict) -> tuple[dict, dict[str, str]]:
        """Arguments for one call, and which earlier tool fed each argument."""
        args, fed = {}, {}
        required = set(schema.get("required", ()))
        for p, prop in schema.get("properties", {}).items():
            ex = self.examples.get(tool, {}).get(p)
            src = _source(p, self.pool)
            if ex:
                args[p] = ex[int(self.rng.integers(len(ex)))]
            elif "enum" in prop:
                args[p] = prop["enum"][int(self.rng.integers(len(prop["enum"])))]
            elif src is not None and (p in required or self.rng.random() < 0.5):
                values = self.pool[src]
                args[p] = values[int(self.rng.integers(len(values)))]
                fed[p] = self.origin.get((src, repr(args[p])), "")
            elif p in required:
                args[p] = prop["default"] if "default" in prop else sample_value(prop, self.rng)
        return args, fed


def _signature(results: list) -> str:
    return hashlib.sha256(json.dumps([[r.ok, r.content] for r in results], sort_keys=True, default=str).encode()).hexdigest()


def discover(backend, examples: dict[str, dict[str, list]] | None = None, probes_per_tool: int = 3, seed: int = 0) -> tuple[DiscoveryReport, _Filler]:
    """Probe the backend's tools; returns the report (no tasks yet) and the value pool."""
    examples = examples or {}
    tools = {s["function"]["name"]: s["function"]["parameters"] for s in backend.tools}
    rng = np.random.default_rng(seed)
    filler = _Filler(rng, examples)
    backend.reset(None)
    calls: list[ToolCall] = []
    results, feeds, hashes = [], [], []
    before = backend.state_hash()
    # two rounds: the second can use values the first discovered
    for _ in range(2):
        for name, schema in tools.items():
            for _ in range(probes_per_tool):
                args, fed = filler.fill(name, schema)
                r = backend.call(ToolCall(name, args))
                after = backend.state_hash()
                calls.append(ToolCall(name, args))
                results.append(r)
                feeds.append(fed if r.ok else {})
                hashes.append((before, after))
                before = after
                if r.ok:
                    filler.observe(name, _data(r))
    # determinism: the same sequence on a second fresh state
    backend.reset(None)
    replay = [backend.call(c) for c in calls]
    nondet = sorted({c.name for c, a, b in zip(calls, results, replay, strict=True) if (a.ok, a.content) != (b.ok, b.content)})
    writes = sorted({c.name for c, (h0, h1), r in zip(calls, hashes, results, strict=True) if r.ok and h0 != h1})
    ok_tools = {c.name for c, r in zip(calls, results, strict=True) if r.ok}
    unprobed = {}
    for name in tools:
        if name not in ok_tools:
            last = next((r.content for c, r in zip(reversed(calls), reversed(results), strict=True) if c.name == name), "")
            unprobed[name] = last[:200]
    graph = {a: {b: INDEPENDENT for b in tools if b != a} for a in tools}
    for c, fed in zip(calls, feeds, strict=True):
        required = set(tools[c.name].get("required", ()))
        for p, src in fed.items():
            if src and src != c.name:
                graph[src][c.name] = max(graph[src][c.name], STRONG if p in required else WEAK)
    return DiscoveryReport(list(tools), graph, nondet, unprobed, writes), filler


def _answer(data: Any, given: set[str]) -> tuple[Any, str, str]:
    """(answer, answer_type, question) drawn from the last output."""
    if isinstance(data, list):
        return len(data), "number", "How many results are there?"
    if isinstance(data, dict):
        fields = {k: v for k, v in data.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) not in given}
        lists = {k: v for k, v in data.items() if isinstance(v, list)}
        if not fields and len(lists) == 1:
            (k, v), = lists.items()
            return len(v), "number", f"How many {humanize(k)} are there?"
        if fields:
            k = sorted(fields)[0]
            return (*_typed(fields[k]), f"What is the {humanize(k)}?")
        return None, "none", ""
    if isinstance(data, bool):
        return data, "bool", "Is it so (yes or no)?"
    if isinstance(data, (int, float, str)) and str(data).strip():
        return (*_typed(data), "What is the result?")
    return None, "none", ""


def _typed(v: Any) -> tuple[Any, str]:
    if isinstance(v, (int, float)):
        return v, "number"
    try:
        return float(v), "number"
    except ValueError:
        return str(v).strip(), "text"


_VERBS = ("get", "list", "fetch", "read", "show", "describe", "search", "find", "query", "lookup", "retrieve", "view", "check")


def _thing(tool: str) -> str:
    """What a read tool gives, from its name: 'get_weather' -> 'weather', 'list_tables' -> 'tables'."""
    words = humanize(tool).split()
    return " ".join(words[1:] if len(words) > 1 and words[0] in _VERBS else words)


def _feeds(chain: list[dict], outputs: list) -> dict[tuple[int, str], int] | None:
    """{(call, argument): the earlier call whose output gave its value}; None when a call before the
    last gives no later call anything (it is not needed, so the task would have to narrate it)."""
    fed: dict[tuple[int, str], int] = {}
    seen: list[set] = []
    for i, c in enumerate(chain):
        for k, v in c["arguments"].items():
            j = next((j for j in range(i) if repr(v) in seen[j]), None)
            if j is not None:
                fed[i, k] = j
        found: dict[str, list] = {}
        _fields(outputs[i], found)
        seen.append({repr(v) for vs in found.values() for v in vs})
    used = set(fed.values())
    return fed if all(j in used for j in range(len(chain) - 1)) else None


def _phrase(chain: list[dict], fed: dict, i: int) -> str:
    """Call i's result as a noun phrase of what the user knows: 'the forecast for city Paris', 'the
    rows for the table name of the tables for schema main' (a value from an earlier result is described
    by where it comes from, so the agent plans the chain)."""
    c = chain[i]
    parts = [f"{humanize(k)} {v}" if (i, k) not in fed else f"the {humanize(k)} of {_phrase(chain, fed, fed[i, k])}"
             for k, v in c["arguments"].items()]
    return f"the {_thing(c['name'])}" + (f" for {' and '.join(parts)}" if parts else "")


def _request(chain: list[dict], fed: dict, question: str, wrote: bool, rng) -> str:
    """A goal in a person's words (issue 33): a reason, then what they want done or known, with the
    facts they know; never the calls, their order, or a closing "confirm" line."""
    from ..synthesis.persona import frame

    last = chain[-1]
    if wrote:
        parts = [f"{humanize(k)} {v}" if (len(chain) - 1, k) not in fed else f"the {humanize(k)} of {_phrase(chain, fed, fed[len(chain) - 1, k])}"
                 for k, v in last["arguments"].items()]
        goal = f"Please {humanize(last['name'])}" + (f" with {' and '.join(parts)}." if parts else ".")
        if question:
            goal += f" {question[:-1]} does it report afterwards?" if question.startswith("What is") else f" {question}"
        return frame(goal, "change", rng)
    subject = _phrase(chain, fed, len(chain) - 1)
    if question.startswith("What is the "):
        goal = f"{question[:-1]} of {subject}?"
    elif question.startswith("How many"):
        goal = f"{question[:-len(' are there?')]} are there in {subject}?" if question.endswith(" are there?") else question
    else:
        goal = f"About {subject}: {question[0].lower()}{question[1:]}"
    return frame(goal, "count" if question.startswith("How many") else "ask", rng)


def _steps(chain: list[dict], question: str) -> str:
    """The classic request: the calls as numbered steps, then the question or a closing "confirm" line."""
    steps = [f"{humanize(c['name'])} with " + ", ".join(f"{humanize(k)} {v}" for k, v in c["arguments"].items()) if c["arguments"]
             else humanize(c["name"]) for c in chain]
    body = steps[0][0].upper() + steps[0][1:] + "." if len(steps) == 1 else "\n".join(f"{i}. {s[0].upper() + s[1:]}." for i, s in enumerate(steps, 1))
    return body + ("\n" + question if question else "\nThen confirm when it is done.")


def discover_tasks(backend, n_tasks: int = 5, seed: int = 0, examples: dict[str, dict[str, list]] | None = None,
                   max_calls: int = 3, attempts: int = 40, probes_per_tool: int = 3) -> DiscoveryReport:
    """Probe, build the graph, and synthesize up to `n_tasks` verified tasks (see the module doc)."""
    report, filler = discover(backend, examples, probes_per_tool, seed)
    usable = [t for t in report.tools if t not in report.nondeterministic and t not in report.unprobed]
    rng = np.random.default_rng([seed, 4099])
    schemas = {s["function"]["name"]: s["function"]["parameters"] for s in backend.tools}
    seen: set[str] = set()
    for _ in range(attempts):
        if len(report.tasks) >= n_tasks or not usable:
            break
        fed_into = {b for a in usable for b, w in report.graph[a].items() if w == STRONG}
        starts = [t for t in usable if t not in fed_into] or usable
        current = starts[int(rng.integers(len(starts)))]
        length = int(rng.integers(1, max_calls + 1))
        backend.reset(None)
        chain, outputs, walk_filler = [], [], _Filler(rng, examples or {})
        walk_filler.pool = {k: list(v) for k, v in filler.pool.items()}  # sampled values known from probing
        for step in range(length):
            args, _ = walk_filler.fill(current, schemas[current])
            r = backend.call(ToolCall(current, args))
            if not r.ok:
                break
            chain.append({"name": current, "arguments": args})
            outputs.append(r)
            walk_filler.observe(current, _data(r))
            nxt = [b for b, w in report.graph[current].items() if b in usable and b not in {c["name"] for c in chain}]
            if not nxt or step + 1 == length:
                break
            w = np.array([report.graph[current][b] for b in nxt], float) ** 2
            current = nxt[int(rng.choice(len(nxt), p=w / w.sum()))]
        if not chain:
            continue
        final = backend.state_hash()
        # ground truth: the gold chain replayed on a fresh state must give the same outputs and state
        backend.reset(None)
        initial = backend.state_hash()
        replay = [backend.call(ToolCall(c["name"], c["arguments"])) for c in chain]
        if _signature(replay) != _signature(outputs) or backend.state_hash() != final:
            continue
        wrote = final != initial
        given = {str(v) for c in chain for v in c["arguments"].values()}
        answer, answer_type, question = _answer(_data(replay[-1]), given)
        if answer_type == "none" and not wrote:
            continue
        key = json.dumps(chain, sort_keys=True, default=str)
        person = enabled()  # tasks v3 (opt-in): a goal in a person's words, every gold call needed
        fed = _feeds(chain, [_data(r) for r in replay]) if person else {}
        if key in seen or fed is None:
            continue  # a repeat, or a call whose result no later call needs (the request would have to narrate it)
        seen.add(key)
        instruction = _request(chain, fed, question, wrote, rng) if person else _steps(chain, question)
        digest = hashlib.sha1(f"{backend.id}|{key}".encode()).hexdigest()[:10]
        report.tasks.append(Task(id=f"{backend.id}-d-{digest}", theme=backend.id, kind="imported", instruction=instruction,
                                 difficulty=min(5, len(chain)), solution=tuple(chain), answer=answer, answer_type=answer_type,
                                 state_hash=final if wrote else None, features={"calls": len(chain), "source": "discovery"}))
    return report
