"""`venus-edge`: run a full-duplex session, replay a journal, or benchmark a part of the runtime."""
from __future__ import annotations

import argparse
import importlib
import logging
import math
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from edge.detect.asr import MODELS as ASR_MODELS
from edge.formats import KV_TYPES

BENCHES = ("graph", "voice", "harness", "llm", "duplex", "speaker", "memory", "asr", "idle", "answers", "chat", "wake",
           "tool", "camera")


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens above 0, not {text!r}")
    return int(text)


def _number(words: str, most: float, zero: bool = False) -> Callable[[str], float]:
    """An argparse type: a number above 0 (from 0 with `zero`) and at most `most`; anything else (nan, inf, -5,
    a word) is one sentence saying `words`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not ((0.0 <= value) if zero else (0.0 < value)) or not value <= most:  # both false for nan
            raise argparse.ArgumentTypeError(f"must be {words}, not {text!r}")
        return value
    return parse


def _positive(unit: str, most: float) -> Callable[[str], float]:
    return _number(f"{unit} above 0 and at most {most:.0f}", most)


_fps = _number("frames per second between 0 and 120", 120.0, zero=True)
_seconds = _number("seconds from 0 to 3600", 3600.0, zero=True)


def example_wav() -> str:
    return str(resources.files("edge") / "assets" / "two_plus_two.wav")


def judge_on(choice: str, frontend: str) -> bool:
    """`--judge`: auto leaves a bundle's interruptions to its model (as the reference does), else the judge's."""
    return choice == "on" or (choice == "auto" and not frontend.startswith("bundle"))


def session_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="venus-edge",
        description="Run the full-duplex assistant as a graph of local processes: capture -> frontend (the "
                    "one-second chunk loop) -> speech, with the harness doing delegated work in the background "
                    "and every message recorded in a journal.",
        epilog="Other commands: `venus-edge replay JOURNAL [--verify]` re-runs a recorded session; "
               "`venus-edge trace JOURNAL -o trace.json` writes it for Perfetto; "
               f"`venus-edge bench {{{','.join(BENCHES)}}}` measures a part of the runtime.")
    io = p.add_argument_group("input and output")
    io.add_argument("--mic", help="microphone (device index or name; default device if omitted) or a WAV/FLAC file")
    io.add_argument("--camera", help="camera index (0), video file, image folder, 'gst:PIPELINE' or 'picamera'")
    io.add_argument("--speaker", help="speaker (device index or name), a WAV file (time-aligned, silence "
                                      "included) or 'null'; default: the default output device")
    io.add_argument("--example", action="store_true", help="use the bundled spoken question as the microphone "
                                                           "and write the reply to reply.wav")
    io.add_argument("--journal", help="write the session journal here (default: sessions/<time>.journal)")
    io.add_argument("--list-devices", action="store_true", help="list microphones, speakers and cameras, then exit")
    model = p.add_argument_group("models")
    model.add_argument("--frontend", default=None,
                       help="default (small models shipped in packages), scripted:FILE, null, or bundle:DIR")
    model.add_argument("--bundle", help="an exported Realtime-Venus bundle directory (same as --frontend bundle:DIR)")
    model.add_argument("--script", help="a scripted frontend file (same as --frontend scripted:FILE)")
    model.add_argument("--prompt", metavar="TEXT", help="text typed to a bundle's model before the first chunk: "
                       "it enters the first unit after its audio, as the reference feeds a unit's text")
    model.add_argument("--voice", default=None, help="speech decoder: piper (default), espeak, null, or bundle:DIR")
    model.add_argument("--asr", choices=ASR_MODELS, default=None,
                       help="the embedded default's speech recognizer: base (default for the user's turns; "
                            "reads more voices and names right) or tiny.en (about half the compute); speech over a "
                            "reply is judged with tiny.en unless this names one")
    model.add_argument("--context", type=_positive_int, default=None,
                       help="LLM context in tokens (default: the frontend's own, 8192 for a bundle)")
    model.add_argument("--kv-type", choices=KV_TYPES, default=None,
                       help="LLM KV cache type: f16 (default), q8_0 or q4_0 (half or a quarter of the memory)")
    model.add_argument("--threads", type=int, default=None, help="threads for model inference (default: 1 on "
                                                                  "machines with 2 cores or fewer, else 4)")
    run = p.add_argument_group("running")
    run.add_argument("--video-fps", type=_fps, default=1.0,
                     help="camera frames captured per second (default 1, at most one a chunk; 0 leaves the "
                          "camera unread)")
    run.add_argument("--frame-side", type=int, default=640, help="a camera frame's longer side in pixels on the "
                     "bus and in the journal (default 640; 0: as captured)")
    run.add_argument("--frame-quality", type=int, default=80, help="JPEG quality of camera frames (default 80; 0: "
                     "raw frames, about 5 GB an hour of journal at 1280x720)")
    run.add_argument("--chunk-ms", type=int, default=1000, help="chunk length in ms (default 1000)")
    run.add_argument("--echo-cancel", choices=("auto", "on", "off"), default="auto",
                     help="cancel the assistant's own voice in the microphone (auto: on for a live microphone; "
                          "off where the device already cancels echo)")
    run.add_argument("--judge", choices=("auto", "on", "off"), default="auto",
                     help="the barge-in judge: duck the reply when the user talks over it and end the turn when it "
                          "decides the user took the floor (auto: on for the embedded default; off for a bundle, "
                          "whose model decides itself, as the reference's does: see docs/conformance.md)")
    run.add_argument("--fast", action="store_true", help="read a file input as fast as the graph allows, on a "
                                                         "virtual clock (default: paced in real time)")
    run.add_argument("--wake", metavar="NAME", help="listen only after this wake word until the conversation is "
                                                   "idle: okay_nabu, okay_nabu_micro, hey_jarvis, hey_mycroft or "
                                                   "alexa (default: always listening)")
    run.add_argument("--wake-idle", type=float, default=None, metavar="SECONDS",
                     help="with --wake: seconds of quiet that end the conversation (default 10)")
    run.add_argument("--harness", help="a JSON file with the harness settings (skills, MCP servers, chat endpoint)")
    run.add_argument("--inprocess", action="store_true", help="run the nodes as threads of one process")
    run.add_argument("--bus", choices=("direct", "proxy"), default="direct",
                     help="direct (default): nodes send to each other in one hop, the supervisor's proxy carrying "
                          "a copy of everything for the journal; proxy: every message through the proxy only")
    run.add_argument("--answer-wait", type=_seconds, default=None, metavar="SECONDS",
                     help="with a file as the microphone: after its end, keep listening to a quiet room up to "
                          "this many seconds of session time (default 30; with --fast alike) while the reply is "
                          "unfinished or a delegated request still waits for its answer to be spoken (a timer "
                          "it set, for its ring: 'set a timer for two minutes' needs 130); what is "
                          "still unanswered then is named in one sentence on stderr and in the journal; 0 ends "
                          "the session at the file's end")
    run.add_argument("--max-seconds", type=_positive("seconds", 366 * 86400), help="stop the session after this long")
    run.add_argument("--journal-days", type=_positive("days", 36500), default=None,
                     help="at start, remove sessions older than this from the journal folder (default 7)")
    run.add_argument("--journal-mb", type=_positive("megabytes", 1e9), default=None,
                     help="at start, remove the oldest sessions until the rest fit in this many MB (default 1024)")
    run.add_argument("--http", metavar="HOST:PORT", help="serve /health, /metrics and a live timeline page at / "
                                                         "here while the session runs (e.g. 127.0.0.1:8765)")
    run.add_argument("--http-public", action="store_true", help="allow --http on an address other hosts can "
                                                                 "reach (it has no authentication)")
    run.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    return p


def run(argv: list[str]) -> int:
    args = session_parser().parse_args(argv)
    logging.basicConfig(level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)],
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.list_devices:
        from edge.devices import list_devices
        print(list_devices())
        return 0
    from edge.capture.audio import mic_is_file
    from edge.session import SessionConfig, SettingsError, make_supervisor, nodes_for
    from edge.graph.supervisor import SupervisorSettings
    from edge.timeline.summary import print_summary

    if args.wake:
        from edge.detect.wake import WakeDetector, WakeWordError
        try:
            WakeDetector(args.wake).close()  # a missing package or an unknown name is said before anything starts
        except WakeWordError as exc:
            print(f"venus-edge: {exc}", file=sys.stderr)
            return 2
    frontend = args.frontend or (f"bundle:{args.bundle}" if args.bundle else None) or \
        (f"scripted:{args.script}" if args.script else "default")
    voice = args.voice or (f"bundle:{args.bundle}" if args.bundle else "piper" if frontend == "default" else "espeak")
    mic, speaker = args.mic, args.speaker
    if args.example:
        mic, speaker = mic or example_wav(), speaker or "reply.wav"
    if mic_is_file(mic) and not Path(mic).is_file():
        print(f"venus-edge: the input file {mic} does not exist.", file=sys.stderr)
        return 2
    if args.prompt and not frontend.startswith("bundle"):
        print("venus-edge: --prompt types text to a bundle's model; give --bundle DIR.", file=sys.stderr)
        return 2
    harness = {}
    if args.harness:
        from edge.harness.settings import load_harness_config
        try:
            harness = load_harness_config(args.harness)
        except ValueError as exc:
            print(f"venus-edge: {exc}", file=sys.stderr)
            return 2
    observe = None
    if args.http:
        from edge.observe.server import AddressError, parse_address
        try:
            address = parse_address(args.http, args.http_public)
        except AddressError as exc:
            print(f"venus-edge: {exc}", file=sys.stderr)
            return 2
    from edge.devices import DeviceError, check_devices
    try:  # after the settings, before any model loads: a missing device is one sentence, not a failed node
        check_devices(mic, speaker or "default", args.camera, mic_is_file(mic))
    except DeviceError as exc:
        print(f"venus-edge: {exc}", file=sys.stderr)
        return 2
    journal = args.journal or f"sessions/{time.strftime('%Y%m%d-%H%M%S')}.journal"
    if args.journal is None or args.journal_days or args.journal_mb:  # a folder of sessions kept on the device
        from edge.timeline.retention import Retention, prune_sessions
        try:
            keep = Retention(**{k: v for k, v in (("max_age_days", args.journal_days),
                                                  ("max_total_mb", args.journal_mb)) if v is not None})
        except ValueError as exc:
            print(f"venus-edge: {exc}", file=sys.stderr)
            return 2
        if args.journal is None:  # the sessions folder is this program's own: readable by its owner only
            from edge.private_files import private_dir
            try:
                private_dir(Path(journal).parent, narrow=True)
            except OSError as exc:
                print(f"venus-edge: cannot create the sessions folder {Path(journal).parent} "
                      f"({exc.strerror or exc}); choose a journal path with --journal", file=sys.stderr)
                return 2
        from edge.harness.store import prune_finished

        prune_sessions(Path(journal).parent, keep, active=Path(journal), prune_store=prune_finished)
    # The session's settings are built here once; SessionConfig holds every default (threads included).
    cfg = SessionConfig(mic=mic, camera=args.camera, speaker=speaker or "default", journal=journal,
                        chunk_ms=args.chunk_ms, realtime=not args.fast, frontend=frontend, voice=voice,
                        **({"threads": args.threads} if args.threads is not None else {}), video_fps=args.video_fps,
                        frame_side=args.frame_side, frame_quality=args.frame_quality,
                        context=args.context, kv_type=args.kv_type, wake=args.wake,
                        **({"wake_idle_s": args.wake_idle} if args.wake_idle is not None else {}),
                        **({"answer_wait_s": args.answer_wait} if args.answer_wait is not None else {}),
                        extra={**({"harness": harness} if harness else {}), **({"asr": args.asr} if args.asr else {}),
                               **({"prompt": args.prompt} if args.prompt else {})},
                        echo_cancel={"on": True, "off": False}.get(args.echo_cancel, "auto"),
                        barge_in=judge_on(args.judge, frontend))
    if args.camera is not None and not frontend.startswith("bundle") and frontend != "default":
        print("venus-edge: frames are captured and journaled, but this frontend does not see them; the embedded "
              "default reads text in them, an Omni bundle (--bundle DIR) sees them.", file=sys.stderr)
    try:
        supervisor = make_supervisor(cfg, nodes_for(cfg), inprocess=args.inprocess, virtual_clock=not cfg.realtime,
                                     settings=SupervisorSettings(max_session_s=args.max_seconds, bus=args.bus))
    except SettingsError as exc:
        print(f"venus-edge: {exc}", file=sys.stderr)
        return 2
    if args.http:
        from edge.observe.observer import Observer
        from edge.observe.server import ObserveServer
        supervisor.watcher = Observer()
        try:
            observe = ObserveServer(supervisor.watcher, *address)
        except AddressError as exc:
            print(f"venus-edge: {exc}", file=sys.stderr)
            return 2
        print(f"observing on {observe.url}: the timeline at /, /health, /metrics", file=sys.stderr)
    try:
        report = supervisor.run()
    finally:
        if observe is not None:
            observe.close()
    print_summary(journal, report, speaker)
    if not report.ok and report.reason not in ("interrupted by signal",) and not report.reason.startswith("stopped"):
        print(f"venus-edge: the session did not complete: {report.reason}", file=sys.stderr)
        return 1
    return 0


def replay_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge replay", description="Re-run a recorded session from its "
                                "journal on the virtual clock; --verify checks the outputs match the recording.")
    p.add_argument("journal")
    p.add_argument("--verify", action="store_true", help="compare decisions, speech, playback and delegates")
    p.add_argument("--speaker", help="write the replayed reply audio here (WAV)")
    p.add_argument("--out", help="write the replay's own journal here")
    p.add_argument("--processes", action="store_true", help="replay through separate processes (default: threads)")
    p.add_argument("--harness", help="harness settings to replay with (skills, MCP servers, chat): a journal's own "
                                     "are never started")
    args = p.parse_args(argv)
    from edge.replay import replay
    from edge.settings import SettingsError
    from edge.timeline.journal import JournalError

    try:
        harness = None
        if args.harness:
            from edge.harness.settings import load_harness_config
            harness = load_harness_config(args.harness)
        result = replay(args.journal, verify=args.verify, out_journal=args.out, speaker=args.speaker,
                        inprocess=not args.processes, harness=harness)
    except (JournalError, RuntimeError, SettingsError, ValueError) as exc:
        print(f"venus-edge replay: {exc}", file=sys.stderr)
        return 2
    from edge.timeline.printable import printable  # notes and differences quote session text
    for note in result.notes:
        print(printable(f"venus-edge replay: {note}"), file=sys.stderr)
    where = f" ({result.journal})" if result.journal else ""
    if args.verify:
        if result.ok:
            print(f"replay matches the recording: {result.compared} messages compared{where}")
        else:
            print(printable(f"replay differs from the recording: {result.first_difference}"))
            return 1
    elif result.journal:
        print(f"replayed into {result.journal}")
    else:
        print("replayed; give --out FILE to keep the replay's journal")
    return 0


def trace_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge trace", description="Write a session journal as Chrome "
                                "trace-event JSON: open it in https://ui.perfetto.dev or chrome://tracing.")
    p.add_argument("journal")
    p.add_argument("-o", "--out", default=None, help="the trace file to write (default: JOURNAL.trace.json)")
    args = p.parse_args(argv)
    from edge.timeline.journal import JournalError
    from edge.timeline.trace import write_trace

    out = Path(args.out or f"{args.journal}.trace.json")
    try:
        stats = write_trace(args.journal, out)
    except JournalError as exc:
        print(f"venus-edge trace: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"venus-edge trace: cannot write {out}: {exc.strerror}; choose another path with -o.",
              file=sys.stderr)
        return 2
    print(f"wrote {out}: {stats.events} events, {stats.flows} message arrows, {stats.chunks} chunks "
          f"({stats.folded_chunks} silent ones folded), {stats.bytes / 1e6:.2f} MB")
    return 0


def bench_main(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHES:
        print(f"usage: venus-edge bench {{{','.join(BENCHES)}}} [options]", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(f"edge.bench.{argv[0]}")
    except ModuleNotFoundError:
        print(f"venus-edge bench {argv[0]}: this benchmark is not part of this build yet.", file=sys.stderr)
        return 2
    return int(module.main(argv[1:]) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "replay":
        return replay_main(argv[1:])
    if argv and argv[0] == "bench":
        return bench_main(argv[1:])
    if argv and argv[0] == "trace":
        return trace_main(argv[1:])
    if argv and argv[0] == "wyoming":
        from edge.wyoming.serve import main as wyoming_main
        return wyoming_main(argv[1:])
    if argv and argv[0] == "satellite":
        from edge.wyoming.satellite_cli import main as satellite_main
        return satellite_main(argv[1:])
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
