"""A scripted session with the observer attached and served, run on a thread, for the tests to look at."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from edge.graph.supervisor import SessionReport
from edge.observe.observer import Observer
from edge.observe.server import ObserveServer
from edge.session import ALL_NODES, SessionConfig, make_supervisor


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@dataclass
class Live:
    server: ObserveServer
    observer: Observer
    thread: threading.Thread
    report: list[SessionReport] = field(default_factory=list)
    health: list[tuple[int, str]] = field(default_factory=list)  # every /health answer seen, in order

    def watch_health(self, until_s: float = 60.0) -> None:
        """Poll /health until the session has ended."""
        deadline = time.monotonic() + until_s
        while time.monotonic() < deadline:
            code, body = get(self.server.url + "/health")
            status = json.loads(body)["status"]
            if not self.health or self.health[-1] != (code, status):
                self.health.append((code, status))
            if status == "ended":
                return
            time.sleep(0.05)

    def finish(self) -> SessionReport:
        self.thread.join(timeout=120)
        assert self.report, "the session did not end"
        return self.report[0]


def start_live(cfg: SessionConfig, inprocess: bool = False, node_classes: dict[str, str] | None = None) -> Live:
    observer = Observer()
    server = ObserveServer(observer, "127.0.0.1", 0)
    sup = make_supervisor(cfg, ALL_NODES, inprocess=inprocess, virtual_clock=not cfg.realtime, watcher=observer,
                           node_classes=node_classes)
    live = Live(server, observer, threading.Thread(target=lambda: live.report.append(sup.run()), daemon=True))
    live.thread.start()
    return live
