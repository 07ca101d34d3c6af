"""`venus-edge satellite --uri tcp://HOST:PORT`: serve the device as a Home Assistant voice satellite.

Home Assistant's Wyoming integration connects to this address (add it as a
Wyoming device, or let zeroconf find it). The microphone and speaker are the
same as a voice session's (`--mic`, `--speaker`: a device or a file).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from functools import partial
from pathlib import Path

from wyoming.server import AsyncServer

from edge.wyoming.serve import check_uri

DEFAULT_URI = "tcp://127.0.0.1:10700"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="venus-edge satellite", description=__doc__.split("\n")[0])
    p.add_argument("--uri", default=DEFAULT_URI, help=f"where Home Assistant connects (default {DEFAULT_URI})")
    p.add_argument("--public", action="store_true", help="allow listening beyond this machine (no password)")
    p.add_argument("--wake", default="okay_nabu", help="the wake word heard on the device (default okay_nabu)")
    p.add_argument("--mic", default=None, help="microphone device, or a WAV/FLAC file (default: the system's)")
    p.add_argument("--speaker", default=None, help="speaker device, or a WAV file to write (default: the system's)")
    return p


def open_devices(mic: str | None, speaker: str | None):
    from edge.capture.audio import FileAudioSource, MicSource
    from edge.speech.sinks import DeviceSink, TimelineWavSink
    source = FileAudioSource(mic) if mic and Path(mic).suffix.lower() in (".wav", ".flac") else MicSource(mic)
    sink = TimelineWavSink(speaker) if speaker and speaker.lower().endswith(".wav") else DeviceSink(speaker)
    return source, sink


async def serve(uri: str, mic, speaker, wake: str) -> None:
    from edge.wyoming.satellite import SatelliteHandler
    server = AsyncServer.from_uri(uri)
    await server.start(partial(SatelliteHandler, mic, speaker, wake))
    logging.getLogger(__name__).info("satellite: waiting for Home Assistant on %s (wake word %s)", uri, wake)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    problem = check_uri(args.uri, args.public)
    if problem:
        print(f"venus-edge satellite: {problem}", file=sys.stderr)
        return 2
    from edge.detect.wake import WakeDetector, WakeWordError
    from edge.devices import DeviceError
    try:
        WakeDetector(args.wake).close()
        mic, speaker = open_devices(args.mic, args.speaker)
    except (WakeWordError, DeviceError) as exc:
        print(f"venus-edge satellite: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        asyncio.run(serve(args.uri, mic, speaker, args.wake))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"venus-edge satellite: cannot listen on {args.uri} ({exc.strerror or exc})", file=sys.stderr)
        return 1
    finally:
        speaker.close()
    return 0
