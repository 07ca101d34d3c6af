"""systemd's notify protocol (READY=1, WATCHDOG=1, STATUS=...) without a library: one datagram each."""
from __future__ import annotations

import os
import socket


class SystemdNotifier:
    """Does nothing unless the service manager set NOTIFY_SOCKET (Type=notify units)."""

    def __init__(self) -> None:
        addr = os.environ.get("NOTIFY_SOCKET", "")
        self.addr = "\0" + addr[1:] if addr.startswith("@") else addr  # '@' means the abstract namespace
        self.sock: socket.socket | None = None
        if self.addr:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            # Never block the supervisor: a manager that does not read (a full queue) loses a datagram, not
            # the session (a blocking send waited forever once about ten went unread).
            self.sock.setblocking(False)

    def notify(self, state: str) -> None:
        if self.sock is None:
            return
        try:
            self.sock.sendto(state.encode(), self.addr)
        except OSError:
            pass  # the manager went away or is not reading: nothing to tell now

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
