"""Fail fast on a model name that cannot load, before transformers is imported.

transformers answers an unknown local path or an unreachable hub with retries and a long traceback
(about 50 s offline). Here a name is checked up front: a local folder must exist and hold a
checkpoint; a hub id must be in the local Hugging Face cache unless the hub is reachable. Offline is
detected once, from HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE or a short TCP connect to the hub.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from urllib.parse import urlparse

from ..errors import ConfigError, MissingFileError

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
CHECKPOINT_FILES = ("config.json", "adapter_config.json")
ALIASES = ("smollm2-135m",)
HINT = "Use smollm2-135m (bundled with the llm extra), a checkpoint folder such as runs/sft/final, or a cached hub id."


def offline_reason(timeout: float = 1.5) -> str | None:
    """Why the Hugging Face hub cannot be reached, or None when it can."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{var}={os.environ[var]}"
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((url.hostname, url.port or (80 if url.scheme == "http" else 443)), timeout=timeout).close()
    except OSError as exc:
        return f"no connection to {url.hostname} ({exc.__class__.__name__})"
    return None


def in_hf_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # no hub client: transformers is missing too, and `require` says which extra
        return True
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def check_model_source(name: str) -> None:
    """Raise a one-line typed error with a hint when `name` is neither an alias, a checkpoint folder,
    a cached hub id, nor a hub id that can be downloaded now."""
    if name in ALIASES:
        return
    path = Path(name).expanduser()
    if path.exists():
        if not (path.is_dir() and any((path / f).is_file() for f in CHECKPOINT_FILES)):
            raise ConfigError(f"Expected a model checkpoint folder (with config.json), got {name!r}. {HINT}")
        return
    if name.startswith(("/", ".", "~")) or name.endswith("/") or name.count("/") > 1 or not HUB_ID.match(name):
        raise MissingFileError(f"Expected a model folder or a Hugging Face hub id, got {name!r}: no such folder. {HINT}")
    cached = in_hf_cache(name)
    reason = offline_reason()
    if cached:
        if reason is not None:  # load the cached copy without asking the hub first (takes effect before transformers loads)
            os.environ["HF_HUB_OFFLINE"] = "1"
        return
    if reason is not None:
        raise ConfigError(f"Expected a model available offline, got {name!r}: not a local folder, not in the Hugging Face "
                          f"cache, and the hub is offline ({reason}). {HINT}")


__all__ = ["check_model_source", "in_hf_cache", "offline_reason"]
