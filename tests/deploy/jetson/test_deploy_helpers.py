"""venusctl.sh in a fake root, and the camera/sound names from devices.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from deploy_support import load_jetson, JETSON, run

devices = load_jetson("devices")

CTL = str(JETSON / "venusctl.sh")


def test_enable_installs_units_and_profile(tmp_path) -> None:
    r = run([CTL, "enable", "--board", "orin-agx-64"], env={"VENUS_ROOT": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    units = tmp_path / "etc" / "systemd" / "system"
    for u in ("venus-edge.service", "venus-power.service", "venus-firstboot.service"):
        assert (units / u).read_text() == (JETSON / "systemd" / u).read_text()
    conf = tmp_path / "etc" / "venus-edge"
    assert "VENUS_BOARD=orin-agx-64" in (conf / "profile.env").read_text()
    # switching the profile keeps the site settings
    (conf / "venus-edge.env").write_text("VENUS_ARGS=--camera 0\n")
    r = run([CTL, "profile", "orin-agx-32"], env={"VENUS_ROOT": str(tmp_path)})
    assert r.returncode == 0 and "VENUS_BOARD=orin-agx-32" in (conf / "profile.env").read_text()
    assert (conf / "venus-edge.env").read_text() == "VENUS_ARGS=--camera 0\n"


@pytest.mark.parametrize("args, words", [
    (["enable", "--board", "xavier-nx"], "no profile 'xavier-nx'; choose one of: orin-agx-32"),
    (["profile"], "profile needs a BOARD name"),
    (["enable", "--loud"], "unknown option '--loud'"),
    (["reboot"], "venusctl.sh enable"),
])
def test_bad_use_is_explained(tmp_path, args, words) -> None:
    r = run([CTL, *args], env={"VENUS_ROOT": str(tmp_path)})
    assert r.returncode != 0 and words in r.stderr


def test_enable_without_a_board_on_an_unknown_machine(tmp_path) -> None:
    # here there is no Jetson device tree, so the board cannot be detected
    if Path("/proc/device-tree/model").exists():
        pytest.skip("this machine has a device tree")
    r = run([CTL, "enable"], env={"VENUS_ROOT": str(tmp_path)})
    assert r.returncode == 1 and "cannot tell which Jetson this is; pass --board" in r.stderr


def test_csi_pipeline() -> None:
    spec = devices.csi_pipeline(sensor=1, width=1920, height=1080, fps=15)
    assert spec.startswith("gst:nvarguscamerasrc sensor-id=1 ! video/x-raw(memory:NVMM),width=1920,height=1080,")
    assert "framerate=15/1" in spec and spec.endswith("appsink drop=true max-buffers=1")
    with pytest.raises(ValueError, match="--fps must be a positive number"):
        devices.csi_pipeline(fps=0)


def test_alsa_cards_from_proc(tmp_path) -> None:
    cards = tmp_path / "cards"
    cards.write_text(" 0 [HDA            ]: tegra-hda - NVIDIA Jetson AGX Orin HDA\n"
                     "                      NVIDIA Jetson AGX Orin HDA at 0x3518000 irq 140\n"
                     " 1 [Device         ]: USB-Audio - USB PnP Sound Device\n"
                     "                      C-Media Electronics Inc. USB PnP Sound Device at usb-3610000.usb-2.1\n")
    assert devices.alsa_cards(cards) == [("hw:CARD=HDA,DEV=0", "tegra-hda - NVIDIA Jetson AGX Orin HDA"),
                                         ("hw:CARD=Device,DEV=0", "USB-Audio - USB PnP Sound Device")]
    assert devices.alsa_cards(tmp_path / "none") == []


def test_desktop_without_a_board(tmp_path) -> None:
    r = run([CTL, "enable", "--user", "--board", "none"], env={"VENUS_ROOT": str(tmp_path), "HOME": "/home/u"})
    assert r.returncode == 0, r.stderr
    conf = tmp_path / "home" / "u" / ".config" / "venus-edge"
    assert (conf / "venus-edge.env").is_file() and not (conf / "profile.env").exists()
    unit = tmp_path / "home" / "u" / ".config" / "systemd" / "user" / "venus-edge.service"
    assert unit.read_text() == (JETSON / "systemd" / "venus-edge-user.service").read_text()
