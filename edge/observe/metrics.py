"""`/metrics`: the observer's counts and the supervisor's heartbeat counters in Prometheus text format 0.0.4.

Every name starts with `venus_`; seconds and totals follow Prometheus naming (`_seconds`, `_total`).
"""
from __future__ import annotations

import time
from typing import Iterable

from edge.graph.supervised import ChildState
from edge.observe.histogram import Histogram
from edge.observe.observer import Observer

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# name, type, help: the list the README prints (tests/edge/observe checks every one is exposed).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("venus_up", "gauge", "1 while every node is running (health ready), else 0"),
    ("venus_node_up", "gauge", "1 while the node is running or ready"),
    ("venus_node_restarts", "counter", "Restarts of the node by the supervisor"),
    ("venus_node_heartbeat_age_seconds", "gauge", "Time since the supervisor last heard from the node"),
    ("venus_node_messages_received", "counter", "Bus messages the node handled"),
    ("venus_node_messages_sent", "counter", "Bus messages the node published"),
    ("venus_node_messages_rejected", "counter", "Messages the node dropped as malformed, by reason"),
    ("venus_node_queue_depth", "gauge", "Messages waiting in the node: reliable sends not yet acknowledged "
                                        "(unacked), harness jobs running (jobs)"),
    ("venus_node_resent", "counter", "Reliable messages the node sent again for want of an acknowledgement"),
    ("venus_chunks", "counter", "Chunks decided by the frontend, by decision (listen or speak)"),
    ("venus_chunk_real_time_factor", "gauge", "The last chunk's compute time over its length"),
    ("venus_chunk_real_time_factor_ratio", "histogram", "Compute time over chunk length, per chunk"),
    ("venus_chunk_decision_seconds", "histogram", "The frontend's step per chunk (decision latency)"),
    ("venus_chunk_receive_delay_seconds", "histogram", "Capture stamp to the frontend's step"),
    ("venus_chunk_overruns", "counter", "Chunks whose step took longer than the chunk"),
    ("venus_speech_time_to_first_audio_seconds", "histogram", "Speak request to its first sample played"),
    ("venus_speech_pieces_played", "counter", "Synthesized pieces played out completely"),
    ("venus_speech_played_seconds", "counter", "Seconds of speech played"),
    ("venus_speech_underruns", "counter", "Playback stopped while words of the current turn still waited"),
    ("venus_speech_ducks", "counter", "Playback volume lowered, by who lowered it"),
    ("venus_speech_duck_restores", "counter", "Playback volume restored after a duck"),
    ("venus_duplex_speech_onsets", "counter", "User speech onsets, over the assistant's playback or not"),
    ("venus_duplex_barge_in_decisions", "counter", "The barge-in judge's decisions on speech over a reply, by kind"),
    ("venus_duplex_interrupts", "counter", "Times the user took the floor (the epoch moved on)"),
    ("venus_work_items", "gauge", "Work items by their current state"),
    ("venus_work_transitions", "counter", "Work-item state changes, by the state entered"),
    ("venus_work_run_seconds", "histogram", "A work item's run time (running to its next state)"),
    ("venus_work_retries", "counter", "Work items run again after a transient failure"),
    ("venus_work_expirations", "counter", "Results dropped because they were stale"),
    ("venus_capture_echo_return_loss_enhancement_db", "gauge", "Echo cancellation's ERLE (capture's heartbeat)"),
    ("venus_bus_messages_observed", "counter", "Messages the observer read on the bus, by type"),
)
_TYPES = {name: kind for name, kind, _ in METRICS}
_HELP = {name: text for name, _, text in METRICS}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def _num(v: float) -> str:
    return repr(float(v)) if isinstance(v, float) else str(int(v))


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, samples: Iterable[tuple[dict[str, str], float]]) -> None:
        kind = _TYPES[name]
        full = f"{name}_total" if kind == "counter" else name  # text format 0.0.4 names a counter with _total
        self.lines += [f"# HELP {full} {_HELP[name]}", f"# TYPE {full} {kind}"]
        for labels, value in samples:
            self.lines.append(f"{full}{_labels(labels)} {_num(value)}")

    def histogram(self, name: str, h: Histogram) -> None:
        self.lines += [f"# HELP {name} {_HELP[name]}", f"# TYPE {name} histogram"]
        for le, count in h.cumulative():
            self.lines.append(f'{name}_bucket{{le="{le}"}} {count}')
        self.lines += [f"{name}_sum {_num(float(h.total))}", f"{name}_count {h.n}"]


def render(obs: Observer) -> str:
    w = _Writer()
    state, _ = obs.health()
    w.family("venus_up", [({}, 1 if state == "ready" else 0)])
    sup = obs.sup
    if sup is not None:
        now = time.monotonic()
        children = list(sup.children.values())
        stats = dict(sup.node_stats)
        w.family("venus_node_up", [({"node": c.name}, int(c.state in (ChildState.READY, ChildState.RUNNING))) for c in children])
        w.family("venus_node_restarts", [({"node": c.name}, c.restarts) for c in children])
        w.family("venus_node_heartbeat_age_seconds",
                 [({"node": c.name}, round(now - c.last_seen, 3)) for c in children if c.last_seen])
        w.family("venus_node_messages_received", [({"node": n}, s.get("handled", 0)) for n, s in stats.items()])
        w.family("venus_node_messages_sent", [({"node": n}, s.get("sent", 0)) for n, s in stats.items()])
        rejected = [({"node": n, "reason": r}, c) for n, s in stats.items()
                    for r, c in (s.get("rejected") or {}).items()]
        rejected += [({"node": "supervisor", "reason": r}, c) for r, c in sup.rejects.as_dict().items()]
        w.family("venus_node_messages_rejected", rejected)
        queues = [({"node": n, "queue": "unacked"}, s.get("unacked", 0)) for n, s in stats.items() if "unacked" in s]
        queues += [({"node": n, "queue": "jobs"}, s["running"]) for n, s in stats.items()
                   if isinstance(s.get("running"), int)]
        w.family("venus_node_queue_depth", queues)
        w.family("venus_node_resent", [({"node": n}, s.get("resent", 0)) for n, s in stats.items() if "resent" in s])
        erle = (stats.get("capture") or {}).get("erle_db")
        w.family("venus_capture_echo_return_loss_enhancement_db", [({}, float(erle))] if erle is not None else [])
    with obs.lock:
        w.family("venus_chunks", [({"decision": k}, v) for k, v in sorted(obs.chunks.items())])
        w.family("venus_chunk_real_time_factor", [({}, float(obs.last_rtf))])
        w.histogram("venus_chunk_real_time_factor_ratio", obs.rtf)
        w.histogram("venus_chunk_decision_seconds", obs.decision_s)
        w.histogram("venus_chunk_receive_delay_seconds", obs.receive_delay_s)
        w.family("venus_chunk_overruns", [({}, obs.overruns)])
        w.histogram("venus_speech_time_to_first_audio_seconds", obs.first_audio_s)
        w.family("venus_speech_pieces_played", [({}, obs.pieces)])
        w.family("venus_speech_played_seconds", [({}, round(obs.played_s, 3))])
        w.family("venus_speech_underruns", [({}, obs.underruns)])
        w.family("venus_speech_ducks", [({"by": k}, v) for k, v in sorted(obs.ducks.items())])
        w.family("venus_speech_duck_restores", [({}, obs.restores)])
        w.family("venus_duplex_speech_onsets", [({"during": k}, v) for k, v in sorted(obs.onsets.items())])
        w.family("venus_duplex_barge_in_decisions", [({"decision": k}, v) for k, v in sorted(obs.barge_in.items())])
        w.family("venus_duplex_interrupts", [({}, obs.interrupts)])
        by_state: dict[str, int] = {}
        for s in obs.work_state.values():
            by_state[s] = by_state.get(s, 0) + 1
        w.family("venus_work_items", [({"state": k}, v) for k, v in sorted(by_state.items())])
        w.family("venus_work_transitions", [({"state": k}, v) for k, v in sorted(obs.transitions.items())])
        w.histogram("venus_work_run_seconds", obs.run_s)
        w.family("venus_work_retries", [({}, obs.retries)])
        w.family("venus_work_expirations", [({}, obs.expirations)])
        w.family("venus_bus_messages_observed", [({"type": k}, v) for k, v in sorted(obs.bus_seen.items())])
    return "\n".join(w.lines) + "\n"
