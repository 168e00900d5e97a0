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


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> str:
    """A tiny random Llama + tokenizer saved to disk (built from a config, no download)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from llm_fixtures import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))
