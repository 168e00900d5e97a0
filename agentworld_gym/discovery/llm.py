"""Optional LLM backend for discovery: a model proposes the wording of forged tools (description
and instruction phrase). The rule-based wording stays the default and the fallback; every proposal
is checked (JSON, no identifiers, only real placeholders) before it replaces anything, and the tools
are validated afterwards exactly as without a model.

A proposer is any callable `messages -> reply text`: `openai_proposer(url, model)` for an
OpenAI-compatible endpoint (vLLM, Ollama, ...), or a wrapper around a local transformers model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ..world import ThemeSpec
from .forge import phrase_ok

Proposer = Callable[[list[dict]], str]


def openai_proposer(base_url: str, model: str, api_key: str | None = None) -> Proposer:
    from ..policies.llm import OpenAIPolicy

    client = OpenAIPolicy(model, base_url, api_key, max_tokens=200)
    return client.complete


def _prompt(spec: ThemeSpec, t: dict) -> list[dict]:
    params = ", ".join(f"{p['name']} ({p['role']})" for p in t["params"])
    what = f"records of the table '{t['table']}'" if t.get("table") else "values"
    return [
        {"role": "system", "content": "You write short, plain English for tool documentation. Answer with one JSON object only."},
        {"role": "user", "content": (
            f"A tool of the service '{spec.title}' ({spec.label}) {t['kind']}s {what}. "
            f"Parameters: {params or 'none'}.\nReturn {{\"description\": one sentence, \"phrase\": an instruction clause a user "
            "might say, using {parameter} placeholders for parameters, without the tool name or any snake_case word}.")},
    ]


def accept(t: dict, reply: str) -> dict | None:
    """The proposal as {"description", "phrase"} when it passes every check, else None."""
    m = re.search(r"\{.*\}", reply, re.S)
    if not m:
        return None
    try:
        d = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    desc, phrase = d.get("description"), d.get("phrase")
    if not isinstance(desc, str) or not isinstance(phrase, str) or not 8 <= len(desc) <= 300 or len(phrase) > 200:
        return None
    names = {p["name"] for p in t["params"]}
    holes = set(re.findall(r"\{([^{}]*)\}", phrase))
    if not holes <= names or not phrase_ok(phrase) or t["name"].lower() in (desc + phrase).lower():
        return None
    required = {p["name"] for p in t["params"] if p.get("required")}
    if not required <= holes:  # every required value must appear in the instruction
        return None
    return {"description": " ".join(desc.split()), "phrase": " ".join(phrase.split())}


def propose_wording(spec: ThemeSpec, templates: list[dict], proposer: Proposer) -> int:
    """Let the model reword each template; returns how many proposals were accepted."""
    accepted = 0
    for t in templates:
        try:
            proposal = accept(t, proposer(_prompt(spec, t)))
        except Exception:  # noqa: BLE001  an unreachable or broken model never stops discovery
            proposal = None
        if proposal:
            if t.get("own_description"):  # the server's own description stays; only the instruction phrase is new
                proposal.pop("description")
            t.update(proposal)
            accepted += 1
    return accepted
