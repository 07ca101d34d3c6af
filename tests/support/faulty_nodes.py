"""Nodes that misbehave on purpose, for supervisor tests (loaded by 'module:Class' override)."""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from edge.nodes.frontend import FrontendNode
from edge.nodes.harness import HarnessNode
from edge.nodes.speech import SpeechNode


class SlowStartSpeech(SpeechNode):
    """Takes SLOW_START_S seconds to set up (like a model loading)."""

    def setup(self) -> None:
        time.sleep(float(os.environ.get("SLOW_START_S", "1.5")))
        super().setup()


class HangOnceFrontend(FrontendNode):
    """Hangs (no heartbeats) at chunk 2 in its first life; behaves after a restart."""

    def on_message(self, env) -> None:
        # A restarted frontend gets its checkpoint back: only the first life hangs.
        if not self.restore and env.msg.TYPE == "audio_chunk" and env.msg.index == 2:
            time.sleep(3600)
        super().on_message(env)


class CrashOnceFrontend(FrontendNode):
    """Raises at chunk 3 in its first life (a crash); restarted, it picks up where its step files left it."""

    def on_message(self, env) -> None:
        if not self.restore.get("gen") and env.msg.TYPE == "audio_chunk" and env.msg.index == 3:
            raise RuntimeError("the frontend fails at chunk 3 (a test)")
        super().on_message(env)


class HangOnceHarness(HarnessNode):
    """Blocks in its first delegate request (a short handler that never returns) in its first life; the time it
    blocked goes to the file named by HANG_MARK."""

    def on_message(self, env) -> None:
        if not self.restore and env.msg.TYPE == "delegate_request":
            Path(os.environ["HANG_MARK"]).write_text(str(time.monotonic_ns()))
            time.sleep(3600)
        super().on_message(env)


class SlowStepFrontend(FrontendNode):
    """One model step (chunk 2) takes SLOW_STEP_S seconds: longer than the short hang limit, inside its bound."""

    def setup(self) -> None:
        super().setup()
        step = self.frontend.step

        def slow(chunk):
            if chunk.index == 2:
                time.sleep(float(os.environ.get("SLOW_STEP_S", "3")))
            return step(chunk)
        self.frontend.step = slow


def _die_once_after(delay_s: float) -> None:
    """SIGKILL this process `delay_s` from now, in its first life only (the file KILL_MARK remembers)."""
    mark = Path(os.environ["KILL_MARK"])
    if mark.exists():
        return
    mark.write_text(str(os.getpid()))
    threading.Timer(delay_s, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()


class KilledAfterResultFrontend(FrontendNode):
    """Killed just after a harness result arrived (and was acknowledged), before it was spoken."""

    def on_message(self, env) -> None:
        super().on_message(env)
        if env.msg.TYPE == "backend_result":
            _die_once_after(0.05)


class KilledWhileSpeakingSpeech(SpeechNode):
    """Killed 0.3 s after the request to speak a harness result arrived: while it is being spoken."""

    def on_message(self, env) -> None:
        super().on_message(env)
        if env.msg.TYPE == "speak_text" and env.msg.backend_id:
            _die_once_after(0.3)


def _die_after_publishing(node, wanted) -> None:
    """Wrap the node's publish: once a message for which `wanted(msg)` holds has gone out, the node dies."""
    publish = node.io.publish

    def watched(msg, *args, **kwargs):
        publish(msg, *args, **kwargs)
        if wanted(msg):
            _die_once_after(0.05)
    node.io.publish = watched


class KilledAfterReleaseHarness(HarnessNode):
    """Killed just after releasing a result to the frontend, before its acknowledgement can come back."""

    def setup(self) -> None:
        _die_after_publishing(self, lambda msg: msg.TYPE == "backend_result" and msg.kind == "result")
        super().setup()


class KilledAfterPlayedSpeech(SpeechNode):
    """Killed just after the reply to a harness result has played to its end (and been acknowledged)."""

    def setup(self) -> None:
        _die_after_publishing(self, lambda msg: msg.TYPE == "playback_ack" and msg.last and bool(msg.backend_id))
        super().setup()


class KilledAfterDeliveredFrontend(FrontendNode):
    """Killed just after telling the harness a result was delivered."""

    def setup(self) -> None:
        _die_after_publishing(self, lambda msg: msg.TYPE == "delivered")
        super().setup()
