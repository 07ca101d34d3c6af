"""setup.sh's detection against recorded /etc/nv_tegra_release, device-tree and meminfo contents."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from deploy_support import JETSON, run

# First lines of /etc/nv_tegra_release as L4T writes them.
R36_4_3 = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025"
R36_4_0 = "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: Fri Sep 13 04:36:44 UTC 2024"
R36_3_0 = "# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64, DATE: Mon May  6 17:34:21 UTC 2024"
R36_2_0 = "# R36 (release), REVISION: 2.0, GCID: 34956989, BOARD: generic, EABI: aarch64, DATE: Tue Dec 19 05:24:59 UTC 2023"
R35_4_1 = "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023"
R32_7_4 = "# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t210ref, EABI: aarch64, DATE: Fri Jun  9 04:25:08 UTC 2023"
R38_2_0 = "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: Fri Aug 22 00:00:00 UTC 2025"


def fake_root(tmp: Path, release: str | None, model: str | None = None, compatible: list[str] | None = None,
              mem_kb: int | None = None, nvpmodel: str | None = None) -> Path:
    root = tmp / "root"
    (root / "etc").mkdir(parents=True)
    (root / "proc" / "device-tree").mkdir(parents=True)
    if release is not None:
        (root / "etc" / "nv_tegra_release").write_text(release + "\nINSTALL_TYPE=\n")
    if model is not None:  # device-tree strings end in NUL
        (root / "proc" / "device-tree" / "model").write_bytes(model.encode() + b"\0")
    if compatible is not None:
        (root / "proc" / "device-tree" / "compatible").write_bytes(b"".join(c.encode() + b"\0" for c in compatible))
    if mem_kb is not None:
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {mem_kb} kB\nMemFree:         1000 kB\n")
    if nvpmodel is not None:
        (root / "etc" / "nvpmodel.conf").write_text(nvpmodel)
    return root


def detect(root: Path) -> tuple[int, dict[str, str], str]:
    r = run([str(JETSON / "detect.sh"), str(root)])
    values = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    return r.returncode, values, r.stderr


@pytest.mark.parametrize("release, model, compatible, mem_kb, board", [
    (R36_4_3, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
     ["nvidia,p3768-0000+p3767-0005-super", "nvidia,p3767-0005", "nvidia,tegra234"], 7_633_000, "orin-nano-8-super"),
    (R36_4_0, "NVIDIA Jetson Orin Nano Developer Kit",
     ["nvidia,p3768-0000+p3767-0005", "nvidia,p3767-0005", "nvidia,tegra234"], 7_633_000, "orin-nano-8"),
    (R36_4_0, "NVIDIA Jetson AGX Orin Developer Kit",
     ["nvidia,p3737-0000+p3701-0005", "nvidia,p3701-0005", "nvidia,tegra234"], 64_335_000, "orin-agx-64"),
    (R36_4_0, "NVIDIA Jetson AGX Orin", ["nvidia,p3737-0000+p3701-0004", "nvidia,tegra234"], 31_990_000,
     "orin-agx-32"),
    (R36_3_0, "NVIDIA Orin NX Developer Kit", ["nvidia,p3768-0000+p3767-0001", "nvidia,tegra234"], 7_633_000,
     "orin-nx-8"),
    (R36_4_0, "NVIDIA Jetson Orin Nano 4GB", ["nvidia,p3768-0000+p3767-0004", "nvidia,tegra234"], 3_560_000,
     "orin-nano-4"),
    # custom carrier boards without the module part number: model string plus memory size
    (R36_4_0, "Acme Robotics Jetson Orin NX carrier", ["acme,brain", "nvidia,tegra234"], 15_990_000, "orin-nx-16"),
    (R36_4_0, "Acme Robotics Jetson Orin NX carrier", ["acme,brain", "nvidia,tegra234"], 7_633_000, "orin-nx-8"),
    (R36_4_0, "Acme AGX Orin box", ["acme,box"], 64_335_000, "orin-agx-64"),
])
def test_boards(tmp_path, release, model, compatible, mem_kb, board) -> None:
    rc, v, err = detect(fake_root(tmp_path, release, model, compatible, mem_kb))
    assert rc == 0, err
    assert v["BOARD"] == board
    assert v["MODULE"] == model


def test_release_and_stack(tmp_path) -> None:
    rc, v, _ = detect(fake_root(tmp_path, R36_4_3, "NVIDIA Jetson Orin Nano Developer Kit", ["nvidia,p3767-0003"]))
    assert rc == 0
    assert (v["L4T_RELEASE"], v["CUDA"], v["TENSORRT"]) == ("36.4.3", "12.6", "10.3")
    assert v["PIP_INDEX"].endswith("/jp6/cu126")


def test_jetpack_6_0_uses_the_cu122_index(tmp_path) -> None:
    rc, v, _ = detect(fake_root(tmp_path, R36_3_0, "NVIDIA Jetson AGX Orin", ["nvidia,p3701-0005"]))
    assert rc == 0 and v["L4T_RELEASE"] == "36.3.0" and v["TENSORRT"] == "8.6"
    assert v["PIP_INDEX"].endswith("/jp6/cu122")


def test_super_mode_from_nvpmodel_conf(tmp_path) -> None:
    conf = "< POWER_MODEL ID=0 NAME=15W >\n< POWER_MODEL ID=1 NAME=25W >\n< POWER_MODEL ID=2 NAME=MAXN_SUPER >\n"
    rc, v, _ = detect(fake_root(tmp_path, R36_4_3, "NVIDIA Jetson Orin Nano", ["nvidia,p3767-0003"], nvpmodel=conf))
    assert rc == 0 and v["BOARD"] == "orin-nano-8-super"


@pytest.mark.parametrize("release, words", [
    (R35_4_1, "JetPack 5"),
    (R32_7_4, "not an Orin"),
    (R38_2_0, "JetPack 7"),
    (R36_2_0, "preview"),
    ("garbage in the release file", "does not name an L4T release"),
    (None, "not a Jetson"),
])
def test_unsupported_releases_get_one_sentence(tmp_path, release, words) -> None:
    rc, _, err = detect(fake_root(tmp_path, release, "NVIDIA Jetson AGX Orin", ["nvidia,p3701-0005"]))
    assert rc == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].endswith(".")


def test_a_module_without_a_profile_is_refused(tmp_path) -> None:
    rc, v, err = detect(fake_root(tmp_path, R36_4_0, "Raspberry Pi 5 Model B Rev 1.0", ["raspberrypi,5-model-b"]))
    assert rc == 3 and v["BOARD"] == ""
    assert "not an Orin" in err


def test_setup_detect_only_uses_the_same_logic(tmp_path) -> None:
    root = fake_root(tmp_path, R36_4_0, "NVIDIA Jetson AGX Orin", ["nvidia,p3701-0005"])
    r = run([str(JETSON / "setup.sh"), "--detect-only"], env={"VENUS_ROOT_PREFIX": str(root)})
    assert r.returncode == 0 and "board orin-agx-64" in r.stderr and "TensorRT 10.3" in r.stderr
    bad = fake_root(tmp_path / "b", R35_4_1, "NVIDIA Jetson AGX Orin", ["nvidia,p3701-0005"])
    r = run([str(JETSON / "setup.sh"), "--detect-only"], env={"VENUS_ROOT_PREFIX": str(bad)})
    assert r.returncode == 3 and "JetPack 5" in r.stderr
    r = run([str(JETSON / "setup.sh"), "--frobnicate"])
    assert r.returncode == 2 and "unknown option" in r.stderr


def test_image_builds_name_their_release(tmp_path) -> None:
    root = fake_root(tmp_path, None)  # no release file, no device tree: a container build
    (root / "proc" / "device-tree").rmdir()
    r = run([str(JETSON / "detect.sh"), str(root)], env={"VENUS_L4T_RELEASE": "36.4.0"})
    assert r.returncode == 0 and "TENSORRT=10.3" in r.stdout and "BOARD=\n" in r.stdout


NVPMODEL_NANO = """< PARAM TYPE=FILE NAME=CPU_ONLINE >
CORE_0 /sys/devices/system/cpu/cpu0/online
< POWER_MODEL ID=0 NAME=15W >
CPU_ONLINE CORE_0 1
< POWER_MODEL ID=1 NAME=7W >
CPU_ONLINE CORE_0 1
< POWER_MODEL ID=2 NAME=MAXN_SUPER >
< PM_CONFIG DEFAULT=2 >
"""


@pytest.mark.parametrize("name, mode_id", [("MAXN_SUPER", "2"), ("15W", "0"), ("7w", "1")])
def test_power_mode_ids_come_from_nvpmodel_conf(tmp_path, name, mode_id) -> None:
    conf = tmp_path / "nvpmodel.conf"
    conf.write_text(NVPMODEL_NANO)
    r = run([str(JETSON / "power.sh"), "mode-id", name, str(conf)])
    assert r.returncode == 0 and r.stdout.strip() == mode_id


def test_unknown_power_mode_lists_the_ones_there(tmp_path) -> None:
    conf = tmp_path / "nvpmodel.conf"
    conf.write_text(NVPMODEL_NANO)
    r = run([str(JETSON / "power.sh"), "mode-id", "MAXN", str(conf)])
    assert r.returncode == 1
    assert "modes there: 15W 7W MAXN_SUPER" in r.stderr and "CPU_ONLINE" not in r.stderr


def _stub(bin_dir: Path, name: str, body: str) -> None:
    exe = bin_dir / name
    exe.write_text(f"#!/usr/bin/env bash\necho \"{name} $*\" >> \"{bin_dir}/calls\"\n{body}\n")
    exe.chmod(0o755)


def test_power_apply_sets_the_mode_and_clocks(tmp_path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    conf = tmp_path / "nvpmodel.conf"
    conf.write_text(NVPMODEL_NANO)
    _stub(bin_dir, "nvpmodel", 'if [ "$1" = -q ]; then printf "NV Power Mode: 15W\\n0\\n"; fi')
    _stub(bin_dir, "jetson_clocks", 'if [ "$1" = --store ]; then echo saved > "$2"; fi')
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "VENUS_NVPMODEL_CONF": str(conf),
           "VENUS_STATE_DIR": str(tmp_path / "state"), "VENUS_NVPMODEL": "MAXN_SUPER", "VENUS_SWAP_GB": "0"}
    r = run([str(JETSON / "power.sh"), "apply"], env=env)
    assert r.returncode == 0, r.stderr
    calls = (bin_dir / "calls").read_text().splitlines()
    assert "nvpmodel -m 2" in calls  # MAXN_SUPER is id 2 in this module's nvpmodel.conf
    assert calls[-2:] == [f"jetson_clocks --store {tmp_path / 'state' / 'clocks.conf'}", "jetson_clocks "]
    r = run([str(JETSON / "power.sh"), "restore"], env=env)
    assert r.returncode == 0
    assert (bin_dir / "calls").read_text().splitlines()[-1] == f"jetson_clocks --restore {tmp_path / 'state' / 'clocks.conf'}"
    # already in the wanted mode: nvpmodel is only queried
    (bin_dir / "calls").unlink()
    r = run([str(JETSON / "power.sh"), "apply"], env={**env, "VENUS_NVPMODEL": "15W"})
    assert r.returncode == 0 and not any(c.startswith("nvpmodel -m") for c in (bin_dir / "calls").read_text().splitlines())


def test_setup_dry_run_shows_the_jetson_builds(tmp_path) -> None:
    root = fake_root(tmp_path, R36_4_0, "NVIDIA Jetson Orin NX Developer Kit", ["nvidia,p3767-0000"])
    env = {"VENUS_ROOT_PREFIX": str(root), "VENUS_EDGE_CACHE": str(tmp_path / "cache")}
    r = run([str(JETSON / "setup.sh"), "--dry-run", "--prefix", str(tmp_path / "opt")], env=env)
    assert r.returncode == 0, r.stderr
    cmds = [line[2:] for line in r.stdout.splitlines() if line.startswith("+ ")]
    venv = tmp_path / "opt" / "venv"
    assert f"python3 -m venv --system-site-packages {venv}" in cmds
    ort = cmds.index(next(c for c in cmds if c.endswith(" onnxruntime-gpu")))
    assert cmds[ort - 1] == f"{venv}/bin/pip uninstall -y -q onnxruntime"  # never both builds in one venv
    assert "--extra-index-url https://pypi.jetson-ai-lab.io/jp6/cu126" in cmds[ort]
    build = next(c for c in cmds if "/bin/pip wheel " in c)
    assert "CMAKE_ARGS=-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=87" in build and "--no-cache-dir" in build
    assert "CUDACXX=/usr/local/cuda/bin/nvcc" in build and "llama-cpp-python==0.3.36" in build
    after = cmds[cmds.index(build) + 3:]  # rm, mv, then the wheel without dependencies, then its own
    assert "--no-deps --force-reinstall" in after[0] and "diskcache>=5.6" in after[1] and "jinja2>=2.11" in after[1]
    assert all("numpy<2" not in c for c in cmds) and all("-c " in c for c in cmds if " install -q -c" in c)
    # offline: a staged wheel folder replaces every index
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "venus_edge-0.1.0-py3-none-any.whl").write_bytes(b"PK")
    (wheels / "pip-24.0-py3-none-any.whl").write_bytes(b"PK")  # the venv gets pip from it (no ensurepip needed)
    r = run([str(JETSON / "setup.sh"), "--dry-run", "--prefix", str(tmp_path / "opt"), "--wheels", str(wheels)],
            env={**env, "VENUS_JETSON_PIP_INDEX": "https://example.invalid/jp6"})
    pips = [c for c in r.stdout.splitlines() if "pip install" in c and "-c " in c]
    assert pips and all(f"--no-index --find-links {wheels}" in c for c in pips)
    assert pips[-1].endswith("venus-edge[jetson]") and "example.invalid" not in r.stdout
    assert "apt-get" not in r.stdout and f"{wheels}/pip-24.0-py3-none-any.whl/pip install" in r.stdout


def test_power_mode_list_takes_the_first_present(tmp_path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    conf = tmp_path / "nvpmodel.conf"
    conf.write_text(NVPMODEL_NANO)  # JetPack 6.2: no MAXN, but MAXN_SUPER
    _stub(bin_dir, "nvpmodel", 'if [ "$1" = -q ]; then printf "NV Power Mode: 15W\\n0\\n"; fi')
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "VENUS_NVPMODEL_CONF": str(conf),
           "VENUS_STATE_DIR": str(tmp_path / "state"), "VENUS_NVPMODEL": "MAXN,MAXN_SUPER", "VENUS_SWAP_GB": "0"}
    r = run([str(JETSON / "power.sh"), "apply"], env=env)
    assert r.returncode == 0 and "nvpmodel -m 2" in (bin_dir / "calls").read_text()
    r = run([str(JETSON / "power.sh"), "apply"], env={**env, "VENUS_NVPMODEL": "MAXN,40W"})
    assert r.returncode == 0 and "power mode 'MAXN' is not in" in r.stderr  # said once, the service goes on
    assert (bin_dir / "calls").read_text().count("nvpmodel -m") == 1


def test_setup_adds_jetpack_packages_from_nvidias_apt_source(tmp_path) -> None:
    root = fake_root(tmp_path, R36_4_0, "NVIDIA Jetson AGX Orin", ["nvidia,p3701-0005"])
    (root / "etc" / "apt" / "sources.list.d").mkdir(parents=True)
    (root / "etc" / "apt" / "sources.list.d" / "nvidia-l4t-apt-source.list").write_text(
        "deb https://repo.download.nvidia.com/jetson/common r36.4 main\n")
    r = run([str(JETSON / "setup.sh"), "--dry-run", "--prefix", str(tmp_path / "opt")],
            env={"VENUS_ROOT_PREFIX": str(root), "VENUS_EDGE_CACHE": str(tmp_path / "cache")})
    install = next(line for line in r.stdout.splitlines() if "apt-get install" in line)
    assert "python3-libnvinfer" in install and "nvidia-opencv" in install
