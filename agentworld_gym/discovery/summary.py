"""What a discover run did, per tool and in total: servers in, themes out, tools kept and dropped
(with the pipeline's reason for each), and whether each kept tool still carries its original
description and parameter descriptions. Written into report.json and printed as a table."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .formats import Input
from .infer import slugify
from .pipeline import read_record, reason_kind
from .sources import Source


def _text_in(text: str, blob: str) -> bool:
    return json.dumps(text, ensure_ascii=False)[1:-1] in blob


def _param_descriptions(tool: dict) -> list[str]:
    props = (tool.get("parameters") or {}).get("properties")
    if not isinstance(props, dict):
        return []
    return [p["description"] for p in props.values() if isinstance(p, dict) and isinstance(p.get("description"), str) and p["description"]]


def _records_by_source(sources: list[Source], themes_dir: Path) -> list[dict | None]:
    """The record discover wrote for each source: by the id discover gives it (slug, then -2, -3 on a
    repeat), checked against the record's title; else the record of that title."""
    by_title: dict[str, dict] = {}
    out, used = [], set()
    for src in sources:
        base = tid = slugify(src.name)
        n = 2
        while tid in used:
            tid, n = f"{base}-{n}", n + 1
        used.add(tid)
        rec = read_record(themes_dir / f"{tid}.json")
        if rec is None or (rec.get("spec") or {}).get("title") not in (src.name, None):
            if not by_title:
                for p in themes_dir.glob("*.json"):
                    r = read_record(p)
                    if r and r.get("spec"):
                        by_title.setdefault(r["spec"]["title"], r)
            rec = by_title.get(src.name)
        out.append(rec)
    return out


def tool_rows(src: Source, rec: dict | None) -> list[dict]:
    """One row per original tool of a source: kept or dropped, why, and whether its wording survived."""
    kept_templates = {t["name"]: t for t in rec["tools"]} if rec and rec["ok"] else {}
    skipped = {s.get("tool"): s.get("reason", "") for s in (rec or {}).get("skipped", ())}
    validation = {v["name"]: v for v in (rec or {}).get("validation", {}).get("tools", ())}
    rows = []
    for tool in src.tools or ():
        name = tool["name"]
        row: dict = {"theme": rec["id"] if rec else None, "tool": name, "kept": name in kept_templates}
        if name in kept_templates:
            v = validation.get(name, {})
            row["reason"] = v.get("reason") or f"validation passed {v.get('passed', '?')}/{v.get('tests', '?')}"
            blob = json.dumps(kept_templates[name], ensure_ascii=False)
            params = _param_descriptions(tool)
            row["description_kept"] = _text_in(tool["description"], blob) if tool.get("description") else None
            row["param_descriptions_kept"] = [sum(_text_in(d, blob) for d in params), len(params)]
        elif rec is None:
            row["reason"] = "no record written"
        elif name in skipped:
            row["reason"] = skipped[name]
        elif not rec["ok"]:
            row["reason"] = f"theme dropped: {rec['reason']}"
        else:
            row["reason"] = "not forged"
        rows.append(row)
    return rows


def run_summary(inputs: list[Input], out: str | Path, limit: int | None = None) -> dict:
    """Totals and per-tool rows for the sources of `inputs` that a discover run into `out` handled."""
    sources: list[Source] = []
    bad = []
    for item in (item for inp in inputs for item in inp.items):  # in the order discover saw them, up to `limit` sources
        if isinstance(item, Source):
            if limit is not None and len(sources) >= limit:
                break
            sources.append(item)
        else:
            bad.append(item)
    records = _records_by_source(sources, Path(out) / "themes")
    rows = [r for src, rec in zip(sources, records, strict=True) for r in tool_rows(src, rec)]
    kept = [r for r in rows if r["kept"]]
    with_desc = [r for r in kept if r["description_kept"] is not None]
    return {
        "ok": any(rec and rec["ok"] for rec in records),
        "inputs": [{"where": i.where, "format": i.format} for i in inputs],
        "servers_in": len(sources) + len(bad), "servers_read": len(sources),
        "rejected_at_input": dict(Counter(reason_kind(b.reason) for b in bad).most_common()),
        "themes_out": sum(bool(rec and rec["ok"]) for rec in records),
        "themes_dropped": dict(Counter(reason_kind(rec["reason"]) for rec in records if rec and not rec["ok"]).most_common()),
        "tools_in": len(rows), "tools_kept": len(kept),
        "tools_dropped": dict(Counter(reason_kind(r["reason"]) for r in rows if not r["kept"]).most_common()),
        "descriptions_kept": [sum(bool(r["description_kept"]) for r in with_desc), len(with_desc)],
        "param_descriptions_kept": [sum(r["param_descriptions_kept"][0] for r in kept), sum(r["param_descriptions_kept"][1] for r in kept)],
        "tools": rows,
    }


def format_summary(s: dict, top: int = 8) -> str:
    """The summary as a small plain-text table."""
    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"

    where = ", ".join(f"{i['where']} [{i['format']}]" for i in s["inputs"])
    lines = [f"{'input':<26}{where}",
             f"{'servers in':<26}{s['servers_in']}  ({s['servers_read']} read, {s['servers_in'] - s['servers_read']} rejected at input)"]
    lines += [f"{'':<28}{n:>5}  {why}" for why, n in list(s["rejected_at_input"].items())[:top]]
    lines.append(f"{'themes out':<26}{s['themes_out']}  ({s['servers_read'] - s['themes_out']} dropped)")
    lines += [f"{'':<28}{n:>5}  {why}" for why, n in list(s["themes_dropped"].items())[:top]]
    lines.append(f"{'tools kept':<26}{pct(s['tools_kept'], s['tools_in'])}")
    lines.append(f"{'tools dropped':<26}{s['tools_in'] - s['tools_kept']}")
    lines += [f"{'':<28}{n:>5}  {why}" for why, n in list(s["tools_dropped"].items())[:top]]
    lines.append(f"{'descriptions kept':<26}{pct(*s['descriptions_kept'])} of kept tools with one")
    lines.append(f"{'param descriptions kept':<26}{pct(*s['param_descriptions_kept'])}")
    lines.append(f"{'result':<26}{'ok' if s['ok'] else 'FAILED: no theme kept'}")
    return "\n".join(lines)
