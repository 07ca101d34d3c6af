"""Where the sockets live: ipc:// in a private 0700 runtime directory, inproc:// for threads, or loopback TCP."""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass

BUSES = ("direct", "proxy")


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
        return self.direct.replace("{name}", node)


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
    root = os.environ.get("XDG_RUNTIME_DIR") or None
    path = tempfile.mkdtemp(prefix="venus-edge-", dir=root)
    os.chmod(path, 0o700)
    return Endpoints(f"ipc://{path}/bus-in", f"ipc://{path}/bus-out", f"ipc://{path}/control", path,
                     direct=f"ipc://{path}/pub-{{name}}" if direct else "")


def remove_runtime_dir(ep: Endpoints) -> None:
    if ep.runtime_dir:
        shutil.rmtree(ep.runtime_dir, ignore_errors=True)
