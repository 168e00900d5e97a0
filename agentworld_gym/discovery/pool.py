"""The built-in pool: composed catalog themes for all 50 L2 categories plus themes derived from real
Toucan MCP servers (facts only: names, labels, parameter schemas), built and validated once into a
compact index (envs/data/pool_index.json) from which every theme is rebuilt on demand."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from .infer import slugify
from .sources import Source, read_toucan

DATA = Path(__file__).resolve().parents[2] / "envs" / "data"
INDEX = "pool_index.json"
FACTS = "toucan_facts.json.gz"
PER_L2 = 30


DESCRIPTION_CAP = 1_500  # characters of a real description kept (a few servers paste whole manuals)


def _compact_schema(s) -> dict:
    """Keep the facts of a parameter schema (type, enum, item type) and its real description."""
    if not isinstance(s, dict):
        return {}
    out = {}
    if isinstance(s.get("description"), str) and s["description"].strip():
        out["description"] = s["description"].strip()[:DESCRIPTION_CAP]
    for k in ("type", "enum"):
        if k in s:
            out[k] = s[k]
    if isinstance(s.get("items"), dict):
        out["items"] = _compact_schema(s["items"])
    for k in ("anyOf", "oneOf"):
        if isinstance(s.get(k), list):
            out[k] = [_compact_schema(x) for x in s[k]]
    return out


def extract_toucan_facts(path: str | Path) -> list[list]:
    """[[server name, labels, [[tool name, {param: schema}, required, description], ...]], ...] for servers
    with tools. Descriptions are the servers' own text (Toucan, MIT licence: see TOUCAN_SOURCE.md)."""
    facts = []
    descriptions = _tool_descriptions(Path(path))
    for src in read_toucan(Path(path)):
        if not isinstance(src, Source):
            continue
        tools = []
        for t in src.tools:
            t = {**t, "description": descriptions.get((src.name, t["name"]), "")}
            params = t["parameters"] if isinstance(t["parameters"], dict) else {}
            props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
            req = params.get("required") if isinstance(params.get("required"), list) else []
            desc = t.get("description") if isinstance(t.get("description"), str) else ""
            tools.append([t["name"], {str(k): _compact_schema(v) for k, v in props.items()}, [str(r) for r in req], desc.strip()[:DESCRIPTION_CAP]])
        facts.append([src.name, [label for label in src.labels if label][:3], tools])
    return facts


def _tool_descriptions(path: Path) -> dict[tuple[str, str], str]:
    """{(server name, tool name): the tool's own description} read straight from the Toucan file."""
    out = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            try:
                d = json.loads(line)
                for t in d.get("tools") or ():
                    if isinstance(t, dict) and isinstance(t.get("description"), str):
                        out[(str(d["server_name"]), str(t.get("name", "")))] = t["description"]
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue
    return out


def load_facts(data_dir: Path = DATA) -> list[list]:
    with gzip.open(data_dir / FACTS, "rt", encoding="utf-8") as f:
        return json.load(f)


def source_from_fact(fact: list, code: str | None = None) -> Source:
    name, labels, tools = fact
    return Source(name, "toucan", tuple(labels), "", [{"name": t[0], "parameters": {"type": "object", "properties": t[1], "required": t[2]},
                                                       "description": t[3] if len(t) > 3 else ""} for t in tools], code=code)


def schema_fingerprint(spec) -> str:
    shape = sorted((t.name, tuple(sorted(c.name for c in t.columns))) for t in spec.tables)
    return hashlib.sha1(json.dumps(shape).encode()).hexdigest()[:12]


def recipe_source(entry: list, facts: list[list] | None = None) -> Source:
    """The Source a pool index entry was built from."""
    tid, code, _label, source, ref = entry[:5]
    if source == "catalog":
        return Source(f"{code}#{ref}", "catalog", (), "", None, f"catalog:{code}:{ref}", code=code, variant=int(ref))
    return source_from_fact((facts or load_facts())[int(ref)], code)


def taken_ids() -> set[str]:
    """Theme names already used by registered envs (flagships, external domains, pools): pool ids avoid them."""
    import gymnasium as gym

    import agentworld_gym  # noqa: F401  (registers the flagships)

    from ..envs import catalog

    return {k.split("/", 1)[1].rsplit("-v", 1)[0] for k in gym.registry if k.startswith("AgentWorld/")} - set(catalog._ROWS)


def build_pool(toucan: str | Path | None = None, per_l2: int = PER_L2, data_dir: Path = DATA, limit: int | None = None, progress: bool = True,
               work_dir: str | Path | None = None) -> dict:
    """Run the pipeline over the catalog and the Toucan facts; write the index. Resumable through
    a JSONL journal next to the index (one line per finished theme)."""
    from tqdm import tqdm

    from ..envs import taxonomy
    from .mapping import map_to_taxonomy
    from .pipeline import MIN_RULES, prepare_id, rule_count, run_source, write_json_atomic
    from .sources import catalog_sources

    data_dir.mkdir(parents=True, exist_ok=True)
    if toucan:
        facts = extract_toucan_facts(toucan)
        with gzip.open(data_dir / FACTS, "wt", encoding="utf-8", compresslevel=9) as f:
            json.dump(facts, f, separators=(",", ":"))
    facts = load_facts(data_dir)
    jobs = []
    used = taken_ids()
    for src in catalog_sources(per_l2):
        tid = prepare_id(src)
        used.add(tid)
        jobs.append((tid, src, str(src.variant)))
    for i, fact in enumerate(facts):
        src = source_from_fact(fact)
        src.code = map_to_taxonomy(src.name, src.labels, "", [t["name"] for t in src.tools])[0]
        base = tid = slugify(src.name)
        n = 2
        while tid in used:
            tid, n = f"{base}-{n}", n + 1
        used.add(tid)
        jobs.append((tid, src, str(i)))
    if limit:
        jobs = jobs[:limit]
    from ..world import cache_dir

    journal = Path(work_dir) if work_dir else cache_dir() / "pool-build" / f"{data_dir.resolve().as_posix().replace('/', '_')}.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if journal.exists():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                done[rec["id"]] = rec
            except (json.JSONDecodeError, KeyError):
                continue  # a torn last line from an interrupted run is redone
    with journal.open("a", encoding="utf-8") as log:
        for tid, src, ref in tqdm(jobs, desc="pool", unit="theme", disable=not progress):
            if tid in done:
                continue
            res = run_source(src, tid)
            too_few = res.ok and res.spec is not None and rule_count(res.spec, res.templates) < MIN_RULES
            if too_few:
                res.ok, res.reason = False, f"fewer than {MIN_RULES} business rules"
            rec = {"id": tid, "ok": res.ok, "reason": res.reason, "code": src.code, "label": res.spec.label if res.spec else "",
                   "source": src.kind, "ref": ref, "tools": [t["name"] for t in res.templates], "pass_rate": round(res.pass_rate, 4),
                   "tested": len(res.reports), "tests": sum(r.tests for r in res.reports), "passed": sum(r.passed for r in res.reports),
                   "fp": schema_fingerprint(res.spec) if res.spec else "", "skipped": [[s.tool, s.reason] for s in res.skipped],
                   "kinds": {r.name: r.kind for r in res.reports}, "kept_tools": [r.name for r in res.reports if r.kept],
                   "seconds": round(res.seconds, 3)}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    records = [done[tid] for tid, _, _ in jobs if tid in done]
    themes = [[r["id"], r["code"], r["label"], r["source"], r["ref"], r["tools"], r["pass_rate"], r["fp"]] for r in records if r["ok"]]
    frozen = frozen_rows(data_dir)  # held-out themes keep the tools their frozen tasks were made with
    themes = [frozen.get(t[0], t) for t in themes] + [row for tid, row in frozen.items() if tid not in {t[0] for t in themes}]
    tests = sum(r["tests"] for r in records)
    stats = {"themes": len(themes), "tools": sum(len(t[5]) for t in themes), "dropped": sum(not r["ok"] for r in records),
             "tools_tested": sum(r["tested"] for r in records), "tests": tests,
             "tool_test_pass_rate": round(sum(r["passed"] for r in records) / tests, 4) if tests else 0.0,
             "l2": len({t[1] for t in themes}), "l1": len({taxonomy.L2[t[1]].parent for t in themes}),
             "fingerprints": len({t[7] for t in themes}), "build_seconds": round(sum(r["seconds"] for r in records), 1),
             **class_report(records)}
    write_json_atomic(data_dir / INDEX, {"version": 1, "stats": stats, "columns": ["id", "l2", "l3", "source", "ref", "tools", "pass_rate", "fp"],
                                         "themes": themes})
    return stats


def class_report(records: list[dict]) -> dict:
    """Per tool class (read/search/create/update/delete/compute ...): how many tools were forged and
    kept, how many dropped, and the dropped ones' reasons (over every source, kept themes or not)."""
    from .pipeline import reason_kind

    forged: dict[str, int] = {}
    dropped: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for r in records:
        kept = set(r.get("kept_tools", ()))
        why = dict((tool, reason) for tool, reason in r.get("skipped", ()))
        for name, kind in r.get("kinds", {}).items():
            if name in kept:
                forged[kind] = forged.get(kind, 0) + 1
            else:
                dropped[kind] = dropped.get(kind, 0) + 1
                key = f"{kind}: {reason_kind(why.get(name, 'dropped'))[:80]}"
                reasons[key] = reasons.get(key, 0) + 1
        for tool, reason in r.get("skipped", ()):
            if tool not in r.get("kinds", {}):  # never forged: the spec's shape could not be used
                key = f"unforged: {reason_kind(reason)[:80]}"
                reasons[key] = reasons.get(key, 0) + 1
    top = dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:25])
    return {"tools_by_class": dict(sorted(forged.items())), "dropped_by_class": dict(sorted(dropped.items())), "dropped_reasons": top}


HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "suites" / "heldout"


def frozen_rows(data_dir: Path = DATA, heldout: Path = HELDOUT) -> dict[str, list]:
    """Index rows of the frozen held-out suite's themes, as the current index has them (a rebuild
    must not change the tools their frozen tasks were made with)."""
    path = data_dir / INDEX
    if not path.exists() or not heldout.is_dir():
        return {}
    ids = {p.stem for p in heldout.glob("*.jsonl")}
    return {t[0]: t for t in json.loads(path.read_text(encoding="utf-8"))["themes"] if t[0] in ids}


def refresh_rules(data_dir: Path = DATA, progress: bool = True, journal: str | Path | None = None) -> dict:
    """Bring an existing index to the rules floor without a full rebuild: each theme whose kept write
    tools enforce fewer than MIN_RULES rules is run through the pipeline again (which adds companion
    writes, see pipeline.rule_companions) and its row replaced; a theme still below the floor (a
    read-only real server) is dropped; held-out themes stay as they are. Resumable (JSONL journal)."""
    from tqdm import tqdm

    from ..world import cache_dir
    from .pipeline import MIN_RULES, prepare, rule_count, run_source, write_json_atomic

    text = (data_dir / INDEX).read_text(encoding="utf-8")
    data = json.loads(text)
    facts = load_facts(data_dir)
    frozen = frozen_rows(data_dir)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]  # a journal belongs to the index it was made from
    journal = Path(journal) if journal else cache_dir() / "pool-build" / f"refresh-rules-{digest}.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if journal.exists():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                done[rec["id"]] = rec
            except (json.JSONDecodeError, KeyError):
                continue
    with journal.open("a", encoding="utf-8") as log:
        for row in tqdm(data["themes"], desc="rules", unit="theme", disable=not progress):
            tid = row[0]
            if tid in done or tid in frozen:
                continue
            src = recipe_source(row, facts)
            prep = prepare(src, tid)
            kept = [t for t in prep.templates if t["name"] in set(row[5])]
            rec = {"id": tid, "before": rule_count(prep.spec, kept)}
            if rec["before"] < MIN_RULES:
                res = run_source(src, tid)
                rec["after"] = rule_count(res.spec, res.templates) if res.ok else 0
                rec["ok"] = res.ok and rec["after"] >= MIN_RULES
                rec["reason"] = res.reason if not res.ok else ("" if rec["ok"] else f"fewer than {MIN_RULES} business rules")
                rec["tools"] = [t["name"] for t in res.templates]
                rec["pass_rate"] = round(res.pass_rate, 4)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    themes, dropped, grown = [], [], 0
    for row in data["themes"]:
        rec = done.get(row[0])
        if rec is None or "after" not in rec:
            themes.append(row)
        elif rec["ok"]:
            grown += 1
            themes.append([*row[:5], rec["tools"], rec["pass_rate"], *row[7:]])
        else:
            dropped.append(row[0])
    data["themes"] = themes
    st = data["stats"]
    st.update(themes=len(themes), tools=sum(len(t[5]) for t in themes), fingerprints=len({t[7] for t in themes}),
              dropped=st.get("dropped", 0) + len(dropped), below_rules_floor=sorted(set(st.get("below_rules_floor", [])) | set(dropped)),
              given_rule_companions=grown)
    write_json_atomic(data_dir / INDEX, data)
    return {"themes": len(themes), "tools": st["tools"], "dropped": len(dropped), "given_companions": grown}


def prune_index(check_journal: str | Path, data_dir: Path = DATA) -> list[str]:
    """Drop from the index the themes that failed `check_env` in a bench_pool journal; returns their ids."""
    from .pipeline import write_json_atomic

    failed = set()
    for line in Path(check_journal).read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not rec.get("ok", True):
            failed.add(rec["id"])
    data = json.loads((data_dir / INDEX).read_text(encoding="utf-8"))
    removed = [t[0] for t in data["themes"] if t[0] in failed]
    data["themes"] = [t for t in data["themes"] if t[0] not in failed]
    st = data["stats"]
    st.update(themes=len(data["themes"]), tools=sum(len(t[5]) for t in data["themes"]), fingerprints=len({t[7] for t in data["themes"]}),
              dropped=st.get("dropped", 0) + len(removed), failed_check_env=sorted(set(st.get("failed_check_env", [])) | set(removed)))
    write_json_atomic(data_dir / INDEX, data)
    return removed


if __name__ == "__main__":  # python -m agentworld_gym.discovery.pool [TOUCAN_JSONL | --refresh-rules]
    import sys

    if sys.argv[1:] == ["--refresh-rules"]:
        print(json.dumps(refresh_rules(), indent=1))
    else:
        print(json.dumps(build_pool(sys.argv[1] if len(sys.argv) > 1 else None), indent=1))
