#!/usr/bin/env python3
"""First-boot progress: written by setup.sh at each step, read by `venusctl.sh status`, served as a page
while venus-edge is not installed yet (the assistant's own --http page only exists once it runs).
Standard library only: it runs on the device's system Python before the venv exists.
  progress.py write FILE STEP TOTAL TEXT [--offline]    record a step (STEP 0: started, STEP = TOTAL: done)
  progress.py fail FILE TEXT                            record that the first boot stopped
  progress.py show FILE                                 one line for a person
  progress.py serve FILE HOST:PORT                      /firstboot.json and a page that refreshes itself
"""
from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def write(path: Path, state: dict) -> None:
    # whole-file replace, so a reader never sees half a record
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def record(path: Path, step: int, total: int, text: str, offline: bool) -> None:
    old = read(path) or {}
    now = time.time()
    state = {"step": step, "total": total, "text": text, "offline": offline,
             "started": old.get("started", now) if step else now, "updated": now,
             "state": "done" if step >= total else "running"}
    write(path, state)


def describe(state: dict | None, now: float | None = None) -> str:
    if state is None:
        return "first boot: no progress recorded (not started, or installed another way)."
    now = time.time() if now is None else now
    minutes = (now if state["state"] == "running" else state["updated"]) - state["started"]
    source = "offline, from the staged wheels" if state.get("offline") else "from the network"
    if state["state"] == "failed":
        return f"first boot: FAILED at step {state['step']}/{state['total']}: {state['text']} (see journalctl -u venus-firstboot)"
    if state["state"] == "done":
        return f"first boot: done in {minutes / 60:.0f} min ({source})."
    return (f"first boot: step {state['step']}/{state['total']}, {state['text']} ({source}; "
            f"{minutes / 60:.0f} min so far)")


PAGE = """<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>venus-edge first boot</title><body style="font-family:sans-serif;margin:2em">
<h1>venus-edge is being set up</h1><p>{line}</p><progress value="{step}" max="{total}"></progress>
<p>The assistant's own page appears at this address once the set-up is done.</p></body>"""


def serve(path: Path, address: str) -> None:
    host, _, port = address.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            state = read(path)
            if self.path == "/firstboot.json":
                body, kind = json.dumps(state).encode(), "application/json"
            else:
                html = PAGE.format(line=describe(state), step=(state or {}).get("step", 0),
                                   total=(state or {}).get("total", 1))
                body, kind = html.encode(), "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer((host.strip("[]") or "127.0.0.1", int(port)), Handler).serve_forever()


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("write", "fail", "show", "serve"):
        print(__doc__.split("\n", 3)[3], file=sys.stderr)
        return 2
    cmd, path = argv[0], Path(argv[1])
    if cmd == "write":
        offline = "--offline" in argv
        step, total, text = argv[2:5]
        record(path, int(step), int(total), text, offline)
    elif cmd == "fail":
        state = read(path) or {"step": 0, "total": 1, "started": time.time(), "offline": False}
        write(path, {**state, "state": "failed", "text": argv[2], "updated": time.time()})
    elif cmd == "show":
        print(describe(read(path)))
    else:
        serve(path, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
