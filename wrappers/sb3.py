"""Adapters that let numeric RL libraries (stable-baselines3, cleanrl, RLlib) train on a text env.

* `candidate_actions(info)` lists the tool calls an agent could make next, grounded only in what
  the agent sees: the tool schemas, the instruction and earlier tool outputs (never the answer key).
* `CandidateChoiceAction` turns the text action space into `Discrete(k)` over those candidates.
* `HashedTranscriptObservation` turns the transcript into a fixed-size `Box` (feature hashing by
  default; any text encoder, e.g. a sentence embedding, can be plugged in).

    env = make_sb3_env("AgentWorld/finance-v0", difficulty=1)
    stable_baselines3.PPO("MlpPolicy", env).learn(30_000)
"""

from __future__ import annotations

import itertools
import json
import re
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentworld_gym.checks import Number
from agentworld_gym.errors import ConfigError

# ---------------------------------------------------------------------------------------------
# Candidate tool calls

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b")
_QUOTED = re.compile(r"[\"“']([^\"”'\n]{1,60})[\"”']")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DOTTED = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b")  # IPs, domains
_CODE = re.compile(r"\b[A-Z]{2,6}\b")  # symbols and codes: "CTX", "USD"
_PROPER = re.compile(r"(?<![.\n] )(?<!^)\b[A-Z][a-z]+(?: [A-Z][a-z'-]+)+\b")  # "Stephanie Collins"
_ID_LIKE = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*[-_]?\d+[A-Za-z0-9-]*(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-])")
_STEP_REF = re.compile(r"(?:^|\n)\s*\d+\.\s|\bsteps? \d+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOPWORDS = frozenset((
    "the", "and", "for", "from", "with", "that", "this", "what", "which", "whose", "how", "many", "much", "are", "is",
    "was", "were", "give", "gives", "result", "results", "step", "steps", "then", "when", "done", "does", "did", "look",
    "find", "list", "get", "set", "show", "tell", "into", "onto", "than", "there", "their", "them", "they", "its",
    "it's", "has", "have", "had", "all", "any", "each", "every", "one", "two", "three", "per", "this", "year", "also",
    "please", "confirm", "need", "you", "your", "work", "out", "spent", "after", "before", "first", "second", "third",
    "last", "listed", "lists", "careful", "different", "leave", "other", "same", "about", "only", "once", "again",
    "then", "total", "number", "value", "name",
))
ITEMS_PER_LIST = 3  # list outputs: values are taken from the first few items only
VALUES_PER_PARAM = 6
CALLS_PER_TOOL = 8
SUBMIT = "submit"


class CandidateGroups(NamedTuple):
    """Candidate actions in three groups (see `candidate_actions`)."""

    latest: list[str]  # submit each value of the latest tool output
    tools: dict[str, list[str]]  # tool name -> calls to it, best-grounded first
    extra: list[str]  # submit "done", then every other observed value


def candidate_groups(info: dict[str, Any], calls_per_tool: int = CALLS_PER_TOOL) -> CandidateGroups:
    """The grounded candidates of `candidate_actions`, grouped; duplicates dropped after `latest`."""
    messages = info.get("messages") or []
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    instruction = "\n".join(users)
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system").lower()
    outputs = [_json_or_none(m.get("content")) for m in messages if m.get("role") == "tool"]
    latest_output = outputs[-1] if outputs else None
    observed = [_pairs(o) for o in outputs if o is not None]  # oldest first
    text_values = _instruction_values(instruction, system)

    question = ([line for line in users[-1].splitlines() if line.strip()] or [""])[-1] if users else ""
    latest = [_call(SUBMIT, {"answer": v}) for v in _answer_values(latest_output, question)]
    seen = set(latest)

    def fresh(actions) -> list[str]:
        out = []
        for a in actions:
            if a not in seen:
                seen.add(a)
                out.append(a)
        return out

    cache: dict[tuple, list] = {}

    def values_of(param: str, prop: dict) -> list:  # tools share parameters (account_id, ...)
        key = (param, str(prop.get("type")), tuple(map(str, prop.get("enum", ()))))
        if key not in cache:
            cache[key] = _param_values(param, prop, observed, text_values, instruction)
        return cache[key]

    tools: dict[str, list[str]] = {}
    for schema in info.get("tools") or []:
        fn = schema.get("function", schema)
        name = fn.get("name")
        if name in (None, SUBMIT):
            continue
        tools[name] = fresh(_call(name, a) for a in _tool_arguments(fn, values_of, instruction, calls_per_tool))
    values = [v for pairs in reversed(observed) for _, v in pairs] + text_values["email"] + text_values["id"] + text_values["number"]
    extra = fresh(_call(SUBMIT, {"answer": v}) for v in ["done", *values])
    return CandidateGroups(latest, tools, extra)


def candidate_actions(info: dict[str, Any], calls_per_tool: int = CALLS_PER_TOOL) -> list[str]:
    """Every tool call worth considering next, as JSON action strings, in a stable order:

    1. submit each value of the latest tool output (a list output: its length first, then the
       fields of its first item; fields the instruction's question names first) - so "submit
       field j of what I just looked up" keeps its index;
    2. each tool (schema order) with arguments filled from observed values - the instruction and
       earlier tool outputs, never the answer key - best-grounded first, at most
       `calls_per_tool` per required argument of the tool;
    3. submit "done", then each other observed value.
    Invalid calls are allowed; duplicates after block 1 are dropped.
    """
    groups = candidate_groups(info, calls_per_tool)
    return groups.latest + [a for calls in groups.tools.values() for a in calls] + groups.extra


def _call(name: str, arguments: dict) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def _json_or_none(content: Any) -> Any:
    if not isinstance(content, str) or content[:1] not in "{[":
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def _pairs(data: Any) -> list[tuple[str, Any]]:
    """(key, value) pairs of a tool output: scalar fields, lists of scalars (key singularized),
    and the fields of the first few items of a list."""
    out: list[tuple[str, Any]] = []
    if isinstance(data, list):
        for item in data[:ITEMS_PER_LIST]:
            out += _pairs(item)
    elif isinstance(data, dict):
        for k, v in data.items():
            if _is_scalar(v):
                out.append((k, v))
            elif isinstance(v, list) and all(_is_scalar(x) for x in v):
                out += [(k[:-1] if k.endswith("s") else k, x) for x in v[:ITEMS_PER_LIST]]
    return out


def _answer_values(data: Any, question: str = "") -> list[Any]:
    """Values of a tool output worth submitting: a list's length, then its first item's fields;
    a dict's fields. Fields the question names ("What is the spending limit?") come first."""
    if isinstance(data, list):
        first = data[0] if data and isinstance(data[0], dict) else {}
        return [len(data), *_fields_by_relevance(first, question)]
    if isinstance(data, dict):
        return _fields_by_relevance(data, question)
    return []


def _fields_by_relevance(row: dict, question: str) -> list[Any]:
    q = question.lower()
    fields = [(k, v) for k, v in row.items() if _is_scalar(v)]
    named = [re.search(rf"\b{re.escape(k.lower().replace('_', ' '))}\b", q) is not None for k, _ in fields]
    return [v for (_, v), hit in sorted(zip(fields, named, strict=True), key=lambda x: not x[1])]


def _instruction_values(text: str, system: str = "") -> dict[str, list]:
    emails = _unique(_EMAIL.findall(text))
    rest = _EMAIL.sub(" ", text)
    # Literal values: dates and times, quoted text, IPs and domains, multi-word proper names.
    literals = _DATE.findall(rest) + _QUOTED.findall(rest) + _DOTTED.findall(rest) + _PROPER.findall(rest)
    rest = _DOTTED.sub(" ", _DATE.sub(" ", rest))
    ids = [m for m in _ID_LIKE.findall(rest) if not m.isdigit()]
    rest = _ID_LIKE.sub(" ", rest)
    ids = _unique(ids + _CODE.findall(rest))
    numbers = _unique(float(n) if "." in n else int(n) for n in _NUMBER.findall(_STEP_REF.sub(" ", rest)))
    words = _unique(w for w in _WORD.findall(rest) if w.lower() not in _STOPWORDS)
    # Words the system prompt also uses (tool and policy vocabulary) are less likely to be values.
    vocabulary = set(_WORD.findall(system))
    words = sorted(words, key=lambda w: w.lower() in vocabulary)
    return {"email": emails, "id": ids, "number": numbers, "literal": _unique(literals), "word": words}


def _unique(items) -> list:
    out, seen = [], set()
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def _key_matches(param: str, key: str) -> bool:
    return param == key or param.endswith("_" + key) or key.endswith("_" + param)


def _noun(param: str) -> str:
    words = param.lower().replace("-", "_").split("_")
    if len(words) > 1 and words[-1] in ("id", "code", "number", "no", "key"):
        words = words[:-1]
    return words[-1]


def _is_id_param(param: str) -> bool:
    p = param.lower()
    return p in ("code", "key", "sku", "ref", "symbol", "ticker") or p.endswith(("id", "_code", "_number", "_no", "_key", "sku", "ref"))


def _param_values(param: str, prop: dict, observed, text_values, instruction: str) -> list:
    """Values for one parameter, best-grounded first."""
    kind = prop.get("type", "string")
    kinds = set(kind if isinstance(kind, list) else [kind])
    if "enum" in prop:
        said = [v for v in prop["enum"] if _said(v, instruction)]
        return _unique(said + list(prop["enum"]))[:VALUES_PER_PARAM]
    if kinds == {"boolean"}:
        return [True, False]
    seen_values = [v for pairs in reversed(observed) for k, v in pairs if _key_matches(param, k)]
    if kinds & {"integer", "number"} and not kinds & {"string"}:
        numeric = [v for v in seen_values + text_values["number"] if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if kinds == {"integer"}:
            numeric = [int(v) for v in numeric if float(v).is_integer()]
        return _unique(numeric)[:VALUES_PER_PARAM]
    strings = [v for v in seen_values if isinstance(v, str)]
    if "email" in param.lower():
        strings += text_values["email"]
    elif _is_id_param(param):
        # Ids the instruction names with this parameter's noun ("account AC-1"), those after its
        # qualifier first ("to account AC-2" for to_account_id), interleaved with observed ones.
        noun, qualifier = _noun(param), param.lower().split("_")[0]
        named = {m.group(2) for m in re.finditer(rf"\b(\w+\s+)?{re.escape(noun)}\s+([\w-]+)", instruction, re.I)}
        after_qualifier = {m.group(1) for m in re.finditer(rf"\b{re.escape(qualifier)}\s+(?:the\s+)?{re.escape(noun)}\s+([\w-]+)", instruction, re.I)}
        rank = {v: 0 if v in after_qualifier else 1 if v in named else 2 for v in text_values["id"]}
        said = sorted(text_values["id"], key=rank.__getitem__)
        first = [v for v in said if rank[v] == 0 and qualifier != noun]
        strings = first + [x for pair in itertools.zip_longest(strings, said) for x in pair if x is not None]
    else:
        # A free-text argument (a category, a city, a reason): words the instruction uses, those
        # also seen in tool outputs first, then those the system prompt does not use.
        # The word right after the parameter's noun ("with category dining") leads.
        seen_words = {str(v).lower() for _, v in itertools.chain(*observed)}
        after_noun = {m.group(1).lower() for m in re.finditer(rf"\b{re.escape(_noun(param))}\s+([\w-]+)", instruction, re.I)}
        said = text_values["literal"] + text_values["word"] + text_values["id"]
        strings += sorted(said, key=lambda w: (w.lower() not in after_noun, w.lower() not in seen_words))
    return _unique(strings)[:VALUES_PER_PARAM]


def _said(value: Any, text: str) -> bool:
    return re.search(rf"\b{re.escape(str(value))}\b", text, re.I) is not None


def _tool_arguments(fn: dict, values_of: Callable[[str, dict], list], instruction: str, limit: int) -> list[dict]:
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    required = [p for p in params.get("required", ()) if p in props]
    options = []
    for p in required:
        values = values_of(p, props[p])
        if not values:
            return []  # an argument nothing grounds: no call to this tool yet
        options.append(values)
    # Optional arguments the instruction or an earlier output grounds: ids, enum values the
    # instruction says, and free text (a filter such as "the travel transactions").
    optional = [p for p in props if p not in required and props[p].get("type", "string") == "string"]
    extra = {}
    for p in optional:
        # an enum value only when the instruction says it (any of them, not just the most likely one)
        values = [v for v in values_of(p, props[p]) if "enum" not in props[p] or _said(v, instruction)]
        if values:
            extra[p] = values[:1]
    combos = sorted(itertools.product(*(range(len(v)) for v in options)), key=lambda idx: (sum(idx), idx))
    out = []
    for idx in combos:
        args = {p: options[i][j] for i, (p, j) in enumerate(zip(required, idx, strict=True))}
        out.append(args)
        for p, v in extra.items():
            out.append({**args, p: v[0]})
        if len(out) >= limit * max(1, len(required)):
            break
    return out[: limit * max(1, len(required))]


# ---------------------------------------------------------------------------------------------
# Action adapter


class CandidateChoiceAction(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Text actions -> `Discrete(k)`: index i picks one grounded candidate tool call.

    Layout "slots" (default) gives every index a stable meaning, which is what lets a policy learn:
    ``[latest_slots: submit field j of the latest tool output] [slots_per_tool for each tool, in
    schema order] [extra_slots: submit "done", then other observed values]``. Layout "flat" packs
    `generator(info)` into the first indices instead. Candidates are regenerated after every
    reset/step and shown as `info["candidates"]` (one entry per index; None = empty slot).
    An empty slot is still a legal action: it stands for a filled one (index i -> the
    (i mod n)-th of the n filled slots), so every index plays a real candidate and a uniform
    policy explores like the random-candidate baseline; with no candidate at all it gives up (a
    submit with an empty answer). The env never receives anything but a well-formed call.
    `action_masks()` marks the filled slots (for maskable algorithms such as sb3-contrib's
    MaskablePPO, and for the random-candidate baseline).
    """

    GIVE_UP = _call(SUBMIT, {"answer": ""})
    LAYOUTS = ("slots", "flat")

    def __init__(self, env: gym.Env, layout: str = "slots", *, k: int = 64, latest_slots: int = 8, slots_per_tool: int = 4,
                 extra_slots: int = 8, max_tools: int | None = None, generator: Callable[[dict], list[str]] = candidate_actions):
        gym.utils.RecordConstructorArgs.__init__(self, layout=layout, k=k, latest_slots=latest_slots, slots_per_tool=slots_per_tool,
                                                 extra_slots=extra_slots, max_tools=max_tools, generator=generator)
        gym.Wrapper.__init__(self, env)
        if layout not in self.LAYOUTS:
            raise ConfigError(f"Expected layout in {self.LAYOUTS}, got {layout!r}.")
        if max_tools is None:
            theme = getattr(env.unwrapped, "theme", None)
            max_tools = len(theme.toolset) if theme is not None else 16
        sizes = {"k": k, "latest_slots": latest_slots, "slots_per_tool": slots_per_tool, "extra_slots": extra_slots, "max_tools": max_tools}
        for name, n in sizes.items():
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ConfigError(f"Expected {name} to be an int >= 1, got {n!r}.")
        self.layout = layout
        self.latest_slots, self.slots_per_tool, self.extra_slots, self.max_tools = latest_slots, slots_per_tool, extra_slots, max_tools
        self.k = int(k) if layout == "flat" else latest_slots + max_tools * slots_per_tool + extra_slots
        self.generator = generator
        self.action_space = spaces.Discrete(self.k)
        self.candidates: list[str | None] = [None] * self.k

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._with_candidates(info)

    def step(self, action):
        text = self.action_text(action)
        obs, reward, terminated, truncated, info = self.env.step(text)
        info = self._with_candidates(info)
        info["action_text"] = text
        return obs, reward, terminated, truncated, info

    def action_text(self, action) -> str:
        """The text action that index `action` stands for right now."""
        if isinstance(action, np.ndarray) and action.size == 1:
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < self.k:
            raise ConfigError(f"Expected an action index in Discrete({self.k}) (0..{self.k - 1}), got {action!r}.")
        if self.candidates[action] is not None:
            return self.candidates[action]
        filled = [c for c in self.candidates if c is not None]
        return filled[action % len(filled)] if filled else self.GIVE_UP

    def action_masks(self) -> np.ndarray:
        return np.array([c is not None for c in self.candidates], dtype=bool)

    def _slots(self, info: dict) -> list[str | None]:
        if self.layout == "flat":
            return _fit(list(self.generator(info)), self.k)
        groups = candidate_groups(info, self.slots_per_tool)
        tools = list(groups.tools.values())[: self.max_tools]
        tools += [[]] * (self.max_tools - len(tools))
        return _fit(groups.latest, self.latest_slots) + [c for calls in tools for c in _fit(calls, self.slots_per_tool)] + _fit(groups.extra, self.extra_slots)

    def _with_candidates(self, info: dict) -> dict:
        self.candidates = self._slots(info)
        info = dict(info)
        info["candidates"] = list(self.candidates)
        return info


def _fit(items: list, n: int) -> list:
    return list(items[:n]) + [None] * (n - len(items[:n]))


# ---------------------------------------------------------------------------------------------
# Observation adapter

_TOKEN = re.compile(r"[a-z0-9]+(?:[._@-][a-z0-9]+)*")
_SECTION = re.compile(r"^\[(system|user|assistant|tool(?: [^\]\n]*)?)\]$", re.M)


def hash_features(tokens, dim: int) -> np.ndarray:
    """Signed feature hashing with a process-independent hash (crc32), L2-normalised."""
    vec = np.zeros(dim, dtype=np.float32)
    for tok in tokens:
        h = zlib.crc32(tok.encode("utf-8", "replace"))
        vec[h % dim] += 1.0 if (h >> 31) & 1 else -1.0
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


def transcript_sections(transcript: str) -> list[tuple[str, str]]:
    """[(role, text)] of an env transcript; a tool section's role is 'tool <name>'."""
    marks = list(_SECTION.finditer(transcript))
    if not marks:
        return [("text", transcript)]
    out = []
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        out.append((m.group(1), transcript[m.end(): nxt.start() if nxt else len(transcript)].strip()))
    return out


class HashedTranscriptObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Transcript text -> `Box(-1, 1, (dim,))`.

    By default: signed feature hashing of the words of each section, tagged with the section's role
    (so "joined" asked by the user differs from "joined" in a tool output), plus the last section
    again and the turn count. `encoder` replaces all that with any text -> vector function of
    length `dim` (e.g. `sentence_encoder(...)`); its output is clipped to [-1, 1].
    """

    def __init__(self, env: gym.Env, dim: int = 512, encoder: Callable[[str], np.ndarray] | None = None, system_weight: float = 0.25):
        gym.utils.RecordConstructorArgs.__init__(self, dim=dim, encoder=encoder, system_weight=system_weight)
        gym.ObservationWrapper.__init__(self, env)
        if dim < 8:
            raise ConfigError(f"Expected dim >= 8, got {dim!r}.")
        Number(integer=False, low=0).check("system_weight", system_weight)
        self.dim = int(dim)
        self.encoder = encoder
        self.system_weight = system_weight
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(self.dim,), dtype=np.float32)
        self._system_cache: dict[str, np.ndarray] = {}

    def observation(self, observation: str) -> np.ndarray:
        if not isinstance(observation, str):
            observation = str(observation)
        if self.encoder is not None:
            vec = np.asarray(self.encoder(observation), dtype=np.float32).reshape(-1)
            if vec.shape != (self.dim,):
                raise ConfigError(f"Expected the encoder to return {self.dim} numbers, got shape {vec.shape}.")
            return np.clip(np.nan_to_num(vec), -1.0, 1.0)
        return self.hash(observation)

    def hash(self, transcript: str) -> np.ndarray:
        sections = transcript_sections(transcript)
        vec = np.zeros(self.dim, dtype=np.float32)
        turns = 0
        for role, text in sections:
            kind = role.split(" ", 1)[0]
            turns += kind == "assistant"
            if kind == "system":  # constant per theme: cache it, weigh it down
                if text not in self._system_cache:
                    self._system_cache[text] = hash_features(("system:" + t for t in _TOKEN.findall(text.lower())), self.dim)
                vec += self.system_weight * self._system_cache[text]
                continue
            vec += hash_features([f"{kind}:{t}" for t in _TOKEN.findall(text.lower())] + [f"role:{role}"], self.dim)
        last_role, last_text = sections[-1]
        vec += hash_features([f"last:{t}" for t in _TOKEN.findall(last_text.lower())] + [f"last-role:{last_role}"], self.dim)
        vec += hash_features([f"turn:{turns}", f"last-error:{last_text.startswith('Error')}"], self.dim)
        return np.clip(vec, -1.0, 1.0)


def sentence_encoder(model: str = "sentence-transformers/all-MiniLM-L6-v2", max_chars: int = 4_000) -> Callable[[str], np.ndarray]:
    """A text -> unit vector function from a Hugging Face encoder (mean-pooled last hidden state).

    Loads lazily with `transformers` (extra: llm); pass the result as `encoder=` with `dim` equal to
    the model's hidden size. The tail of the transcript (the newest turns) is what gets encoded.
    """
    from agentworld_gym.errors import require

    transformers = require("transformers", "llm")
    torch = require("torch", "llm")
    tok = transformers.AutoTokenizer.from_pretrained(model)
    net = transformers.AutoModel.from_pretrained(model).eval()

    def encode(text: str) -> np.ndarray:
        batch = tok(text[-max_chars:], return_tensors="pt", truncation=True)
        with torch.no_grad():
            hidden = net(**batch).last_hidden_state[0]
        vec = hidden.mean(0).numpy()
        return vec / (np.linalg.norm(vec) or 1.0)

    return encode


def make_sb3_env(env: str | gym.Env = "AgentWorld/finance-v0", dim: int = 512, encoder: Callable[[str], np.ndarray] | None = None,
                 action_kwargs: dict | None = None, **make_kwargs) -> gym.Env:
    """An env id (or env) wrapped for numeric RL: Discrete candidate actions, Box(dim) observations."""
    base = gym.make(env, **make_kwargs) if isinstance(env, str) else env
    return HashedTranscriptObservation(CandidateChoiceAction(base, **(action_kwargs or {})), dim=dim, encoder=encoder)


__all__ = ["CandidateChoiceAction", "CandidateGroups", "candidate_groups", "HashedTranscriptObservation", "candidate_actions", "hash_features",
           "make_sb3_env", "sentence_encoder", "transcript_sections"]
