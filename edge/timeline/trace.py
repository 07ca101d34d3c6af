"""A journal as Chrome trace-event JSON (what Perfetto and chrome://tracing open).

One track per node (plus the supervisor), all in one process. On a node's track: the chunk loop's steps
(frontend), the chunk windows (capture), the pieces played (speech), node events, and a short slice for each
message the node sent or received. Messages are flow arrows from the sender's slice to each receiver's (the
message classes declare their receivers). Work items are async slices keyed by their id, one nested slice per
state. Runs of silent listen chunks fold into one slice each, so an hour of mostly quiet room stays small.

Times are session time in microseconds (the format's unit). Supervisor events from before the session clock
started (spawn, ready) sit at 0 with their own stamp in args.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from edge import messages as m
from edge.messages.work_states import TERMINAL as TERMINAL_WORK
from edge.timeline.journal import Journal
from edge.wire.registry import ANY_NODE, Message

PID = 1
NODE_ORDER = ("supervisor", "recorder", "capture", "frontend", "speech", "harness")
NO_FLOW = ("playback_ref", "probe", "ack")  # high rate or bookkeeping: counted in args, never drawn
MSG_US = 1.0  # width of a message's send/receive slice


@dataclass
class _Slice:
    tid: int
    start: float
    end: float
    name: str
    cat: str
    args: dict = field(default_factory=dict)


@dataclass
class TraceStats:
    events: int
    flows: int
    chunks: int
    folded_chunks: int
    bytes: int = 0


class _Builder:
    def __init__(self) -> None:
        self.tids: dict[str, int] = {}
        self.slices: list[_Slice] = []
        self.other: list[dict] = []  # instants, async and flow events
        self.flows = 0
        for name in NODE_ORDER:
            self.tid(name)

    def tid(self, node: str) -> int:
        if node not in self.tids:
            self.tids[node] = len(self.tids) + 1
        return self.tids[node]

    def slice(self, node: str, start: float, end: float, name: str, cat: str, **args: Any) -> _Slice:
        s = _Slice(self.tid(node), start, max(start, end), name, cat, args)
        self.slices.append(s)
        return s

    def instant(self, node: str, ts: float, name: str, cat: str, scope: str = "t", **args: Any) -> None:
        self.other.append({"ph": "i", "s": scope, "name": name, "cat": cat, "pid": PID, "tid": self.tid(node),
                           "ts": ts, "args": args})

    def flow(self, msg_type: str, src: str, t_send: float, receivers: list[tuple[str, float]]) -> None:
        """A message's arrows: one send slice on `src`, a receive slice on each receiver, a flow pair to each."""
        if not receivers:
            return
        self.slice(src, t_send, t_send + MSG_US, f"send {msg_type}", "msg")
        for dst, t_recv in receivers:
            t_recv = max(t_send, t_recv)
            self.flows += 1
            self.slice(dst, t_recv, t_recv + MSG_US, f"recv {msg_type}", "msg")
            common = {"name": msg_type, "cat": "msg", "id": self.flows, "pid": PID}
            self.other.append({"ph": "s", "tid": self.tid(src), "ts": t_send, **common})
            self.other.append({"ph": "f", "bp": "e", "tid": self.tid(dst), "ts": t_recv, **common})

    def events(self) -> list[dict]:
        out: list[dict] = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0,
                            "args": {"name": "venus-edge session"}}]
        for node, tid in self.tids.items():
            out.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": tid, "args": {"name": node}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid, "args": {"sort_index": tid}})
        for s in _nest(self.slices):
            start = round(s.start, 3)  # rounded ends, so a child never pokes out of its parent by rounding
            ev = {"ph": "X", "name": s.name, "cat": s.cat, "pid": PID, "tid": s.tid, "ts": start,
                  "dur": round(round(s.end, 3) - start, 3)}
            if s.args:
                ev["args"] = s.args
            out.append(ev)
        for ev in self.other:
            ev["ts"] = round(ev["ts"], 3)
        return out + self.other


def _nest(slices: list[_Slice]) -> list[_Slice]:
    """Clip slices so each track's slices nest (a viewer draws partly overlapping slices wrongly).

    Longer slices come first at equal starts, so the short message slices become their children.
    """
    out = []
    by_track: dict[int, list[_Slice]] = {}
    for s in slices:
        by_track.setdefault(s.tid, []).append(s)
    for track in by_track.values():
        track.sort(key=lambda s: (s.start, -(s.end - s.start)))
        stack: list[_Slice] = []
        for s in track:
            while stack and stack[-1].end <= s.start and not (stack[-1].end == s.start == stack[-1].start):
                stack.pop()
            if stack and s.end > stack[-1].end:
                s.end = stack[-1].end
            stack.append(s)
            out.append(s)
    return out


def _receivers(msg: Message, src: str, nodes: Iterable[str]) -> list[str]:
    """Where a message's arrow goes: the first receiver its class names (the one that acts on it, and for a
    reliable message acknowledges it), or every other node for a broadcast. Arrows to the further receivers
    (the harness hears most of the dialogue) would double the trace and say little."""
    names = [r for r in msg.RECEIVERS if r != src]
    if not names:
        return []
    if names[0] == ANY_NODE:
        return [n for n in nodes if n not in (src, "supervisor")]
    return names[:1]


def _silent(d: m.ChunkDecision) -> bool:
    return (d.control == "listen" and not d.text and not d.user_text and not d.delegates and not d.interrupt
            and "barge_in" not in d.info)


def build_trace(journal: Journal) -> tuple[dict, TraceStats]:
    b = _Builder()
    # One pass keeps what the trace needs and drops the payloads (an hour of audio would not fit in memory).
    records: list[tuple[float, float, str, Message]] = []
    decisions: dict[int, m.ChunkDecision] = {}
    started = False
    nodes: set[str] = set(NODE_ORDER)
    skipped: dict[str, int] = {}
    for rec, msg in journal.messages():
        env = rec.env
        if msg.TYPE in NO_FLOW:
            skipped[msg.TYPE] = skipped.get(msg.TYPE, 0) + 1
            continue
        ts = env.t_ns / 1e3
        if isinstance(msg, m.NodeEvent) and msg.event == "session-started":
            started = True
        if not started and env.src == "supervisor":
            b.instant(msg.node if isinstance(msg, m.NodeEvent) else "supervisor", 0.0,
                      f"{getattr(msg, 'event', msg.TYPE)}", "node", before_start_us=ts,
                      detail=getattr(msg, "detail", ""))
            continue
        nodes.add(env.src)
        if isinstance(msg, m.ChunkDecision):
            decisions[msg.index] = msg
        records.append((ts, rec.t_recv_ns / 1e3, env.src, msg))
    for n in sorted(nodes - set(NODE_ORDER)):
        b.tid(n)

    folded = _chunks(b, records, decisions)
    speak_text: dict[str, str] = {}
    work: dict[str, list[tuple[float, str, str]]] = {}
    work_name: dict[str, tuple[float, str]] = {}
    end_ts = max((r[0] for r in records), default=0.0)
    for ts, t_recv, src, msg in records:
        if isinstance(msg, m.AudioChunk):
            d = decisions.get(msg.index)
            if d is not None and not _silent(d):
                b.flow(msg.TYPE, src, ts, [("frontend", ts + d.recv_delay_ns / 1e3)])
            continue
        if isinstance(msg, m.SpeakText):
            speak_text[msg.id] = msg.text
        elif isinstance(msg, m.PlaybackAck):
            b.slice(src, msg.t_start_ns / 1e3, msg.t_end_ns / 1e3, f"play: {speak_text.get(msg.speak_id, '')}",
                    "speech", utterance=msg.utterance, seq=msg.seq, samples=msg.samples, epoch=msg.epoch)
        elif isinstance(msg, m.NodeEvent):
            b.instant(msg.node, ts, msg.event, "node", detail=msg.detail, restarts=msg.restarts)
        elif isinstance(msg, m.Interrupt):
            b.instant("frontend", ts, "interrupt", "duplex", scope="p", epoch=msg.epoch, reason=msg.reason)
        elif isinstance(msg, m.Duck):
            b.instant(src, ts, "duck" if msg.gain < 1.0 else "duck restored", "duplex", gain=msg.gain,
                      reason=msg.reason)
        elif isinstance(msg, m.SpeechActivity):
            b.instant(src, ts, f"speech {msg.kind}", "duplex", playback=msg.playback, level_db=msg.level_db)
        elif isinstance(msg, m.DelegateRequest):
            work_name[msg.id] = (ts, msg.instruction)
        elif isinstance(msg, m.WorkEvent):
            work.setdefault(msg.work_id, []).append((ts, msg.state, msg.detail))
        if isinstance(msg, m.ChunkDecision) and _silent(msg):
            continue  # folded into a listening slice
        b.flow(msg.TYPE, src, ts, [(dst, t_recv) for dst in _receivers(msg, src, b.tids)])
    _work(b, work, work_name, end_ts)
    events = b.events()
    trace = {"traceEvents": events, "displayTimeUnit": "ms",
             "otherData": {"journal": str(journal.path), "not_drawn": skipped,
                           "session": json.loads(json.dumps(journal.session, default=str))}}
    return trace, TraceStats(len(events), b.flows, len(decisions), folded)


def _chunks(b: _Builder, records: list, decisions: dict[int, m.ChunkDecision]) -> int:
    """Chunk windows on capture's track and the frontend's steps; silent listen runs fold into one slice each."""
    windows = {msg.index: (msg.t_start_ns / 1e3, msg.t_end_ns / 1e3) for _, _, _, msg in records
               if isinstance(msg, m.AudioChunk)}
    decided_at = {msg.index: ts for ts, _, _, msg in records if isinstance(msg, m.ChunkDecision)}
    folded = 0
    run: list[int] = []

    def close_run() -> None:
        if run:
            a, z = run[0], run[-1]
            what = f"chunks {a}-{z}" if z > a else f"chunk {a}"
            # The frontend's steps from the first to the last of the run; on capture's track, their audio.
            b.slice("frontend", decided_at[a] - decisions[a].compute_ns / 1e3, decided_at[z], f"listening: {what}",
                    "chunk", chunks=len(run), max_rtf=max(decisions[i].rtf for i in run))
            if a in windows and z in windows:
                b.slice("capture", windows[a][0], windows[z][1], f"{what} (silent)", "chunk", chunks=len(run))
            run.clear()

    for index in sorted(decisions):
        d = decisions[index]
        if _silent(d):
            run.append(index)
            folded += 1
            continue
        close_run()
        ts = decided_at[index]
        if index in windows:
            b.slice("capture", *windows[index], f"chunk {index}", "chunk")
        label = d.control + (" (interrupt)" if d.interrupt else "")
        barge = d.info.get("barge_in") if isinstance(d.info, dict) else None
        if isinstance(barge, dict) and barge.get("decision"):
            label += f" (barge-in: {barge['decision']})"
        b.slice("frontend", ts - d.compute_ns / 1e3, ts, f"chunk {index}: {label}", "chunk", text=d.text,
                user_text=d.user_text, rtf=d.rtf, recv_delay_ms=d.recv_delay_ns / 1e6, delegates=d.delegates)
    close_run()
    return folded


def _work(b: _Builder, work: dict[str, list[tuple[float, str, str]]], names: dict[str, tuple[float, str]],
          end_ts: float) -> None:
    """Each work item an async slice from its delegation to its last state, with one nested slice per state."""
    tid = b.tid("harness")
    for work_id, states in work.items():
        states.sort(key=lambda s: s[0])
        t0, instruction = names.get(work_id, (states[0][0], work_id))
        t0 = min(t0, states[0][0])
        last = states[-1]
        t_end = last[0] if last[1] in TERMINAL_WORK else max(end_ts, last[0])
        outer = {"cat": "work", "id": work_id, "pid": PID, "tid": tid, "name": f"work: {instruction}"}
        b.other.append({"ph": "b", "ts": t0, "args": {"id": work_id}, **outer})
        for i, (ts, state, detail) in enumerate(states):
            # A terminal state is a point: a zero-length slice, so it still shows by name.
            nxt = ts if state in TERMINAL_WORK else states[i + 1][0] if i + 1 < len(states) else t_end
            inner = {**outer, "name": state}
            b.other.append({"ph": "b", "ts": ts, "args": {"detail": detail}, **inner})
            b.other.append({"ph": "e", "ts": nxt, **inner})
        b.other.append({"ph": "e", "ts": t_end, "args": {"final": last[1]}, **outer})


def write_trace(journal_path: str | Path, out: str | Path) -> TraceStats:
    """Write the journal's trace to `out` (JSON) and say what it holds."""
    trace, stats = build_trace(Journal(journal_path))
    text = json.dumps(trace, separators=(",", ":"), ensure_ascii=False)
    Path(out).write_text(text, encoding="utf-8")
    stats.bytes = len(text.encode("utf-8"))
    return stats
