#!/usr/bin/env python3
"""The service entry point (systemd unit and container): check the profile, run `venus-edge`, feed the watchdog.

Environment (from /etc/venus-edge/profile.env and venus-edge.env):
  VENUS_BOARD, VENUS_VARIANT, ...  the board profile; a profile that does not fit is refused (exit 78)
  VENUS_CONTEXT, VENUS_KV_TYPE,    passed as --context, --kv-type, --video-fps (and --bundle, --voice once
  VENUS_VISION_FPS, VENUS_BUNDLE   the bundle is there) unless VENUS_ARGS sets them
  VENUS_SESSION_SECONDS            passed as --max-seconds: the session ends, systemd starts a new one with a
                                   new journal, and the journal folder is pruned (an always-on device)
  VENUS_ARGS                       arguments for `venus-edge`, shell-quoted; checked with the runtime's own
                                   parser before it starts (refused: exit 78, no restart loop)
  VENUS_EDGE_BIN                   the runtime (default: `venus-edge` next to this Python)
  VENUS_RUNTIME_NOTIFIES=1         the runtime sends READY/WATCHDOG itself: no fallback from here

Watchdog: the runtime gets its own NOTIFY_SOCKET, relayed to systemd's. Once it sends
WATCHDOG=1 itself (its supervisor, on every round of fresh node heartbeats) only its
messages reach systemd; until then this wrapper sends READY=1 when the runtime has started
and WATCHDOG=1 while its process is alive.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EX_CONFIG = 78  # the unit's RestartPreventExitStatus: a refused profile must not restart in a loop
HERE = Path(__file__).resolve().parent


def _address(path: str) -> str:
    return "\0" + path[1:] if path.startswith("@") else path  # '@' names an abstract socket


class Relay:
    """Datagram socket handed to the runtime; forwards its sd_notify messages upstream."""

    def __init__(self, upstream: str | None) -> None:
        self.upstream = upstream
        self.out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) if upstream else None
        if self.out is not None:
            self.out.setblocking(False)  # a stalled systemd must never stall the runtime's supervision
        self.dir = tempfile.mkdtemp(prefix="venus-notify-")
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.setblocking(False)
        self.child_watchdog = False
        self.child_ready = False

    def send(self, message: str) -> None:
        if self.out is not None and self.upstream:
            try:
                self.out.sendto(message.encode(), _address(self.upstream))
            except OSError as e:  # systemd gone (shutdown): nothing to tell
                print(f"venus-edge service: sd_notify failed: {e}", file=sys.stderr)

    def pump(self) -> None:
        while True:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                return
            text = data.decode(errors="replace")
            keys = {line.partition("=")[0] for line in text.splitlines()}
            self.child_watchdog |= "WATCHDOG" in keys
            self.child_ready |= "READY" in keys
            self.send(text)

    def close(self) -> None:
        self.sock.close()
        for p in (self.path, self.dir):
            try:
                os.rmdir(p) if p == self.dir else os.unlink(p)
            except OSError:
                pass


def check_profile(env: dict[str, str]) -> str | None:
    """None when the profile fits (or there is none); otherwise the refusal, with the numbers."""
    if "VENUS_BOARD" not in env:
        return None
    sys.path.insert(0, str(HERE))
    from profiles import check, meminfo_gib  # noqa: E402  (next to this file, staged together)
    try:
        r = check(env, meminfo_gib(Path(env.get("VENUS_MEMINFO", "/proc/meminfo"))))
    except ValueError as e:
        return f"venus-edge service: {e}"
    if r.fits:
        print(f"venus-edge service: profile {env['VENUS_BOARD']}: {r.reason}", flush=True)
        return None
    return (f"venus-edge refuses to start: profile {env['VENUS_BOARD']} ({r.variant} {r.llm_type}, "
            f"{r.context} tokens) {r.reason}")


# Profile and site settings handed to the runtime as flags, unless VENUS_ARGS already sets them.
PROFILE_FLAGS = (("--bundle", "VENUS_BUNDLE"), ("--voice", "VENUS_VOICE"), ("--video-fps", "VENUS_VISION_FPS"),
                 ("--context", "VENUS_CONTEXT"), ("--kv-type", "VENUS_KV_TYPE"),
                 ("--max-seconds", "VENUS_SESSION_SECONDS"))
_UNSET = object()


class ConfigError(Exception):
    """Settings that no restart can fix: the message is one sentence, the exit status EX_CONFIG."""


def _present(value: str) -> bool:
    """A bundle path (or 'bundle:PATH') counts only once a bundle with a manifest is there."""
    path = value.split(":", 1)[1] if value.startswith("bundle:") else value
    return not (value.startswith("bundle:") or value.startswith("/")) or (Path(path) / "manifest.json").is_file()


def _parse(parser: argparse.ArgumentParser, args: list[str], dests: list[str]) -> argparse.Namespace:
    """The runtime's own parser over these arguments; a refusal becomes a ConfigError with argparse's reason."""
    # argparse fills in a default only where the namespace has no value yet: what stays _UNSET was not given
    namespace = argparse.Namespace(**{d: _UNSET for d in dests})
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(args, namespace)
    except SystemExit:
        reason = err.getvalue().strip().splitlines()[-1:] or ["unknown argument"]
        raise ConfigError(f"venus-edge refuses these arguments ({reason[0].split(': error: ')[-1]}): "
                          f"{shlex.join(args)}; fix VENUS_ARGS in venus-edge.env or the profile") from None


def runtime_argv(env: dict[str, str], parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The runtime's command line: VENUS_ARGS, then the profile's settings it leaves out, checked by its parser."""
    if parser is None:
        from edge.cli import session_parser  # the installed runtime's own parser: flags cannot drift apart

        parser = session_parser()
    default = Path(sys.executable).with_name("venus-edge")
    binary = env.get("VENUS_EDGE_BIN") or (str(default) if default.exists() else "venus-edge")
    try:
        args = shlex.split(env.get("VENUS_ARGS", ""))
    except ValueError as e:
        raise ConfigError(f"venus-edge service: VENUS_ARGS is not valid shell quoting ({e}); fix venus-edge.env")
    dest = {opt: a.dest for a in parser._actions for opt in a.option_strings}
    missing = [flag for flag, _ in PROFILE_FLAGS if flag not in dest]
    if missing:
        raise ConfigError(f"this venus-edge has no {', '.join(missing)} option; reinstall it with setup.sh")
    given = _parse(parser, args, [dest[f] for f, _ in PROFILE_FLAGS])
    for flag, var in PROFILE_FLAGS:
        if getattr(given, dest[flag]) is _UNSET and env.get(var) and _present(env[var]):
            args += [flag, env[var]]
    _parse(parser, args, [])
    return [binary, *args]


def uses_embedded_default(argv: list[str], parser: argparse.ArgumentParser | None = None) -> bool:
    """Whether this command line runs the embedded default frontend (no bundle, script or other frontend)."""
    if parser is None:
        from edge.cli import session_parser

        parser = session_parser()
    a = _parse(parser, argv[1:], [])
    return (a.frontend or "default") == "default" and not a.bundle and not a.script


def missing_default_models() -> list[str]:
    """The embedded default's model packages that are not installed (each as its pip command)."""
    from edge.backends.locate import PIPER_JOE, QWEN_PARTS, SILERO_VAD, WHISPER_TINY_EN, ModelMissing

    missing = []
    for model in (*QWEN_PARTS, SILERO_VAD, PIPER_JOE, WHISPER_TINY_EN):
        try:
            model.locate()
        except ModelMissing:
            missing.append(model.pip)
    return missing


def watchdog_period(env: dict[str, str]) -> float | None:
    usec = env.get("WATCHDOG_USEC", "")
    return int(usec) / 2e6 if usec.isdigit() and int(usec) > 0 else None


def main() -> int:
    env = dict(os.environ)
    refusal = check_profile(env)
    if refusal:
        print(refusal, file=sys.stderr, flush=True)
        return EX_CONFIG
    relay = Relay(env.pop("NOTIFY_SOCKET", None))
    env["NOTIFY_SOCKET"] = relay.path
    # WATCHDOG_PID names this wrapper; without it the runtime's sd_notify checks skip the PID test
    env.pop("WATCHDOG_PID", None)
    period = watchdog_period(env)
    if env.get("VENUS_RUNTIME_NOTIFIES") == "1":
        relay.child_ready = relay.child_watchdog = True
    try:
        argv = runtime_argv(env)
        missing = missing_default_models() if uses_embedded_default(argv) else []
    except ConfigError as e:
        relay.close()
        print(e, file=sys.stderr, flush=True)
        return EX_CONFIG
    if missing:
        # Before a bundle arrives the embedded default runs; without its models nothing can, and a
        # restart would not change that.
        relay.close()
        print(f"venus-edge service: no bundle in {env.get('VENUS_BUNDLE', 'VENUS_BUNDLE')} yet and the embedded "
              f"default's models are not installed; copy a bundle there and restart venus-edge, or install the "
              f"models with setup.sh (missing: {', '.join(m.split()[-1] for m in missing)})", file=sys.stderr, flush=True)
        return EX_CONFIG
    try:
        child = subprocess.Popen(argv, env=env)
    except FileNotFoundError as e:
        relay.close()
        print(f"venus-edge service: cannot start the runtime ({e.filename} not found); run setup.sh first.",
              file=sys.stderr)
        return EX_CONFIG
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    started = time.monotonic()
    ready_after = float(env.get("VENUS_READY_AFTER_S", "2.0"))
    last_ping = 0.0
    try:
        while child.poll() is None:
            relay.pump()
            now = time.monotonic()
            # READY from the runtime wins; otherwise the runtime is up once it has lived a while.
            if not relay.child_ready and now - started > ready_after:
                relay.child_ready = True
                relay.send("READY=1\nSTATUS=venus-edge running")
            if period and not relay.child_watchdog and now - last_ping >= period:
                relay.send("WATCHDOG=1")
                last_ping = now
            time.sleep(0.1)
        relay.pump()
    finally:
        relay.close()
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


if __name__ == "__main__":
    sys.exit(main())
