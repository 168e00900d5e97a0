"""The README's Python examples run as written and print what their comments say, and its set-up commands are the
Makefile's targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples_and_the_two_setup_commands():
    text = README.read_text()
    setup = re.search(r"## Set up\n\n```bash\n(.*?)```", text, flags=re.S).group(1)
    assert [line.split()[:2] for line in setup.strip().splitlines()] == [["make", "demo"], ["make", "test"]]
    makefile = (README.parent / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)
    assert "make test" in (README.parent / ".ci" / "run").read_text()
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, capsys):
    pytest.importorskip("stable_baselines3")
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {"__name__": "readme"})
    # a block whose last print carries a comment (`print(reward)   # 1.0`) must print exactly that last
    prints = [line for line in BLOCKS[index].splitlines() if line.startswith("print(") and "  # " in line]
    if prints:
        assert capsys.readouterr().out.strip().splitlines()[-1] == prints[-1].rsplit("  # ", 1)[1].strip()


def test_make_test_installs_leave_pip_nothing_to_report():
    """pip prints its red dependency-conflict ERROR after an install it checks (one with dependencies) once a
    --no-deps package with unmet requirements is in the venv, so every --no-deps install comes after the others."""
    makefile = (README.parent / "Makefile").read_text()
    recipe = makefile.split("$(VENV)/.all:", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]  # after the prerequisites line
    project_pip = [line.strip() for line in recipe.splitlines() if "$(PIP)" in line]
    first_unchecked = next(i for i, line in enumerate(project_pip) if "--no-deps" in line)
    assert all("--no-deps" in line for line in project_pip[first_unchecked:]), project_pip
    assert "setuptools>=70.1" in makefile.split("$(VENV)/.core:", 1)[1].split("\n\n", 1)[0]  # before, not during, wheel-check
