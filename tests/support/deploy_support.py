"""Paths and helpers shared by the Jetson deployment tests (a unique module name: other test folders have their own conftest)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JETSON = REPO / "deploy" / "jetson"


def run(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=120, **kw)


def make_rootfs(root: Path) -> Path:
    """A minimal stand-in for Linux_for_Tegra/rootfs: os-release and systemd's own units."""
    (root / "etc" / "systemd" / "system").mkdir(parents=True)
    (root / "etc" / "os-release").write_text('NAME="Ubuntu"\nVERSION_ID="22.04"\n')
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (root / "etc" / "group").write_text("root:x:0:\naudio:x:29:\nvideo:x:44:\n")
    system_units = Path("/usr/lib/systemd/system")
    if system_units.is_dir():  # systemd-analyze --root needs sysinit.target and friends
        shutil.copytree(system_units, root / "usr" / "lib" / "systemd" / "system", symlinks=True)
    return root


def load_jetson(name: str):
    """Import deploy/jetson/<name>.py under a unique module name (it is a script folder, not a package)."""
    import importlib.util
    import sys

    key = f"venus_jetson_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, JETSON / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
