"""`venus-edge wyoming`: serve the device's recognizer and voice to Home Assistant over Wyoming.

Loopback by default: a Wyoming server has no authentication, so listening on
every interface takes `--public`. Bound beyond loopback, the service is
announced over zeroconf so Home Assistant finds it (`--zeroconf off` stops that).
"""
from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import shutil
import sys
from functools import partial
from pathlib import Path
from urllib.parse import urlparse

from wyoming.server import AsyncServer

from edge.detect.asr import MODELS as ASR_MODELS
from edge.wyoming.handler import PIPER_INFO, Handler, Models
from edge.wyoming.voices import VoiceInfo, Voices

log = logging.getLogger(__name__)
DEFAULT_URI = "tcp://127.0.0.1:10300"
DEFAULT_ASR = "base"  # the recognizer a voice session reads the user's turns with


def check_uri(uri: str, public: bool) -> str | None:
    """One sentence when the URI is wrong or would expose the models, else None."""
    u = urlparse(uri)
    if u.scheme == "unix" or uri == "stdio://":
        return None
    if u.scheme != "tcp" or not u.hostname or u.port is None:
        return f"--uri {uri!r} is not a Wyoming address; use tcp://HOST:PORT (e.g. {DEFAULT_URI}) or unix://PATH"
    try:
        loopback = ipaddress.ip_address(u.hostname).is_loopback
    except ValueError:
        loopback = u.hostname == "localhost"
    if not loopback and not public:
        return (f"--uri {uri} listens beyond this machine and Wyoming has no password; "
                "add --public to allow it, or use tcp://127.0.0.1:PORT")
    return None


def state_dir(given: str | None) -> Path:
    """Where the conversation handler keeps its work: --state, else systemd's StateDirectory, else the user's
    state folder (never the working directory, which a service does not choose)."""
    if given:
        return Path(given)
    if os.environ.get("STATE_DIRECTORY"):
        return Path(os.environ["STATE_DIRECTORY"].split(":")[0]) / "wyoming"
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "venus-edge" / "wyoming"


def installed_voices(threads: int) -> Voices:
    """Piper (the default) and, where Debian's espeak-ng is installed, espeak-ng's en-us voice."""
    from edge.speech.piper.voice import PiperVoice
    voices = {"piper": (PiperVoice(threads), PIPER_INFO)}
    if shutil.which("espeak-ng"):
        from edge.speech.espeak import EspeakDecoder
        voices["espeak"] = (EspeakDecoder(), VoiceInfo("espeak", "espeak-ng (en-us)", "en-US"))
    return Voices(voices)


def load_models(threads: int, harness: dict | None = None, asr: str = DEFAULT_ASR) -> Models:
    from edge.detect.asr import Transcriber
    answerer = None
    if harness is not None:
        from edge.wyoming.converse import Conversation
        answerer = Conversation(harness)
        for p in answerer.problems:
            log.warning("wyoming: %s", p)
    beam = 5 if asr == "base" else 1  # as a voice session reads the user's turns
    return Models(Transcriber(threads, asr, beam_size=beam), installed_voices(threads), answerer)


def announcement(uri: str, mode: str, name: str | None = None):
    """The zeroconf announcement for a TCP server at `uri`, or None (off, loopback on auto, not TCP)."""
    u = urlparse(uri)
    if u.scheme != "tcp" or not u.hostname or u.port is None:
        return None
    from edge.wyoming.announce import Announcement, should_announce
    return Announcement(u.hostname, u.port, name) if should_announce(u.hostname, mode) else None


async def serve(uri: str, models: Models, ready: asyncio.Event | None = None, zeroconf: str = "auto",
                zeroconf_name: str | None = None) -> None:
    server = AsyncServer.from_uri(uri)
    await server.start(partial(Handler, models))
    log.info("wyoming: serving on %s", uri)
    announce = announcement(uri, zeroconf, zeroconf_name)
    try:
        if announce is not None:
            await announce.start()
            log.info("wyoming: announced as %s on %s", announce.name, ", ".join(announce.addresses))
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()
    finally:
        if announce is not None:
            await announce.stop()
        await server.stop()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="venus-edge wyoming", description=__doc__.split("\n")[0])
    p.add_argument("--uri", default=DEFAULT_URI, help=f"where to listen (default {DEFAULT_URI})")
    p.add_argument("--public", action="store_true", help="allow listening beyond this machine (no password)")
    p.add_argument("--zeroconf", choices=("auto", "on", "off"), default="auto",
                   help="announce the service for Home Assistant's discovery (auto: when not bound to loopback)")
    p.add_argument("--zeroconf-name", help="the announced instance name (default venus-edge-HOSTNAME-PORT)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--asr", choices=ASR_MODELS, default=DEFAULT_ASR,
                   help=f"the speech recognizer (default {DEFAULT_ASR}, as a voice session; tiny.en: about half "
                        "the compute, more words wrong)")
    p.add_argument("--harness", help="a JSON file of harness settings: answer transcripts with its tools and chat "
                                     "(default: the voice session's own: built-in tools, the embedded chat model)")
    p.add_argument("--no-handle", action="store_true",
                   help="serve only recognition and voices; Home Assistant's own agent answers transcripts")
    p.add_argument("--state", help="where the conversation handler keeps its work (default: $STATE_DIRECTORY/"
                                   "wyoming under systemd, else ~/.local/state/venus-edge/wyoming)")
    p.add_argument("--verbose", action="store_true", help="log every request the harness makes (quiet by default)")
    return p


def harness_config(args: argparse.Namespace) -> dict | None:
    """The conversation handler's harness settings: --harness's file, else those a voice session runs with
    (its built-in tools and the chat model a default session uses); None with --no-handle."""
    if args.no_handle:
        return None
    from edge.harness.general_model import with_general_chat
    harness: dict = {}
    if args.harness:
        from edge.harness.settings import load_harness_config
        harness = load_harness_config(args.harness)
    harness = with_general_chat(harness, {"frontend": "default", "threads": args.threads})
    if args.state or not harness.get("dir"):
        harness["dir"] = str(state_dir(args.state))
    return harness


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    problem = check_uri(args.uri, args.public)
    if problem:
        print(f"venus-edge wyoming: {problem}", file=sys.stderr)
        return 2
    try:
        harness = harness_config(args)
    except ValueError as exc:
        print(f"venus-edge wyoming: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.verbose:  # one line per HTTP request to an MCP server or Home Assistant is noise to a user
        for name in ("httpx", "httpcore", "mcp"):
            logging.getLogger(name).setLevel(logging.WARNING)
    if harness is not None:
        log.info("wyoming: the conversation handler keeps its work in %s", harness["dir"])
    try:
        models = load_models(args.threads, harness, args.asr)
    except Exception as exc:  # noqa: BLE001  (a missing model file: one sentence)
        print(f"venus-edge wyoming: the models could not be loaded ({exc})", file=sys.stderr)
        return 1
    try:
        asyncio.run(serve(args.uri, models, zeroconf=args.zeroconf, zeroconf_name=args.zeroconf_name))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"venus-edge wyoming: cannot listen on {args.uri} ({exc.strerror or exc})", file=sys.stderr)
        return 1
    return 0
