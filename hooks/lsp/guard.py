"""The wrapper every handler of the server runs in."""

from __future__ import annotations

import contextlib
import functools
import traceback

from lsprotocol import types


def guarded(default=None):
    """Run a handler; an exception becomes a log message and ``default`` (never an
    internal error in the client's face)."""

    def wrap(handler):
        @functools.wraps(handler)
        def run(ls, *params):
            try:
                return handler(ls, *params)
            except Exception as exc:
                ls.log(
                    types.MessageType.Error,
                    f"{handler.__name__} failed: {type(exc).__name__}: {exc}\n"
                    + traceback.format_exc(),
                )
                return default() if callable(default) else default
            finally:
                with contextlib.suppress(Exception):
                    ls.collect_when_idle()  # every message from the editor defers it

        return run

    return wrap
