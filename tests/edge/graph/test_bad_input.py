"""Bad input to a live graph: garbage on the bus and the control socket, missing devices and files."""
from __future__ import annotations

import random
import subprocess
import sys
import threading
import time

import msgpack
import zmq


from edge.session import ALL_NODES, SessionConfig, make_supervisor


def test_garbage_on_the_bus_is_counted_and_the_session_completes(tmp_path, speech_wav, script):
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="espeak").as_dict()
    sup = make_supervisor(cfg, ALL_NODES)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", sup.run()))
    t.start()
    while not sup.started:
        time.sleep(0.05)
    ctx = zmq.Context.instance()
    pub = ctx.socket(zmq.PUB)
    pub.connect(sup.ep.bus_in)
    ctl = ctx.socket(zmq.DEALER)
    ctl.setsockopt(zmq.IDENTITY, b"intruder")
    ctl.connect(sup.ep.control)
    time.sleep(0.3)
    rng = random.Random(7)
    bad_header = msgpack.packb({"v": 1, "type": "audio_chunk", "seq": 0, "epoch": 0, "t_ns": 0, "src": "x",
                                "body": {"index": "zero"}})
    # On a topic the proxy always carries to the frontend (typed text comes from the supervisor): a capture
    # topic leaves the frontend's proxy subscription once capture's direct path is proven, and garbage posing as
    # capture is then not delivered at all.
    for i in range(300):
        pub.send_multipart([b"dlg.typed", rng.randbytes(rng.randint(0, 64))])
        pub.send_multipart([b"dlg.typed", bad_header])
        ctl.send_multipart([rng.randbytes(10)])
    time.sleep(1.5)  # one heartbeat later the counters are at the supervisor
    t.join(60)
    pub.close()
    ctl.close()
    report = out["r"]
    assert report.ok, report.reason
    rejected = report.node_stats["frontend"]["rejected"]
    assert sum(rejected.values()) == 600, rejected
    assert rejected["malformed"] >= 300


def test_missing_microphone_is_one_sentence_not_a_traceback(tmp_path, script):
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", "7", "--speaker", "null", "--script",
                        str(script), "--journal", str(tmp_path / "j")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2  # refused before anything starts, as a bad setting is
    assert "Traceback" not in r.stderr
    assert "no microphone 7 was found" in r.stderr or "cannot use a microphone" in r.stderr
    assert "--mic FILE.wav" in r.stderr


def test_missing_input_file_and_bad_script(tmp_path):
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", str(tmp_path / "nope.wav")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("one speak hi\n")
    wav = tmp_path / "in.wav"
    import numpy as np
    import soundfile as sf
    sf.write(str(wav), np.zeros(16000, np.float32), 16000)
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", str(wav), "--speaker", "null", "--script",
                        str(bad), "--journal", str(tmp_path / "j")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "bad.txt:1: expected '<chunk> <action> [text]'" in r.stderr
    assert "Traceback" not in r.stderr


def test_camera_frames_are_captured_and_journaled(tmp_path, speech_wav, script):
    import cv2
    import numpy as np

    video = tmp_path / "cam.avi"
    w = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(60):
        w.write(np.full((48, 64, 3), i * 4, np.uint8))
    w.release()
    from edge import messages as m
    from edge.session import run_session
    from edge.timeline.journal import Journal

    cfg = SessionConfig(mic=str(speech_wav), camera=str(video), speaker="null", journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="null", realtime=False, video_fps=2.0,
                        answer_wait_s=0.0)  # the frames of the file's 6 s (the script's notice is not waited for)
    assert run_session(cfg).ok
    frames = [msg for _, msg in Journal(tmp_path / "j").messages(m.VideoFrame)]
    # --video-fps 2 with 1 s chunks: at most one frame a chunk reaches the bus (the frontend reads a chunk's newest)
    assert [f.t_ns for f in frames] == [int(i * 1e9) for i in range(len(frames))]
    assert 5 <= len(frames) <= 7 and frames[0].width == 64 and frames[0].height == 48
