"""A self-contained HTML report of an evolve run (or of any directory of episode records).

One file, no network: per-round and per-category success, the diagnosis tables, learning curves
(inline SVG, drawn here) and a trajectory viewer that shows any episode turn by turn (the episodes
are embedded as JSON; a few lines of JavaScript switch between them).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from ..checks import write_text_atomic
from ..errors import ConfigError
from . import diagnose as dg
from .records import load_records

MAX_EPISODES = 400  # episodes embedded in the viewer (the rest are listed in the diagnosis only)

_CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f2f2f2}
.ok{color:#137333}.bad{color:#b3261e}.note{background:#fff8e1;padding:6px 10px;border-left:4px solid #f9a825}
.msg{border:1px solid #ddd;border-radius:6px;margin:6px 0;padding:6px 10px;white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px}
.system{background:#f5f5f5;max-height:120px;overflow:auto}.user{background:#e8f0fe}.assistant{background:#e6f4ea}.tool{background:#fef7e0}
.tool.err{background:#fce8e6}.grid{display:flex;gap:24px;flex-wrap:wrap}select{font-size:13px;max-width:900px}
.tag{display:inline-block;background:#eee;border-radius:8px;padding:0 6px;margin:0 2px;font-size:12px}
"""

_VIEWER_JS = """
const EP = JSON.parse(document.getElementById('episodes').textContent);
function esc(s){return String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
function show(i){
  const e = EP[i]; if(!e) return;
  let h = '<p><b>'+esc(e.id)+'</b> theme <b>'+esc(e.theme)+'</b>, difficulty '+esc(e.difficulty)+', '
        + (e.success?'<span class="ok">passed</span>':'<span class="bad">failed: '+esc(e.cause)+'</span>')
        + ' '+e.tags.map(t=>'<span class="tag">'+esc(t)+'</span>').join('')+'</p>';
  h += '<p>Gold: '+esc(e.gold)+'<br>Verification: '+esc(JSON.stringify(e.verification))+'</p>';
  e.messages.forEach((m,k)=>{
    let body = m.content||'';
    if(m.tool_calls){body += (body?'\\n':'') + m.tool_calls.map(c=>'\u2192 '+c.function.name+'('+(typeof c.function.arguments==='string'?c.function.arguments:JSON.stringify(c.function.arguments))+')').join('\\n');}
    const err = m.role==='tool' && String(m.content).startsWith('Error:') ? ' err' : '';
    h += '<div class="msg '+m.role+err+'"><b>'+(k)+' '+m.role+(m.name?' '+esc(m.name):'')+'</b>\\n'+esc(body)+'</div>';
  });
  document.getElementById('viewer').innerHTML = h;
}
document.getElementById('pick').addEventListener('change', ev=>show(ev.target.value));
show(0);
"""


def _esc(x) -> str:
    return html.escape(str(x))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def svg_lines(series: dict[str, list[tuple[float, float]]], *, title: str, xlabel: str, ylabel: str = "success",
              width: int = 460, height: int = 260, xlog: bool = False) -> str:
    """A small line chart as inline SVG (x numeric; y in [0, 1])."""
    import math

    pad_l, pad_b, pad_t, pad_r = 48, 36, 24, 110
    xs = [x for pts in series.values() for x, _ in pts] or [0, 1]
    tx = (lambda v: math.log10(max(v, 1e-9) + 1)) if xlog else (lambda v: float(v))
    lo, hi = tx(min(xs)), tx(max(xs))
    hi = hi if hi > lo else lo + 1
    ymax = max([y for pts in series.values() for _, y in pts] + [0.05])
    ymax = min(1.0, max(0.1, round(ymax * 1.2 + 0.049, 1)))

    def px(x):
        return pad_l + (tx(x) - lo) / (hi - lo) * (width - pad_l - pad_r)

    def py(y):
        return height - pad_b - y / ymax * (height - pad_b - pad_t)

    colors = ["#1a73e8", "#d93025", "#188038", "#f29900", "#9334e6", "#12b5cb", "#e52592", "#5f6368"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{_esc(title)}">',
             f'<text x="{pad_l}" y="16" font-size="13" font-weight="bold">{_esc(title)}</text>',
             f'<line x1="{pad_l}" y1="{py(0)}" x2="{width - pad_r}" y2="{py(0)}" stroke="#888"/>',
             f'<line x1="{pad_l}" y1="{py(0)}" x2="{pad_l}" y2="{py(ymax)}" stroke="#888"/>']
    for k in range(5):
        y = ymax * k / 4
        parts.append(f'<text x="{pad_l - 6}" y="{py(y) + 4}" font-size="10" text-anchor="end">{100 * y:.3g}%</text>')
    for x in sorted(set(xs)):
        parts.append(f'<text x="{px(x)}" y="{height - pad_b + 14}" font-size="10" text-anchor="middle">{x:g}</text>')
    parts.append(f'<text x="{(width - pad_r + pad_l) / 2}" y="{height - 6}" font-size="11" text-anchor="middle">{_esc(xlabel)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        c = colors[i % len(colors)]
        pts = sorted(pts)
        if len(pts) > 1:
            parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)}"/>')
        for x, y in pts:
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"><title>{_esc(name)}: {x:g} -> {_pct(y)}</title></circle>')
        parts.append(f'<text x="{width - pad_r + 8}" y="{pad_t + 14 * i + 10}" font-size="11" fill="{c}">{_esc(name[:16])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rows_table(rows: list[dict], limit: int = 12) -> str:
    out = ["<table><tr><th>cell</th><th>n</th><th>failures</th><th>success</th><th>weakness</th><th>top cause</th></tr>"]
    for r in rows[:limit]:
        out.append(f"<tr><td>{_esc(r['key'])}</td><td>{r['n']}</td><td>{r['failures']}</td><td>{_pct(r['success_rate'])}</td>"
                   f"<td>{r['weakness']:.2f}</td><td>{_esc(r['top_cause'] or '')}</td></tr>")
    out.append("</table>")
    if len(rows) > limit:
        out.append(f"<p>... and {len(rows) - limit} more cells</p>")
    return "".join(out)


def diagnosis_html(report: dict, dims=("theme", "tool", "kind", "difficulty", "feature", "category")) -> str:
    parts = [f"<p>{report['n_episodes']} episodes, {report['n_success']} passed ({_pct(report['success_rate'])}); status <b>{_esc(report['status'])}</b>.</p>"]
    if report.get("notes"):
        parts.append(f'<p class="note">{_esc(report["notes"])}</p>')
    if report["failures"]:
        parts.append("<table><tr><th>failure cause</th><th>episodes</th><th>share</th></tr>")
        for k, v in report["failures"].items():
            parts.append(f"<tr><td>{_esc(k)}</td><td>{v}</td><td>{_pct(report['failure_shares'][k])}</td></tr>")
        parts.append("</table>")
    parts.append('<div class="grid">')
    for dim in dims:
        rows = report["by"].get(dim) or []
        if rows:
            parts.append(f"<div><h3>weakest {dim}</h3>{_rows_table(rows)}</div>")
    parts.append("</div>")
    return "".join(parts)


def _episode_payload(records: list[dict]) -> list[dict]:
    out = []
    for rec in records[:MAX_EPISODES]:
        c = dg.classify(rec)
        gold = " -> ".join(f"{s['name']}({json.dumps(s.get('arguments', {}), ensure_ascii=False)})" for s in rec["task"].get("solution", ()))
        out.append({"id": rec["id"], "theme": rec["theme"], "difficulty": rec["task"].get("difficulty"), "success": rec["success"],
                    "cause": c["cause"], "tags": c["tags"], "gold": gold, "verification": rec.get("verification", {}),
                    "messages": rec["messages"]})
    return out


def _viewer(records: list[dict]) -> str:
    eps = _episode_payload(records)
    options = "".join(f'<option value="{i}">{_esc(e["id"])} [{"pass" if e["success"] else e["cause"]}]</option>' for i, e in enumerate(eps))
    data = json.dumps(eps, ensure_ascii=False, default=str).replace("</", "<\\/")
    return (f'<p><select id="pick">{options}</select> ({len(eps)} of {len(records)} episodes)</p><div id="viewer"></div>'
            f'<script type="application/json" id="episodes">{data}</script><script>{_VIEWER_JS}</script>')


def build_report(src: str | Path, out: str | Path | None = None) -> Path:
    """Write `report.html` for an evolve run directory (or a records JSONL / directory); returns its path."""
    src = Path(src)
    if not src.exists():
        raise ConfigError(f"Expected an evolve output directory or an episode-record file, got missing path {src}.")
    rounds = sorted((p for p in src.glob("round_*") if p.is_dir() and (p / "eval.jsonl").exists()),
                    key=lambda p: int(p.name.split("_")[1])) if src.is_dir() else []
    body = []
    if rounds:
        state = json.loads((src / "state.json").read_text()) if (src / "state.json").exists() else {}
        metrics = [json.loads((p / "metrics.json").read_text()) for p in rounds]
        title = f"Self-evolving arena: {src.name}"
        cfg = state.get("config", {})
        body.append(f"<p>policy <b>{_esc(cfg.get('policy', '?'))}</b>, {len(state.get('arena', []))} arena themes, "
                    f"{len(state.get('train_themes', []))} training themes, {len(metrics)} evaluated rounds.</p>")
        body.append("<h2>Success per round</h2><table><tr><th>round</th><th>episodes</th><th>success</th><th>gain</th><th>trained on</th><th>training</th></tr>")
        prev = None
        for m in metrics:
            gain = "" if prev is None else f"{100 * (m['success_rate'] - prev):+.1f} pts"
            tr = m.get("train") or {}
            body.append(f"<tr><td>{m['round']}</td><td>{m['n']}</td><td>{_pct(m['success_rate'])}</td><td>{gain}</td>"
                        f"<td>{tr.get('n_tasks', '')}</td><td>{_esc(tr.get('skipped') or ('done' if tr else ''))}</td></tr>")
            prev = m["success_rate"]
        body.append("</table>")
        cats = sorted({c for m in metrics for c in m["per_category"]})
        body.append("<h2>Success per category</h2><table><tr><th>category</th>" + "".join(f"<th>round {m['round']}</th>" for m in metrics) + "</tr>")
        for cat in cats:
            cells = "".join(f"<td>{_pct(m['per_category'][cat]['success_rate'])}</td>" if cat in m["per_category"] else "<td></td>" for m in metrics)
            body.append(f"<tr><td>{_esc(cat)}</td>{cells}</tr>")
        body.append("</table>")
        curves = {"overall": [(m["round"], m["success_rate"]) for m in metrics]}
        for d in sorted({d for m in metrics for d in m["per_difficulty"]}):
            curves[f"difficulty {d}"] = [(m["round"], m["per_difficulty"][d]["success_rate"]) for m in metrics if d in m["per_difficulty"]]
        causes = [c for c in dg.FAILURE_CLASSES if any(m["failures"].get(c) for m in metrics)]
        cause_curves = {c: [(m["round"], m["failures"].get(c, 0) / max(m["n"], 1)) for m in metrics] for c in causes}
        body.append('<h2>Learning curves</h2><div class="grid">' + svg_lines(curves, title="Arena success by round", xlabel="round")
                    + svg_lines(cause_curves, title="Failure causes (share of episodes)", xlabel="round", ylabel="share") + "</div>")
        body.append("<table><tr><th>failure cause</th>" + "".join(f"<th>round {m['round']}</th>" for m in metrics) + "</tr>")
        for c in causes:
            body.append(f"<tr><td>{_esc(c)}</td>" + "".join(f"<td>{m['failures'].get(c, 0)}</td>" for m in metrics) + "</tr>")
        body.append("</table>")
        losses = [(m["round"], m["train"]["stats"]["final_loss"]) for m in metrics
                  if isinstance((m.get("train") or {}).get("stats", {}).get("final_loss"), (int, float))]
        if losses:
            body.append("<p>Training loss at the end of each round: " + ", ".join(f"round {r}: {v:.3f}" for r, v in losses) + "</p>")
        for p, m in zip(rounds, metrics, strict=True):
            report = json.loads((p / "diagnosis.json").read_text())
            body.append(f"<h2>Round {m['round']} diagnosis</h2>" + diagnosis_html(report))
            if (p / "targets.json").exists():
                t = json.loads((p / "targets.json").read_text())
                top = sorted(t["theme_weights_after"].items(), key=lambda kv: -kv[1])[:6]
                body.append(f"<p>Targeting: mass on the weak cells {_pct(t['mass_on_weak_before'])} &rarr; {_pct(t['mass_on_weak_after'])}; "
                            f"{t['n_train_tasks']} training tasks; heaviest themes now: "
                            + ", ".join(f"{_esc(k)} {_pct(v)}" for k, v in top) + "</p>")
        records = [r for p in rounds for r in load_records(p / "eval.jsonl")]
    else:
        records = load_records(src)
        title = f"Diagnosis: {src.name}"
        body.append("<h2>Diagnosis</h2>" + diagnosis_html(dg.diagnose(records)))
    body.append("<h2>Trajectory viewer</h2>" + _viewer(records))
    page = (f'<!doctype html><html><head><meta charset="utf-8"><title>{_esc(title)}</title><style>{_CSS}</style></head>'
            f"<body><h1>{_esc(title)}</h1>{''.join(body)}</body></html>")
    out = Path(out) if out else (src if src.is_dir() else src.parent) / "report.html"
    write_text_atomic(out, page)
    return out


def moved_text(moves: list[dict], top: int = 3) -> str:
    """The previous round's weak cells that moved most (either way), e.g. 'tool get_x 20% -> 50%'."""
    seen = sorted((m for m in moves if m["delta"] is not None), key=lambda m: -abs(m["delta"]))[:top]
    unseen = sum(m["delta"] is None for m in moves)
    text = "; ".join(f"{m['dim']} {m['key']} {100 * m['before']:.0f}% -> {100 * m['after']:.0f}%" for m in seen)
    return text + (f" ({unseen} not in this round's tasks)" if unseen else "")


def evolution_markdown(evo: dict) -> list[str]:
    """Markdown tables of an `evolution.json`: success per arm and round (mean over seeds, each seed, pooled 95%
    interval, mean gain, the diagnosed weaknesses that moved) and targeted minus untargeted per round."""

    def pct(x) -> str:
        return "" if x is None else f"{100 * x:.1f}%"

    def interval(ci) -> str:
        return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""

    lines = [f"Evolve rounds trained by {evo['method']} on {evo['train_tasks_per_round']} tasks a round from the {evo['start']}; "
             f"seeds {', '.join(map(str, evo['seeds']))}; every seed and arm plays the same arena tasks each round.", "",
             "| arm | round | arena success (mean) | per seed (%) | pooled 95% interval | mean gain | diagnosed weaknesses that moved |",
             "|---|---:|---:|---|---|---:|---|"]
    for arm, rows in evo["rounds"].items():
        for r in rows:
            gain = "" if r["gain_mean"] is None else f"{100 * r['gain_mean']:+.1f} pts"
            lines.append(f"| {arm} | {r['round']} | {pct(r['mean'])} | {', '.join(f'{100 * v:.1f}' for v in r['per_seed'])} | "
                         f"{interval(r['ci95_pooled'])} (n={r['n']}) | {gain} | {moved_text(r['weaknesses_moved'])} |")
    if evo.get("null_baselines"):
        lines += ["", "Best null baseline on the same arena tasks: " + "; ".join(
            f"round {x['round']} {pct(x['success'])} {x['best']} {interval(x['ci95'])} (n={x['n']})" for x in evo["null_baselines"]) + "."]
    if evo.get("versus_frozen"):
        lines += ["", "| arm - frozen (never trained, same tasks) | round | difference [95%] | beyond the noise |", "|---|---:|---|---|"]
        for arm, rows in evo["versus_frozen"].items():
            lines += [f"| {arm} | {x['round']} | {100 * x['difference']:+.1f} pts {interval(x['ci95'])} | {'yes' if x['beyond_noise'] else 'no'} |"
                      for x in rows if x["round"] > 0]
    if evo["ablation"]:
        lines += ["", "| round | targeted | untargeted | targeted - untargeted [95%] | beyond the noise |", "|---:|---:|---:|---|---|"]
        for x in evo["ablation"]:
            lines.append(f"| {x['round']} | {pct(x['targeted'])} | {pct(x['untargeted'])} | {100 * x['difference']:+.1f} pts "
                         f"{interval(x['ci95'])} | {'yes' if x['beyond_noise'] else 'no'} |")
    return lines


def build_evolution_report(evo: dict, out: str | Path) -> Path:
    """One HTML page comparing the evolve arms of an `evolution.json` (benchmarks/arena_scaling.py): success per
    round with 95% intervals, targeted minus untargeted, and the diagnosed weak cells that moved. Made from the
    results file alone, so it can be regenerated without the runs' checkpoints and transcripts."""
    if "ablation" not in evo:
        raise ConfigError("Expected an evolution.json with per-arm rounds (arena_scaling.py --evolve-arms), got an older single-run file.")

    def interval(ci) -> str:
        return f"[{_pct(ci[0])}, {_pct(ci[1])}]" if ci else ""

    body = [f"<p>Training by <b>{_esc(evo['method'])}</b> on {evo['train_tasks_per_round']} tasks per round, from the "
            f"{_esc(evo['start'])}; seeds {', '.join(map(str, evo['seeds']))}; every seed and arm is scored on the same arena "
            "tasks in each round. Success: the mean over seeds, each seed's value, and the 95% Wilson interval of all "
            "episodes pooled. Untargeted = the ablation: as many training tasks, drawn uniformly over the same arena cells "
            "without the diagnosis.</p>",
            "<h2>Success per round</h2><table><tr><th>arm</th><th>round</th><th>mean</th><th>per seed</th><th>pooled 95% interval</th>"
            "<th>episodes</th><th>mean gain</th></tr>"]
    for arm, rows in evo["rounds"].items():
        for r in rows:
            gain = "" if r["gain_mean"] is None else f"{100 * r['gain_mean']:+.1f} pts"
            body.append(f"<tr><td>{_esc(arm)}</td><td>{r['round']}</td><td>{_pct(r['mean'])}</td>"
                        f"<td>{', '.join(_pct(v) for v in r['per_seed'])}</td><td>{interval(r['ci95_pooled'])}</td><td>{r['n']}</td>"
                        f"<td>{gain}</td></tr>")
    body.append("</table>")
    if evo.get("null_baselines"):
        body.append("<p>Best null baseline (do-nothing, constant answers, first-id, random) on the same arena tasks: " + "; ".join(
            f"round {x['round']}: {_pct(x['success'])} {_esc(x['best'])} {interval(x['ci95'])} (n={x['n']})" for x in evo["null_baselines"])
            + ".</p>")
    series = {arm: [(r["round"], r["mean"]) for r in rows] for arm, rows in evo["rounds"].items()}
    series.update({f"{arm} 95% lo": [(r["round"], r["ci95_pooled"][0]) for r in rows] for arm, rows in evo["rounds"].items()})
    series.update({f"{arm} 95% hi": [(r["round"], r["ci95_pooled"][1]) for r in rows] for arm, rows in evo["rounds"].items()})
    body.append(svg_lines(series, title="Arena success by round (mean; pooled 95% bounds)", xlabel="round"))
    if evo["ablation"]:
        body.append("<h2>Targeted minus untargeted</h2><table><tr><th>round</th><th>targeted</th><th>untargeted</th>"
                    "<th>difference</th><th>95% interval</th><th>beyond the noise</th></tr>")
        for x in evo["ablation"]:
            body.append(f"<tr><td>{x['round']}</td><td>{_pct(x['targeted'])}</td><td>{_pct(x['untargeted'])}</td>"
                        f"<td>{100 * x['difference']:+.1f} pts</td><td>{interval(x['ci95'])}</td>"
                        f"<td class=\"{'ok' if x['beyond_noise'] else 'bad'}\">{'yes' if x['beyond_noise'] else 'no'}</td></tr>")
        body.append("</table>")
    body.append("<h2>Diagnosed weaknesses: did they move?</h2><p>For each round, the weak cells the previous round's "
                "diagnosis named (pooled over seeds), their success then and on this round's fresh arena tasks.</p>")
    for arm, rows in evo["rounds"].items():
        for r in rows:
            if not r["weaknesses_moved"]:
                continue
            body.append(f"<h3>{_esc(arm)}, round {r['round']}</h3><table><tr><th>cell</th><th>before</th><th>n</th>"
                        "<th>after</th><th>n</th><th>change</th></tr>")
            for m in sorted(r["weaknesses_moved"], key=lambda m: (m["dim"], m["key"])):
                change = "not in this round's tasks" if m["delta"] is None else f"{100 * m['delta']:+.1f} pts"
                after = "" if m["after"] is None else _pct(m["after"])
                body.append(f"<tr><td>{_esc(m['dim'])} {_esc(m['key'])}</td><td>{_pct(m['before'])}</td><td>{m['before_n']}</td>"
                            f"<td>{after}</td><td>{m['after_n']}</td><td>{change}</td></tr>")
            body.append("</table>")
    runs = ", ".join(f'<a href="evolve_run/{_esc(name)}/report.html">{_esc(name)}</a>' for name in evo.get("runs", {}))
    if runs:
        body.append(f"<h2>Each run</h2><p>Round-by-round diagnosis and a trajectory viewer per run: {runs}.</p>")
    title = "Self-evolving arena: targeted vs untargeted"
    page = (f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style></head>'
            f"<body><h1>{title}</h1>{''.join(body)}</body></html>\n")
    out = Path(out)
    write_text_atomic(out, page)
    return out


def screenshot(html_path: str | Path, png_path: str | Path, width: int = 1280, height: int = 2000, timeout: float = 90.0) -> Path:
    """Render a page to PNG with headless Chromium (Debian's `chromium`); raises ConfigError when absent."""
    import shutil
    import subprocess
    import tempfile

    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        raise ConfigError("Expected a `chromium` executable for the screenshot, got none on PATH. Install it: apt-get install -y chromium")
    png_path = Path(png_path).resolve()
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={png_path}",
               f"--window-size={width},{height}", "--virtual-time-budget=3000", Path(html_path).resolve().as_uri()]
        subprocess.run(cmd, check=True, timeout=timeout, capture_output=True)
    return png_path
