"""The harness core: intake, dispatch, running and return of work items, independent of the bus.

Every method takes the one lock, so the node loop and worker threads can
call in. Every state change is stored first, then announced (`emit`) as a
WorkEvent; results leave as BackendResults only through the delivery gate.
"""
from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Callable

from edge import messages as m
from edge.clock import Clock
from edge.harness import states as S
from edge.harness.capability import (CapabilityError, InvalidArguments, Later, Outcome, Registry, RunContext,
                                     Scheduled, TransientError)
from edge.harness.evidence import Evidence, EvidenceRing, evidence_name
from edge.private_files import private_dir
from edge.harness.gate import Candidate, DeliveryGate
from edge.harness.returns import ReturnSide
from edge.harness.jobs import Job, Sleepers
from edge.harness.polish import failure_words, polish
from edge.language.plain_text import plain
from edge.harness.router import Choice, Recent, Router
from edge.harness.settings import HarnessSettings
from edge.harness.store import StoreUnwritable, WorkItem, WorkStore
from edge.wire import Message

log = logging.getLogger(__name__)
S_NS = 1_000_000_000


class Harness(ReturnSide):
    def __init__(self, store: WorkStore, registry: Registry, router: Router, clock: Clock,
                 emit: Callable[[Message], None], settings: HarnessSettings | None = None,
                 evidence_dir: str | Path | None = None) -> None:
        self.store, self.registry, self.router, self.clock, self.emit = store, registry, router, clock, emit
        self.s = settings or HarnessSettings()
        self.lock = threading.RLock()
        self.ring = EvidenceRing(self.s.retention_s, self.s.context_s, self.s.max_frames, self.s.select_frames)
        self.gate = DeliveryGate(self.s.gate)
        self.sleepers = Sleepers(clock, self.lock)
        self.evidence_dir = Path(evidence_dir) if evidence_dir else None
        self.jobs: dict[str, Job] = {}
        self.here: set[str] = set()  # work accepted by this run: the only context a new request may see
        self.progress: dict[str, Candidate] = {}  # pending progress notices, by work id
        self.progress_sent: set[str] = set()
        self.inflight: dict[str, dict] = {}  # release id -> {work_id, kind, released_ns, started, started_ns}
        self.duplicates = 0  # Delivered for something not delivering (re-sent or late): ignored
        self.closed = False
        self.wall: Callable[[], float] = time.time  # the machine's clock: a Later's due time across sessions

    # --- announcing ---------------------------------------------------------------------
    def _move(self, work_id: str, new: str, detail: str = "", **updates) -> WorkItem:
        now = self.clock.now_ns()
        tr = self.store.transition(work_id, new, now, detail, **updates)
        info = {"from": tr.old, "attempts": tr.item.attempts}
        if tr.item.capability:
            info["capability"] = tr.item.capability
        if new == S.FAILED:
            info["notice"] = bool(tr.item.notice)  # a failure still to be told (a file session waits for it)
        self.emit(m.WorkEvent(work_id, new, detail, info))
        if new in S.TERMINAL and tr.item.evidence:
            self._drop_evidence(Path(tr.item.evidence))  # frozen evidence lives as long as its task
        return tr.item

    def _drop_evidence(self, path: Path) -> None:
        """Delete a task's evidence file, but only one this harness wrote inside its own folder."""
        if self.evidence_dir is not None and path.parent.resolve() == self.evidence_dir.resolve():
            path.unlink(missing_ok=True)

    def _fail(self, work_id: str, reason: str, notice: str | None, **updates) -> WorkItem:
        """Failed, with the reason on the timeline; a speakable notice unless it must never be spoken."""
        return self._move(work_id, S.FAILED, reason, reason=reason, notice=notice or "",
                          notice_state="pending" if notice else "", **updates)

    # --- intake ---------------------------------------------------------------------------
    def accept(self, work_id: str, instruction: str, opened_ns: int, index: int) -> bool:
        """Store a delegate durably (True), or recognise one already accepted (False). Then ack."""
        with self.lock:
            now = self.clock.now_ns()
            path = ""
            ev = self.ring.freeze(opened_ns)
            if self.evidence_dir is not None and (len(ev.audio) or ev.frames):
                private_dir(self.evidence_dir, narrow=True)
                target = self.evidence_dir / evidence_name(work_id)
                if not target.exists():
                    ev.save(target)
                path = str(target)
            self.here.add(work_id)
            item = WorkItem(work_id, instruction, opened_ns, index, now, now + int(self.s.ttl_s * S_NS),
                            evidence=path)
            added = self.store.add(item, now)
            if added:
                self.emit(m.WorkEvent(work_id, S.QUEUED, "accepted", {"opened_ns": opened_ns, "index": index}))
            self.poll()
            return added

    def on_audio(self, t_start_ns: int, audio, rate: int = 16000) -> None:
        with self.lock:
            self.ring.add_audio(t_start_ns, audio)
            self.gate.voice.add(t_start_ns, audio, rate)

    def on_frame(self, t_ns: int, image) -> None:
        with self.lock:
            self.ring.add_frame(t_ns, image)

    def on_playback(self, active: bool, t_ns: int) -> None:
        with self.lock:
            self.gate.on_playback(active, t_ns)

    # --- scheduling -------------------------------------------------------------------------
    def poll(self) -> None:
        """Wake waiting tasks, enforce timeouts, expire stale results, start queued work."""
        with self.lock:
            if self.closed:
                return
            now = self.clock.now_ns()
            self.sleepers.wake_due(now)
            for job in list(self.jobs.values()):
                if now >= job.deadline_ns:
                    self._timeout(job)
            for item in self.store.in_states([S.CANCELLING]):
                job = self.jobs.get(item.id)
                if job is None or now - item.updated_ns > self.s.cancel_grace_s * S_NS:
                    self.jobs.pop(item.id, None)
                    self._move(item.id, S.CANCELLED, "cancelled")
            for item in self.store.in_states([S.COMPLETED]):
                if not self.gate.fresh_enough(self._candidate(item), now):
                    self._fail(item.id, "expired", None)  # stale: dropped, never spoken
            self.expire_unspoken(now)
            for item in self.store.pending_notices():
                if now > item.expires_ns:
                    self.store.update(item.id, notice_state="expired")
            active = len(self.jobs)
            for item in self.store.in_states([S.QUEUED]):
                if item.later:  # said when due; it needs no worker
                    if item.not_before_ns <= now:
                        self._say_later(item, now)
                    continue
                if active >= self.s.max_running:
                    continue
                if item.not_before_ns <= now:
                    self._start(item, now)
                    active += 1
            for job in self.jobs.values():
                item = self.store.get(job.work_id)
                if (item is not None and item.state == S.RUNNING and job.work_id not in self.progress_sent
                        and now - item.started_ns >= self.s.progress_after_s * S_NS):
                    self.progress_sent.add(job.work_id)
                    self._progress(job.work_id, self.s.progress_text)

    def _start(self, item: WorkItem, now: int) -> None:
        attempt = item.attempts + 1
        self._move(item.id, S.RUNNING, f"attempt {attempt}", attempts=attempt, started_ns=now)
        timeout = self.s.timeout_for(item.capability)
        job = Job(item.id, attempt, now + int(timeout * S_NS), capability=item.capability)
        self.jobs[item.id] = job
        self.sleepers.started()
        job.thread = threading.Thread(target=self._work, args=(job,), name=f"work-{item.id[-8:]}", daemon=True)
        job.thread.start()

    def _timeout(self, job: Job) -> None:
        self.jobs.pop(job.work_id, None)
        self.progress.pop(job.work_id, None)
        job.cancel()
        self.sleepers.wake_due(self.clock.now_ns())
        item = self.store.get(job.work_id)
        if item is not None and item.state == S.RUNNING:
            what = f"the {job.capability} tool" if job.capability else "the task"
            self._fail(job.work_id, f"timeout: {what} took too long", failure_words(f"{what} took too long"))

    # --- a task, on its worker thread --------------------------------------------------------
    def _work(self, job: Job) -> None:
        try:
            item = self.store.get(job.work_id)
            assert item is not None
            choice = self._choose(job, item)
            cap = self.registry.get(choice.capability)
            assert cap is not None
            with self.lock:
                timeout = self.s.timeout_for(cap.name, getattr(cap, "timeout_s", None))
                job.deadline_ns = item.started_ns + int(timeout * S_NS)
            ctx = RunContext(item.id, item.instruction, job.attempt, job.cancel_event,
                             lambda s: self.sleepers.sleep(job, s), lambda: self._evidence(item),
                             self._previous(choice.continuation_of), lambda t: self._progress(item.id, t),
                             job.on_cancel, scheduled=lambda: self.scheduled(cap.name),
                             unschedule=lambda wid: self.unschedule(cap.name, wid))
            self._finish(job, outcome=cap.run(choice.arguments, ctx))
        except (CapabilityError, StoreUnwritable) as exc:
            self._finish(job, error=exc)
        except Exception as exc:  # a broken tool must not take the harness down
            log.exception("work item %s: capability raised", job.work_id)
            self._finish(job, error=CapabilityError(f"the {job.capability or 'tool'} broke down "
                                                    f"({type(exc).__name__})"))
        finally:
            self.sleepers.ended()

    def _choose(self, job: Job, item: WorkItem) -> Choice:
        if item.capability:  # routed before a retry or a restart: keep the choice
            choice = Choice(item.capability, item.args, item.continuation_of)
        else:
            choice = self.router.route(item.instruction, self.registry, self._recent(item.id))
        self.registry.validate(choice.capability, choice.arguments)  # refused before anything runs
        with self.lock:
            job.capability = choice.capability
            if not item.capability and self.jobs.get(item.id) is job:
                self.store.update(item.id, capability=choice.capability, arguments=json.dumps(choice.arguments),
                                  continuation_of=choice.continuation_of)
                how = f" by {choice.path}" if choice.path else ""
                self.emit(m.WorkEvent(item.id, S.RUNNING, f"routed to {choice.capability}{how}",
                                      {"capability": choice.capability, "arguments": choice.arguments,
                                       "continuation_of": choice.continuation_of, "route": choice.path,
                                       "why": choice.why}))
        return choice

    def _finish(self, job: Job, outcome: Outcome | None = None, error: Exception | None = None) -> None:
        # A new state the folder refuses (a full disk) changes nothing: the item stays as it was, and one left
        # running has no job now (stranded): requeue_stranded runs it again once the folder can be written.
        with self.lock, contextlib.suppress(StoreUnwritable):
            item = self.store.get(job.work_id)
            if self.closed or self.jobs.get(job.work_id) is not job or item is None:
                return  # timed out, cancelled or superseded: this late answer is not used
            del self.jobs[job.work_id]
            self.progress.pop(job.work_id, None)
            if isinstance(error, StoreUnwritable):
                return
            now = self.clock.now_ns()
            if item.state == S.CANCELLING:
                self._move(item.id, S.CANCELLED, "cancelled while running")
            elif item.state != S.RUNNING:
                return
            elif outcome is not None:
                self._complete(item, outcome, now)
            elif isinstance(error, TransientError) and item.attempts <= self.s.retries:
                delay = min(self.s.backoff_max_s, self.s.backoff_s * 2 ** (item.attempts - 1))
                self._move(item.id, S.QUEUED, f"retry in {delay:.1f} s: {plain(str(error))}",
                           not_before_ns=now + int(delay * S_NS))
            elif isinstance(error, InvalidArguments):  # an error's words come from outside too (a skill's stderr)
                self._fail(item.id, f"invalid arguments: {plain(str(error))}", failure_words(plain(str(error))))
            else:
                self._fail(item.id, plain(str(error)), failure_words(plain(str(error))))
            self.poll()
            self.release_awaited()  # the answer asked for in this turn: not held for a boundary

    def _complete(self, item: WorkItem, outcome: Outcome, now: int) -> None:
        text = polish(outcome.text)
        expires = item.expires_ns
        if outcome.ttl_s is not None:
            expires = min(expires, now + int(float(outcome.ttl_s) * S_NS))
        if not text:
            self._fail(item.id, "the result was empty", failure_words("I found nothing to say about it"))
        elif now >= expires:
            self._fail(item.id, "expired", None, expires_ns=expires)  # stale on arrival: never spoken
        else:
            if outcome.later is not None:  # stored before the answer that announces it: a crash between the two
                self._schedule(item, outcome.later, now)  # runs the task again, and the same id is kept once
            self._move(item.id, S.COMPLETED, f"{len(text)} characters", result=text, ready_ns=now,
                       expires_ns=expires)

    # --- words said later, unasked (a timer's ring) ----------------------------------------------
    def _schedule(self, item: WorkItem, later: Later, now: int) -> None:
        """A work item of its own, queued until due: the harness says it then as a result nobody asked for
        at that moment (the frontend speaks it like any other). Its id is the announcing item's, plus -later."""
        after = max(0.0, float(later.after_s))
        due = now + int(after * S_NS)
        text = polish(later.text)
        about = {"about": later.about, "wall_due": self.wall() + after}
        lid, n = f"{item.id}-later", 1
        while (other := self.store.get(lid)) is not None and not (other.later and other.continuation_of == item.id):
            n += 1  # a delegate's id already took the name: the next free one (the same one on a re-run)
            lid = f"{item.id}-later{n}"
        added = self.store.add(WorkItem(lid, item.instruction, item.opened_ns, item.chunk_index, now,
                                        due + int(self.s.ttl_s * S_NS), capability=item.capability,
                                        arguments=json.dumps(about), continuation_of=item.id, not_before_ns=due,
                                        later=text), now)
        if added:
            self.emit(m.WorkEvent(lid, S.QUEUED, f"due in {after:g} s", {"later_of": item.id, "due_ns": due,
                                                                         "capability": item.capability}))

    def _say_later(self, item: WorkItem, now: int) -> None:
        self._move(item.id, S.RUNNING, "due", attempts=item.attempts + 1, started_ns=now)
        self._complete(self.store.get(item.id) or item, Outcome(item.later), now)

    def scheduled(self, capability: str) -> list[Scheduled]:
        """`capability`'s words still waiting to be said, soonest first."""
        with self.lock:
            now = self.clock.now_ns()
            out = [Scheduled(i.id, max(0.0, (i.not_before_ns - now) / S_NS), i.args.get("about", {}))
                   for i in self.store.in_states([S.QUEUED]) if i.later and i.capability == capability]
            return sorted(out, key=lambda sch: sch.due_in_s)

    def unschedule(self, capability: str, work_id: str) -> bool:
        with self.lock:
            item = self.store.get(work_id)
            if item is None or not item.later or item.capability != capability or item.state != S.QUEUED:
                return False
            return self.cancel(work_id, "cancelled by the user") == S.CANCELLED

    def _evidence(self, item: WorkItem) -> Evidence | None:
        if item.evidence and Path(item.evidence).is_file():
            return Evidence.load(Path(item.evidence))
        return None

    def _recent(self, exclude: str) -> list[Recent]:
        done = self.store.in_states([S.COMPLETED, S.DELIVERING, S.DELIVERED])
        # What the store keeps from an earlier run is there to resume that run's work, never to answer a new request.
        return [Recent(i.id, i.instruction, i.result) for i in done[::-1]
                if i.id != exclude and i.id in self.here][:self.s.recent]

    def _previous(self, work_id: str) -> list[tuple[str, str]]:
        chain: list[tuple[str, str]] = []
        while work_id and len(chain) < 3:
            item = self.store.get(work_id)
            if item is None:
                break
            chain.insert(0, (item.instruction, item.result))
            work_id = item.continuation_of
        return chain

    def _progress(self, work_id: str, text: str) -> None:
        with self.lock:
            item = self.store.get(work_id)
            if item is not None and item.state == S.RUNNING:
                now = self.clock.now_ns()
                self.progress[work_id] = Candidate(work_id, f"{work_id}:p", polish(text), "progress", now,
                                                   item.expires_ns)

    # --- cancellation ---------------------------------------------------------------------------
    def cancel(self, work_id: str, reason: str = "cancelled") -> str | None:
        """Cancel one item; returns its new state (None when there is nothing to cancel)."""
        with self.lock:
            item = self.store.get(work_id)
            if item is None or item.terminal:
                if item is not None and item.notice_state in ("pending", "released"):
                    self.store.update(work_id, notice_state="cancelled")
                return None
            self.progress.pop(work_id, None)
            if item.state == S.RUNNING:
                self._move(work_id, S.CANCELLING, reason)
                job = self.jobs.get(work_id)
                if job is not None:
                    job.cancel()
                    self.sleepers.wake_due(self.clock.now_ns())
                return S.CANCELLING
            if item.state == S.CANCELLING:
                return S.CANCELLING
            self._move(work_id, S.CANCELLED, reason)
            return S.CANCELLED

    def new_turn(self, heard_until_ns: int) -> list[str]:
        """The user asked something new, heard until `heard_until_ns`: work delegated for an earlier turn to a
        capability in `stale_after_turn` and not yet spoken is dropped (its answer, or its failure notice, would
        be spoken in the new question's place), released or not: the frontend drops a released copy it holds by
        the same rule (BackendResult.asked_ns). Returns the ids dropped; each gets one WorkEvent saying why."""
        why = "stale: the user asked something new before it was spoken"
        dropped = []
        with self.lock:
            for item in self.store.in_states([S.QUEUED, S.RUNNING, S.COMPLETED, S.DELIVERING, S.FAILED]):
                if item.opened_ns >= heard_until_ns or item.capability not in self.s.stale_after_turn or item.later:
                    continue  # (words said later answer no question: a new one does not make them stale)
                releases = [rid for rid, rel in self.inflight.items()
                            if rel["work_id"] == item.id and rel["kind"] != "progress"]
                if any(self.inflight[rid]["started"] for rid in releases):
                    continue  # already being spoken: the new question does not unsay it
                if item.state == S.DELIVERING or item.notice_state == "released":
                    for rid in releases:
                        del self.inflight[rid]
                if item.state == S.FAILED:
                    if item.notice_state not in ("pending", "released"):
                        continue
                    self.store.update(item.id, notice_state="cancelled")
                    self.emit(m.WorkEvent(item.id, S.FAILED, f"its notice is dropped, {why}",
                                          {"capability": item.capability, "notice": False}))
                else:
                    self.cancel(item.id, why)
                dropped.append(item.id)
        return dropped

    def settle(self, timeout_s: float = 10.0) -> bool:
        return self.sleepers.settle(timeout_s)

    def counts(self) -> dict[str, int]:
        with self.store.lock:
            rows = self.store.db.execute("SELECT state, COUNT(*) FROM items GROUP BY state").fetchall()
        return {state: n for state, n in rows}

    def close(self) -> None:
        """Stop without changing any item: running work stays running in the store and resumes next start."""
        with self.lock:
            self.closed = True
            for job in self.jobs.values():
                job.cancel()
            self.jobs.clear()
            self.sleepers.wake_due(2**62)
