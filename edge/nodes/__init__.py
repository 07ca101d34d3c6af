"""The nodes of the graph, looked up by name (imported lazily: each pulls in only what it needs)."""
from __future__ import annotations

import importlib

from edge.graph.node import Node

NODES: dict[str, str] = {
    "recorder": "edge.nodes.recorder:RecorderNode",
    "capture": "edge.nodes.capture:CaptureNode",
    "frontend": "edge.nodes.frontend:FrontendNode",
    "speech": "edge.nodes.speech:SpeechNode",
    "harness": "edge.nodes.harness:HarnessNode",
}

# Nodes whose `Finished` ends a file session; the others are stopped after them.
REQUIRED = ("capture", "frontend", "speech")


def node_class(name: str, override: str = "") -> type[Node]:
    try:
        target = override or NODES[name]
    except KeyError:
        raise ValueError(f"unknown node {name!r}; known nodes: {', '.join(NODES)}") from None
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)
