"""The editor's messages, read ahead: whether it has sent more than the server has handled.

pygls reads stdin a line at a time on a worker thread and hands each message
to the event loop, one loop turn per read. A check due at once (a debounce of
0 ms) runs at the turn after the change that scheduled it -- before the next
change, already sent, has been read. Keystrokes that arrived during a check
were then checked one by one, each on a buffer already out of date: eight
changes 10 ms apart on a 3,000-line buffer were eight checks, and the last
waited for all of them. The debounce merged them only by sleeping, a wait
every keystroke paid.

``Input`` stands in for stdin: a thread of its own moves whatever the pipe
holds into a buffer as it comes, and pygls's reads are served from that
buffer. ``pending`` says whether bytes have come that pygls has not read yet:
a check due at once waits for them to be handled (``ContractsServer.push_due``),
so a burst costs one check on its latest text, and a lone keystroke none of
the wait.
"""

from __future__ import annotations

import os
import threading

CHUNK = 1 << 16  # bytes asked of the pipe at once: a burst of changes arrives as one read


class Input:
    """stdin as pygls reads it (``readline``, ``read``), filled ahead by a reader thread."""

    def __init__(self, stream) -> None:
        self._fd = stream.fileno()
        self._data = bytearray()
        self._ended = False
        self._changed = threading.Condition()
        threading.Thread(target=self._fill, name="atom-contracts-stdin", daemon=True).start()

    def _fill(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, CHUNK)
            except OSError:
                chunk = b""
            with self._changed:
                if chunk:
                    self._data += chunk
                else:
                    self._ended = True  # the editor closed the pipe: pygls reads b"" and stops
                self._changed.notify_all()
            if not chunk:
                return

    def pending(self) -> bool:
        """Whether the editor has sent bytes that pygls has not read yet."""
        with self._changed:
            return bool(self._data)

    def readline(self) -> bytes:
        with self._changed:
            while True:
                end = self._data.find(b"\n")
                if end >= 0 or self._ended:
                    size = end + 1 if end >= 0 else len(self._data)
                    line = bytes(self._data[:size])
                    del self._data[:size]
                    return line
                self._changed.wait()

    def read(self, size: int = -1) -> bytes:
        with self._changed:
            while (size < 0 or len(self._data) < size) and not self._ended:
                self._changed.wait()
            size = len(self._data) if size < 0 else min(size, len(self._data))
            out = bytes(self._data[:size])
            del self._data[:size]
            return out
