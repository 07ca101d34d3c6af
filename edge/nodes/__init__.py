"""The nodes of the graph, looked up by name (imported lazily: each pulls in only what it needs)."""
from __future__ import annotations

NODES: dict[str, str] = {
    "recorder": "edge.nodes.recorder:RecorderNode",
    "capture": "edge.nodes.capture:CaptureNode",
    "frontend": "edge.nodes.frontend:FrontendNode",
    "speech": "edge.nodes.speech:SpeechNode",
    "harness": "edge.nodes.harness:HarnessNode",
    "vision": "edge.nodes.vision:VisionNode",
}

# Nodes whose `Finished` ends a file session; the others are stopped after them.
REQUIRED = ("capture", "frontend", "speech")


def node_table(names: list[str], overrides: dict[str, str] | None = None) -> dict[str, str]:
    """name -> "module:Class" for the graph; `overrides` swap in other classes (tests, plugins)."""
    overrides = overrides or {}
    unknown = [n for n in names if n not in NODES and n not in overrides]
    if unknown:
        raise ValueError(f"unknown node {unknown[0]!r}; known nodes: {', '.join(NODES)}")
    return {n: overrides.get(n) or NODES[n] for n in names}
