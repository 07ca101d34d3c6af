"""stage.sh into a temporary fake rootfs and into a tarball; systemd-analyze verify on what was staged."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from deploy_support import JETSON, REPO, run

UNITS = ("venus-firstboot.service", "venus-power.service", "venus-edge.service")


def stage(*args: str) -> subprocess.CompletedProcess:
    return run([str(JETSON / "stage.sh"), *args])


def mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


def test_rootfs_layout(rootfs, bundle, tmp_path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "numpy-2.0-cp310-cp310-manylinux_2_17_aarch64.whl").write_bytes(b"PK")
    (wheels / "pip-24.0-py3-none-any.whl").write_bytes(b"PK")
    (wheels / "llama_cpp_python-0.3.36.tar.gz").write_bytes(b"")
    r = stage("--rootfs", str(rootfs), "--bundle", str(bundle), "--wheels", str(wheels), "--board", "orin-nx-16",
              "--force")  # the tiny bundle is not the board's plan
    assert r.returncode == 0, r.stderr
    opt = rootfs / "opt" / "venus-edge"
    # the source, the deploy scripts, the wheels and the bundle
    assert (opt / "src" / "pyproject.toml").read_bytes() == (REPO / "pyproject.toml").read_bytes()
    assert (opt / "src" / "edge" / "__init__.py").is_file() and (opt / "src" / "export" / "plan.py").is_file()
    assert not list((opt / "src").rglob("__pycache__"))
    assert (opt / "wheels" / "numpy-2.0-cp310-cp310-manylinux_2_17_aarch64.whl").is_file()
    assert (opt / "bundle" / "manifest.json").read_bytes() == (bundle / "manifest.json").read_bytes()
    assert (opt / "bundle" / "onnx" / "audio.fp32.onnx").read_bytes() == (bundle / "onnx" / "audio.fp32.onnx").read_bytes()
    for name in ("setup.sh", "detect.sh", "firstboot.sh", "power.sh", "venusctl.sh", "service.py",
                 "profiles.py"):
        assert mode(opt / "jetson" / name) == 0o755, name
    assert mode(opt / "jetson" / "profiles" / "orin-nx-16.env") == 0o644
    assert mode(opt / "bundle" / "onnx" / "audio.fp32.onnx") == 0o644 and mode(opt / "bundle" / "onnx") == 0o755
    # nothing group- or world-writable anywhere under /opt/venus-edge
    assert not [p for p in opt.rglob("*") if not p.is_symlink() and mode(p) & 0o022]
    # units, enabled the way systemctl enable would: absolute links in multi-user.target.wants
    wants = rootfs / "etc" / "systemd" / "system" / "multi-user.target.wants"
    for u in UNITS:
        assert mode(rootfs / "etc" / "systemd" / "system" / u) == 0o644
        link = wants / u
        assert link.is_symlink() and os.readlink(link) == f"/etc/systemd/system/{u}"
    # the board profile and the site settings
    profile = rootfs / "etc" / "venus-edge" / "profile.env"
    assert profile.read_text() == (JETSON / "profiles" / "orin-nx-16.env").read_text()
    assert "VENUS_ARGS=" in (rootfs / "etc" / "venus-edge" / "venus-edge.env").read_text()
    sysusers = [line for line in (rootfs / "usr" / "lib" / "sysusers.d" / "venus-edge.conf").read_text().splitlines()
                if line and not line.startswith("#")]
    assert sysusers[0].startswith("u venus ") and {"m venus audio", "m venus video"} <= set(sysusers)


def test_restaging_keeps_site_settings(rootfs) -> None:
    assert stage("--rootfs", str(rootfs)).returncode == 0
    site = rootfs / "etc" / "venus-edge" / "venus-edge.env"
    site.write_text("VENUS_ARGS=--mic hw:CARD=Device,DEV=0\n")
    assert stage("--rootfs", str(rootfs)).returncode == 0
    assert site.read_text() == "VENUS_ARGS=--mic hw:CARD=Device,DEV=0\n"
    # no --board: the first boot picks the profile
    assert not (rootfs / "etc" / "venus-edge" / "profile.env").exists()


def test_tarball(tmp_path, bundle) -> None:
    out = tmp_path / "stage.tar.gz"
    r = stage("--tarball", str(out), "--bundle", str(bundle), "--board", "orin-agx-64", "--force")
    assert r.returncode == 0, r.stderr
    assert "systemctl daemon-reload" in r.stdout
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
    # only our own paths: unpacking with -p at / must not touch the modes of /, /etc or /usr
    assert not {".", "./", "etc", "etc/", "usr", "usr/lib", "opt"} & set(members)
    assert all(m.uid == 0 and m.gid == 0 for m in members.values())
    assert "etc/venus-edge/profile.env" in members
    assert "etc/venus-edge/venus-edge.env" not in members  # a running device keeps its own
    assert members["opt/venus-edge/jetson/setup.sh"].mode & 0o777 == 0o755
    assert members["opt/venus-edge/bundle/onnx/audio.fp32.onnx"].mode & 0o777 == 0o644
    link = members["etc/systemd/system/multi-user.target.wants/venus-edge.service"]
    assert link.issym() and link.linkname == "/etc/systemd/system/venus-edge.service"


@pytest.mark.parametrize("args, words", [
    (["--board", "orin-nx-16"], "give --rootfs DIR"),
    (["--rootfs", "/nonexistent-rootfs"], "does not look like a root filesystem"),
    (["--tarball", "x.tgz", "--board", "orin-tx2"], "no profile 'orin-tx2'; choose one of: orin-agx-32"),
    (["--tarball", "x.tgz", "--bundle", "/nonexistent-bundle"], "is not a directory"),
    (["--tarball", "x.tgz", "--rootfs", "/tmp"], "not both"),
    (["--colour"], "unknown option"),
])
def test_bad_arguments_get_one_sentence(args, words, tmp_path) -> None:
    r = run([str(JETSON / "stage.sh"), *args], cwd=tmp_path)
    assert r.returncode != 0
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _systemd_analyze() -> str:
    exe = shutil.which("systemd-analyze")
    if exe is None:
        pytest.skip("systemd-analyze is not installed (apt package systemd; scripts/setup.sh installs it)")
    if not Path("/usr/lib/systemd/system/sysinit.target").exists():
        pytest.skip("systemd's own units are missing (/usr/lib/systemd/system), so --root verification cannot run")
    return exe


def _fake_venv(root: Path) -> None:
    """The venv exists only after the first boot; an executable stands in for its python."""
    py = root / "opt" / "venus-edge" / "venv" / "bin" / "python"
    py.parent.mkdir(parents=True, exist_ok=True)
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)


def verify(root: Path, units: list[str], *, user_home: Path | None = None) -> subprocess.CompletedProcess:
    env = {"SYSTEMD_LOG_LEVEL": "notice"}
    if user_home is None:
        cmd = [_systemd_analyze(), "verify", f"--root={root}", "--man=no", *units]
        return run(cmd, env=env, cwd=root / "etc" / "systemd" / "system")
    # user units: %h must point into the fake root; --root does not support --user
    rt = user_home / "run"
    rt.mkdir(mode=0o700, exist_ok=True)
    env.update(HOME=str(user_home), XDG_RUNTIME_DIR=str(rt), XDG_CONFIG_HOME=str(user_home / ".config"))
    return run([_systemd_analyze(), "verify", "--user", "--man=no", *units], env=env,
               cwd=user_home / ".config" / "systemd" / "user")


def test_staged_units_verify(rootfs) -> None:
    _systemd_analyze()
    assert stage("--rootfs", str(rootfs), "--board", "orin-nano-8").returncode == 0
    _fake_venv(rootfs)
    r = verify(rootfs, list(UNITS))
    # systemd-analyze reports unparsable settings as warnings with exit 0: any output is a failure
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


def test_verify_catches_faults(rootfs) -> None:
    """The check has teeth: a bad setting and a missing program are both reported."""
    _systemd_analyze()
    assert stage("--rootfs", str(rootfs)).returncode == 0
    _fake_venv(rootfs)
    unit_dir = rootfs / "etc" / "systemd" / "system"
    text = (unit_dir / "venus-edge.service").read_text()
    (unit_dir / "bad1.service").write_text(text.replace("WatchdogSec=30", "WatchdogSec=thirty"))
    (unit_dir / "bad2.service").write_text(text.replace("/opt/venus-edge/venv/bin/python", "/opt/none/python"))
    for bad in ("bad1.service", "bad2.service"):
        r = verify(rootfs, [bad])
        assert r.returncode != 0 or (r.stdout + r.stderr).strip(), bad


def test_user_unit_verifies(tmp_path) -> None:
    _systemd_analyze()
    root = tmp_path / "root"
    r = run([str(JETSON / "venusctl.sh"), "enable", "--user", "--board", "orin-agx-32"],
            env={"VENUS_ROOT": str(root), "HOME": "/home/u"})
    assert r.returncode == 0, r.stderr
    home = root / "home" / "u"
    assert (home / ".config" / "venus-edge" / "profile.env").is_file()
    assert (home / ".local" / "share" / "venus-edge" / "jetson" / "service.py").is_file()
    py = home / ".local" / "share" / "venus-edge" / "venv" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)
    r = verify(root, ["venus-edge.service"], user_home=home)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


def test_staged_service_user_is_valid_for_sysusers(rootfs) -> None:
    """systemd-sysusers, run on the staged rootfs, would create the user and the missing group."""
    exe = shutil.which("systemd-sysusers")
    if exe is None:
        pytest.skip("systemd-sysusers is not installed (apt package systemd)")
    assert stage("--rootfs", str(rootfs)).returncode == 0
    r = run([exe, f"--root={rootfs}", "--dry-run", "venus-edge.conf"])
    assert r.returncode == 0, r.stderr
    assert "Creating user 'venus'" in r.stdout + r.stderr and "Creating group 'render'" in r.stdout + r.stderr
    (rootfs / "usr" / "lib" / "sysusers.d" / "broken.conf").write_text("q venus\n")
    assert run([exe, f"--root={rootfs}", "--dry-run", "broken.conf"]).returncode != 0  # the check has teeth


def unit_settings(name: str) -> dict[str, list[str]]:
    """KEY -> every value it is given (systemd allows a key more than once)."""
    out: dict[str, list[str]] = {}
    for line in (JETSON / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def test_supervisor_unit_keeps_the_promises() -> None:
    u = unit_settings("venus-edge.service")
    one = {k: v[-1] for k, v in u.items()}
    assert (one["Type"], one["NotifyAccess"], one["Restart"]) == ("notify", "all", "always")
    assert int(one["WatchdogSec"]) > 0
    # a refused profile exits with the code the unit will not restart
    from deploy_support import load_jetson
    assert one["RestartPreventExitStatus"] == str(load_jetson("service").EX_CONFIG)
    assert {"audio", "video"} <= set(one["SupplementaryGroups"].split())  # ALSA /dev/snd, /dev/video*, GPU
    assert one.get("PrivateDevices", "no") == "no" and one.get("DevicePolicy", "auto") == "auto"
    assert "-/tmp/argus_socket" in u["BindPaths"]  # CSI cameras through nvargus-daemon
    assert one["StandardOutput"] == one["StandardError"] == "journal"
    env = dict(kv.split("=", 1) for kv in one["Environment"].split())
    assert env["XDG_RUNTIME_DIR"] == "/run/" + one["RuntimeDirectory"]  # the runtime's private IPC sockets
    assert env["HOME"] == env["VENUS_EDGE_CACHE"].rsplit("/", 1)[0] == "/var/lib/" + one["StateDirectory"]
    assert one["ExecStart"].split() == ["/opt/venus-edge/venv/bin/python", "/opt/venus-edge/jetson/service.py"]


def test_user_unit_waits_for_the_sound_server() -> None:
    u = {k: v[-1] for k, v in unit_settings("venus-edge-user.service").items()}
    assert "pipewire-pulse.service" in u["After"] and "pulseaudio.service" in u["After"]
    assert u["WantedBy"] == "default.target" and u["Restart"] == "always" and u["Type"] == "notify"
    assert "User" not in u  # a user service runs as the desktop user, who owns the sound session


def test_wheel_folder_for_offline_devices(tmp_path) -> None:
    import tomllib

    r = run([str(JETSON / "wheels.sh"), str(tmp_path / "w"), "--dry-run"])
    assert r.returncode == 0, r.stderr
    cmds = [line[2:] for line in r.stdout.splitlines() if line.startswith("+ ")]
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    binaries = cmds[1]
    for dep in deps:
        if dep.startswith("llama-cpp-python"):
            assert dep not in binaries  # compiled on the device for SM 8.7, never a downloaded wheel
        else:
            assert dep in binaries
    for flag in ("--platform manylinux2014_aarch64", "--python-version 3.10", "--abi cp310", "numpy<2",
                 "diskcache>=5.6", "jinja2>=2.11"):
        assert flag in binaries
    assert "--index-url https://pypi.jetson-ai-lab.io/jp6/cu126 onnxruntime-gpu" in cmds[2]
    setup = (JETSON / "setup.sh").read_text()
    assert cmds[3].endswith("--no-binary=:all: llama-cpp-python==0.3.36") and 'LLAMA_VERSION="0.3.36"' in setup
    assert "scikit-build-core" in cmds[4] and "tomli" in cmds[4]
    assert "setuptools>=69" in cmds[4]  # venus-edge's own build backend (pyproject build-system)


@pytest.mark.parametrize("script, args", [("wheels.sh", []), ("wheels.sh", ["a", "b"]), ("stage.sh", []),
                                          ("venusctl.sh", ["profile"])])
def test_refusals_are_one_clean_sentence(script, args, tmp_path) -> None:
    r = run([str(JETSON / script), *args], env={"VENUS_ROOT": str(tmp_path)})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].endswith("."), r.stderr
