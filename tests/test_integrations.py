"""What all four integrations share: lazily imported, examples of <= 15 lines as the README's table says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("trl", "verifiers", "openenv", "skyrl_gym", "datasets", "fastapi")


def test_import_agentworld_gym_loads_no_integration_library():
    code = f"import sys, agentworld_gym, agentworld_gym.integrations; print(sorted(m for m in {LIBRARIES!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readme_table_line_counts_match_the_examples():
    rows = re.findall(r"\| (\d+) \(`(examples/[a-z_]+\.py)`\)", (ROOT / "README.md").read_text())
    assert len(rows) == 4
    for lines, path in rows:
        actual = sum(1 for line in (ROOT / path).read_text().splitlines() if line.strip())
        assert int(lines) == actual <= 15, path
