"""The return side of the harness: releasing ready results through the delivery gate (or at once, for the
answer the user is waiting for), confirming
them by playback, offering again a reply cut by an interrupt or one the frontend never started
speaking, and re-offering after a restart.

A mixin of `Harness` (edge.harness.core): it uses its lock, store, gate and transition helpers.
"""
from __future__ import annotations

import threading
from typing import Any

from edge import messages as m
from edge.harness import states as S
from edge.harness.gate import MS, Candidate, DeliveryGate
from edge.harness.settings import HarnessSettings
from edge.harness.store import WorkItem, WorkStore

STOPPED = "the user said stop before it was said"
CUT_BY_USER = "the user cut the reply (stop, or a new question): not offered again"


class ReturnSide:
    lock: threading.RLock
    store: WorkStore
    gate: DeliveryGate
    s: HarnessSettings
    progress: dict[str, Candidate]
    inflight: dict[str, dict[str, Any]]  # release id -> {work_id, kind, released_ns, started, started_ns}
    duplicates: int
    wall: Any  # () -> seconds on the machine's clock
    cancel: Any  # (work id, reason) -> its new state, or None (edge.harness.core)
    jobs: dict[str, Any]  # work id -> its running job (edge.harness.jobs)
    # --- return -------------------------------------------------------------------------------------
    def _candidate(self, item: WorkItem) -> Candidate:
        if item.state == S.FAILED:
            return Candidate(item.id, f"{item.id}:f", item.notice, "failure", item.updated_ns, item.expires_ns)
        return Candidate(item.id, f"{item.id}:r{item.releases + 1}", item.result, "result", item.ready_ns,
                         item.expires_ns)

    def _asked_ns(self, work_id: str) -> int:
        """When the request was made, for work a new question makes stale (`stale_after_turn`); else -1."""
        item = self.store.get(work_id)
        stale = item is not None and item.capability in self.s.stale_after_turn and not item.later
        return item.opened_ns if stale else -1

    def _opened_ns(self, work_id: str) -> int:
        """When the request was made, for work a "stop" gives up (`stop_request`: not words due later); else -1."""
        item = self.store.get(work_id)
        return item.opened_ns if item is not None and not item.later else -1

    def boundary(self, idle: bool) -> Candidate | None:
        """A chunk boundary: release at most one ready result if the gate allows it now."""
        with self.lock:
            self.poll()
            now = self.clock.now_ns()
            cands = [self._candidate(i) for i in self.store.in_states([S.COMPLETED])]
            cands += [self._candidate(i) for i in self.store.pending_notices()]
            cands += list(self.progress.values())
            waiting = [v["released_ns"] for v in self.inflight.values() if not v["started"]]
            c = self.gate.select(cands, now, idle, max(waiting) if waiting else None)
            if c is None:
                return None
            if c.kind == "result":
                item = self._move(c.work_id, S.DELIVERING, f"released as {c.release_id}", releases=int(
                    c.release_id.rsplit(":r", 1)[1]))
                c.expires_ns = item.expires_ns
            elif c.kind == "failure":
                self.store.update(c.work_id, notice_state="released")
            else:
                self.progress.pop(c.work_id, None)
            self.inflight[c.release_id] = {"work_id": c.work_id, "kind": c.kind, "released_ns": now,
                                           "started": False, "started_ns": 0}
            self.emit(m.BackendResult(c.release_id, c.work_id, c.text, c.kind, c.expires_ns,
                                      self._asked_ns(c.work_id), self._opened_ns(c.work_id)))
            return c

    def release_awaited(self) -> Candidate | None:
        """A result the user is waiting for goes to the frontend as soon as it is ready: asked for after the
        user last spoke, with nobody speaking now and no other release unstarted. It skips the boundary, the
        playback and the silence gap the gate waits for: the frontend says it at its next boundary, in place of
        the holding phrase that may still play (and holds it while anything else plays). Others wait as before."""
        with self.lock:
            now = self.clock.now_ns()
            voice = self.gate.voice
            last_voice = voice.voice_until_ns - int(self.gate.s.hold_ms * MS)
            if not self.gate.s.release_awaited or voice.speaking(now) or \
                    any(not v["started"] for v in self.inflight.values()):
                return None
            ready = [self._candidate(i) for i in self.store.in_states([S.COMPLETED])
                     if not i.later and i.opened_ns >= last_voice]
            ready = [c for c in ready if self.gate.fresh_enough(c, now)]
            if not ready:
                return None
            c = self.gate.order(ready, now)[0]
            item = self._move(c.work_id, S.DELIVERING, f"released as {c.release_id}, awaited",
                              releases=int(c.release_id.rsplit(":r", 1)[1]))
            c.expires_ns = item.expires_ns
            self.inflight[c.release_id] = {"work_id": c.work_id, "kind": c.kind, "released_ns": now,
                                           "started": False, "started_ns": 0}
            self.emit(m.BackendResult(c.release_id, c.work_id, c.text, c.kind, c.expires_ns,
                                      self._asked_ns(c.work_id), self._opened_ns(c.work_id)))
            return c

    def on_speak(self, backend_id: str, epoch: int = 0) -> None:
        """The frontend started speaking a released reply (perhaps an earlier release of one offered again),
        in playback epoch `epoch`: an interrupt that opens that epoch came before it and did not cut it."""
        with self.lock:
            now = self.clock.now_ns()
            rel = self.inflight.get(backend_id)
            if rel is not None:
                if not rel["started"]:
                    rel["started"], rel["started_ns"], rel["epoch"] = True, now, epoch
                return
            work_id, sep, _ = backend_id.rpartition(":r")
            item = self.store.get(work_id) if sep else None
            if item is None or item.state not in (S.COMPLETED, S.DELIVERING):
                return
            for rid, other in list(self.inflight.items()):  # the newer copy will not be spoken: the frontend
                if other["work_id"] == work_id and other["kind"] == "result":  # ignores work it already spoke
                    del self.inflight[rid]
            if item.state == S.COMPLETED:
                self._move(work_id, S.DELIVERING, f"spoken as {backend_id}, an earlier release")
            self.inflight[backend_id] = {"work_id": work_id, "kind": "result", "released_ns": now, "started": True,
                                         "started_ns": now, "epoch": epoch}

    def expire_unspoken(self, now: int) -> None:
        """Released replies the frontend never started: offered again under a new id while fresh and tried
        fewer than max_releases times, else failed; one started but never confirmed ends after playback_wait."""
        hold, wait = self.gate.s.inflight_hold_ms * MS, self.gate.s.playback_wait_ms * MS
        for rid, rel in list(self.inflight.items()):
            if rel["started"] and rel["kind"] == "result" and now - rel["started_ns"] >= wait:
                item = self.store.get(rel["work_id"])
                if item is not None and now - rel["started_ns"] < 2 * self.gate.speak_ns(item.result):
                    continue  # a long reply may still be playing
                del self.inflight[rid]
                if item is not None and item.state == S.DELIVERING:
                    self._fail(item.id, "playback was never confirmed", None)
                continue
            if rel["started"] or now - rel["released_ns"] < hold:
                continue
            del self.inflight[rid]
            item = self.store.get(rel["work_id"])
            if item is None:
                continue
            if rel["kind"] == "failure" and item.notice_state == "released":
                self.store.update(item.id, notice_state="unspoken")
            if rel["kind"] != "result" or item.state != S.DELIVERING:
                continue
            again = Candidate(item.id, "", item.result, "result", item.ready_ns, item.expires_ns)
            if item.releases < self.s.max_releases and self.gate.fresh_enough(again, now):
                self._move(item.id, S.COMPLETED, f"{rid} was never spoken; offered again")
            else:
                self._fail(item.id, "expired" if not self.gate.fresh_enough(again, now) else "never spoken", None)

    def on_delivered(self, work_id: str, result_id: str = "") -> None:
        with self.lock:
            rel = self.inflight.pop(result_id, None)
            kind = rel["kind"] if rel else ("progress" if result_id.endswith(":p") else
                                            "failure" if result_id.endswith(":f") else "result")
            if kind == "progress":
                return
            item = self.store.get(work_id)
            if item is None:
                return
            if kind == "failure":
                if item.notice_state != "delivered":
                    self.store.update(work_id, notice_state="delivered")
                return
            # The current release, or an earlier one being spoken after all (never one cut by an interrupt).
            current = not result_id or result_id == f"{work_id}:r{item.releases}" or rel is not None
            if item.state == S.DELIVERING and current:
                for rid, other in list(self.inflight.items()):  # any other release of it is done with too
                    if other["work_id"] == work_id:
                        del self.inflight[rid]
                self._move(work_id, S.DELIVERED, "every speech piece was played")
            else:
                self.duplicates += 1

    def on_interrupt(self, epoch: int | None = None, by_user: bool = False) -> None:
        """Playback was cut (the user barged in, or an answer took the holding phrase's place): a reply cut
        mid-speech goes back to completed (or fails once tried enough). One the user cut (`by_user`: they
        said stop or asked something new) stays cut: offered again, it would be said before the answer to
        what they asked now. A reply started in the epoch the interrupt opens (in real time its words can
        arrive before the interrupt does) is not cut by it."""
        with self.lock:
            for rid, rel in list(self.inflight.items()):
                if not rel["started"] or (epoch is not None and rel.get("epoch", 0) >= epoch):
                    continue
                del self.inflight[rid]
                item = self.store.get(rel["work_id"])
                if rel["kind"] == "failure" and item is not None and item.notice_state == "released":
                    self.store.update(item.id, notice_state="cancelled" if by_user else "cut")
                if rel["kind"] != "result" or item is None or item.state != S.DELIVERING:
                    continue
                if by_user:
                    self._move(item.id, S.CANCELLED, CUT_BY_USER)
                elif item.releases < self.s.max_releases:
                    self._move(item.id, S.COMPLETED, "the reply was cut by an interrupt; offered again")
                else:
                    self._fail(item.id, "interrupted", None)

    def stop_request(self, said_ns: int) -> list[str]:
        """The user said "stop" (heard until `said_ns`): the work of the request it cut short, the newest one
        asked before it, is given up, unless already said (words due later, a timer's ring, are not
        requests being answered). Returns the ids cancelled."""
        with self.lock:
            asked = [i for i in self.store.all() if i.opened_ns < said_ns and not i.later]
            if not asked:
                return []
            newest = max(i.opened_ns for i in asked)
            gone = []
            for item in asked:
                if item.opened_ns != newest:
                    continue
                for rid, rel in list(self.inflight.items()):
                    if rel["work_id"] == item.id:
                        del self.inflight[rid]
                self.progress.pop(item.id, None)
                if self.cancel(item.id, STOPPED) is not None or item.notice_state in ("pending", "released"):
                    gone.append(item.id)
            return gone

    # --- restart ----------------------------------------------------------------------------------------
    def requeue_stranded(self) -> int:
        """Work left running with no job, because the folder refused its next state (a full disk), is queued
        to run again; raises StoreUnwritable while the folder still refuses. Returns how many."""
        with self.lock:
            stranded = [i for i in self.store.in_states([S.RUNNING]) if i.id not in self.jobs]
            for item in stranded:
                self._move(item.id, S.QUEUED, "run again: the harness folder could not be written")
            return len(stranded)

    def _anchor_laters(self, now: int) -> None:
        """Words due later keep their due time on the machine's clock: a new session's clock starts again at
        0, so the session time stored by an earlier session is set anew from it (a restart within the session
        finds the same time). One due longer ago than ttl_s expires unsaid, as any stale result does."""
        for item in self.store.in_states([S.QUEUED]):
            wall_due = item.args.get("wall_due") if item.later else None
            if isinstance(wall_due, (int, float)):
                due = now + int((wall_due - self.wall()) * 1e9)  # past due while off: said at once, if fresh
                self.store.update(item.id, not_before_ns=due, expires_ns=due + int(self.s.ttl_s * 1e9))

    def resume(self) -> dict[str, int]:
        """After a restart: running work starts again, released replies are offered again under the same id."""
        with self.lock:
            counts = {"requeued": 0, "rereleased": 0, "cancelled": 0}
            now = self.clock.now_ns()
            if not self.clock.virtual:
                self._anchor_laters(now)
            for item in self.store.in_states([S.RUNNING]):
                self._move(item.id, S.QUEUED, "resumed after a harness restart")
                counts["requeued"] += 1
            for item in self.store.in_states([S.CANCELLING]):
                self._move(item.id, S.CANCELLED, "cancelled (the harness restarted meanwhile)")
                counts["cancelled"] += 1
            for item in self.store.in_states([S.DELIVERING]):
                rid = f"{item.id}:r{item.releases}"  # the same id: the frontend ignores a copy it already has
                self.inflight[rid] = {"work_id": item.id, "kind": "result", "released_ns": now, "started": True,
                                      "started_ns": now}
                self.emit(m.BackendResult(rid, item.id, item.result, "result", item.expires_ns,
                                          self._asked_ns(item.id), self._opened_ns(item.id)))
                counts["rereleased"] += 1
            for item in self.store.in_states([S.FAILED]):
                if item.notice_state == "released":
                    rid = f"{item.id}:f"
                    self.inflight[rid] = {"work_id": item.id, "kind": "failure", "released_ns": now, "started": True,
                                          "started_ns": now}
                    self.emit(m.BackendResult(rid, item.id, item.notice, "failure", item.expires_ns,
                                              self._asked_ns(item.id), self._opened_ns(item.id)))
            self.poll()
            return counts
