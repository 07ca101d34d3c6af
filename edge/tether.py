"""Child processes that die with the process that started them, even when it is killed with SIGKILL.

Linux only (PR_SET_PDEATHSIG; elsewhere commands run as given). Run as a
file, `python -I -S tether.py PARENT_PID COMMAND...`, it asks the kernel for
SIGKILL when its parent dies, then becomes COMMAND (the request survives
exec), so any program, Python or not, is covered. The file imports nothing
of the project: it runs without the project's path.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Ask for SIGKILL when the parent (strictly: the thread that started us) ends; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def tethered(command: list[str]) -> list[str]:
    """`command`, started through this file so that it dies with the calling process. The caller's thread
    must outlive the child (the kernel watches the thread that forks): start it where you wait for it."""
    if not sys.platform.startswith("linux"):
        return list(command)
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()), *command]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: tether.py PARENT_PID COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), argv[1:]
    die_with_parent()
    if os.getppid() != parent:
        return 1  # the parent died before the request was made: nobody wants the command any more
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
