"""Running a session through the graph (processes or threads), with each node's settings built once."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from edge.bundle.manifest import ManifestError, load_manifest

from edge.bundle.preflight import bundle_problem
from edge.graph.plain import to_plain
from edge.graph.supervisor import SessionReport, Supervisor, SupervisorSettings
from edge.nodes import REQUIRED, node_table
from edge.settings import SessionConfig, SettingsError, node_settings

ALL_NODES = ["recorder", "capture", "frontend", "speech", "harness"]

__all__ = ["ALL_NODES", "SessionConfig", "SettingsError", "make_supervisor", "nodes_for", "run_session"]


def nodes_for(cfg: SessionConfig) -> list[str]:
    """The session's nodes: all of them, and the vision node when a camera is read by the embedded default (it
    describes the frames) or by an Omni bundle (it archives them with the bundle's vision tokens for memory);
    `vision: true` or `false` in the options decides it for any frontend."""
    wanted = cfg.extra.get("vision")
    camera = cfg.camera is not None and cfg.video_fps > 0
    sees = camera and (cfg.frontend == "default" or _omni_bundle(cfg.frontend) if wanted is None else bool(wanted))
    return [*ALL_NODES, "vision"] if sees else list(ALL_NODES)


def _omni_bundle(frontend: str) -> bool:
    """Whether `frontend` names an Omni bundle (a manifest that cannot be read is refused later, in one sentence)."""
    if not frontend.startswith("bundle:"):
        return False
    try:
        return load_manifest(Path(frontend[len("bundle:"):]).expanduser()).get("variant") == "omni"
    except ManifestError:
        return False


def run_session(cfg: SessionConfig, *, inprocess: bool = False, nodes: list[str] | None = None,
                settings: SupervisorSettings | None = None, node_classes: dict[str, str] | None = None
                ) -> SessionReport:
    sup = make_supervisor(cfg, nodes or nodes_for(cfg), inprocess=inprocess, virtual_clock=not cfg.realtime,
                          settings=settings, node_classes=node_classes)
    return sup.run()


def make_supervisor(config: SessionConfig | Mapping[str, Any], nodes: list[str], *,
                    node_classes: dict[str, str] | None = None, **kwargs: Any) -> Supervisor:
    """A supervisor for these nodes, with the session's node table (overrides swap in other classes) and each
    node's settings. A bad setting raises SettingsError (one sentence) before anything starts."""
    cfg = config if isinstance(config, SessionConfig) else SessionConfig.from_dict(config)
    table = node_table(nodes, node_classes)
    configs = {name: to_plain(s) for name, s in node_settings(cfg, table).items()}
    problem = bundle_problem(cfg.as_dict(), table)  # once, here: not by every start of every node that opens it
    if problem:
        raise SettingsError(problem)
    if "harness" in table:  # the same for the harness's section: not a failed node when its models load
        from edge.harness.settings import check_harness
        try:
            check_harness(cfg.extra.get("harness"))
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
    return Supervisor(configs, table, required=REQUIRED, **kwargs)
