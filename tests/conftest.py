import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_DATA = Path(os.environ.get("AGENTWORLD_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The reference data folder (../shared/data from the repo root); tests needing it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data not found at {SHARED_DATA} (set AGENTWORLD_SHARED_DATA)")
    return SHARED_DATA
