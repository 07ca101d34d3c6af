"""An offline first boot in the rehearsal root: stage.sh --wheels, then the staged firstboot.sh, in a network
namespace with no network. Every pip command must carry --no-index and look only in the staged wheels,
apt is never asked, the prebuilt CUDA llama-cpp-python wheel is installed (nothing compiled), and
`venusctl.sh status` reports the first boot's progress. The package tools are stand-ins (offline_shims.py).
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from deploy_support import JETSON, run
from offline_shims import write_shims

LLAMA = re.search(r'LLAMA_VERSION="([0-9.]+)"', (JETSON / "setup.sh").read_text()).group(1)
RELEASE = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"


def setup_list(name: str) -> list[str]:
    return re.search(rf'^{name}="(.*)"$', (JETSON / "setup.sh").read_text(), re.M).group(1).split()


def staged_wheels(folder: Path, leave_out: str = "", llama: str = "wheel") -> Path:
    """A wheel folder as wheels.sh --llama fills it (file names only: nothing here installs them for real)."""
    folder.mkdir()
    names = ["pip", "setuptools", "wheel", "onnxruntime-gpu", *setup_list("LLAMA_DEPS"), *setup_list("MODEL_PACKAGES"),
             *setup_list("MODEL_DEPS")]
    for spec in names:
        name = re.split(r"[<>=!\[ ]", spec)[0].replace("-", "_").lower()
        if name != leave_out:
            (folder / f"{name}-1.0-py3-none-any.whl").write_bytes(b"")
    if llama == "wheel":
        (folder / f"llama_cpp_python-{LLAMA}-cp310-cp310-linux_aarch64.whl").write_bytes(b"")
    elif llama == "source":
        (folder / f"llama_cpp_python-{LLAMA}.tar.gz").write_bytes(b"")
    return folder


def first_boot(rootfs: Path, tmp_path: Path, wheels: Path | None) -> tuple[subprocess.CompletedProcess, Path, Path]:
    staged = ["--wheels", str(wheels)] if wheels is not None else []
    r = run([str(JETSON / "stage.sh"), "--rootfs", str(rootfs), *staged, "--board", "orin-nx-8"])
    assert r.returncode == 0, r.stderr
    (rootfs / "etc" / "nv_tegra_release").write_text(RELEASE)
    shims = write_shims(tmp_path / "shims")
    pip_log, tool_log = tmp_path / "pip.log", tmp_path / "tools.log"
    pip_log.touch()
    tool_log.touch()
    opt = rootfs / "opt" / "venus-edge"
    env = {"PATH": f"{shims}:/usr/bin:/bin", "VENUS_PREFIX": str(opt), "VENUS_CONF": str(rootfs / "etc" / "venus-edge"),
           "VENUS_ROOT_PREFIX": str(rootfs), "VENUS_PIP_LOG": str(pip_log), "VENUS_TOOL_LOG": str(tool_log),
           "HOME": str(tmp_path / "home")}
    # unshare -rn: a user and network namespace with no interface up, so no fetch could succeed
    cmd = ["unshare", "-rn", str(opt / "jetson" / "firstboot.sh")]
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn (user and network namespaces) is not allowed here")
    return run(cmd, env=env), pip_log, tool_log


def test_an_offline_first_boot_installs_only_from_the_staged_wheels(rootfs, tmp_path) -> None:
    wheels = staged_wheels(tmp_path / "wheels")
    done, pip_log, tool_log = first_boot(rootfs, tmp_path, wheels)
    assert done.returncode == 0, done.stdout + done.stderr
    staged = str(rootfs / "opt" / "venus-edge" / "wheels")
    calls = [json.loads(line) for line in pip_log.read_text().splitlines()]
    installs = [c for c in calls if c[0] == "install"]
    assert len(installs) >= 6, calls
    for call in installs:  # no index, and only the staged folder
        assert "--no-index" in call and call[call.index("--find-links") + 1] == staged, call
        assert not any("index-url" in a for a in call), call
    assert not [c for c in calls if c[0] == "wheel"], "llama-cpp-python was compiled instead of taken prebuilt"
    assert any(a.endswith(f"llama_cpp_python-{LLAMA}-cp310-cp310-linux_aarch64.whl") for c in installs for a in c)
    tools = tool_log.read_text()
    assert "apt-get" not in tools and "sudo" not in tools
    assert "nm-online" not in tools  # staged wheels: the network is not waited for
    assert "--without-pip" in tools  # no ensurepip needed: pip came from its staged wheel
    assert "offline" in done.stderr and "nothing is fetched from the network" in done.stderr
    assert "libportaudio2" in done.stderr  # the apt packages it did not fetch are named

    progress = json.loads((rootfs / "opt" / "venus-edge" / "firstboot.json").read_text())
    assert progress["state"] == "done" and progress["offline"] is True
    status = run([str(JETSON / "venusctl.sh"), "status"], env={"VENUS_ROOT": str(rootfs)})
    assert "first boot: done" in status.stdout and "offline, from the staged wheels" in status.stdout


def test_a_first_boot_that_stops_says_where(rootfs, tmp_path) -> None:
    """A wheel missing from the folder (PyAV, for the embedded default): pip --no-index cannot find it, the
    first boot stops at that step, and status names it."""
    done, _, _ = first_boot(rootfs, tmp_path, staged_wheels(tmp_path / "wheels", leave_out="av"))
    assert done.returncode != 0
    assert "Could not find a version that satisfies the requirement av" in done.stderr
    status = run([str(JETSON / "venusctl.sh"), "status"], env={"VENUS_ROOT": str(rootfs)})
    assert "first boot: FAILED at step 5/7" in status.stdout


@pytest.mark.parametrize("llama, pip, said", [
    ("wheel", True, "compiles nothing"),
    ("source", True, "compiles it with CUDA (20-40 minutes)"),
    ("none", True, "has no llama-cpp-python"),
    ("wheel", False, "has no pip wheel"),
])
def test_stage_says_what_the_offline_first_boot_will_do(rootfs, tmp_path, llama, pip, said) -> None:
    wheels = staged_wheels(tmp_path / "wheels", leave_out="" if pip else "pip", llama=llama)
    r = run([str(JETSON / "stage.sh"), "--rootfs", str(rootfs), "--wheels", str(wheels)])
    assert said in r.stderr
    assert r.returncode == (0 if said.startswith("comp") else 1)
    assert (rootfs / "opt" / "venus-edge").exists() == (r.returncode == 0)  # a refusal stages nothing


def test_progress_page_while_the_first_boot_runs(tmp_path) -> None:
    state = tmp_path / "firstboot.json"
    assert run([str(JETSON / "progress.py"), "write", str(state), "4", "7", "llama-cpp-python with CUDA",
                "--offline"]).returncode == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([str(JETSON / "progress.py"), "serve", str(state), f"127.0.0.1:{port}"])
    try:
        for _ in range(50):
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the progress page never answered")
        assert "step 4/7, llama-cpp-python with CUDA" in page and 'value="4" max="7"' in page
        record = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/firstboot.json", timeout=2).read())
        assert record["state"] == "running" and record["offline"] is True
    finally:
        server.terminate()
        server.wait(timeout=10)


def fake_wheel(path: Path, members: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for m in members:
            z.writestr(m, b"")
    return path


def test_export_llama_takes_only_a_cuda_build(tmp_path) -> None:
    root = tmp_path / "root"
    cache = root / "opt" / "venus-edge" / "cache" / "wheels" / f"llama-cpp-python-{LLAMA}-abc"
    name = f"llama_cpp_python-{LLAMA}-cp310-cp310-linux_aarch64.whl"
    fake_wheel(cache / name, ["llama_cpp/__init__.py", "llama_cpp/lib/libggml-cpu.so"])
    env = {"VENUS_ROOT": str(root), "HOME": str(tmp_path / "home")}
    out = tmp_path / "out"
    cpu = run([str(JETSON / "venusctl.sh"), "export-llama", str(out)], env=env)
    assert cpu.returncode != 0 and "no CUDA backend" in cpu.stderr and not (out / name).exists()
    fake_wheel(cache / name, ["llama_cpp/__init__.py", "llama_cpp/lib/libggml-cuda.so"])
    good = run([str(JETSON / "venusctl.sh"), "export-llama", str(out)], env=env)
    assert good.returncode == 0, good.stderr
    assert (out / name).exists() and f"--llama {out / name}" in good.stdout


def test_wheels_sh_stages_the_exported_wheel_instead_of_the_source(tmp_path) -> None:
    if shutil.which("python3") is None:
        pytest.skip("no python3")
    wheel = fake_wheel(tmp_path / f"llama_cpp_python-{LLAMA}-cp310-cp310-linux_aarch64.whl", ["x"])
    import sys

    r = run([str(JETSON / "wheels.sh"), str(tmp_path / "w"), "--llama", str(wheel), "--dry-run"],
            env={"PYTHON": sys.executable})
    assert r.returncode == 0, r.stderr
    assert f"+ cp {wheel} " in r.stdout and "--no-binary=:all: llama-cpp-python" not in r.stdout
    assert " pip\n" in r.stdout  # pip itself, for a venv without ensurepip
    wrong = run([str(JETSON / "wheels.sh"), str(tmp_path / "w"), "--llama", str(tmp_path / "llama_cpp_python-0.1-x.whl"),
                 "--dry-run"], env={"PYTHON": sys.executable})
    assert wrong.returncode != 0 and "no file" in wrong.stderr


def test_the_first_boot_waits_for_the_network_only_without_staged_wheels(rootfs, tmp_path) -> None:
    unit = [line for line in (JETSON / "systemd" / "venus-firstboot.service").read_text().splitlines()
            if not line.startswith("#")]
    assert not [line for line in unit if "network" in line], unit  # an offline device would sit out the target's timeout at every boot
    done, _, tool_log = first_boot(rootfs, tmp_path, None)  # staged without wheels: installs from the network
    assert "nm-online -s -q --timeout=120" in tool_log.read_text()
    assert "venus-firstboot: no network after 120 s; installing anyway." in done.stderr
