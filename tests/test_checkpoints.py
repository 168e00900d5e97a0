"""Checkpoints survive a kill at any moment: written whole to a temp folder, renamed, vouched for by a manifest."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

torch = pytest.importorskip("torch")

from agentworld_gym.train import common  # noqa: E402

# A writer process: a real torch model and optimizer saved by the real save_checkpoint. Its tokenizer's save
# announces itself and then stalls (for step 2 only), so the test can kill -9 it in the middle of a save.
WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import torch
    from agentworld_gym.train.common import save_checkpoint

    class Model(torch.nn.Linear):
        def save_pretrained(self, path):
            torch.save(self.state_dict(), Path(path) / "model.pt")

    class Tokenizer:
        def __init__(self, stall_at): self.stall_at, self.step = stall_at, 0
        def save_pretrained(self, path):
            (Path(path) / "tokenizer.json").write_text("{}")
            if self.step == self.stall_at:
                Path(sys.argv[2]).write_text("saving")
                time.sleep(120)

    out, stall_at = Path(sys.argv[1]), int(sys.argv[3])
    model, tok = Model(4, 4), Tokenizer(stall_at)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in (1, 2):
        tok.step = step
        save_checkpoint(out, step, model, tok, opt, {"kind": "test"})
""")


def _kill_mid_save(tmp_path, stall_at: int):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "run"), str(marker), str(stall_at)])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, "the writer ended before it reached the save"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    return tmp_path / "run"


def test_a_kill_mid_save_leaves_the_previous_checkpoint_to_resume_from(tmp_path):
    out = _kill_mid_save(tmp_path, stall_at=2)
    latest = common.latest_checkpoint(out)
    assert latest is not None and latest.name == "ckpt-000001"
    state = common.load_state(latest)
    assert state["step"] == 1 and "optimizer" in state
    assert not (out / "ckpt-000002").exists()  # the half-written one never got the final name


def test_resume_skips_a_broken_newest_checkpoint_and_says_so(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)  # never stalls: two complete checkpoints, the older pruned
    subprocess.run([sys.executable, str(tmp_path / "writer.py"), str(tmp_path / "run"), str(tmp_path / "m"), "0"], check=True)
    out = tmp_path / "run"
    assert [p.name for p in out.glob("ckpt-*")] == ["ckpt-000002"]
    # Break it the way an in-place write would (truncated state), and add an older complete one back.
    good = out / "ckpt-000002"
    older = out / "ckpt-000001"
    shutil.copytree(good, older)
    (older / common.MANIFEST).write_text((good / common.MANIFEST).read_text())
    with open(good / common.STATE_FILE, "r+b") as f:
        f.truncate(10)
    with pytest.warns(UserWarning, match="incomplete checkpoint .*ckpt-000002"):
        assert common.latest_checkpoint(out) == older
    (older / common.MANIFEST).unlink()
    with pytest.warns(UserWarning):
        assert common.latest_checkpoint(out) is None


def _two_checkpoints(tmp_path):
    (tmp_path / "writer.py").write_text(WRITER)
    subprocess.run([sys.executable, str(tmp_path / "writer.py"), str(tmp_path / "run"), str(tmp_path / "m"), "0"], check=True)
    out = tmp_path / "run"
    good, older = out / "ckpt-000002", out / "ckpt-000001"
    shutil.copytree(good, older)
    return out, good, older


@pytest.mark.parametrize("name", [common.STATE_FILE, "model.pt", "tokenizer.json"])
@pytest.mark.parametrize("where", ["first byte", "middle byte", "last byte"])
def test_same_size_damage_is_caught_by_the_content_hashes(tmp_path, name, where):
    """A file damaged in place at its own size (what a size check cannot see) is refused on resume."""
    out, good, older = _two_checkpoints(tmp_path)
    listed = __import__("json").loads((good / common.MANIFEST).read_text())["files"]
    assert all(len(entry["sha256"]) == 64 for entry in listed.values())  # every file is vouched for by its hash
    file = good / name
    data = bytearray(file.read_bytes())
    at = {"first byte": 0, "middle byte": len(data) // 2, "last byte": len(data) - 1}[where]
    data[at] ^= 0x01
    file.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match=f"incomplete checkpoint .*ckpt-000002 \\({name} does not match its content hash\\)"):
        assert common.latest_checkpoint(out) == older


def test_an_older_size_only_manifest_is_still_resumed(tmp_path):
    out, good, older = _two_checkpoints(tmp_path)
    import json

    manifest = json.loads((good / common.MANIFEST).read_text())
    manifest["files"] = {k: v["size"] for k, v in manifest["files"].items()}
    (good / common.MANIFEST).write_text(json.dumps(manifest))
    assert common.latest_checkpoint(out) == good


def test_a_torn_metrics_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.5}\n{"step": 3, "lo')  # killed mid-write
    with pytest.warns(UserWarning, match="Skipping 1 unreadable line.*line 3"):
        log = common.MetricsLog(path, resume_step=2)
    log.write({"step": 3, "loss": 1.2})
    assert common.MetricsLog.read(path) == [{"step": 1, "loss": 2.0}, {"step": 2, "loss": 1.5}, {"step": 3, "loss": 1.2}]
    path.write_text('{"step": 1}\n[1, 2]\n\x00\x00garbage\n{"step": 2}\n')
    with pytest.warns(UserWarning, match="Skipping 2 unreadable line.*line 2, 3"):
        assert common.MetricsLog.read(path) == [{"step": 1}, {"step": 2}]
