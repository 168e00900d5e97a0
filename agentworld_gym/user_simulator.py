"""Conversations with hidden information: a simulated user holds the task's private facts.

In a conversation the agent does not read the task. A user simulator opens with the reason for the
call, tells a private fact (their name, email, user id, which order) only when the agent asks for
it, and ends the conversation the way tau2-bench users do, with one of three tokens:

    ###STOP###          the goal is met (or the user gives up on it)
    ###TRANSFER###      the agent handed the user to a human
    ###OUT-OF-SCOPE###  the scenario does not say what to do next

One module serves every env that has a user: `AgentWorldEnv(user=...)` (tau2 domains and the
project's own themes) and the PettingZoo `AssistantUserEnv`. Users:

* `ScriptedUser` - deterministic, for tests and CI: opens with the reason for the call, answers a
  request for a known fact by matching the words of the request, says yes to a confirmation, and
  stops when the agent reports back without asking anything.
* `PolicyUser` - any policy spec plays the user (`openai:<model>@<url>`, `hf:<model>`,
  `smollm2-135m`), prompted with the scenario and the rules above.
* `RelayUser` - the reply comes from outside (a PettingZoo user agent) through `env.user_says()`.

`make_user(spec)` builds one from a spec; "solo" means no user: the agent reads the whole task, as
before (results say so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import ConfigError

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_REASONS = {STOP: "user_stop", TRANSFER: "transfer", OUT_OF_SCOPE: "out_of_scope"}
SOLO, SCRIPTED = "solo", "scripted"
GREETING = "Hi! How can I help you today?"  # what tau2's agent says first; the user's opening answers it

# ---------------------------------------------------------------------------------------------
# Facts: what the user knows privately, and the words that ask for each

_VALUE = re.compile(  # emails, dates, IPs, domains, ids like AC-1001
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
    r"|\b(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b|(?<![\w-])[A-Za-z]{1,6}-\d+(?![\w-])"
)
_SKIP = {"is", "on", "at", "to", "from", "of", "the", "for", "with", "a", "an", "in", "and", "whose", "by", "that"}
# the kinds of private fact people are asked for, and the words an agent uses to ask for each
ASK_WORDS = {
    "name": ("name", "who"),
    "zip code": ("zip", "postal", "postcode"),
    "email": ("email", "e-mail", "mail"),
    "user id": ("user id", "user_id", "userid", "account id", "id"),
    "phone number": ("phone", "number"),
    "address": ("address",),
    "reservation": ("reservation", "confirmation", "booking"),
    "order": ("order",),
    "payment": ("payment", "card"),
    "date": ("date", "day", "when"),
    "location": ("where", "location", "country"),
}
_FACT_MARKERS = {  # how a scenario sentence shows that it holds a fact of each kind
    "name": r"(?i:\b(?:you are|your name is|you name is|called)\b)\s+[A-Z][a-z]+",
    "zip code": r"(?i:\bzip)|\b\d{5}\b", "email": r"@|(?i:\bemail\b)",
    "user id": r"(?i:\buser id\b|\bid is\b)|\b[a-z]+_[a-z]+_\d+\b",
    "phone number": r"(?i:\bphone\b)|\b\d{3}-\d{3}-\d{4}\b", "address": r"(?i:\baddress\b)",
    "reservation": r"(?i:\breservation\b|\bconfirmation\b)", "order": r"#W?\d|(?i:\border\b)",
    "payment": r"(?i:\bpayment\b|\bcard\b)",
    "location": r"(?i:\b(?:abroad|currently in|live in|living in|residing|located|moved)\b)",
}
IDENTITY_WORDS = ("name", "who", "identify", "verify", "details", "information")  # a known_info sentence of no kind above


@dataclass(frozen=True)
class Fact:
    """One private fact: told (as `text`) when a request names one of `asked_by`."""

    label: str
    text: str
    asked_by: tuple[str, ...]

    def asked(self, request: str) -> bool:
        return any(re.search(rf"(?<![\w-]){re.escape(w)}", request) for w in self.asked_by)


@dataclass(frozen=True)
class Scenario:
    """What the simulated user knows: the opening (reason for the call), private facts, what they
    do not know, and how they behave (what they accept, when they give in) for policy users."""

    opening: str
    facts: tuple[Fact, ...] = ()
    unknown: tuple[str, ...] = ()
    instructions: str = ""
    persona: str = ""

    def card(self) -> str:
        """The scenario as the user reads it (a policy user's prompt, the PettingZoo user's observation)."""
        parts = [f"[reason for the call]\n{self.opening}",
                 "[facts you know; tell each only when asked]\n" + ("\n".join(f"{f.label}: {f.text}" for f in self.facts) or "(none)")]
        if self.unknown:
            parts.append("[what you do not know]\n" + "\n".join(self.unknown))
        if self.instructions:
            parts.append(f"[how to behave]\n{self.instructions}")
        if self.persona:
            parts.append(f"[persona]\n{self.persona.strip()}")
        return "\n\n".join(parts)


def task_facts(instruction: str) -> dict[str, str]:
    """{label: value} for the ids, emails, dates, IPs and domains an instruction names, labelled
    by the noun before them ("account AC-1", "domain x.com") or by their kind ("email", "date")."""
    facts: dict[str, str] = {}
    for m in _VALUE.finditer(instruction):
        value = m.group(0)
        kind = "email" if "@" in value else "date" if value[:4].isdigit() else "id"
        label = kind
        if kind == "id":
            words = re.findall(r"[A-Za-z]+", instruction[: m.start()])[-3:]
            for w in reversed(words):
                if w.lower() not in _SKIP:
                    label = w.lower()
                    break
        base, n = label, 2
        while label in facts and facts[label] != value:
            label, n = f"{base} {n}", n + 1
        facts[label] = value
    return facts


def mask_facts(instruction: str, facts: dict[str, str]) -> str:
    """The instruction with every fact replaced by a request to ask for it."""
    by_value = {v: k for k, v in facts.items()}
    return _VALUE.sub(lambda m: f"[{by_value.get(m.group(0), 'detail')}: ask me]", instruction)


_SUBJECT_BEFORE = r"(?:^|[.!?:;,\n]\s*|\b(?:and|but|that|if|when|because|so|as|since|then|or|unless|until|while|where|who)\s+)"


def first_person(text: str) -> str:
    """A tau2 scenario sentence ("You are Emma Kim. Your user id is ...") as the user says it: "you"
    is "I" where it starts a clause and "me" elsewhere ("bring with you" -> "bring with me")."""
    swaps = [(r"\byou are\b", "I am"), (r"\byou're\b", "I'm"), (r"\byou've\b", "I've"), (r"\byou'd\b", "I'd"),
             (r"\byou'll\b", "I'll"), (r"\byou were\b", "I was"), (r"\byourself\b", "myself"), (r"\byours\b", "mine"),
             (r"\byour\b", "my"), (r"\byou name\b", "my name")]
    out = text.strip()
    for pattern, repl in swaps:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    out = re.sub(_SUBJECT_BEFORE + r"\byou\b", lambda m: m.group(0)[:-3] + "I", out, flags=re.IGNORECASE)
    out = re.sub(r"\byou\b", "me", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:my|mine|myself|me)\b", lambda m: m.group(0).lower(), out, flags=re.IGNORECASE)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), out)


def _sentences(text: str | None) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text or "") if s.strip()]


def scenario_from_instruction(instruction: str) -> Scenario:
    """A project task's user: the instruction with its ids, emails and dates held back until asked."""
    facts = task_facts(instruction)

    def words(label: str) -> tuple[str, ...]:  # "account 2" is asked for as "account" or "account 2"
        head = label.split()[0]
        return (ASK_WORDS[head] if head in ("email", "date") else (head,)) + ((label,) if label != "id" else ())

    return Scenario(mask_facts(instruction, facts), tuple(Fact(k, f"The {k} is {v}.", words(k)) for k, v in facts.items()),
                    instructions=instruction)


def scenario_from_tau2(user_scenario: dict) -> Scenario:
    """A tau2 task's user: `reason_for_call` opens, each `known_info` sentence is a private fact
    labelled by the kinds it holds, `unknown_info` is what the user says they do not know."""
    ins = user_scenario.get("instructions")
    persona = str(user_scenario.get("persona") or "")
    if not isinstance(ins, dict):  # a free-text scenario (the mock domain): the user says all of it
        return Scenario(first_person(str(ins or "")), (), (), str(ins or ""), persona)
    facts = []
    for sentence in _sentences(ins.get("known_info")):
        kinds = [k for k, marker in _FACT_MARKERS.items() if re.search(marker, sentence)]
        words = tuple(w for k in kinds for w in ASK_WORDS[k]) or IDENTITY_WORDS
        facts.append(Fact(", ".join(kinds) or "details", first_person(sentence), words))
    return Scenario(first_person(str(ins.get("reason_for_call") or "")), tuple(facts),
                    tuple(first_person(s) for s in _sentences(ins.get("unknown_info"))), str(ins.get("task_instructions") or "").strip(), persona)


def scenario_of(task) -> Scenario:
    """The user of any task: tau2 tasks keep their scenario in features["user_scenario"]."""
    raw = task.features.get("user_scenario") if task.features else None
    return scenario_from_tau2(raw) if isinstance(raw, dict) else scenario_from_instruction(task.instruction)


def end_reason(text: str) -> str | None:
    """"user_stop", "transfer" or "out_of_scope" when the user's message ends the conversation."""
    return next((reason for token, reason in END_REASONS.items() if token in (text or "")), None)


# ---------------------------------------------------------------------------------------------
# Users


class UserSimulator(Protocol):
    name: str

    def reply(self, scenario: Scenario, dialogue: list[dict]) -> str | None:
        """The user's next message given the dialogue so far ({"role": "assistant"|"user", "content"}:
        the agent's and the user's own messages); None means the reply comes from outside."""


def _last_agent_text(dialogue: list[dict]) -> str:
    return next((str(m.get("content") or "") for m in reversed(dialogue) if m.get("role") == "assistant"), "")


_CONFIRM = re.compile(r"\b(confirm|proceed|go ahead|shall i|should i|do you want|would you like|is that (?:right|correct|ok))\b")
_TRANSFER = re.compile(r"\btransfer\w*\b.*\b(human|agent|representative|specialist|supervisor)\b")


@dataclass
class ScriptedUser:
    """A deterministic user for tests and CI (no model): opens with the scenario's reason for the
    call; answers a request with exactly the facts whose words it names (or says what it does not
    know); says yes to a confirmation; lists what it can tell when asked something else; says
    ###TRANSFER### when handed to a human and ###STOP### when the agent reports without asking."""

    name: str = SCRIPTED

    def reply(self, scenario: Scenario, dialogue: list[dict]) -> str:
        if not any(m.get("role") == "user" for m in dialogue):
            return scenario.opening
        request = _last_agent_text(dialogue).lower()
        if _TRANSFER.search(request):
            return TRANSFER
        told = [f.text for f in scenario.facts if f.asked(request)]
        if told:
            return " ".join(told)
        unknown = [s for s in scenario.unknown if any(w in request for w in re.findall(r"[a-z]{4,}", s.lower()))]
        if unknown:
            return " ".join(unknown)
        if "?" not in request:
            return f"Thank you, that is all. {STOP}"
        if "anything else" in request:
            return f"No, that is all. {STOP}"
        if _CONFIRM.search(request):
            return "Yes, please go ahead."
        if scenario.facts:
            return "I can tell you my " + ", ".join(f.label for f in scenario.facts) + ". Which one do you need?"
        return "I have no other details; please go ahead with what you have."

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The PettingZoo user's turn (info carries the scenario and the dialogue)."""
        return self.reply(info["scenario"], info["dialogue"])

    def reply_with_tools(self, scenario: Scenario, dialogue: list[dict], tools: list[dict], run) -> str:
        """Dual control: make the phone calls the agent asked for (`run(calls)` returns their results' texts)
        and say what each showed; without any, the plain reply."""
        calls = self.device_calls(dialogue, tools)
        if not calls:
            return self.reply(scenario, dialogue)
        return "I did that on my phone. " + " ".join(f"{c['name']}: {r}" for c, r in zip(calls, run(calls), strict=True))

    def device_calls(self, dialogue: list[dict], tools: list[dict]) -> list[dict]:
        """Dual control (tau2 telecom): the user-side tools the agent's last message asks the user to use,
        in the order it names them; a tool is named by its name ("toggle_roaming") or its words ("toggle
        roaming"), with its arguments as a JSON object right after the name (none: no arguments)."""
        text = _last_agent_text(dialogue)
        found = []
        for schema in tools:
            name = schema["function"]["name"]
            spaced = name.replace("_", " ")
            for m in re.finditer(rf"(?<![\w])(?:{re.escape(name)}|{re.escape(spaced)})(?![\w])", text, re.IGNORECASE):
                found.append((m.start(), {"name": name, "arguments": _json_after(text, m.end())}))
        return [call for _, call in sorted(found, key=lambda x: x[0])]


def _json_after(text: str, at: int) -> dict:
    """The JSON object that follows position `at` (after spaces, a colon or a parenthesis), or {}."""
    import json

    rest = text[at:].lstrip(" :(\t")
    if not rest.startswith("{"):
        return {}
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


USER_RULES = (
    "You play a customer talking to a customer service agent. Follow the scenario below; never invent facts it does "
    "not give (what it does not give, you do not know). Say one message at a time, in your own words, without "
    "repeating the scenario verbatim. Open with the reason for your call only; give a fact from 'facts you know' only "
    "when the agent asks for it. Accept only what the scenario says you accept. When your goal is met, reply with "
    f"{STOP}. If you are transferred to a human agent, reply with {TRANSFER}. If the scenario does not say what to do "
    f"next, reply with {OUT_OF_SCOPE}.")


def chat(policy, messages: list[dict]) -> str:
    """One reply of any policy to a chat (system/user/assistant messages): an OpenAI-compatible endpoint,
    a transformers model, or any `act(observation, info)` policy given the chat as text."""
    if hasattr(policy, "complete"):
        return policy.complete(messages)
    if hasattr(policy, "encoder"):  # HFPolicy
        d = policy.encoder.encode(messages)
        gen = policy.generate([d.ids[-policy.max_context:]])[0]
        gen = gen[:-1] if gen[-1:] == [policy.encoder.end_id] else gen
        return policy.encoder.tok.decode(gen, skip_special_tokens=True)
    text = "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
    return policy.act(text, {"messages": messages, "tools": []})


DEVICE_RULES = (
    "You have a phone and these tools to act on it (the agent cannot touch it):\n{tools}\nTo use one, reply with only "
    '{{"name": "<tool>", "arguments": {{...}}}}; you will be told what it shows, then answer the agent. Never make up what '
    "a tool would show: use it.")
MAX_USER_CALLS = 4  # phone calls a model user may make in one turn before it must answer


@dataclass
class PolicyUser:
    """Any policy plays the user: prompted with USER_RULES and the scenario; the agent's messages
    are its 'user' turns and its own earlier messages its 'assistant' turns. With a phone (dual control),
    a reply that is a tool call of the phone's tools is made and its result shown before it answers."""

    policy: Any
    name: str = "policy"

    def _messages(self, scenario: Scenario, dialogue: list[dict], extra: str = "") -> list[dict]:
        # the conversation starts, as in tau2, with the agent's greeting that the user's opening answers
        messages = [{"role": "system", "content": f"{USER_RULES}\n\n{scenario.card()}{extra}"}, {"role": "user", "content": GREETING}]
        return messages + [{"role": "user" if m["role"] == "assistant" else "assistant", "content": str(m.get("content") or "")}
                           for m in dialogue if m.get("role") in ("assistant", "user")]

    def reply(self, scenario: Scenario, dialogue: list[dict]) -> str:
        return chat(self.policy, self._messages(scenario, dialogue)).strip() or "(no reply)"

    def reply_with_tools(self, scenario: Scenario, dialogue: list[dict], tools: list[dict], run) -> str:
        import json

        from .actions import parse_action

        names = {t["function"]["name"] for t in tools}
        listed = "\n".join(f"- {t['function']['name']}: {t['function'].get('description', '')} "
                           f"{json.dumps(t['function'].get('parameters', {}).get('properties', {}))}" for t in tools)
        messages = self._messages(scenario, dialogue, "\n\n" + DEVICE_RULES.format(tools=listed))
        for _ in range(MAX_USER_CALLS):
            text = chat(self.policy, messages).strip()
            calls = [{"name": c.name, "arguments": dict(c.arguments)} for c in parse_action(text).calls if c.name in names]
            if not calls:
                return text or "(no reply)"
            shown = "\n".join(f"{c['name']}: {r}" for c, r in zip(calls, run(calls), strict=True))
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": f"[your phone shows]\n{shown}"}]
        return chat(self.policy, messages[:-1] + [{"role": "user", "content": messages[-1]["content"] + "\nNow answer the agent."}]).strip() or "(no reply)"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self.reply(info["scenario"], info["dialogue"])


@dataclass
class RelayUser:
    """The reply comes from outside: the env waits for `env.user_says(text)` (the PettingZoo user agent)."""

    name: str = "relay"

    def reply(self, scenario: Scenario, dialogue: list[dict]) -> None:
        return None


LLM_PREFIXES = ("hf:", "openai:")


def make_user(spec: str | Any | None, **policy_kwargs) -> Any | None:
    """'solo' or None (no user), 'scripted', an LLM policy spec ('openai:<model>@<url>', 'hf:<model>',
    'smollm2-135m'), or a ready user object (anything with `reply`). A model that cannot load is one
    ConfigError naming the spec."""
    if spec is None or spec == SOLO:
        return None
    if not isinstance(spec, str):
        if not callable(getattr(spec, "reply", None)):
            raise ConfigError(f"Expected a user spec ('solo', 'scripted', 'openai:<model>@<url>', 'hf:<model>', 'smollm2-135m') "
                              f"or an object with reply(scenario, dialogue), got {type(spec).__name__}.")
        return spec
    if spec == SCRIPTED:
        return ScriptedUser()
    if spec.startswith(LLM_PREFIXES) or spec == "smollm2-135m":
        return PolicyUser(load_model_policy(spec, "user", **policy_kwargs), name=spec)
    raise ConfigError(f"Expected a user 'solo', 'scripted', 'openai:<model>@<url>', 'hf:<model>' or 'smollm2-135m', got {spec!r}.")


def load_model_policy(spec: str, role: str, **policy_kwargs):
    """An LLM policy for a role other than the agent (the user, a judge); a model that cannot load (a missing
    folder, a hub id offline, a broken checkpoint, a malformed spec) is one ConfigError naming the role."""
    from .policies.llm import make_llm_policy

    try:
        return make_llm_policy(spec, **policy_kwargs)
    except Exception as exc:
        detail = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ConfigError(f"Expected a {role} model that loads, got {spec!r}: {type(exc).__name__}: {detail}") from exc


def user_label(user) -> str:
    """How results name the mode: 'solo' (the agent reads the whole task) or the user's name."""
    return SOLO if user is None else str(getattr(user, "name", type(user).__name__))


# ---------------------------------------------------------------------------------------------
# A reference solver for conversations


@dataclass
class ConversationOracle:
    """Asks for each private fact the user holds, replays the task's gold calls, then reports: a tau2
    task's required information in words (no question, so a scripted user stops), another task's
    answer through submit. It reads the answer key: a reference solver that checks the conversation
    machinery, never a baseline."""

    env: Any
    _asked: int = field(default=0, init=False)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        import json

        env = self.env.unwrapped
        task, scenario = env.task, env.scenario
        said = [m for m in info["messages"] if m["role"] == "assistant"]
        asks = [m for m in said if not m.get("tool_calls")]
        if len(asks) < len(scenario.facts):
            return f"Could you tell me your {scenario.facts[len(asks)].label}?"
        calls = len(said) - len(asks)
        gold = task.features.get("gold_actions")
        if gold:  # dual control (tau2 telecom): the agent's own calls, and asks the user for theirs, in gold order
            step = len(said) - len(scenario.facts)  # a request to the user is a message without a call too
            if step < len(gold):
                a = gold[step]
                if a.get("requestor") == "user":
                    return f"Please do this on your phone: {a['name']} {json.dumps(a['arguments'])}"
                return json.dumps({"name": a["name"], "arguments": a["arguments"]})
        elif calls < len(task.solution):
            return json.dumps(task.solution[calls])
        if "user_scenario" in task.features:
            return "Your request is done." + (f" {task.answer}" if task.answer else "")
        answer = task.answer if task.answer_type != "none" else "done"
        return json.dumps({"name": "submit", "arguments": {"answer": answer}})


__all__ = ["END_REASONS", "GREETING", "OUT_OF_SCOPE", "SCRIPTED", "SOLO", "STOP", "TRANSFER", "ConversationOracle", "Fact",
           "PolicyUser", "RelayUser", "Scenario", "ScriptedUser", "chat", "end_reason", "first_person", "make_user", "mask_facts",
           "scenario_from_instruction", "scenario_from_tau2", "scenario_of", "task_facts", "user_label"]
