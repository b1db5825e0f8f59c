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
SIGINT before raising, and marks the KeyboardInterrupts that reach Python's
unraisable hook -- the dropped ones. The linter and the fixer call ``check``
between files, and ``cli.main`` once more when the command returns (after
the report, where no file is left to check): a dropped interrupt is raised
there, so the run still ends 130, one file later or with its report printed
whole. An interrupt that propagated is not raised again: whoever caught it
has answered it (the agent hook answers one with exit 0). The "Exception
ignored" report of a KeyboardInterrupt so noted is not printed: it has not
been lost.
"""

from __future__ import annotations

import signal
import sys

_noted = False  # a SIGINT came, and its KeyboardInterrupt was raised
_dropped = False  # ... and Python dropped one (printed it as "Exception ignored")


def _on_sigint(signum, frame) -> None:
    global _noted
    _noted = True
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    global _dropped
    if _noted and issubclass(unraisable.exc_type, KeyboardInterrupt):
        _dropped = True
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
    """Raise the KeyboardInterrupt of a Ctrl-C that Python dropped, if one was."""
    global _dropped
    if _dropped:
        _dropped = False
        raise KeyboardInterrupt


def forget() -> None:
    """A run a Ctrl-C ended has answered it: a later run in this process starts afresh."""
    global _noted, _dropped
    _noted = _dropped = False
