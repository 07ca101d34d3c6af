#!/usr/bin/env python3
"""Jetson camera and sound names in the form `venus-edge` takes them.

    devices.py csi [--sensor 0] [--width 1280] [--height 720] [--fps 30]   a --camera "gst:..." pipeline
    devices.py alsa                                                          ALSA cards as --mic/--speaker names
"""
from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path


def csi_pipeline(sensor: int = 0, width: int = 1280, height: int = 720, fps: int = 30) -> str:
    """nvarguscamerasrc (ISP in hardware) -> BGR frames for OpenCV's GStreamer backend.

    appsink drops old frames so the runtime always reads the newest one.
    """
    for name, value in (("sensor", sensor), ("width", width), ("height", height), ("fps", fps)):
        if value < 0 or (name != "sensor" and value == 0):
            raise ValueError(f"--{name} must be a positive number, not {value}")
    return (f"gst:nvarguscamerasrc sensor-id={sensor} ! "
            f"video/x-raw(memory:NVMM),width={width},height={height},framerate={fps}/1 ! "
            "nvvidconv ! video/x-raw,format=BGRx ! videoconvert ! video/x-raw,format=BGR ! "
            "appsink drop=true max-buffers=1")


def alsa_cards(cards: Path = Path("/proc/asound/cards")) -> list[tuple[str, str]]:
    """(ALSA name for --mic/--speaker, description) per sound card, e.g. ('hw:CARD=Device,DEV=0', 'USB Audio')."""
    if not cards.is_file():
        return []
    found = []
    for line in cards.read_text().splitlines():
        m = re.match(r"\s*(\d+)\s+\[(\S+)\s*\]:\s*(.*)", line)
        if m:
            found.append((f"hw:CARD={m.group(2)},DEV=0", m.group(3).strip()))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("csi")
    c.add_argument("--sensor", type=int, default=0)
    c.add_argument("--width", type=int, default=1280)
    c.add_argument("--height", type=int, default=720)
    c.add_argument("--fps", type=int, default=30)
    sub.add_parser("alsa")
    a = ap.parse_args(argv)
    if a.cmd == "csi":
        try:
            print("--camera " + shlex.quote(csi_pipeline(a.sensor, a.width, a.height, a.fps)))
        except ValueError as e:
            print(f"devices.py: {e}", file=sys.stderr)
            return 2
        return 0
    cards = alsa_cards()
    if not cards:
        print("no ALSA sound cards (plug in a USB microphone/speaker; the Jetson devkits have none on board).")
        return 1
    for name, desc in cards:
        print(f"{name:<32} {desc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
