"""The documentation: a short README, a site that builds with warnings as errors, examples that run and print what
they say, excerpts that are really in the files they cite, links that resolve, and figures that match the tool."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
# Pages other branches of issue 40 write; mkdocs.yml lists them in one marked block, commented until they are merged.
OTHER_BRANCH_PAGES = ("tasks.md", "grading.md", "worlds.md", "tau2.md", "robustness.md", "integrations.md", "release.md")


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def expected_output(block: str) -> str | None:
    """The comment after the block's last print, e.g. `print(reward)   # 1.0`: what the block must print last."""
    prints = [line for line in block.splitlines() if line.startswith("print(") and "  # " in line]
    return prints[-1].rsplit("  # ", 1)[1].strip() if prints else None


def run_block(block: str, name: str, capsys) -> None:
    exec(compile(block, name, "exec"), {"__name__": "docs"})
    want = expected_output(block)
    if want is not None:
        assert capsys.readouterr().out.strip().splitlines()[-1] == want, name


def test_the_readme_is_short_and_keeps_its_order():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["Set up", "The loop", "What is registered", "Integrations", "Evaluate on the suites", "Train",
                        "Documentation"]


@pytest.mark.parametrize(("page", "index"), [(p.name, i) for p in PAGES for i in range(len(python_blocks(p)))])
def test_docs_python_blocks_run_and_print_what_they_say(page, index, capsys):
    if page == "release.md" and shutil.which("bwrap") is None:  # release tool code runs only in the sandbox
        pytest.skip("bubblewrap not installed (.ci/run installs it)")
    run_block(python_blocks(DOCS / page)[index], f"docs/{page} block {index}", capsys)


def test_excerpts_are_in_the_examples_they_name():
    excerpts = re.findall(r"```py\n# (examples/\S+\.py)\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert len(excerpts) >= 4
    for path, code in excerpts:
        lines = {line.strip() for line in (ROOT / path).read_text(encoding="utf-8").splitlines()}
        missing = [line for line in code.splitlines() if line.strip() and line.strip() not in lines]
        assert not missing, (path, missing)


def test_relative_links_resolve():
    """Every link to a file of the repository exists, but for the pages other branches add (see mkdocs.yml)."""
    for path in [README, *PAGES]:
        for target in re.findall(r"\]\(([^)#:]+?)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            resolved = (path.parent / target).resolve()
            if resolved.parent == DOCS and resolved.name in OTHER_BRANCH_PAGES:
                continue
            assert resolved.exists(), f"{path.relative_to(ROOT)} links to {target}"


def test_the_nav_lists_every_page_and_the_other_branches_pages_in_one_block():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block = config[config.index("# >>> pages written on other branches"):config.index("# <<< end of the pages")]
    live = set(re.findall(r"^  - [^:]+: (\S+\.md)$", config, flags=re.M))
    for name in OTHER_BRANCH_PAGES:
        assert re.search(rf"^  (# )?- [^:]+: {re.escape(name)}$", block, flags=re.M), f"{name} belongs in the marked block of mkdocs.yml"
        exists = (DOCS / name).is_file()
        assert exists == (name in live), (f"docs/{name} is merged: uncomment its nav line in mkdocs.yml" if exists
                                          else f"docs/{name} is not here: comment its nav line out")
    assert {p.name for p in PAGES} <= live, "a page under docs/ is missing from the nav"


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """`make docs`: mkdocs --strict, API reference from the docstrings. While a page of another branch is not merged
    yet, the only warnings allowed are the links to it."""
    pytest.importorskip("mkdocstrings")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    warnings = [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    absent = [name for name in OTHER_BRANCH_PAGES if not (DOCS / name).is_file()]
    unexpected = [w for w in warnings if not (w.startswith("WARNING") and "not found among documentation files" in w
                                             and any(f"'{name}'" in w for name in absent))]
    assert not unexpected, "\n".join(unexpected)
    assert done.returncode == 0 or warnings, done.stderr[-2000:]
    if not absent:
        assert done.returncode == 0, done.stderr[-2000:]
    if done.returncode == 0:  # the API reference holds the docstrings, not just the names
        api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
        assert "Draw among the named themes with these weights" in api and "The gymnasium id a user" in api


def test_figures_in_the_docs_match_the_code():
    """Figures stated in prose, against what the code holds (the counts of the pool are generated, readme_tables.py)."""
    from agentworld_gym import actions, envs
    from agentworld_gym.suites.core import _category, heldout_suite
    from agentworld_gym.synthesis.quality import PRIOR_SAMPLE

    readme, pages = README.read_text(encoding="utf-8"), {p.name: p.read_text(encoding="utf-8") for p in PAGES}
    formats = [line for line in pages["actions.md"].split("## Accepted tool-call formats")[1].split("\n#")[0].splitlines()
               if line.startswith("| ") and not line.startswith("| format")]
    assert f"the {len(formats)} tool-call formats" in readme
    limits = (f"at most {actions.MAX_ACTION_CHARS:,} characters", f"at most {actions.MAX_CALLS} calls",
              f"nested {actions.MAX_DEPTH} deep", f"integers of {actions.MAX_INT_BITS} bits")
    assert all(claim in pages["actions.md"] for claim in limits), limits
    sizes = [len(envs.get_theme(t).toolset) for t in envs.FLAGSHIPS]
    assert f"{min(sizes)}–{max(sizes)} tools each" in pages["environments.md"]
    assert f"a fixed sample of {PRIOR_SAMPLE} candidates" in pages["concepts.md"]
    tasks = heldout_suite().items
    categories = {_category(t.theme) for t in tasks}
    per_category = {len({t.theme for t in tasks if _category(t.theme) == c}) for c in categories}
    assert per_category == {3} and len(categories) == 20 and {t.difficulty for t in tasks} == {1, 2, 3, 4, 5}
    assert "three composed catalog themes in each of\nthe 20 first-tier categories, one task per level 1–5" in pages["suites.md"]
    from agentworld_gym.discovery.forge import TEXT_CAP
    from agentworld_gym.discovery.pool import MAX_OVERLAP
    from agentworld_gym.tools import MAX_MAGNITUDE

    assert f"overlap below {MAX_OVERLAP} with every registered theme" in pages["suites.md"]
    assert f"texts of 1–{TEXT_CAP}\ncharacters" in pages["byo-tools.md"]
    assert f"within ±{MAX_MAGNITUDE:.0e}".replace("+", "") in pages["actions.md"]


def test_trl_figures_in_the_prose_match_the_run():
    """The TRL curve's figures stated in the README and the integrations page's prose are the published run's
    (benchmarks/results/trl_curve.json; its tables are generated, readme_tables.py)."""
    import json

    run, seed1 = (json.loads((ROOT / "benchmarks" / "results" / f"trl_curve{s}.json").read_text(encoding="utf-8")) for s in ("", "_seed1"))
    readme, page = README.read_text(encoding="utf-8"), (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    for r in (run, seed1):
        cold, trained = r["cold_start_held"], r["trained_held"]
        assert trained["ci95"][0] > cold["ci95"][1]  # the claim: a gain beyond the noise on unseen tasks, for each seed
        lo, hi = trained["ci95"]
        assert f"{trained['successes']} of {trained['n']} unseen tasks [{lo:.2f}, {hi:.2f}]" in page
    cold, trained = run["cold_start_held"], run["trained_held"]
    assert (f"from {cold['successes']} to {trained['successes']} (a second seed: {seed1['trained_held']['successes']}) "
            f"of {trained['n']} unseen") in readme
    assert f"After {run['grpo']['steps']} GRPO\nsteps" in page or f"After {run['grpo']['steps']} GRPO steps" in page


def test_every_import_the_docs_show_works():
    """The public imports named in the README and the pages (code blocks and `from x import y` in the text)."""
    import importlib

    statements = set()
    for path in [README, *PAGES]:
        text = path.read_text(encoding="utf-8")
        statements |= set(re.findall(r"^from (agentworld_gym[\w.]*) import ([\w, ]+)$", text, flags=re.M))
        statements |= set(re.findall(r"`from (agentworld_gym[\w.]*) import ([\w, ]+)`", text))
    assert len(statements) >= 10
    for module, names in sorted(statements):
        if module.split(".")[1:2] == ["integrations"]:
            continue  # optional libraries (TRL, verifiers, ...): their examples run in tests/test_integration_*.py
        loaded = importlib.import_module(module)
        for name in (n.strip() for n in names.split(",")):
            assert hasattr(loaded, name), f"from {module} import {name}"


def test_figures_in_the_readme_match_the_code():
    """The README's counts and versions that are not generated: flagships, pinned library versions, the MCP URL."""
    from agentworld_gym import envs
    from agentworld_gym.mcp.server import HTTP_PATH

    readme = README.read_text(encoding="utf-8")
    setup = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    assert f"… ({len(envs.FLAGSHIPS)}) |" in readme
    for library, package in (("TRL", "trl"), ("verifiers", "verifiers"), ("OpenEnv", "openenv-core"), ("SkyRL-gym", "skyrl-gym")):
        shown = re.search(rf"^\| {re.escape(library)} ([\d.]+) \|", readme, flags=re.M).group(1)
        pinned = re.search(rf"^\s+{re.escape(package)}==([\d.]+)$", setup, flags=re.M).group(1)
        assert pinned == shown or pinned.startswith(shown + "."), (library, shown, pinned)
    assert f"http://127.0.0.1:8000{HTTP_PATH}" in readme


def test_every_dotted_name_the_docs_cite_exists():
    """`agentworld_gym.x.y` in the text names a module or an attribute that is there (after a move too)."""
    import importlib

    names = set()
    for path in [README, *PAGES]:
        names |= set(re.findall(r"`(agentworld_gym(?:\.\w+)+)(?:\(\))?`", path.read_text(encoding="utf-8")))
    assert len(names) >= 10
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
                break
            except ModuleNotFoundError:
                continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            assert obj is not None, f"{name} is cited but not found"
