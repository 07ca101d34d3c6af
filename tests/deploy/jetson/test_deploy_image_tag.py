"""The container's base tag comes from the device's L4T release: detect.sh --tag, and image.sh, which
builds natively on a Jetson and with buildx for linux/arm64 elsewhere (checked here with --dry-run)."""
from __future__ import annotations

import re

import pytest

from deploy_support import JETSON, REPO, run

RELEASE = "# R36 (release), REVISION: {rev}, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"


def device_root(tmp_path, revision: str):
    (tmp_path / "etc").mkdir(parents=True)
    (tmp_path / "etc" / "nv_tegra_release").write_text(RELEASE.format(rev=revision))
    return tmp_path


@pytest.mark.parametrize("revision, tag", [("4.3", "r36.4.0"), ("4.4", "r36.4.0"), ("4.0", "r36.4.0"), ("3.0", "r36.3.0")])
def test_the_tag_follows_the_release(tmp_path, revision, tag) -> None:
    root = device_root(tmp_path, revision)
    r = run([str(JETSON / "detect.sh"), "--tag", str(root)])
    assert (r.returncode, r.stdout.strip()) == (0, tag)
    assert f"L4T_TAG={tag}" in run([str(JETSON / "detect.sh"), str(root)]).stdout


@pytest.mark.parametrize("revision", ["2.0"])  # a JetPack 6 preview
def test_an_unsupported_release_gets_no_tag(tmp_path, revision) -> None:
    r = run([str(JETSON / "detect.sh"), "--tag", str(device_root(tmp_path, revision))])
    assert r.returncode == 3 and r.stdout == "" and "JetPack 6.1 or newer" in r.stderr


def test_on_a_jetson_the_image_is_built_natively_for_its_release(tmp_path) -> None:
    root = device_root(tmp_path, "4.3")
    r = run([str(JETSON / "image.sh"), "--dry-run"], env={"VENUS_ROOT_PREFIX": str(root), "VENUS_ARCH": "aarch64"})
    assert r.returncode == 0, r.stderr
    [cmd] = [line[2:] for line in r.stdout.splitlines() if line.startswith("+ ")]
    assert cmd.startswith("docker build ") and "buildx" not in cmd
    assert "--build-arg L4T_TAG=r36.4.0" in cmd and "-t venus-edge:r36.4.0" in cmd and cmd.endswith(str(REPO))


def test_on_a_workstation_buildx_builds_for_arm64_with_the_staged_wheels(tmp_path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    r = run([str(JETSON / "image.sh"), "--release", "R36.3.0", "--wheels", str(wheels), "--dry-run"],
            env={"VENUS_ARCH": "x86_64"})
    assert r.returncode == 0, r.stderr
    cmd = r.stdout.splitlines()[0]
    assert cmd.startswith("+ docker buildx build --platform linux/arm64 --load ")
    assert "--build-arg L4T_TAG=r36.3.0" in cmd and f"--build-context wheels={wheels}" in cmd
    # without wheels the compile under emulation is announced
    slow = run([str(JETSON / "image.sh"), "--release", "36.4.3", "--dry-run"], env={"VENUS_ARCH": "x86_64"})
    assert "compiled under emulation" in slow.stderr


def test_a_workstation_without_a_release_is_told_to_give_one(tmp_path) -> None:
    r = run([str(JETSON / "image.sh"), "--dry-run"], env={"VENUS_ROOT_PREFIX": str(tmp_path), "VENUS_ARCH": "x86_64"})
    assert r.returncode == 2 and "--release" in r.stderr
    old = run([str(JETSON / "image.sh"), "--release", "35.4.1", "--dry-run"], env={"VENUS_ARCH": "x86_64"})
    assert old.returncode == 3 and "JetPack 5" in old.stderr and "docker" not in old.stdout


def test_the_dockerfile_takes_the_tag_and_the_wheels_context() -> None:
    text = (JETSON / "Dockerfile").read_text()
    assert re.search(r"^FROM nvcr.io/nvidia/l4t-jetpack:\$\{L4T_TAG\}$", text, re.M)
    assert re.search(r"^FROM scratch AS wheels$", text, re.M) and "--mount=type=bind,from=wheels,target=/wheels" in text
