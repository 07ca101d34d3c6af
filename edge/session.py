"""Running a session through the graph (processes or threads), with each node's settings built once."""
from __future__ import annotations

from typing import Any, Mapping

from edge.graph.plain import to_plain
from edge.graph.supervisor import SessionReport, Supervisor, SupervisorSettings
from edge.nodes import REQUIRED, node_table
from edge.settings import SessionConfig, SettingsError, node_settings

ALL_NODES = ["recorder", "capture", "frontend", "speech", "harness"]

__all__ = ["ALL_NODES", "SessionConfig", "SettingsError", "make_supervisor", "run_session"]


def run_session(cfg: SessionConfig, *, inprocess: bool = False, nodes: list[str] | None = None,
                settings: SupervisorSettings | None = None, node_classes: dict[str, str] | None = None
                ) -> SessionReport:
    sup = make_supervisor(cfg, nodes or ALL_NODES, inprocess=inprocess, virtual_clock=not cfg.realtime,
                          settings=settings, node_classes=node_classes)
    return sup.run()


def make_supervisor(config: SessionConfig | Mapping[str, Any], nodes: list[str], *,
                    node_classes: dict[str, str] | None = None, **kwargs: Any) -> Supervisor:
    """A supervisor for these nodes, with the session's node table (overrides swap in other classes) and each
    node's settings. A bad setting raises SettingsError (one sentence) before anything starts."""
    cfg = config if isinstance(config, SessionConfig) else SessionConfig.from_dict(config)
    table = node_table(nodes, node_classes)
    configs = {name: to_plain(s) for name, s in node_settings(cfg, table).items()}
    return Supervisor(configs, table, required=REQUIRED, **kwargs)
