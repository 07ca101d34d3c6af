"""A node that crashes once, for the page test (loaded by 'module:Class' override in a child process)."""
from __future__ import annotations

import os
from pathlib import Path

from edge.nodes.harness import HarnessNode


class CrashOnceHarness(HarnessNode):
    """Exits at chunk 2's decision in its first life (a marker file remembers); the supervisor restarts it."""

    def on_message(self, env) -> None:
        marker = Path(os.environ["CRASH_ONCE_MARKER"])
        if env.msg.TYPE == "chunk_decision" and env.msg.index == 2 and not marker.exists():
            marker.write_text("crashed")
            os._exit(3)
        super().on_message(env)
