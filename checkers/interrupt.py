"""A Ctrl-C that Python would drop, kept.

Python raises KeyboardInterrupt wherever the main thread is when SIGINT's
handler runs. Where that is a weakref callback, a ``__del__`` or a fork hook,
the exception cannot propagate: it is printed as "Exception ignored in ...
KeyboardInterrupt" with its traceback, and dropped, so the run goes on to
its end as if nobody had pressed Ctrl-C. The project's own map of the sources
being checked (``project._sources``, a ``WeakValueDictionary``) runs such a
callback for every file, so about one Ctrl-C in 200 around the end of a short
run was lost that way.

``install`` (the ``atom-contracts`` command does it first thing) notes every
SIGINT before raising, and the linter and the fixer call ``check`` between
files: a dropped interrupt is raised there, one file later. The "Exception
ignored" report of a KeyboardInterrupt so noted is not printed: it has not
been lost.
"""

from __future__ import annotations

import signal
import sys

_pending = False


def _on_sigint(signum, frame) -> None:
    global _pending
    _pending = True
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    if _pending and issubclass(unraisable.exc_type, KeyboardInterrupt):
        return  # noted: ``check`` raises it again where it can propagate
    sys.__unraisablehook__(unraisable)


def install() -> None:
    """Answer SIGINT in this process with a noted KeyboardInterrupt (main thread only).

    Only where Python's own handler is in place: a process started with
    SIGINT ignored (a script's background job, which the shell shields from
    the terminal's Ctrl-C) goes on ignoring it, as Python leaves it.
    """
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _unraisable


def check() -> None:
    """Raise the KeyboardInterrupt of a Ctrl-C that has not ended the run yet."""
    global _pending
    if _pending:
        _pending = False
        raise KeyboardInterrupt
