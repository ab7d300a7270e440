"""A local HTTP server standing in for the dataset mirrors (``$ROBUSTBNN_MIRROR``): tests
download for real, over a socket, without the network."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Mirror:
    """A served folder laid out like a data root, its URL and the paths requested of it."""

    root: Path
    url: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def serving(root: Path) -> Iterator[Mirror]:
    """Serve ``root`` on a free loopback port for the duration of the block."""
    mirror = Mirror(root=root, url="")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep the test output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            mirror.requests.append(self.path)
            super().do_GET()

    root.mkdir(parents=True, exist_ok=True)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    mirror.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield mirror
    finally:
        server.shutdown()
        server.server_close()
