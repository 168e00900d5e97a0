"""Imports run one way (issue #40): a layer contract over agentworld_gym, checked on the source by AST.

What counts: every `import` / `from ... import` of an agentworld_gym module anywhere in a file,
including the ones inside function bodies (lazy imports). A lazy import still ties two modules
together (one cannot be read, tested or moved without the other), so it may not break a circle
or reach up a layer - except the few late-binding points listed in LATE_BINDING, each a
function-level import with its reason (the test fails if one becomes a load-time import or
disappears, so the list only shrinks). Imports under `if TYPE_CHECKING:` (never run) do not count.
Importing `pkg.mod` counts as an edge to `pkg.mod` only, not to `pkg/__init__`.

The contract:
1. no circles: the module graph is acyclic (a package's `__init__` re-exporting its own modules
   is an edge like any other, so a module must not import names back through its package `__init__`);
2. layers: a module imports only from its own layer or lower ones (LAYERS, lowest first);
3. discovery stages: a module of `agentworld_gym.discovery` imports only from its own stage or
   earlier ones (DISCOVERY_STAGES, earliest first).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "agentworld_gym"
# package folders that live outside agentworld_gym/ in a checkout (setup.cfg package_dir)
FOLDERS = {PKG: ROOT / "agentworld_gym", f"{PKG}.envs": ROOT / "envs", f"{PKG}.wrappers": ROOT / "wrappers"}

# Lowest first. A module's layer is that of the longest matching prefix (names without "agentworld_gym.").
LAYERS: list[tuple[str, ...]] = [
    # 0 - vocabulary: errors, action parsing, chat-message helpers every layer uses
    ("errors", "actions", "checks", "sql_names", "templates", "wrappers.chat"),
    # 1 - the world model: tools, SQLite worlds, tasks and their grading, observation/action spaces
    ("tools", "world", "semantics", "grading", "tasks", "spaces", "sandbox"),
    # 2 - themes and the one prompt, backends, policies (LLM included), the user simulator
    ("theme", "prompt", "backend", "policies", "user_simulator"),
    # 3 - task synthesis
    ("synthesis",),
    # 4 - the gymnasium env, its registry, wrappers, vector/multi-agent forms
    ("env", "envs", "wrappers", "vector", "multiagent", "utils"),
    # 5 - what is built on envs: MCP, discovery, benchmark suites, integrations
    ("serving", "mcp", "discovery", "suites", "integrations", "bench", "bfcl", "bfcl_multi_turn", "play"),
    # 6 - training and the command lines (each package's cli module too)
    ("train", "cli", "synthesis.cli", "discovery.cli", "mcp.cli", "mcp.__main__", "integrations.cli"),
    # 7 - the arena (trains and evaluates against everything below)
    ("arena",),
    # the package root (agentworld_gym/__init__) re-exports from anywhere and nothing imports it back
    ("",),
]
# Earliest first, names without "agentworld_gym.discovery.".
# sources: read catalogs and inputs -> infer: schemas (drafts, archetypes, entity plans, computed
# fields) -> forge: tables built and complexified, tools forged, wording -> validate: generated unit
# tests -> pool: the whole chain (pipeline), the built-in pool, loading a discovered folder.
DISCOVERY_STAGES: list[tuple[str, ...]] = [
    ("sources", "formats", "mapping"),
    ("infer", "archetypes", "entities", "compute"),
    ("forge", "build", "llm"),
    ("validate",),
    ("pipeline", "pool", "load", "summary", "cli", ""),
]
# Function-level imports allowed to close a circle or reach up a layer: (importer, imported) -> why.
LATE_BINDING: dict[tuple[str, str], str] = {
    ("env", "mcp.server"): "AgentWorldEnv.serve_mcp(): an env serves itself over MCP on request",
    ("envs", "mcp.registration"): "registering AgentWorld/mcp-v0, tau2 and release ids on import (no SDK loaded)",
    ("envs.catalog", "discovery.pool"): "catalog themes are rebuilt from the pool's recipes on first gym.make",
    ("envs.catalog", "discovery.pipeline"): "... by the discovery pipeline (forge_theme)",
    ("suites.core", "train.ray_rollouts"): "bench --ray: the env workers of the one Ray layer (train.ray_rollouts), loaded only with --ray",
}


def modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if prefix == PKG and parts[0] in ("envs", "wrappers"):
                continue
            is_pkg = parts[-1] == "__init__"
            name = ".".join([prefix, *parts[:-1]] if is_pkg else [prefix, *parts])
            found[name] = (path, is_pkg)
    return found


def _resolve(name: str, mods) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, mods, lazy: bool = True) -> set[str]:
    """agentworld_gym modules `name` imports anywhere in its file (TYPE_CHECKING blocks aside);
    only those outside function bodies unless `lazy`."""
    path, is_pkg = mods[name]
    base = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if not lazy and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(child, ast.Import):
                out.update(r for a in child.names if (r := _resolve(a.name, mods)))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    anchor = base
                    for _ in range(child.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    full = anchor + ("." + child.module if child.module else "")
                else:
                    full = child.module or ""
                for a in child.names:  # `from pkg import mod` imports pkg.mod; `from mod import name` imports mod
                    target = f"{full}.{a.name}" if f"{full}.{a.name}" in mods else full
                    if (r := _resolve(target, mods)):
                        out.add(r)
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    out.discard(name)
    return out


@functools.cache
def _all_imports() -> dict[str, frozenset[str]]:
    mods = modules()
    return {m: frozenset(imports(m, mods)) for m in mods}


def graph(late: bool = False) -> dict[str, set[str]]:
    """{module: modules it imports}; without the LATE_BINDING edges unless `late`."""
    g = {m: set(targets) for m, targets in _all_imports().items()}
    if not late:
        for a, b in LATE_BINDING:
            g.get(f"{PKG}.{a}", set()).discard(f"{PKG}.{b}")
    return g


def load_time_imports(name: str, mods) -> set[str]:
    """The modules `name` imports at load time (outside function bodies)."""
    return imports(name, mods, lazy=False)


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], 0
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def rank(name: str, prefix: str, order: list[tuple[str, ...]]) -> int:
    short = name[len(prefix):].lstrip(".")
    best, best_len = None, -1
    for i, group in enumerate(order):
        for p in group:
            if (short == p or (p and short.startswith(p + "."))) and len(p) > best_len:
                best, best_len = i, len(p)
    assert best is not None, f"{name} is in no layer of {order}: add it to tests/test_layers.py"
    return best


def layer_violations(g) -> list[str]:
    return [f"{a} (layer {rank(a, PKG, LAYERS)}) imports {b} (layer {rank(b, PKG, LAYERS)})"
            for a in sorted(g) for b in sorted(g[a]) if rank(b, PKG, LAYERS) > rank(a, PKG, LAYERS)]


def stage_violations(g) -> list[str]:
    d = f"{PKG}.discovery"
    inside = [m for m in g if m == d or m.startswith(d + ".")]
    return [f"{a} (stage {rank(a, d, DISCOVERY_STAGES)}) imports {b} (stage {rank(b, d, DISCOVERY_STAGES)})"
            for a in sorted(inside) for b in sorted(g[a])
            if (b == d or b.startswith(d + ".")) and rank(b, d, DISCOVERY_STAGES) > rank(a, d, DISCOVERY_STAGES)]


def test_checker_sees_imports_and_circles():
    # the checker itself can fail: it finds the edges every package __init__ declares, and a planted circle
    g = graph()
    assert f"{PKG}.env" in g[PKG] and f"{PKG}.envs" in g[PKG]
    assert f"{PKG}.policies.base" in g[f"{PKG}.policies"]
    planted = {k: set(v) for k, v in g.items()}
    planted[f"{PKG}.errors"].add(f"{PKG}.env")
    assert any(f"{PKG}.errors" in c for c in circles(planted))
    assert layer_violations(planted)


def test_late_binding_points_are_lazy_and_still_exist():
    mods, g = modules(), graph(late=True)
    for a, b in LATE_BINDING:
        assert f"{PKG}.{b}" in g[f"{PKG}.{a}"], f"stale LATE_BINDING entry {a} -> {b}: remove it from tests/test_layers.py"
        assert f"{PKG}.{b}" not in load_time_imports(f"{PKG}.{a}", mods), f"{a} imports {b} at load time: make it lazy or fix the circle"


def test_no_import_circles():
    found = circles(graph())
    assert not found, f"{len(found)} import circle(s) in agentworld_gym: " + "; ".join(" <-> ".join(c) for c in found)


def test_layers_import_downward_only():
    bad = layer_violations(graph())
    assert not bad, "imports that reach up a layer (contract in tests/test_layers.py):\n" + "\n".join(bad)


def test_discovery_stages_import_earlier_stages_only():
    bad = stage_violations(graph())
    assert not bad, "discovery stages that import later ones:\n" + "\n".join(bad)


# Paths that moved (issue #40) -> where they live now; the old ones are aliases of the new modules.
MOVED = {"bench": "suites.core", "bfcl": "suites.bfcl", "bfcl_multi_turn": "suites.bfcl_multi_turn",
         "mcp.tau2": "suites.tau2", "mcp.release_tasks": "suites.release"}


def test_moved_modules_keep_their_old_import_paths():
    import importlib
    import warnings

    for old, new in MOVED.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            alias = importlib.import_module(f"{PKG}.{old}")
        assert alias is importlib.import_module(f"{PKG}.{new}"), f"{PKG}.{old} is not an alias of {PKG}.{new}"
    from agentworld_gym.bench import run_suite  # the README's import of before the move

    assert run_suite is importlib.import_module(f"{PKG}.suites").run_suite
