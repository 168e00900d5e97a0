"""The Berkeley Function-Calling Leaderboard (BFCL v4) from the `bfcl-eval` package.

Data: the package's own copy (`pip install 'agentworld-gym[bfcl]'`), or a folder of BFCL_v4_*.json
with possible_answer/ given explicitly (tests use that). Categories are whatever the data ships.

Grading follows BFCL's AST checker rule by rule (checked item by item against the package's own
`ast_checker` by tests/test_bfcl.py and benchmarks/bfcl_agreement.py):
- a reply is decoded into calls by this project's action parser (JSON, Python-call syntax, ...);
- simple categories need exactly one call, `multiple` ones exactly one call of the expected function,
  `parallel` ones one call per gold call, matched in any order;
- a call must name the function, give every required parameter, no parameter outside both the
  function doc and the gold answer, and every gold parameter unless "" marks it optional;
- a value must have the documented type (an int passes for a float; BFCL's "variable" rule: a value
  of the gold answer's type passes the type check) and equal an acceptable value: strings compared
  without case, spaces and ,./-_*^ ; lists element by element so; dicts key by key; Java and
  JavaScript values are the language's literals, converted by BFCL's own converters;
- irrelevance categories pass when the reply makes no call, relevance ones when it makes one.

Multi-turn categories run as episodes against the package's state classes (agentworld_gym.suites.bfcl_multi_turn);
memory, web_search and format_sensitivity need BFCL's agent harness and are refused with a message.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError

EXTRA = "bfcl"
PY_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list,
                             "dict": dict, "any": str}
NESTED = ("array", "tuple")
JAVA_NESTED = ("Array", "ArrayList", "array")
MULTI_TURN_PREFIX = "multi_turn_"
AGENTIC = ("memory", "web_search", "format_sensitivity")  # need BFCL's agent harness (memory backends, live web search)


class BadItem(ValueError):
    """A data item the suite cannot grade; reported and skipped, never fatal."""


# --------------------------------------------------------------------------------------------
# Data


def bfcl_dir(path: str | Path | None = None) -> Path:
    """`path` (a BFCL v4 folder) or the installed bfcl-eval package's data folder."""
    if path:
        p = Path(path)
        if not list(p.glob("BFCL_v4_*.json")):
            raise ConfigError(f"Expected a BFCL v4 folder with BFCL_v4_*.json and possible_answer/, got {p}.")
        return p
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.submodule_search_locations:
        p = Path(list(spec.submodule_search_locations)[0]) / "data"
        if list(p.glob("BFCL_v4_*.json")):
            return p
    raise ConfigError(f"Expected the bfcl-eval package for the BFCL suite, got none installed. "
                      f"Install it with: pip install 'agentworld-gym[{EXTRA}]' (or, without the provider SDKs it pins, "
                      f"pip install --no-deps bfcl-eval), or pass --bfcl-path DIR.")


def categories(path: str | Path | None = None) -> list[str]:
    """Every category the data ships (a BFCL_v4_<category>.json file)."""
    return sorted(p.stem[len("BFCL_v4_"):] for p in bfcl_dir(path).glob("BFCL_v4_*.json"))


def is_relevance(category: str) -> bool:
    return category.endswith("relevance")  # irrelevance, live_irrelevance, live_relevance


def single_turn(path: str | Path | None = None) -> list[str]:
    return [c for c in categories(path) if not c.startswith(MULTI_TURN_PREFIX) and c not in AGENTIC]


def language(category: str) -> str:
    return "javascript" if category.endswith("javascript") else "java" if category.endswith("java") else "python"


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                rows.append({"id": f"{path.stem}:line{n}", "_error": f"not JSON: {exc}"})
    return rows


def _check_item(x: dict, category: str, answers: dict) -> dict:
    """An item in the suite's shape, or BadItem saying why it cannot be graded."""
    if "_error" in x:
        raise BadItem(x["_error"])
    question, functions = x.get("question"), x.get("function")
    if not (isinstance(question, list) and question and isinstance(question[0], list) and question[0]):
        raise BadItem("no question messages")
    if not (isinstance(functions, list) and (functions or is_relevance(category))
            and all(isinstance(f, dict) and f.get("name") for f in functions)):
        raise BadItem("no function docs")  # an irrelevance item may offer none: then any call is wrong
    for f in functions:
        params = f.get("parameters")
        if not isinstance(params, dict) or not isinstance(params.get("properties", {}), dict):
            raise BadItem(f"function {f['name']!r} has no parameter object")
    item = {"id": x["id"], "category": category, "question": question[0], "functions": functions, "ground_truth": None}
    if is_relevance(category):
        return item
    gt = answers.get(x["id"])
    if not (isinstance(gt, list) and gt and all(isinstance(g, dict) and len(g) == 1 for g in gt)):
        raise BadItem("no ground truth" if gt is None else f"ground truth is not a list of single calls: {str(gt)[:120]}")
    for g in gt:
        (name, params), = g.items()
        if not isinstance(params, dict) or not all(isinstance(v, list) for v in params.values()):
            raise BadItem(f"ground truth of {name!r} is not {{param: [acceptable values]}}: {str(params)[:120]}")
        doc = _doc(functions, name)
        if doc is None and "multiple" in category and "parallel" not in category:
            raise BadItem(f"ground truth calls {name!r}, which no function doc describes")
        if doc is not None:  # BFCL's rules make these items unpassable: skip them rather than count them as failures
            props, required = doc["parameters"].get("properties", {}), doc["parameters"].get("required", [])
            if missing := [p for p in required if p not in params]:
                raise BadItem(f"no answer can pass: {name!r} requires {missing}, which the ground truth does not allow")
            if empty := [p for p, v in params.items() if not v]:
                raise BadItem(f"no answer can pass: the ground truth of {name!r} allows no value for {empty}")
            if language(category) == "java" and (text_only := [
                    p for p, v in params.items() if props.get(p, {}).get("type") in JAVA_NESTED
                    and (props[p].get("items") or {}).get("type") in ("any", "String", None)
                    and all(isinstance(o, list) and any(not isinstance(e, str) for e in o) for o in v if o != "")]):
                raise BadItem(f"no answer can pass: Java {text_only} elements convert to text, the ground truth holds non-text ones")
            if extra := [p for p, v in params.items() if p not in props and "" not in v]:
                raise BadItem(f"no answer can pass: the ground truth of {name!r} needs {extra}, which its doc does not define")
    item["ground_truth"] = gt
    return item


def load_bfcl(path: str | Path | None = None, cats: Sequence[str] | None = None, limit: int | None = None,
              skipped: dict | None = None) -> list[dict]:
    """Items {id, category, question (messages), functions, ground_truth} of the single-turn
    categories `cats` (default: every single-turn one shipped). Items that cannot be graded go to
    `skipped` ({id: why}) instead of failing the run."""
    root = bfcl_dir(path)
    shipped = categories(root)
    cats = list(cats) if cats else single_turn(root)
    for cat in cats:
        if cat not in shipped:
            from difflib import get_close_matches

            hint = get_close_matches(cat, shipped, n=1)
            raise ConfigError(f"Expected BFCL categories from {shipped}, got {cat!r}." + (f" Did you mean {hint[0]!r}?" if hint else ""))
        if cat in AGENTIC:
            raise ConfigError(f"Expected a single-turn or multi_turn_* category, got {cat!r}: it needs BFCL's agent harness "
                              "(memory backends or live web search), which this suite does not run.")
    items = []
    for cat in cats:
        if cat.startswith(MULTI_TURN_PREFIX):
            continue  # episodes, see agentworld_gym.suites.bfcl_multi_turn
        a = root / "possible_answer" / f"BFCL_v4_{cat}.json"
        answers = {} if is_relevance(cat) or not a.is_file() else {x.get("id"): x.get("ground_truth") for x in _read_jsonl(a)}
        rows = _read_jsonl(root / f"BFCL_v4_{cat}.json")
        for x in rows[:limit] if limit else rows:
            try:
                items.append(_check_item(x, cat, answers))
            except BadItem as exc:
                if skipped is not None:
                    skipped[str(x.get("id"))] = str(exc)
    return items


# --------------------------------------------------------------------------------------------
# Grading (BFCL's AST rules, see the module doc)


def _std(s: str) -> str:
    return re.sub(r"[ ,./\-_*^]", "", s).lower().replace("'", '"')


def _answer_type(acceptable: list) -> type | None:
    return next((type(a) for a in acceptable if a != ""), None)


def _type_ok(value: Any, acceptable: list, want: type, inner: type | None) -> tuple[bool, bool]:
    """(type passes, value counts as a variable name) under BFCL's rules."""
    hint = _answer_type(acceptable)
    variable = hint is not None and hint is not want
    if type(value) is want:
        if inner is None:
            return True, variable
        # each element must pass against one list-valued option (a non-list option passes outright)
        if any(type(opt) is not list or all(_type_ok(v, opt, inner, None)[0] for v in value) for opt in acceptable):
            return True, variable
        return False, False  # a failed element check fails, even where the variable rule below would pass
    if hint is not None and type(value) is hint:
        return True, True
    return False, False


def _strings(xs: list) -> list:
    return [_std(x) if type(x) is str else x for x in xs]


def _dict_ok(value: dict, options: list) -> bool:
    for option in options:
        if option == "":
            continue
        if all(k in option and (_std(v) if type(v) is str else v) in _strings(option[k]) for k, v in value.items()) \
                and all(k in value or "" in acceptable for k, acceptable in option.items()):
            return True
    return False


def _value_ok(value: Any, acceptable: list, desc: str, doc: dict, lang: str) -> bool:
    inner = None
    if lang == "python":
        want = PY_TYPES[desc]
        if desc in NESTED:
            inner = PY_TYPES[doc["items"]["type"]]
    else:
        from bfcl_eval.constants.type_mappings import JAVA_TYPE_CONVERSION, JS_TYPE_CONVERSION

        table = JAVA_TYPE_CONVERSION if lang == "java" else JS_TYPE_CONVERSION
        want = table[desc]
        if type(value) is not str:
            return False  # Java/JS values are the language's literals, as text
        if lang == "java":
            from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import java_type_converter as convert
        else:
            from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter as convert
        if desc in JAVA_NESTED:
            inner = table[doc["items"]["type"]]
            value = convert(value, desc, doc["items"]["type"])
        else:
            value = convert(value, desc)
    if lang == "python" and desc == "float" and type(value) is int:
        value = float(value)
    ok, variable = _type_ok(value, acceptable, want, inner)
    if not ok:
        return False
    if not variable:
        if want is dict:
            return _dict_ok(value, acceptable)
        if want is list and inner is dict:
            return any(len(value) == len(opt) and all(_dict_ok(v, [o]) for v, o in zip(value, opt, strict=True)) for opt in acceptable)
        if want is str:
            return _std(value) in _strings(acceptable)
        if want is list:
            return _strings(list(value)) in [_strings(opt) for opt in acceptable]
    return value in acceptable


def call_ok(call: dict, doc: dict, gold: dict, lang: str = "python") -> bool:
    """One decoded call {name: {param: value}} against one gold call {name: {param: [acceptable]}}."""
    (name, acceptable), = gold.items()
    if doc["name"] not in call:
        return False
    args = call[doc["name"]]
    props = doc["parameters"]["properties"]
    if any(p not in args for p in doc["parameters"]["required"]):
        return False
    for p, v in args.items():
        if p not in props or p not in acceptable or not _value_ok(v, acceptable[p], props[p]["type"], props[p], lang):
            return False
    return all(p in args or "" in options for p, options in acceptable.items())


def _doc(functions: list[dict], name: str) -> dict | None:
    return next((f for f in functions if f["name"] == name), None)


def grade_decoded(calls: list[dict], item: dict) -> bool:
    """BFCL's verdict on decoded calls [{name: {param: value}}, ...] for one item."""
    cat, gt, fns = item["category"], item["ground_truth"], item["functions"]
    if is_relevance(cat):
        return (not calls) == ("irrelevance" in cat)
    lang = language(cat)
    if len(calls) != len(gt):
        return False
    if "parallel" in cat:
        used: set[int] = set()
        for g in gt:
            doc = _doc(fns, next(iter(g)))
            hit = next((i for i, c in enumerate(calls) if i not in used and call_ok(c, doc, g, lang)), None)
            if hit is None:
                return False
            used.add(hit)
        return True
    if "multiple" in cat:
        return call_ok(calls[0], _doc(fns, next(iter(gt[0]))), gt[0], lang)
    return call_ok(calls[0], fns[0], gt[0], lang)


def decode(text: str, names: Collection[str] = ()) -> list[dict]:
    """A reply's calls as [{name: {param: value}}] (this project's parser: JSON, Python calls, ...).

    The parser drops a `functions.` prefix (gpt-oss, Kimi write one before every name); a name the item's
    functions carry with that prefix (`functions.intersect`) keeps it, as written."""
    from ..actions import parse_action

    return [{c.written_as if c.written_as in names else c.name: dict(c.arguments)} for c in parse_action(text).calls]


def as_tools(functions: list[dict]) -> list[dict]:
    """BFCL docs ("dict", Python type names) as OpenAI tool schemas (for policies that sample calls)."""
    names = {"dict": "object", "float": "number", "tuple": "array"}
    tools = []
    for f in functions:
        params = f.get("parameters", {})
        props = {k: {**v, "type": names.get(v.get("type", "string"), v.get("type", "string"))} for k, v in params.get("properties", {}).items()}
        tools.append({"type": "function", "function": {"name": f["name"], "description": f.get("description", ""),
                                                         "parameters": {"type": "object", "properties": props, "required": params.get("required", [])}}})
    return tools


def score_bfcl(text: str, item: dict) -> bool:
    try:
        return grade_decoded(decode(text, {f.get("name") for f in item["functions"]}), item)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return False  # a doc or value shape the rules cannot apply to: not a pass


# --------------------------------------------------------------------------------------------
# Reference answers and null baselines


def _java(value: Any, doc: dict | None) -> str:
    """A value as the Java literal BFCL's converter reads back (`5L`, `new int[]{1, 2}`, ...)."""
    kind = (doc or {}).get("type", "any")
    inner = ((doc or {}).get("items") or {}).get("type")

    def scalar(v: Any, t: str | None) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return f'"{v}"' if t in (None, "String") else v
        return f"{v}L" if t == "long" else f"{v}f" if t == "float" else str(v)

    if kind == "long" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value}L"
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value}f"
    if kind == "Array" and isinstance(value, list):
        return f"new {inner or 'Object'}[]{{{', '.join(scalar(v, inner) if inner != 'String' else str(v) for v in value)}}}"
    if kind == "ArrayList" and isinstance(value, list):
        return f"new ArrayList<>(Arrays.asList({', '.join(scalar(v, inner) for v in value)}))" if value else "new ArrayList<>()"
    if kind == "HashMap" and isinstance(value, dict):
        return "new HashMap<String, Object>() {{ " + " ".join(f'put("{k}", {scalar(v, None)});' for k, v in value.items()) + " }}"
    return scalar(value, kind) if not isinstance(value, str) else value


def _literal(value: Any, lang: str, doc: dict | None = None) -> Any:
    """A gold value as the model would write it: Java/JavaScript values are literals in text."""
    if lang == "python" or isinstance(value, str):
        return value
    if lang == "java":
        return _java(value, doc)
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if not isinstance(value, (int, float)) else str(value)


def _first(acceptable: list) -> Any:
    """The first acceptable value; a dict option (one level, as BFCL's dict rule) gets the first
    acceptable value of each key it needs, a list of dict options each so."""
    v = next(a for a in acceptable if a != "")

    def pick(option: dict) -> dict:
        return {k: next(a for a in x if a != "") for k, x in option.items() if isinstance(x, list) and any(a != "" for a in x)}

    if isinstance(v, dict):
        return pick(v)
    if isinstance(v, list) and v and all(isinstance(d, dict) for d in v):
        return [pick(d) for d in v]
    return v


def gold_calls(item: dict) -> list[dict]:
    """A correct answer: each gold call with the first acceptable value of each non-optional parameter."""
    if is_relevance(item["category"]):
        if "irrelevance" in item["category"]:
            return []
        return [{_first_name(item): {}}]  # relevance: any well-formed call of a listed function counts
    lang = language(item["category"])
    out = []
    for g in item["ground_truth"]:
        (name, params), = g.items()
        doc = _doc(item["functions"], name)
        props = doc["parameters"].get("properties", {}) if doc else {}
        required = doc["parameters"].get("required", []) if doc else []
        args = {}
        for p, v in params.items():
            if doc and p not in props:
                continue  # optional in the answer key and unknown to the doc: giving it would fail
            if any(a != "" for a in v):
                args[p] = _literal(_first(v), lang, props.get(p))
            elif p in required:
                args[p] = ""  # required by the doc, "" the only acceptable value
        out.append({name: args})
    return out


def _first_name(item: dict) -> str:
    return item["functions"][0]["name"] if item["functions"] else "lookup"


def gold_reply(item: dict) -> str:
    calls = [{"name": n, "arguments": a} for c in gold_calls(item) for n, a in c.items()]
    return "" if not calls else json.dumps(calls if len(calls) > 1 else calls[0])


def null_replies(item: dict, rng) -> dict[str, str]:
    """The cheap strategies on one item: no call, the first function without arguments, and a
    random candidate (a random listed function with random values for its required parameters)."""
    from ..spaces import sample_value

    fns = item["functions"] or [{"name": _first_name(item), "parameters": {"properties": {}}}]
    f = fns[int(rng.integers(len(fns)))]
    props = f["parameters"].get("properties", {})
    schema = {k: {**v, "type": {"dict": "object", "float": "number"}.get(v.get("type"), v.get("type"))} for k, v in props.items()}
    args = {k: sample_value(schema[k], rng) for k in f["parameters"].get("required", []) if k in schema}
    return {"do-nothing": "", "constant:first-function": json.dumps({"name": fns[0]["name"], "arguments": {}}),
            "random": json.dumps({"name": f["name"], "arguments": args})}


def messages(item: dict) -> list[dict]:
    """The item as chat messages: a system prompt with the function docs, then BFCL's turn."""
    lang = language(item["category"])
    note = f" Write argument values as {lang} literals in strings." if lang != "python" else ""
    return [{"role": "system", "content": function_calling_system(item["functions"], note)}, *item["question"]]


def function_calling_system(functions: list[dict], note: str = "") -> str:
    """The plain function-calling system prompt: the functions as JSON docs, replies as JSON calls or plain text.

    BFCL is scored with it; `agentworld train sft --call-share` trains on it (the transfer remedy)."""
    docs = json.dumps([{k: f[k] for k in ("name", "description", "parameters") if k in f} for f in functions])
    return ("You can call these functions:\n" + docs + '\nReply only with the call(s) as JSON: {"name": "<function>", '
            '"arguments": {...}}; several calls as a JSON list. If no function fits, reply in plain text without a call.'
            + note)


# --------------------------------------------------------------------------------------------
# Proving the grader: perturbed answers and BFCL's own checker


def _wrong(value: Any) -> Any:
    """A value no acceptable list should hold (same type where possible)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + " zz"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["zz"]
    if isinstance(value, dict):
        return {**value, "zz": 1}
    return "zz"


def perturbations(item: dict, rng) -> list[tuple[str, list[dict]]]:
    """(label, decoded calls): the reference answer, other acceptable answers, and wrong ones
    (wrong value, type, name, count; missing, extra or dropped-optional parameters)."""
    gold = gold_calls(item)
    out: list[tuple[str, list[dict]]] = [("oracle", gold)]
    if is_relevance(item["category"]):
        return [*out, ("no-call", []), ("one-call", [{_first_name(item): {}}])]
    out += [("reversed", gold[::-1]), ("drop-call", gold[:-1]), ("extra-call", [*gold, gold[0]])]
    lang = language(item["category"])
    k = int(rng.integers(len(gold)))
    (name, args), = gold[k].items()
    (_, acceptable), = item["ground_truth"][k].items()
    doc = _doc(item["functions"], name) or {"parameters": {"properties": {}, "required": []}}

    def variant(label: str, new_name: str, new_args: dict) -> None:
        out.append((label, [*gold[:k], {new_name: new_args}, *gold[k + 1:]]))

    variant("wrong-name", name + "_x", args)
    variant("extra-param", name, {**args, "zz_unexpected": 1})
    for p, options in acceptable.items():
        values = [o for o in options if o != ""]
        for i, v in enumerate(values[1:4], 1):
            variant(f"alt-value:{p}:{i}", name, {**args, p: _literal(v, lang)})
        if p in args:
            rest = {q: v for q, v in args.items() if q != p}
            variant(f"drop:{p}", name, rest)
            v = args[p]
            variant(f"wrong-value:{p}", name, {**args, p: _literal(_wrong(_first(options)), lang) if lang != "python" else _wrong(v)})
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                variant(f"as-float:{p}", name, {**args, p: float(v)})
                variant(f"as-text:{p}", name, {**args, p: str(v)})
            if isinstance(v, str) and lang == "python":
                variant(f"case:{p}", name, {**args, p: v.upper()})
        elif "" in options:
            pass  # already absent in the reference answer
        else:
            variant(f"add-optional:{p}", name, {**args, p: _literal(values[0], lang) if values else "zz"})
    for p in doc["parameters"].get("required", []):
        if p not in acceptable:
            variant(f"required-not-in-gold:{p}", name, {**args, p: "zz"})
    return out


def reference_checker():
    """BFCL's own AST checker from the installed bfcl-eval, as a function (calls, item) -> bool.

    The checker's module imports BFCL's model registry (which imports every provider SDK) only to
    look up whether a model's API turns dots in function names into underscores; a small registry
    answering "no" for our checker's model name stands in for it, so the package's checker code runs
    unchanged without those SDKs."""
    import sys
    import types

    if "bfcl_eval.eval_checker.ast_eval.ast_checker" not in sys.modules and "bfcl_eval.constants.model_config" not in sys.modules:
        registry = types.ModuleType("bfcl_eval.constants.model_config")
        registry.MODEL_CONFIG_MAPPING = {"agentworld": types.SimpleNamespace(underscore_to_dot=False)}
        sys.modules["bfcl_eval.constants.model_config"] = registry
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    langs = {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}

    def check(calls: list[dict], item: dict) -> bool:
        if is_relevance(item["category"]):  # BFCL: irrelevance passes with no call, relevance with one
            return (not calls) == ("irrelevance" in item["category"])
        try:
            return bool(ast_checker(item["functions"], calls, item["ground_truth"], langs[language(item["category"])],
                                    item["category"], "agentworld")["valid"])
        except Exception:  # noqa: BLE001 - the checker raising on an answer is a failed answer
            return False

    return check


def safe_grade(calls: list[dict], item: dict) -> bool:
    try:
        return grade_decoded(calls, item)
    except Exception:  # noqa: BLE001 - as reference_checker: a rule that cannot apply is a failed answer
        return False
