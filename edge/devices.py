"""`venus-edge --list-devices`: microphones, speakers and cameras this machine can open; `DeviceError` when one
cannot be opened (one sentence: what was not found and what to do instead)."""
from __future__ import annotations

import glob
from pathlib import Path


class DeviceError(RuntimeError):
    pass


def list_devices() -> str:
    lines = ["Audio devices:"]
    try:
        import sounddevice as sd

        devs = sd.query_devices()
        if len(devs) == 0:
            lines.append("  none found (no sound card; use --mic FILE.wav and --speaker FILE.wav)")
        for i, d in enumerate(devs):
            kinds = [k for k, n in (("in", d["max_input_channels"]), ("out", d["max_output_channels"])) if n]
            lines.append(f"  {i:>3}  {d['name']}  [{'/'.join(kinds)}]  {int(d['default_samplerate'])} Hz")
    except (ImportError, OSError) as exc:
        lines.append(f"  unavailable: {exc} (install libportaudio2 and sounddevice)")
    lines.append("Cameras:")
    nodes = sorted(glob.glob("/dev/video*"))
    for node in nodes:
        name = Path(f"/sys/class/video4linux/{Path(node).name}/name")
        label = name.read_text().strip() if name.exists() else ""
        lines.append(f"  {node[len('/dev/video'):]:>3}  {node}  {label}  (--camera {node[len('/dev/video'):]})")
    if Path("/etc/nv_tegra_release").exists():
        lines.append("  CSI   --camera 'gst:nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1280,height=720,"
                     "framerate=30/1 ! nvvidconv ! video/x-raw,format=BGRx ! videoconvert ! video/x-raw,format=BGR ! "
                     "appsink drop=true max-buffers=1'")
    if not nodes:
        lines.append("  none found (use --camera VIDEO_FILE or --camera IMAGE_FOLDER)")
    return "\n".join(lines)
