"""The harness every way in uses: the configured one, its router wrapped in the understanding guards."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from edge.clock import Clock
from edge.harness.assemble import Built, build_harness
from edge.harness.capability import Registry
from edge.harness.router import Router
from edge.understand.camera import CameraCapability
from edge.understand.honest import SayBack
from edge.understand.route import Understand
from edge.wire import Message


def understanding_harness(cfg: dict[str, Any], state_dir: str | Path, clock: Clock, emit: Callable[[Message], None],
                          threads: int = 1, speaks_later: bool = True) -> Built:
    """`speaks_later`: False where nothing can speak up later (a Wyoming answer), so timers are refused there."""
    def guard(router: Router, registry: Registry) -> Router:
        registry.add(SayBack())
        if registry.get(CameraCapability.name) is None:
            registry.add(CameraCapability())
        return Understand(router, speaks_later, home_expected=bool(cfg.get("mcp")))

    return build_harness(cfg, state_dir, clock, emit, threads, guard=guard)
