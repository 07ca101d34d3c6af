"""The observer's HTTP server: `/health`, `/metrics`, the timeline page at `/` and its event stream.

Python's own http.server on a daemon thread of the supervisor's process. It binds a loopback address
unless told it may be reached from the network: nothing here asks who is calling.
"""
from __future__ import annotations

import ipaddress
import json
import logging
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from edge.observe.metrics import CONTENT_TYPE, render
from edge.observe.observer import Observer

log = logging.getLogger(__name__)

KEEPALIVE_S = 10.0  # an idle event stream sends a comment this often, so proxies keep it open
STATUS = {"starting": HTTPStatus.SERVICE_UNAVAILABLE, "ready": HTTPStatus.OK, "degraded": HTTPStatus.OK,
          "ended": HTTPStatus.SERVICE_UNAVAILABLE}


class AddressError(ValueError):
    pass


def parse_address(text: str, public: bool = False) -> tuple[str, int]:
    """HOST:PORT -> (host, port); a non-loopback host only when `public` is set."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise AddressError(f"--http needs HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    if not public:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise AddressError(f"--http {text} would be reachable from the network; use 127.0.0.1 (then a tunnel, "
                               "e.g. ssh -L) or add --http-public if that is what you want")
    return host, int(port)


MAX_SEQ_DIGITS = 18  # an event number fits in 64 bits; a longer one is not one of ours


def event_number(text: str) -> int | None:
    """`after=` / Last-Event-ID as an event number: empty is 0, anything else must be plain digits."""
    if not text:
        return 0
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_SEQ_DIGITS:
        return None
    return int(text)


def page() -> bytes:
    return (resources.files("edge") / "assets" / "timeline.html").read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:  # requests go to the debug log, not stderr
        log.debug("http %s " + fmt, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        obs = self.server.observer
        if url.path == "/health":
            state, reason = obs.health()
            body = json.dumps({"status": state, "reason": reason}).encode()
            self._send(STATUS[state], body, "application/json")
        elif url.path == "/metrics":
            self._send(HTTPStatus.OK, render(obs).encode(), CONTENT_TYPE)
        elif url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, page(), "text/html; charset=utf-8")
        elif url.path == "/events":
            after = parse_qs(url.query).get("after", [self.headers.get("Last-Event-ID") or "0"])[0]
            seq = event_number(after)
            if seq is None:
                log.warning("http: /events asked to start after %r, which is not an event number; answered 400",
                            after[:20] + ("..." if len(after) > 20 else ""))
                self._send(HTTPStatus.BAD_REQUEST, b"after= takes an event number (at most 18 digits)\n",
                           "text/plain")
                return
            self._stream(seq)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found: try /, /health or /metrics\n", "text/plain")

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        """POST /type with {"text": ...}: the text goes to the model (a bundle's next unit)."""
        if urlsplit(self.path).path != "/type":
            self._send(HTTPStatus.NOT_FOUND, b"not found: POST text to /type\n", "text/plain")
            return
        size = int(self.headers.get("Content-Length") or 0)
        if not 0 < size <= 16_384:
            self._reply(HTTPStatus.BAD_REQUEST, "send a JSON body of at most 16 KB: {\"text\": \"...\"}")
            return
        try:
            body = json.loads(self.rfile.read(size))
            text = body["text"] if isinstance(body, dict) and isinstance(body.get("text"), str) else None
        except (ValueError, UnicodeDecodeError):
            text = None
        if text is None:
            self._reply(HTTPStatus.BAD_REQUEST, "the body must be JSON with a string field text")
            return
        problem = self.server.observer.type_text(text)
        self._reply(HTTPStatus.CONFLICT if problem == "the session is not running" else
                    HTTPStatus.BAD_REQUEST if problem else HTTPStatus.ACCEPTED, problem or "sent to the model")

    def _reply(self, status: int, message: str) -> None:
        self._send(status, json.dumps({"message": message}).encode(), "application/json")

    def _stream(self, after: int) -> None:
        """Server-sent events: the timeline from `after` on, then what happens next, until the session ends."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        obs = self.server.observer
        try:
            self.wfile.write(b"retry: 2000\n\n")
            while not self.server.closing.is_set():
                events, ended = obs.events_after(after, KEEPALIVE_S)
                for ev in events:
                    after = ev["seq"]
                    self.wfile.write(f"id: {after}\ndata: {json.dumps(ev)}\n\n".encode())
                if ended and not events:
                    self.wfile.write(b"event: end\ndata: {}\n\n")
                    break
                if not events:
                    self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], observer: Observer) -> None:
        if ":" in address[0]:  # an IPv6 literal such as ::1 needs an IPv6 socket
            self.address_family = socket.AF_INET6
        self.observer = observer
        self.closing = threading.Event()
        super().__init__(address, _Handler)


class ObserveServer:
    """Serves an observer on HOST:PORT from a daemon thread until `close`."""

    def __init__(self, observer: Observer, host: str, port: int) -> None:
        try:
            self.httpd = _Server((host, port), observer)
        except OSError as exc:
            raise AddressError(f"cannot serve on {host}:{port}: {exc.strerror}; choose another port") from None
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="observe-http", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
