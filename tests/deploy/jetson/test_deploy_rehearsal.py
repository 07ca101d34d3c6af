"""Device rehearsal: a real bundle staged for a board, started by the staged unit's own command line.

exporter -> stage.sh --board -> the unit's ExecStart with its Environment= and
EnvironmentFile= settings (read as systemd reads them) -> service.py -> venus-edge
on a WAV microphone and a WAV speaker. The journal must show the session ran
with the board profile's context, KV cache type and frame rate.

What stands in for the device: the root directory (paths under the unit's own
trees are looked up inside it), the venv that setup.sh would install at first
boot (here: the staged source over this machine's packages), and the board's
/proc/meminfo (VENUS_MEMINFO). Everything else is what a device would run.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from deploy_support import JETSON, make_rootfs, run
from unit_launch import read_env_file, unit_command

from edge import messages as m
from edge.timeline.journal import Journal

# board: (bundle variant, MemTotal in kB as the README's table has it, context, KV type, frames per second)
BOARDS = {
    "orin-nano-8": ("audio", 7_760_000, 4096, "q8_0", 0.0),  # KV type and frame rate differ from the default
    "orin-agx-32": ("omni", 32_090_000, 8192, "f16", 0.5),  # a camera read every 2 s
}
TRAINED_CONTEXT = 4096  # the tiny checkpoint's max_position_embeddings: llama.cpp never goes past it


def first_boot_venv(root: Path) -> Path:
    """What setup.sh leaves at /opt/venus-edge/venv: a Python that sees venus-edge (the staged source, as
    `pip install -e src` does) and its dependencies, with the venus-edge console script."""
    venv = root / "opt" / "venus-edge" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path("
                                "'purelib'))"], capture_output=True, text=True, check=True).stdout.strip())
    (site / "venus-edge-src.pth").write_text(str(root / "opt" / "venus-edge" / "src") + "\n")
    (site / "zz-packages.pth").write_text(f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    script = venv / "bin" / "venus-edge"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom edge.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return venv


@pytest.fixture
def root() -> Path:
    """A root directory with a short path: the runtime's sockets live under its /run (107 bytes at most)."""
    path = Path(tempfile.mkdtemp(prefix="venus-root-"))
    yield make_rootfs(path / "r")
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("board", BOARDS)
def test_a_staged_board_runs_its_profile(board, root, exported, exported_omni, tmp_path) -> None:
    variant, memtotal_kb, context, kv_type, fps = BOARDS[board]
    rootfs = root
    exported = exported if variant == "audio" else exported_omni
    bundle = Path(shutil.copytree(exported, tmp_path / "bundle"))
    # the bundle gets a site override the runtime reads (venus.json): the tiny model listens every chunk
    (bundle / "venus.json").write_text(json.dumps({"forced": {"*": ["<|listen|>"]}}))
    # the tiny bundle (F16, fp32 encoders) is not what the board's plan names: staged with --force, warned
    r = run([str(JETSON / "stage.sh"), "--rootfs", str(rootfs), "--bundle", str(bundle), "--board", board, "--force"])
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("stage: warning: ") and "(--force)" in r.stderr
    first_boot_venv(rootfs)
    profile = read_env_file((rootfs / "etc" / "venus-edge" / "profile.env").read_text())
    assert (profile["VENUS_CONTEXT"], profile["VENUS_KV_TYPE"], float(profile["VENUS_VISION_FPS"])) == \
        (str(context), kv_type, fps)
    # the site settings, as a person edits the staged /etc/venus-edge/venus-edge.env
    mic, speaker, camera = tmp_path / "mic.wav", tmp_path / "speaker.wav", tmp_path / "camera"
    t = np.arange(16000 * 4) / 16000
    sf.write(mic, (0.3 * np.sin(2 * np.pi * 220 * t) * (t < 1.5)).astype(np.float32), 16000)
    camera.mkdir()
    import cv2

    for i in range(4):
        cv2.imwrite(str(camera / f"{i:04d}.png"), np.full((32, 32, 3), 60 * i, np.uint8))
    site = rootfs / "etc" / "venus-edge" / "venus-edge.env"
    text = site.read_text().replace("\nVENUS_ARGS=\n", f'\nVENUS_ARGS=--mic "{mic}" --speaker "{speaker}" '
                                    f'--camera "{camera}" --fast --max-seconds 240\n')  # an image folder: one image a second
    assert text != site.read_text()
    site.write_text(text)
    # an old session from a month ago, which retention removes at start
    sessions = rootfs / "var" / "lib" / "venus-edge" / "sessions"
    sessions.mkdir(parents=True)
    old = sessions / "20260101-000000.journal"
    old.write_bytes(b"VENUS-EDGE-JOURNAL 1\n")
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal:        {memtotal_kb} kB\n")

    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
            "VENUS_MEMINFO": str(meminfo)}
    argv, env, workdir = unit_command(rootfs, rootfs / "etc" / "systemd" / "system" / "venus-edge.service", base)
    assert argv == [str(rootfs / "opt/venus-edge/venv/bin/python"), str(rootfs / "opt/venus-edge/jetson/service.py")]
    assert env["VENUS_BOARD"] == board and env["VENUS_BUNDLE"] == str(rootfs / "opt/venus-edge/bundle")
    workdir.mkdir(parents=True, exist_ok=True)
    (rootfs / "run" / "venus-edge").mkdir(parents=True, exist_ok=True)  # RuntimeDirectory=
    done = subprocess.run(argv, env=env, cwd=workdir, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"profile {board}: fits" in done.stdout

    assert not old.exists()  # retention ran at start
    [journal_path] = sorted(sessions.glob("*.journal"))
    journal = Journal(journal_path)
    config = journal.session["config"]
    # what the runtime was told ...
    assert (config["context"], config["kv_type"], config["video_fps"]) == (context, kv_type, fps)
    assert config["frontend"] == f"bundle:{rootfs / 'opt/venus-edge/bundle'}"
    # ... and what llama.cpp and capture then did
    decisions = [msg for _, msg in journal.messages(m.ChunkDecision)]
    assert len(decisions) == 4
    assert decisions[0].info["llm"] == {"n_ctx": min(context, TRAINED_CONTEXT), "kv_type": kv_type, "precision": "F16"}
    frames = [msg.t_ns for _, msg in journal.messages(m.VideoFrame)]
    # 4 s of audio: a frame every 1/fps seconds from 0 (none at 0 fps: the camera was never read)
    assert frames == ([int(k * 1e9 / fps) for k in range(int(4 * fps))] if fps else [])
    assert sf.info(speaker).samplerate > 0
