"""Entry point of a node process: `python -m edge.graph.child` with a NodeSpec as JSON on stdin."""
from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import sys

from edge.graph.node import NodeRunner, NodeSpec
from edge.graph.loader import load_class


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process if the supervisor dies, so no node outlives its session."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when we stop
    _die_with_parent()
    logging.basicConfig(level=os.environ.get("VENUS_EDGE_LOG", "WARNING"),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec = NodeSpec(**json.loads(sys.stdin.read()))
    NodeRunner(spec, load_class(spec.node_class)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
