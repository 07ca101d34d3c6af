"""Nodes that misbehave on purpose, for supervisor tests (loaded by 'module:Class' override)."""
from __future__ import annotations

import os
import time

from edge.nodes.frontend import FrontendNode
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
