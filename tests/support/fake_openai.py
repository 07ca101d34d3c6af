"""A local OpenAI-compatible chat server for the tests: scripted replies, failures and delays."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, reply: str = "It is 21°C and sunny in Paris.", fail_first: int = 0, delay_s: float = 0.0,
                 replies: list[str] | None = None):
        self.reply, self.fail_first, self.delay_s = reply, fail_first, delay_s
        self.replies = list(replies or [])  # said in turn, before `reply`
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "body": body})
                if fake.fail_first > 0:
                    fake.fail_first -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                if fake.delay_s:
                    time.sleep(fake.delay_s)
                data = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant",
                                             "content": fake.replies.pop(0) if fake.replies else fake.reply},
                     "finish_reason": "stop"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
