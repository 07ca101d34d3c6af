"""Entry point of a node process: `python -m edge.graph.child SUPERVISOR_PID` with a NodeSpec as JSON on stdin."""
from __future__ import annotations

import os
import signal
import sys

from edge.tether import die_with_parent


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when we stop
    # Before the heavy imports: a supervisor killed while this node is still loading must take it along too.
    die_with_parent()
    if argv and argv[0].isdigit() and os.getppid() != int(argv[0]):
        return 1  # the supervisor died before the request was made
    import json
    import logging

    from edge.graph.loader import load_class
    from edge.graph.node import NodeSpec
    from edge.graph.runner import NodeRunner

    logging.basicConfig(level=os.environ.get("VENUS_EDGE_LOG", "WARNING"),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec = NodeSpec(**json.loads(sys.stdin.read()))
    NodeRunner(spec, load_class(spec.node_class)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
