"""`venus-edge --list-devices`: microphones, speakers and cameras this machine can open; `DeviceError` when one
cannot be opened (one sentence: what was not found and what to do instead)."""
from __future__ import annotations

import glob
from pathlib import Path
from typing import Any


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


def sound_device(device: str | int | None, kind: str) -> tuple[Any, dict]:
    """PortAudio's `kind` ("input"/"output") device by this name (None: the default), as (sounddevice, its info);
    `DeviceError` in one sentence when the sound library or the device is missing."""
    flag, hint = (("--mic", "pass a file with --mic FILE.wav") if kind == "input" else
                  ("--speaker", "write to a file with --speaker FILE.wav"))
    what = "microphone" if kind == "input" else "speaker"
    try:
        import sounddevice as sd
    except (ImportError, OSError) as exc:
        raise DeviceError(f"cannot use a {what}: the sound library is missing ({exc}); install libportaudio2 "
                          f"and `pip install sounddevice`, or {hint}") from None
    try:
        info = sd.query_devices(device, kind)
    except Exception:
        name = f"default {what}" if device is None else f"{what} {device!r}"
        raise DeviceError(f"no {name} was found ({flag}); list devices with `venus-edge --list-devices` "
                          f"or {hint}") from None
    return sd, info


def check_devices(mic: str | None, speaker: str | None, camera: str | None, mic_is_file: bool) -> None:
    """The session's devices, looked up before any model loads; `DeviceError` names the first one missing."""
    if not mic_is_file:
        sound_device(None if mic in (None, "", "default") else int(mic) if str(mic).isdigit() else mic, "input")
    if speaker not in (None, "", "null") and not speaker.lower().endswith((".wav", ".flac")):
        if "/" in speaker:  # a path, but not one a reply can be written to as audio
            raise DeviceError(f"--speaker {speaker} is neither a .wav/.flac file to write nor a sound device; "
                              "write to a file with --speaker FILE.wav or name a device from --list-devices")
        sound_device(None if speaker == "default" else int(speaker) if speaker.isdigit() else speaker, "output")
    if camera is not None and camera.isdigit() and Path("/sys/class/video4linux").parent.exists() \
            and not Path(f"/dev/video{camera}").exists():
        raise DeviceError(f"no camera {camera} was found (/dev/video{camera} does not exist); list devices with "
                          "`venus-edge --list-devices`, or pass a video file or image folder with --camera")
