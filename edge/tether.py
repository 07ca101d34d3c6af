"""Child processes that die with the process that started them, even when it is killed with SIGKILL.

Linux only (PR_SET_PDEATHSIG; elsewhere commands run as given). Run as a
file, `python -I -S tether.py PARENT_PID COMMAND...`, it makes a process group
of its own, asks the kernel for SIGTERM when its parent dies, and runs COMMAND
in that group. When the parent dies, or anyone sends the tether SIGTERM, the
whole group gets SIGKILL: COMMAND and everything it started (a shell's
`sleep`, a server's workers), not only the direct child. The caller ends a
command the same way with `kill_group`. The file imports nothing of the
project: it runs without the project's path.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask for `sig` when the parent (strictly: the thread that started us) ends; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_group(pid: int) -> None:
    """SIGKILL to the group a tethered command runs in (its tether's pid), and to `pid` itself in case the tether
    had not made its group yet. What already ended is no error."""
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


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
    if os.getpgid(0) != os.getpid():  # a session or group leader (started with a new session) has its group already
        os.setpgid(0, 0)  # the group the command and all it starts are killed as

    def end_group(_signum: int, _frame: object) -> None:
        os.killpg(0, signal.SIGKILL)  # this process too: nobody waits for the command any more

    signal.signal(signal.SIGTERM, end_group)
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:
        return 1  # the parent died before the request was made: nobody wants the command any more
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        die_with_parent()  # a tether killed outright takes its direct child along
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
