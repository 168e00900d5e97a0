"""The discovery pipeline, one stage per step:

    source -> taxonomy mapping -> schema inference (or archetype composition) -> complexification
           -> world building -> tool forging -> validation -> playable theme (tasks the oracle solves)

`prepare()` is deterministic in its source, so a registered pool theme is rebuilt on demand from a
compact recipe; `discover()` runs the whole pipeline over a catalog, resumably, writing one JSON
record per theme (spec + tool template specs + validation) and a report.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..theme import Theme
from ..world import ThemeSpec, build_template
from .build import attach_rules, bind_examples, complexify, compose, finish_templates
from .forge import WRITE_KINDS, forge_tool, path_companions, phrase_ok, plan_tools
from .infer import MAX_MISSING_FIELDS, Skipped, infer_from_tools, slugify, stable_seed
from .mapping import map_to_taxonomy
from .sources import BadInput, Source
from .validate import ToolReport, validate_tool

COMPANION_BELOW = 4  # real servers with fewer forged tools than this get companion tools
MIN_RULES = 2  # business rules every pool theme's write tools enforce (issue 12 item 4)


@dataclass
class Prepared:
    spec: ThemeSpec
    templates: list[dict]
    skipped: list[Skipped] = field(default_factory=list)
    confidence: float = 1.0


def prepare(src: Source, theme_id: str | None = None, rounds: int = 0) -> Prepared:
    """Stages 1-4 for one source: map it, infer or compose its schema, complexify, plan its tools."""
    theme_id = theme_id or slugify(src.name)
    if src.code:
        code, conf = src.code, 1.0
    else:
        # the category comes from the spec's own words: its description and its tools' descriptions too
        said = " ".join([src.description, *(str(t.get("description") or "") for t in src.tools or ())])
        code, conf = map_to_taxonomy(src.name, src.labels, said, [t["name"] for t in src.tools or ()])
    rng = np.random.default_rng(stable_seed(src.kind, src.name, src.variant))
    if src.tools:
        own = src.name if src.name.lower().endswith(("tools", "toolkit", "tool")) else f"{src.name} tools"
        label = (src.labels[0].lower() if src.labels and src.labels[0] else "tool") if src.kind == "toucan" else own
        draft, templates, skipped = infer_from_tools(src.name, src.tools, code=code, theme_id=theme_id, label=label, source=src.kind)
        if rounds:
            before = {t.name for t in draft.tables}
            complexify(draft, rounds, seed=stable_seed(src.name, "rounds"))
            spec = draft.to_spec(described=False)
            extra = [t for t in plan_tools(spec, rng) if t["table"] not in before]
            names = {t["name"] for t in templates}
            templates += [t for t in extra if t["name"] not in names]
        spec = draft.to_spec(described=False)  # tools are planned on the tables their schemas gave ...
        if 0 < len(templates) < COMPANION_BELOW:
            # a server with one or two tools gets the companions a real server of its kind has
            # (read, list, search, write its own records), so its tasks can chain three or more calls
            names = {t["name"] for t in templates}
            templates += [{**t, "companion": True} for t in plan_tools(spec, rng) if t["name"] not in names]
    elif src.entities:
        from .entities import compose_entities

        draft = compose_entities(src.entities, code=code, title=src.name, about=src.description, theme_id=theme_id, label=src.label)
        spec = draft.to_spec()
        templates, skipped = plan_tools(spec, rng), []
    else:
        name = src.name if src.kind != "catalog" else None
        draft = compose(code, src.variant, name=name, theme_id=theme_id, source=src.kind,
                        label=None)
        if rounds:
            complexify(draft, rounds, seed=stable_seed(src.name, "rounds"))
        spec = draft.to_spec()
        templates, skipped = plan_tools(spec, rng), []
    templates = finish_templates(templates, spec)
    if src.kind == "catalog" or (src.kind == "toucan" and any(t["kind"] in WRITE_KINDS for t in templates)):  # the pool's sources
        templates += rule_companions(spec, templates, np.random.default_rng(stable_seed(src.kind, src.name, src.variant, "rules")))
    if src.entities:  # composed: the record-store tools for removing a record with its children (rule path tasks)
        templates += finish_templates(path_companions(spec, templates), spec)
    if src.tools:
        spec = draft.to_spec()  # ... and the world also holds the fields their descriptions name
    return Prepared(attach_rules(spec, templates), templates, skipped, conf)


def rule_count(spec: ThemeSpec, templates: list[dict]) -> int:
    """How many kinds of business rule (terminal state, unchanged, children, ownership, limits, ...)
    the write tools among `templates` enforce and the prompt states: the same kind on two tables counts once."""
    import copy

    templates = copy.deepcopy(templates)
    attach_rules(spec, templates)
    return len({m for t in templates for m in t.get("rules", ())})


def rule_companions(spec: ThemeSpec, templates: list[dict], rng) -> list[dict]:
    """Companion write tools for a theme whose writes enforce fewer than MIN_RULES business rules: the
    writes a real server of its kind has on its own records (close, update, add, remove), taken one at
    a time while each adds a rule, until the theme has MIN_RULES. A read-only real server gets none
    (the caller does not ask): inventing writes for a search or weather API would misstate it."""
    have = rule_count(spec, templates)
    if have >= MIN_RULES:
        return []
    names = {t["name"] for t in templates}
    added: list[dict] = []
    for t in finish_templates(plan_tools(spec, rng, writes_only=True), spec):
        if t["name"] in names:
            continue
        n = rule_count(spec, [*templates, *added, t])
        if n > have:
            added.append({**t, "companion": "rules"})  # truthy like the thin-server companions, and says why
            have = n
            if have >= MIN_RULES:
                break
    return added


def forge_theme(spec: ThemeSpec, templates: list[dict], blob: bytes | None = None) -> Theme:
    """Bind template specs to the built world and forge the Theme (no validation)."""
    import dataclasses

    blob = blob or build_template(spec)
    bind_examples(templates, spec, blob)
    spec = attach_rules(dataclasses.replace(spec, rules=()), templates)  # the rules of the tools it keeps, no others
    theme = Theme(spec, [forge_tool(t, spec) for t in templates])
    theme.templates = templates  # the rule marks rule tasks are made from (synthesis.rules)
    return theme


@dataclass
class ThemeResult:
    id: str
    source: str
    ok: bool
    reason: str = ""
    spec: ThemeSpec | None = None
    templates: list[dict] = field(default_factory=list)  # the kept tools
    reports: list[ToolReport] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def pass_rate(self) -> float:
        tests = sum(r.tests for r in self.reports)
        return sum(r.passed for r in self.reports) / tests if tests else 0.0

    def to_record(self) -> dict:
        return {
            "id": self.id, "source": self.source, "ok": self.ok, "reason": self.reason,
            "spec": self.spec.to_dict() if self.spec else None, "tools": self.templates,
            "validation": {"pass_rate": round(self.pass_rate, 4), "tools": [r.to_dict() for r in self.reports]},
            "skipped": [s.__dict__ for s in self.skipped], "seconds": round(self.seconds, 3),
            "missing_fields": list((self.spec.extra or {}).get("missing_fields") or []) if self.spec else [],
        }


def run_source(src: Source, theme_id: str | None = None, rounds: int = 0, task_seeds=(0, 1, 2, 3, 4, 5), proposer=None) -> ThemeResult:
    """The whole pipeline for one source; never raises for bad input (the result says why).

    `proposer` (optional, see discovery.llm) lets a model reword the tools before validation."""
    t0 = time.perf_counter()
    theme_id = theme_id or slugify(src.name)
    try:
        prep = prepare(src, theme_id, rounds)
    except Exception as exc:  # noqa: BLE001  a source we cannot model is reported, not fatal
        return ThemeResult(theme_id, src.kind, False, f"schema inference failed ({type(exc).__name__}: {exc})"[:200], seconds=time.perf_counter() - t0)
    res = ThemeResult(theme_id, src.kind, False, spec=prep.spec, skipped=list(prep.skipped))
    if not prep.templates:
        res.reason = "no forgeable tool"
        res.seconds = time.perf_counter() - t0
        return res
    if proposer is not None:
        from .llm import propose_wording

        propose_wording(prep.spec, prep.templates, proposer)
    try:
        blob = build_template(prep.spec)
        bind_examples(prep.templates, prep.spec, blob)
    except Exception as exc:  # noqa: BLE001
        res.reason = f"world build failed ({type(exc).__name__}: {exc})"[:200]
        res.seconds = time.perf_counter() - t0
        return res
    kept = []
    for t in prep.templates:
        try:
            tool = forge_tool(t, prep.spec)
        except Exception as exc:  # noqa: BLE001
            res.skipped.append(Skipped(src.name, t["name"], f"forging failed ({type(exc).__name__})"))
            continue
        if not phrase_ok(t.get("phrase", "")):
            t["phrase"] = ""
        report = validate_tool(t, tool, prep.spec, blob, seed=stable_seed(theme_id, t["name"]))
        res.reports.append(report)
        if report.kept:
            kept.append((t, tool))
        else:
            res.skipped.append(Skipped(src.name, t["name"], report.reason))
    res.templates = [t for t, _ in kept]
    missing = (prep.spec.extra or {}).get("missing_fields") or []
    if not kept or not any(r.valid_passed for r in res.reports if r.kept):
        res.reason = "no tool passed validation"
    elif len(missing) > MAX_MISSING_FIELDS:  # its tools describe records its world cannot hold
        res.reason = f"{len(missing)} described fields found no column: " + ", ".join(f"{t}.{f}" for t, f in missing[:6])
    elif task_seeds:
        theme = Theme(prep.spec, [tool for _, tool in kept])
        problem = playable_problem(theme, task_seeds)
        res.ok, res.reason = problem is None, problem or ""
    else:
        res.ok = True
    res.seconds = time.perf_counter() - t0
    return res


def playable_problem(theme: Theme, seeds=(0, 1, 2)) -> str | None:
    """None when difficulty-1 tasks synthesize for every seed and pass the quality filter."""
    from ..errors import TaskError
    from ..synthesis import quality_problems, synthesize_task

    for seed in seeds:
        try:
            task = synthesize_task(theme, 1, seed)
        except TaskError:
            return "no verifiable task"
        problems = quality_problems(theme, task)
        if problems:
            return f"task quality: {problems[0]}"
    return None


def theme_from_record(rec: dict) -> Theme:
    """Rebuild a Theme from a record written by `discover` (spec + kept tool template specs)."""
    spec = ThemeSpec.from_dict(rec["spec"])
    return forge_theme(spec, rec["tools"])


# ------------------------------------------------------------------------------------------ discover

def write_json_atomic(path: Path, data) -> None:
    """Write through a temp file and rename, so an interrupted run never leaves a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_record(path: Path) -> dict | None:
    """A record, or None when the file is missing or corrupt (it will be redone)."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        return rec if isinstance(rec, dict) and "id" in rec and "ok" in rec else None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def discover(sources, out: str | Path, limit: int | None = None, rounds: int = 0, progress: bool = True, proposer=None) -> dict:
    """Run the pipeline over `sources` (Source or BadInput items), writing out/themes/<id>.json per
    source and out/report.json; sources whose record already exists are skipped (resume)."""
    from tqdm import tqdm

    out = Path(out)
    themes_dir = out / "themes"
    bad: list[dict] = []
    items = []
    used: set[str] = set()
    for item in sources:
        if isinstance(item, BadInput):
            bad.append({"ref": item.ref, "reason": item.reason})
            continue
        if limit is not None and len(items) >= limit:
            break
        tid = slugify(item.name) if item.kind != "catalog" else None
        if tid is None:
            tid = prepare_id(item)
        base, n = tid, 2
        while tid in used:
            tid, n = f"{base}-{n}", n + 1
        used.add(tid)
        items.append((tid, item))
    bar = tqdm(items, desc="discover", unit="theme", disable=not progress)
    for tid, src in bar:
        path = themes_dir / f"{tid}.json"
        if read_record(path) is not None:
            continue
        res = run_source(src, tid, rounds, proposer=proposer)
        write_json_atomic(path, res.to_record())
    report = summarize([read_record(themes_dir / f"{tid}.json") for tid, _ in items], bad)
    write_json_atomic(out / "report.json", report)
    return report


def prepare_id(src: Source) -> str:
    from .archetypes import labels_of

    labels = labels_of(src.code)
    return f"{slugify(labels[src.variant % len(labels)])}-{src.variant // len(labels) + 1}"


def reason_kind(reason: str) -> str:
    """'required parameter 'options' is a nested object' -> 'required parameter <name> is a nested object'."""
    return re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", re.sub(r"'[^']*'|\"[^\"]*\"", "<name>", reason))).strip()


def summarize(records: list[dict | None], bad: list[dict] | None = None) -> dict:
    records = [r for r in records if r]
    ok = [r for r in records if r["ok"]]
    reports = [t for r in records for t in r["validation"]["tools"]]
    tests = sum(t["tests"] for t in reports)
    reasons: dict[str, int] = {}
    for r in records:
        for s in r.get("skipped", ()):
            key = reason_kind(s["reason"])
            reasons[key] = reasons.get(key, 0) + 1
    return {
        "sources": len(records), "themes": len(ok), "tools": sum(len(r["tools"]) for r in ok),
        "tools_tested": len(reports), "tool_test_pass_rate": round(sum(t["passed"] for t in reports) / tests, 4) if tests else 0.0,
        "dropped": [{"id": r["id"], "reason": r["reason"]} for r in records if not r["ok"]],
        "skipped_tools": reasons, "bad_input": bad or [],
    }
