"""A session's settings, and running it through the graph (processes or threads)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from edge.graph.supervisor import SessionReport, Supervisor, SupervisorSettings
from edge.nodes import REQUIRED, node_table

ALL_NODES = ["recorder", "capture", "frontend", "speech", "harness"]


@dataclass
class SessionConfig:
    mic: str | None = None  # file path, device index/name, or None for the default microphone
    camera: str | None = None
    speaker: str | None = None  # file path (time-aligned WAV), device, or "null"
    speaker_rate: int = 24000
    journal: str | None = None
    chunk_ms: int = 1000
    realtime: bool = True  # file input paced in real time; False: as fast as the graph allows
    pace: float = 1.0  # >1 feeds a file faster than real time (benchmarks)
    frontend: str = "default"
    voice: str = "espeak"
    threads: int = 1
    video_fps: float = 1.0  # frames captured per second of a camera; 0: the camera is not read
    context: int | None = None  # LLM context in tokens; None: the frontend's own default
    kv_type: str | None = None  # LLM KV cache type (f16, q8_0, q4_0); None: f16
    echo_cancel: str | bool = "auto"  # auto: on for a live microphone; false where the device cancels echo itself
    room_echo: dict | None = None  # tests and benchmarks: mix the assistant's output back into the microphone
    barge_in: bool = True  # duck on speech onset over playback, then the barge-in policy decides
    duck_gain: float = 0.3
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(d.pop("extra"))
        return d


def run_session(cfg: SessionConfig, *, inprocess: bool = False, nodes: list[str] | None = None,
                settings: SupervisorSettings | None = None, node_classes: dict[str, str] | None = None
                ) -> SessionReport:
    sup = make_supervisor(cfg.as_dict(), nodes or ALL_NODES, inprocess=inprocess, virtual_clock=not cfg.realtime,
                          settings=settings, node_classes=node_classes)
    return sup.run()


def make_supervisor(config: dict, nodes: list[str], *, node_classes: dict[str, str] | None = None,
                    **kwargs: object) -> Supervisor:
    """A supervisor for these nodes, with the session's node table (overrides swap in other classes)."""
    return Supervisor(config, node_table(nodes, node_classes), required=REQUIRED, **kwargs)  # type: ignore[arg-type]
