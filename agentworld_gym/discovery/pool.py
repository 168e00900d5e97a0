"""The built-in pool: catalog themes composed from the domain entities real MCP server profiles call
for (TensorBlock catalogue, name and description; see `entities`), themes derived from real Toucan MCP
servers (facts only: names, labels, parameter schemas), built and validated once into a compact index
(envs/data/pool_index.json) from which every theme is rebuilt on demand. No two kept themes share >=
MAX_OVERLAP of their {table.column} sets; the held-out suite's themes (FROZEN) keep their recipes."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import unicodedata
from pathlib import Path

from .entities import MAX_OVERLAP
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


def readable(text: str) -> bool:
    """Whether a description is something the names can be checked against: two or more words in
    Latin script, and more Latin letters than letters of other scripts (CJK or Hangul text with one
    product name in it is not)."""
    letters = [ch for ch in str(text) if ch.isalpha()]
    latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    return latin * 2 > len(letters) and len(re.findall(r"[A-Za-z]{3,}", str(text))) >= 2


def described(tools: list[dict], kept=None) -> bool:
    """Whether any of the tools (those named in `kept`, when given) carries a readable description of
    its own. A Toucan theme whose tools carry none is not kept in the pool (issue 34): its tables are
    named from tool names alone, and nothing says what it holds, so its names cannot be checked."""
    return any(readable(t.get("description") or "") for t in tools if kept is None or t["name"] in kept)


UNDESCRIBED = "no kept tool carries a readable description (its names cannot be checked against its contents)"


def schema_fingerprint(spec) -> str:
    shape = sorted((t.name, tuple(sorted(c.name for c in t.columns))) for t in spec.tables)
    return hashlib.sha1(json.dumps(shape).encode()).hexdigest()[:12]


def recipe_source(entry: list, facts: list[list] | None = None) -> Source:
    """The Source a pool index entry was built from."""
    tid, code, _label, source, ref = entry[:5]
    if source == "catalog" and isinstance(ref, dict):  # composed from domain entities (discovery.entities)
        return Source(ref["name"], "catalog", (), ref["about"], None, f"catalog:{tid}", code=code, entities=tuple(ref["entities"]), label=ref["label"])
    if source == "catalog":
        return Source(f"{code}#{ref}", "catalog", (), "", None, f"catalog:{code}:{ref}", code=code, variant=int(ref))
    return source_from_fact((facts or load_facts())[int(ref)], code)


def taken_ids() -> set[str]:
    """Theme names already used by registered envs (flagships, external domains, pools): pool ids avoid them."""
    import gymnasium as gym

    from .. import envs  # noqa: F401  (registers the flagships)
    from ..envs import catalog

    return {k.split("/", 1)[1].rsplit("-v", 1)[0] for k in gym.registry if k.startswith("AgentWorld/")} - set(catalog._ROWS)


# The composed catalog themes the frozen held-out suite (agentworld_gym/suites/heldout, picked by
# benchmarks/make_heldout_suite.py) plays: a rebuild takes their recipes from the committed index
# instead of planning them afresh, so their worlds and tools stay byte-identical.
FROZEN = frozenset((
    "bankbridge-plugin", "brightdata-mcp", "chrome-mcp", "coin-api-mcp", "compound", "content-to-social-mcp-server", "debridge-mcp",
    "deep-transcribe", "dify-mcp-server", "domain-monitor-mcp-server", "ethora-mcp-server", "gitlab-zero-leak-mcp",
    "gmx-vmd-mcp", "gondola", "google-scholar-mcp-server", "graphrag-mcp", "gtasks-mcp", "hubspot-download",
    "ignav-flights", "jupyter-mcp-server", "loomle", "mathlas", "mcp-azuredevops-bridge", "mcp-build-toolchain",
    "mcp-calender-agent", "mcp-doc-forge", "mcp-file-navigator", "mcp-grafana", "mcp-html-templates", "mcp-playground",
    "mcp-send-email", "mcp-server-iqiyi", "mcp-server-sequential-thinking", "mcp-test",
    "mcpemailhelper", "mcphub", "medadapt-content-server", "myssl-mcp-server-python", "netmind-parse-pdf-mcp",
    "ns-mcp-server", "nutrient-dws-mcp-server", "openpaper-mcp", "osm-mcp", "paper-search-mcp", "playwright-record-mcp",
    "pubfi-mcp", "shadcn-ui-mcp-server", "solanashield-mcp", "spritecook-mcp", "sqlassistant", "stackoverflow-mcp",
    "stock-info-mcp", "taoke-mcp", "task-researcher", "think-mcp", "uniprot-mcp-server", "vibe-code-benchmark",
    "websearch-tools", "x402-gateway-base", "youtube-watchlater-mcp",
))
def base_jobs(facts: list[list], per_l2: int = PER_L2, data_dir: Path = DATA) -> tuple[list[tuple[str, Source, str]], set[str]]:
    """The frozen composed themes and every Toucan server, with the ids they have always had (an id
    in the committed index wins; the retired archetype variants still reserve theirs); returns (jobs, ids used)."""
    from .mapping import map_to_taxonomy
    from .pipeline import prepare_id
    from .sources import catalog_sources

    jobs = []
    used = taken_ids()
    for src in catalog_sources(per_l2):
        used.add(prepare_id(src))  # the retired archetype variants still reserve their ids
    rows = json.loads((data_dir / INDEX).read_text(encoding="utf-8"))["themes"] if (data_dir / INDEX).exists() else []
    for row in rows:
        if row[0] in FROZEN:  # held-out themes keep the recipe their frozen tasks were made with
            used.add(row[0])
            jobs.append((row[0], recipe_source(row, facts), row[4]))
    before = {t[4]: t[0] for t in rows if t[3] == "toucan"}
    for i, fact in enumerate(facts):
        src = source_from_fact(fact)
        src.code = map_to_taxonomy(src.name, src.labels, "", [t["name"] for t in src.tools])[0]
        base = tid = before.get(str(i)) if before.get(str(i)) not in used else slugify(src.name)
        n = 2
        while tid in used:
            tid, n = f"{base}-{n}", n + 1
        used.add(tid)
        jobs.append((tid, src, str(i)))
    return jobs, used


def journal_path(data_dir: Path = DATA) -> Path:
    """The build journal; named by the generator version too, so records judged on older worlds are not resumed."""
    from ..world import GENERATOR_VERSION, cache_dir

    return cache_dir() / "pool-build" / f"{data_dir.resolve().as_posix().replace('/', '_')}-g{GENERATOR_VERSION}.jsonl"


def read_journal(journal: Path) -> dict[str, dict]:
    """{id: record} of a JSONL journal (one record a line); a missing file is an empty journal."""
    done = {}
    if journal.exists():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                done[rec["id"]] = rec
            except (json.JSONDecodeError, KeyError):
                continue  # a torn last line from an interrupted run is redone
    return done


def features_of(spec) -> list[str]:
    """A theme's {table.column} set (primary keys left out): what the overlap measure compares."""
    return sorted(f"{t.name}.{c.name}" for t in spec.tables for c in t.columns[1:])


def run_jobs(jobs: list[tuple[str, Source, str]], journal: Path, done: dict[str, dict], desc: str, progress: bool = True) -> None:
    """Run the pipeline for every job not in the journal yet, appending one line per finished theme."""
    from tqdm import tqdm

    from .pipeline import MIN_RULES, rule_count, run_source

    journal.parent.mkdir(parents=True, exist_ok=True)
    with journal.open("a", encoding="utf-8") as log:
        for tid, src, ref in tqdm(jobs, desc=desc, unit="theme", disable=not progress):
            if tid in done:
                continue
            res = run_source(src, tid)
            too_few = res.ok and res.spec is not None and rule_count(res.spec, res.templates) < MIN_RULES
            if too_few:
                res.ok, res.reason = False, f"fewer than {MIN_RULES} business rules"
            elif res.ok and src.kind == "toucan" and not described(src.tools or [], {t["name"] for t in res.templates}):
                res.ok, res.reason = False, UNDESCRIBED
            rec = {"id": tid, "ok": res.ok, "reason": res.reason, "code": src.code, "label": res.spec.label if res.spec else "",
                   "source": src.kind, "ref": ref, "tools": [t["name"] for t in res.templates], "pass_rate": round(res.pass_rate, 4),
                   "tested": len(res.reports), "tests": sum(r.tests for r in res.reports), "passed": sum(r.passed for r in res.reports),
                   "fp": schema_fingerprint(res.spec) if res.spec else "", "features": features_of(res.spec) if res.spec else [],
                   "skipped": [[s.tool, s.reason] for s in res.skipped],
                   "kinds": {r.name: r.kind for r in res.reports}, "kept_tools": [r.name for r in res.reports if r.kept],
                   "seconds": round(res.seconds, 3)}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec


def build_pool(toucan: str | Path | None = None, per_l2: int = PER_L2, data_dir: Path = DATA, limit: int | None = None, progress: bool = True,
               work_dir: str | Path | None = None, profiles: str | Path | None = None) -> dict:
    """Run the pipeline over the frozen themes, the Toucan facts and the entity-composed catalog
    (planned from real server profiles so no two themes overlap >= MAX_OVERLAP); write the index.
    Resumable through a JSONL journal (one line per finished theme)."""
    from ..envs import taxonomy
    from .entities import PROFILES, plan_catalog
    from .pipeline import write_json_atomic

    data_dir.mkdir(parents=True, exist_ok=True)
    if toucan:
        facts = extract_toucan_facts(toucan)
        with gzip.open(data_dir / FACTS, "wt", encoding="utf-8", compresslevel=9) as f:
            json.dump(facts, f, separators=(",", ":"))
    facts = load_facts(data_dir)
    jobs, used = base_jobs(facts, per_l2, data_dir)
    if limit:
        jobs = jobs[:limit]
    journal = Path(work_dir) if work_dir else journal_path(data_dir)
    done = read_journal(journal)
    run_jobs(jobs, journal, done, "pool: frozen + toucan", progress)
    # near-duplicates (one server forked under several names): keep the one with the most tools
    fixed = flagship_features()
    kept_jobs = [j for j in jobs if done.get(j[0], {}).get("ok")]
    kept_jobs.sort(key=lambda j: (j[0] not in FROZEN, -len(done[j[0]]["tools"]), j[0]))
    merged: dict[str, str] = {}
    index = OverlapIndex(fixed)
    for tid, _, _ in kept_jobs:
        hit = index.nearest(done[tid]["features"])
        if tid not in FROZEN and hit[1] >= MAX_OVERLAP:
            merged[tid] = hit[0]
            continue
        index.add(tid, done[tid]["features"])
    covered = {done[tid]["code"] for tid in index.ids if tid in done}
    if not Path(profiles or PROFILES).exists():
        from ..errors import ConfigError

        raise ConfigError(f"Expected the TensorBlock server profiles the catalog is composed from at {profiles or PROFILES}, got no file. "
                          "Pass profiles=PATH, or derive it: python -m agentworld_gym.discovery.pool --profiles tensorblock_mcp_profiles.jsonl.")
    cat_jobs = plan_catalog(Path(profiles) if profiles else PROFILES, index, used, limit=limit, covered=covered)
    run_jobs(cat_jobs, journal, done, "pool: composed catalog", progress)
    order = [j[0] for j in kept_jobs if j[0] not in merged] + [j[0] for j in cat_jobs]
    records = [done[tid] for tid in order if tid in done]
    themes = [[r["id"], r["code"], r["label"], r["source"], r["ref"], r["tools"], r["pass_rate"], r["fp"]] for r in records if r["ok"]]
    frozen = frozen_rows(data_dir)  # held-out themes keep the tools their frozen tasks were made with
    themes = [frozen.get(t[0], t) for t in themes] + [row for tid, row in frozen.items() if tid not in {t[0] for t in themes}]
    all_records = [done[j[0]] for j in jobs + cat_jobs if j[0] in done]
    tests = sum(r["tests"] for r in all_records)
    stats = {"themes": len(themes), "tools": sum(len(t[5]) for t in themes), "dropped": sum(not r["ok"] for r in all_records),
             "merged_near_duplicates": dict(sorted(merged.items())), "tools_tested": sum(r["tested"] for r in all_records), "tests": tests,
             "tool_test_pass_rate": round(sum(r["passed"] for r in all_records) / tests, 4) if tests else 0.0,
             "l2": len({t[1] for t in themes}), "l1": len({taxonomy.L2[t[1]].parent for t in themes}),
             "fingerprints": len({t[7] for t in themes}), "build_seconds": round(sum(r["seconds"] for r in all_records), 1),
             **class_report(all_records)}
    write_json_atomic(data_dir / INDEX, {"version": 1, "stats": stats, "columns": ["id", "l2", "l3", "source", "ref", "tools", "pass_rate", "fp"],
                                         "themes": themes})
    return stats


def flagship_features() -> dict[str, list[str]]:
    """{flagship id: its {table.column} set} (flagship worlds are fixed; the pool keeps clear of them)."""
    from ..envs import FLAGSHIPS, get_theme

    return {tid: features_of(get_theme(tid).spec) for tid in FLAGSHIPS}


class OverlapIndex:
    """{table.column} sets with an inverted index: the nearest neighbour (Jaccard) of a new set."""

    def __init__(self, items=()):
        self.sets: list[set[str]] = []
        self.ids: list[str] = []
        self.postings: dict[str, list[int]] = {}
        for tid, feats in (items.items() if isinstance(items, dict) else items):
            self.add(tid, feats)

    def add(self, tid: str, feats) -> None:
        s = set(feats)
        for f in s:
            self.postings.setdefault(f, []).append(len(self.sets))
        self.sets.append(s)
        self.ids.append(tid)

    def replace(self, tid: str, feats) -> None:
        """Give entry `tid` a new set (a re-planned theme), or add it when it is not in the index."""
        if tid not in self.ids:
            return self.add(tid, feats)
        j = self.ids.index(tid)
        for f in self.sets[j]:
            self.postings[f].remove(j)
        self.sets[j] = set(feats)
        for f in self.sets[j]:
            self.postings.setdefault(f, []).append(j)

    def nearest(self, feats, skip: str = "") -> tuple[str, float]:
        """(id, Jaccard) of the closest set; `skip`: an id to leave out (the set's own entry)."""
        s = set(feats)
        shared: dict[int, int] = {}
        for f in s:
            for j in self.postings.get(f, ()):
                if self.ids[j] != skip:
                    shared[j] = shared.get(j, 0) + 1
        best = ("", 0.0)
        for j, n in shared.items():
            jac = n / (len(s) + len(self.sets[j]) - n)
            if jac > best[1]:
                best = (self.ids[j], jac)
        return best


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


HELDOUT = Path(__file__).resolve().parents[2] / "agentworld_gym" / "suites" / "heldout"


def frozen_rows(data_dir: Path = DATA, heldout: Path = HELDOUT) -> dict[str, list]:
    """Index rows of the frozen held-out suite's themes, as the current index has them (a rebuild
    must not change the tools their frozen tasks were made with)."""
    path = data_dir / INDEX
    if not path.exists() or not heldout.is_dir():
        return {}
    ids = {p.stem for p in heldout.glob("*.jsonl")}
    return {t[0]: t for t in json.loads(path.read_text(encoding="utf-8"))["themes"] if t[0] in ids}


def _refresh_journal(data_dir: Path, name: str, journal: str | Path | None) -> tuple[dict, Path, dict[str, dict]]:
    """(the index, the journal of refresh `name`, the records already in it) for a refresh of the index
    in data_dir; the default journal is named by a digest of the index text, so it belongs to that index."""
    from ..world import GENERATOR_VERSION, cache_dir

    text = (data_dir / INDEX).read_text(encoding="utf-8")
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = Path(journal) if journal else cache_dir() / "pool-build" / f"refresh-{name}-{digest}-g{GENERATOR_VERSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return json.loads(text), path, read_journal(path)


def refresh_rules(data_dir: Path = DATA, progress: bool = True, journal: str | Path | None = None) -> dict:
    """Bring an existing index to the rules floor without a full rebuild: each theme whose kept write
    tools enforce fewer than MIN_RULES rules is run through the pipeline again (which adds companion
    writes, see pipeline.rule_companions) and its row replaced; a theme still below the floor (a
    read-only real server) is dropped; held-out themes stay as they are. Resumable (JSONL journal)."""
    from tqdm import tqdm

    from .pipeline import MIN_RULES, prepare, rule_count, run_source, write_json_atomic

    data, journal, done = _refresh_journal(data_dir, "rules", journal)
    facts = load_facts(data_dir)
    frozen = frozen_rows(data_dir)
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


def refresh_paths(data_dir: Path = DATA, progress: bool = True, journal: str | Path | None = None) -> dict:
    """Give each composed catalog theme the removal-path tools its recipe now plans
    (forge.path_companions) without a full rebuild: the theme is run through the pipeline again and
    companions are added to its row when all of them pass validation; its other tools stay as they are.
    Held-out themes are left alone. Resumable (JSONL journal, one line per theme)."""
    from tqdm import tqdm

    from .pipeline import prepare, run_source, write_json_atomic

    data, journal, done = _refresh_journal(data_dir, "paths", journal)
    rows = [r for r in data["themes"] if isinstance(r[4], dict) and r[0] not in FROZEN]
    with journal.open("a", encoding="utf-8") as log:
        for row in tqdm(rows, desc="path companions", unit="theme", disable=not progress):
            tid = row[0]
            if tid in done:
                continue
            src = recipe_source(row)
            wanted = [t["name"] for t in prepare(src, tid).templates if t.get("companion") == "paths" and t["name"] not in row[5]]
            rec = {"id": tid, "wanted": wanted, "added": []}
            if wanted:
                res = run_source(src, tid)
                kept = {t["name"] for t in res.templates} if res.ok else set()
                rec["added"] = wanted if kept >= set(wanted) else []  # the whole path or nothing
                rec["pass_rate"] = round(res.pass_rate, 4)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    added = 0
    for row in data["themes"]:
        rec = done.get(row[0])
        if rec and rec["added"] and set(rec["added"]) == set(rec["wanted"]):
            row[5] = [*row[5], *rec["added"]]
            added += 1
    st = data["stats"]
    st.update(themes=len(data["themes"]), tools=sum(len(t[5]) for t in data["themes"]), given_path_companions=st.get("given_path_companions", 0) + added)
    write_json_atomic(data_dir / INDEX, data)
    return {"themes": len(data["themes"]), "tools": st["tools"], "wanted": sum(bool(r["wanted"]) for r in done.values()), "given": added}


def replan(row: list, facts: list[list], index: OverlapIndex, tries: int = 6) -> list[Source] | None:
    """The Sources a pool row would be planned from now, best first, when they differ from the one it was
    built from (None when it is the same): a composed catalog theme whose entities include one its
    server's words do not call for is composed again from called-for entities only (up to `tries`
    combinations < MAX_OVERLAP from every other theme in `index`; [] when none fits); a Toucan theme whose
    tables are now named otherwise (the entity its tools' descriptions name), or whose world no longer
    holds what its tools describe, is rebuilt as it is."""
    from .entities import ENTITIES, _candidates, entities_for, features, humanize_table
    from .pipeline import prepare

    src = recipe_source(row, facts)
    if isinstance(row[4], dict):
        ref = row[4]
        matched = [k for _, k in entities_for(ref["about"], ref["name"])]
        if set(ref["entities"]) <= set(matched):
            return None
        out = []
        for keys in _candidates(matched):
            if index.nearest(features(keys), skip=row[0])[1] < MAX_OVERLAP:
                label = ref["label"].split(":")[0] + ": " + ", ".join(humanize_table(ENTITIES[k].table) for k in keys[:3])
                out.append(Source(ref["name"], "catalog", (), ref["about"], None, f"catalog:{row[0]}", code=row[1], entities=tuple(keys), label=label))
                if len(out) >= tries:
                    break
        return out
    if row[3] == "toucan":
        from .infer import MAX_MISSING_FIELDS

        spec = prepare(src, row[0]).spec
        if schema_fingerprint(spec) != row[7] or len((spec.extra or {}).get("missing_fields") or []) > MAX_MISSING_FIELDS:
            return [src]  # renamed, or its world no longer holds what its tools describe: rebuilt (and dropped if not ok)
    return None


def refresh_names(data_dir: Path = DATA, progress: bool = True, journal: str | Path | None = None) -> dict:
    """Re-plan an existing index so names match contents (issue 34) without a full rebuild: each theme
    `replan` changes is run through the pipeline again and its row replaced when it is still ok (>=
    MIN_RULES rules, < MAX_OVERLAP from every other theme), else dropped; the other rows and the held-out
    suites' themes (FROZEN) stay as they are. Resumable (JSONL journal, one line per theme)."""
    from tqdm import tqdm

    from .pipeline import MIN_RULES, prepare, rule_count, run_source, write_json_atomic

    data, journal, done = _refresh_journal(data_dir, "names", journal)
    facts = load_facts(data_dir)
    index = OverlapIndex(flagship_features())
    for row in tqdm(data["themes"], desc="names: features", unit="theme", disable=not progress):
        index.add(row[0], features_of(prepare(recipe_source(row, facts), row[0]).spec))
    for tid, rec in done.items():  # resumed: the re-planned themes' sets as they are now
        if rec.get("features"):
            index.replace(tid, rec["features"])
    with journal.open("a", encoding="utf-8") as log:
        for row in tqdm(data["themes"], desc="names: re-plan", unit="theme", disable=not progress):
            tid = row[0]
            if tid in done or tid in FROZEN:
                continue
            srcs = replan(row, facts, index)
            rec: dict = {"id": tid, "action": "same"}
            if srcs is not None:
                rec.update(action="dropped", reason="its server's words call for no combination that fits")
                for src in srcs:  # the first planned composition that makes an ok theme
                    res = run_source(src, tid)
                    feats = features_of(res.spec) if res.spec else []
                    hit = index.nearest(feats, skip=tid) if feats else ("", 1.0)
                    if not res.ok:
                        rec["reason"] = res.reason
                    elif rule_count(res.spec, res.templates) < MIN_RULES:
                        rec["reason"] = f"fewer than {MIN_RULES} business rules"
                    elif hit[1] >= MAX_OVERLAP:
                        rec["reason"] = f"overlaps {hit[0]} ({hit[1]:.2f})"
                    else:
                        ref = {**row[4], "entities": list(src.entities), "label": src.label} if isinstance(row[4], dict) else row[4]
                        rec = {"id": tid, "action": "replaced", "features": feats,
                               "row": [tid, row[1], res.spec.label, row[3], ref, [t["name"] for t in res.templates], round(res.pass_rate, 4), schema_fingerprint(res.spec)]}
                        index.replace(tid, feats)
                        break
                if rec["action"] == "dropped" and isinstance(row[4], dict):
                    # a catalog recipe is rebuilt as it was: with no called-for composition that makes an ok
                    # theme, the theme stays as it is (its names unmatched) rather than leave the pool
                    rec = {"id": tid, "action": "same", "kept": rec["reason"]}
                elif rec["action"] == "dropped":
                    index.replace(tid, [])  # gone: no longer a neighbour to keep clear of
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[tid] = rec
    themes, dropped, replaced = [], [], 0
    for row in data["themes"]:
        rec = done.get(row[0], {})
        if rec.get("action") == "replaced":
            themes.append(rec["row"])
            replaced += 1
        elif rec.get("action") == "dropped":
            dropped.append(row[0])
        else:
            themes.append(row)
    data["themes"] = themes
    st = data["stats"]
    st.update(themes=len(themes), tools=sum(len(t[5]) for t in themes), fingerprints=len({t[7] for t in themes}),
              dropped=st.get("dropped", 0) + len(dropped), replanned_names=replaced, dropped_on_replan=sorted(dropped))
    write_json_atomic(data_dir / INDEX, data)
    return {"themes": len(themes), "tools": st["tools"], "replaced": replaced, "dropped": len(dropped)}


def grow_catalog(extra: int, data_dir: Path = DATA, profiles: str | Path | None = None, progress: bool = True,
                 codes: tuple[str, ...] = ()) -> dict:
    """Top an existing index up with `extra` more composed catalog themes, planned and built exactly as
    the full build plans them (each < MAX_OVERLAP from every theme already in the index, >= MIN_RULES
    rules), without rebuilding the rest. `codes`: instead, up to `extra` themes for each of these L2
    categories, from servers whose words call for their entities (the planner's fill step, for a thin
    category). Resumable through the build journal."""
    from ..envs import taxonomy
    from .entities import PROFILES, plan_catalog
    from .pipeline import prepare, write_json_atomic

    data = json.loads((data_dir / INDEX).read_text(encoding="utf-8"))
    facts = load_facts(data_dir)
    _, used = base_jobs(facts, PER_L2, data_dir)
    used |= {t[0] for t in data["themes"]}
    index = OverlapIndex(flagship_features())
    for row in data["themes"]:
        index.add(row[0], features_of(prepare(recipe_source(row, facts), row[0]).spec))
    covered = set(taxonomy.L2) - set(codes) if codes else {t[1] for t in data["themes"]}
    plan = plan_catalog(Path(profiles) if profiles else PROFILES, index, used, target=0 if codes else extra, covered=covered,
                        fill=extra if codes else 5)
    journal = journal_path(data_dir)
    done = read_journal(journal)
    run_jobs(plan, journal, done, "pool: more composed catalog", progress)
    new = [done[tid] for tid, _, _ in plan if done.get(tid, {}).get("ok")]
    data["themes"] += [[r["id"], r["code"], r["label"], r["source"], r["ref"], r["tools"], r["pass_rate"], r["fp"]] for r in new]
    themes = data["themes"]
    data["stats"].update(themes=len(themes), tools=sum(len(t[5]) for t in themes), fingerprints=len({t[7] for t in themes}),
                         l2=len({t[1] for t in themes}), l1=len({taxonomy.L2[t[1]].parent for t in themes}),
                         grown_catalog=data["stats"].get("grown_catalog", 0) + len(new))
    write_json_atomic(data_dir / INDEX, data)
    return {"themes": len(themes), "tools": data["stats"]["tools"], "planned": len(plan), "added": len(new)}


def drop_undescribed(data_dir: Path = DATA) -> list[str]:
    """Drop from the index the Toucan themes none of whose kept tools carries a readable description
    (`described`; the full build drops them too), held-out themes excepted; returns their ids. Top the
    pool back up with `grow_catalog`."""
    from .pipeline import write_json_atomic

    data = json.loads((data_dir / INDEX).read_text(encoding="utf-8"))
    facts = load_facts(data_dir)
    removed = [t[0] for t in data["themes"] if t[3] == "toucan" and t[0] not in FROZEN and not described(recipe_source(t, facts).tools or [], set(t[5]))]
    data["themes"] = [t for t in data["themes"] if t[0] not in set(removed)]
    st = data["stats"]
    st.update(themes=len(data["themes"]), tools=sum(len(t[5]) for t in data["themes"]), fingerprints=len({t[7] for t in data["themes"]}),
              dropped=st.get("dropped", 0) + len(removed), undescribed=sorted(set(st.get("undescribed", [])) | set(removed)))
    write_json_atomic(data_dir / INDEX, data)
    return removed


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


if __name__ == "__main__":  # python -m agentworld_gym.discovery.pool [TOUCAN_JSONL | --refresh-names | --drop-undescribed | --refresh-rules | --refresh-paths | --grow N | --profiles SRC]
    import sys

    if sys.argv[1:2] in (["--help"], ["-h"]):
        print("python -m agentworld_gym.discovery.pool [TOUCAN_JSONL]   build the pool (resumable journal)\n"
              "  --refresh-names | --refresh-rules | --refresh-paths    re-plan the committed index in place\n"
              "  --drop-undescribed                                     drop Toucan themes whose tools carry no readable description\n"
              "  --grow N [L2,...]                                      top the index up with N composed catalog themes (per L2)\n"
              "  --profiles SRC                                         derive the server profile facts from the TensorBlock catalogue")
    elif sys.argv[1:2] == ["--profiles"]:  # --profiles SRC: derive envs/data's profile facts from the full TensorBlock catalogue
        from .entities import write_profile_facts

        print(write_profile_facts(sys.argv[2]), "profiles kept")
    elif sys.argv[1:] == ["--refresh-paths"]:
        print(json.dumps(refresh_paths(), indent=1))
    elif sys.argv[1:] == ["--refresh-names"]:
        print(json.dumps(refresh_names(), indent=1))
    elif sys.argv[1:] == ["--drop-undescribed"]:  # then --grow N to top the pool back up
        print(json.dumps(drop_undescribed()))
    elif sys.argv[1:] == ["--refresh-rules"]:
        print(json.dumps(refresh_rules(), indent=1))
    elif sys.argv[1:2] == ["--grow"]:  # --grow N [L2-33,L2-34]: N more composed catalog themes (per listed L2 category)
        print(json.dumps(grow_catalog(int(sys.argv[2]), codes=tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else ()), indent=1))
    else:
        print(json.dumps(build_pool(sys.argv[1] if len(sys.argv) > 1 else None), indent=1))
