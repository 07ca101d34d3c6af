"""Where the sockets live: ipc:// in a private 0700 runtime directory, inproc:// for threads, or loopback TCP."""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass

from edge.scratch import ScratchDir, sweep

BUSES = ("direct", "proxy")
PREFIX = "venus-edge-run-"
_held: dict[str, ScratchDir] = {}  # runtime folders of this process's sessions, locked until removed


@dataclass(frozen=True)
class Endpoints:
    bus_in: str  # nodes PUB-connect here (supervisor XSUB binds)
    bus_out: str  # nodes SUB-connect here (supervisor XPUB binds)
    control: str  # nodes DEALER-connect here (supervisor ROUTER binds)
    runtime_dir: str = ""
    direct: str = ""  # each node's PUB also binds this, "{name}" filled in; empty: everything via the proxy

    def as_dict(self) -> dict[str, str]:
        return {"bus_in": self.bus_in, "bus_out": self.bus_out, "control": self.control,
                "runtime_dir": self.runtime_dir, "direct": self.direct}

    def direct_of(self, node: str) -> str:
        # A short fixed-length tag, not the name: socket paths must stay under the Unix limit for any node name.
        return self.direct.replace("{name}", hashlib.sha1(node.encode()).hexdigest()[:8])


def make_endpoints(transport: str = "ipc", base_port: int = 0, bus: str = "direct") -> Endpoints:
    """Create endpoints for one session. ipc gets a fresh directory readable by this user only.

    `bus` "direct": nodes also publish on their own socket and subscribe to each other there (fewer hops),
    the proxy still carrying everything for the recorder; "proxy": every message through the proxy only.
    TCP has a port per socket, so it always uses the proxy."""
    if bus not in BUSES:
        raise ValueError(f"unknown bus {bus!r}; use direct or proxy")
    direct = bus == "direct"
    if transport == "inproc":
        tag = os.urandom(4).hex()
        return Endpoints(f"inproc://bus-in-{tag}", f"inproc://bus-out-{tag}", f"inproc://control-{tag}",
                         direct=f"inproc://pub-{tag}-{{name}}" if direct else "")
    if transport == "tcp":
        if not base_port:
            raise ValueError("TCP transport needs a base port (three ports from it are used on 127.0.0.1)")
        host = "tcp://127.0.0.1"
        return Endpoints(f"{host}:{base_port}", f"{host}:{base_port + 1}", f"{host}:{base_port + 2}")
    if transport != "ipc":
        raise ValueError(f"unknown transport {transport!r}; use ipc, inproc or tcp")
    root = _socket_root()
    sweep(PREFIX, root)  # what a killed supervisor left
    scratch = ScratchDir(PREFIX, root)
    path = str(scratch.path)
    _held[path] = scratch
    return Endpoints(f"ipc://{path}/bus-in", f"ipc://{path}/bus-out", f"ipc://{path}/control", path,
                     direct=f"ipc://{path}/pub-{{name}}" if direct else "")


# A Unix socket path holds at most 107 bytes; the longest name placed in the directory is below.
_SUN_PATH_MAX = 107
_LONGEST_SOCKET = "/pub-" + "n" * 8  # a node's own publisher socket (see direct_of)
_MKDTEMP_NAME = len(PREFIX) + 8


def _socket_root() -> str | None:
    """XDG_RUNTIME_DIR (or TMPDIR) when socket paths inside it fit; /tmp when they would not."""
    root = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    if len(os.fsencode(root)) + 1 + _MKDTEMP_NAME + len(_LONGEST_SOCKET) <= _SUN_PATH_MAX:
        return root
    return "/tmp"


def remove_runtime_dir(ep: Endpoints) -> None:
    if ep.runtime_dir:
        scratch = _held.pop(ep.runtime_dir, None)
        if scratch is not None:
            scratch.remove()
