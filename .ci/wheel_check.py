"""Packaging check: the product works as a user installs it, from a wheel, outside the repository.

1. Build the wheel from a clean copy of the tracked tree (a stale build/ folder cannot leak in).
2. Fail if a tracked file under a package folder is missing from the wheel (data files included).
3. Install the wheel with --no-deps into a fresh venv; the core dependencies come from the project
   venv through a .pth line, so nothing is downloaded and the check stays fast. That line adds a
   plain path, not a site dir, so the project's editable-install hook there never runs: the only
   agentworld_gym the fresh venv can import is the wheel's.
4. From an empty folder, with an empty world cache, run the held-out suite with the oracle and the demo.

Usage: python .ci/wheel_check.py  (run with the project venv's python; `make wheel-check`)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# source folder -> where it lands in the wheel (setup.cfg package_dir)
PACKAGE_DIRS = {"agentworld_gym/": "agentworld_gym/", "envs/": "agentworld_gym/envs/",
                "wrappers/": "agentworld_gym/wrappers/"}


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                         check=True, capture_output=True).stdout.decode()
    return sorted({f for f in out.split("\0") if f and (REPO / f).is_file()})


def build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    for f in tracked_files():
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, src / f)
    # -v shows the build backend's output: a folder setuptools would leave out prints a warning a user must not see
    done = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src)],
               capture_output=True, text=True)
    ignored = sorted(set(re.findall(r"Package '([^']+)' is absent from the `packages` configuration", done.stdout + done.stderr)))
    if ignored:
        raise SystemExit(f"setup.cfg: add {ignored} to [options] packages (and their files to package_data): setuptools "
                         "warns about each folder it finds but was not told to package.")
    return next((tmp / "dist").glob("agentworld_gym-*.whl"))


def missing_from_wheel(wheel: Path) -> list[str]:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for f in tracked_files():
        for source, target in PACKAGE_DIRS.items():
            if f.startswith(source):
                if target + f[len(source):] not in names:
                    missing.append(f)
                break
    return missing


def fresh_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_project_core_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)])
    return venv


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="agentworld-wheel-") as name:
        tmp = Path(name)
        wheel = build_wheel(tmp)
        missing = missing_from_wheel(wheel)
        if missing:
            print(f"wheel check: {len(missing)} tracked package files are not in {wheel.name} "
                  f"(add them to [options.package_data] in setup.cfg): {missing[:20]}", file=sys.stderr)
            return 1
        venv = fresh_venv(tmp, wheel)
        outside = tmp / "outside"
        outside.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTWORLD_", "PYTHON"))}
        env.update(AGENTWORLD_CACHE=str(tmp / "cache"), HF_HUB_OFFLINE="1")
        where = run([str(venv / "bin/python"), "-c", "import agentworld_gym; print(agentworld_gym.__file__)"],
                    cwd=outside, env=env, capture_output=True, text=True).stdout.strip()
        if not where.startswith(str(venv)):
            print(f"wheel check: imported agentworld_gym from {where}, not from the fresh venv", file=sys.stderr)
            return 1
        agentworld = str(venv / "bin" / "agentworld")
        bench = run([agentworld, "bench", "--suite", "heldout", "--policy", "oracle", "--episodes", "20", "--json"],
                    cwd=outside, env=env, capture_output=True, text=True)
        result = json.loads(bench.stdout.strip().splitlines()[-1])
        overall = result["overall"]["all"]
        print(f"heldout suite from the wheel: {overall['n']} items, oracle success {overall['success_mean']:.2f}")
        if overall["n"] != 20 or overall["success_mean"] != 1.0:
            print("wheel check: expected the oracle to solve 20/20 held-out items", file=sys.stderr)
            return 1
        run([agentworld, "demo"], cwd=outside, env=env)
        print(f"wheel check passed: {wheel.name} installs and runs outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
