"""``atom-contracts server``: the language server (needs the ``server`` extra).

``main`` is all that loads without pygls: it says what to install instead of
a traceback, so the checker itself never depends on the server's libraries.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """\
usage: atom-contracts server [--log-file PATH] [-v]

Run the contracts as a Language Server over stdio (see docs/editors.md).

options:
  --log-file PATH  append the server's own log to PATH (stderr otherwise)
  -v, --verbose    log every check, not only problems (pygls's trace of every
                   message, the whole buffer on each open, is not logged)
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    log_file = None
    verbose = False
    rest = iter(args)
    for arg in rest:
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if arg in ("-v", "--verbose"):
            verbose = True
        elif arg == "--stdio":
            continue  # what many clients pass by habit; stdio is the only transport
        elif arg == "--log-file" or arg.startswith("--log-file="):
            log_file = arg.partition("=")[2] or next(rest, None)
            if not log_file:
                print("atom-contracts server: error: --log-file needs a path", file=sys.stderr)
                return 2
        else:
            print(f"atom-contracts server: error: unknown argument {arg!r}", file=sys.stderr)
            return 2
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        print(
            f"atom-contracts server: needs the `server` extra ({exc.name} is not installed): "
            "pip install 'atom-contracts[server]'",
            file=sys.stderr,
        )
        return 2
    import logging

    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        level=logging.WARNING,
        handlers=[handler],
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    if verbose:
        # The server's own lines only: pygls logs each message it sends or receives
        # whole at INFO, writing a keystroke's diagnostics (and an open's whole buffer)
        # into the log before they go out -- work an editor's server does not do, which
        # a timing taken with -v would include.
        logging.getLogger(__name__).setLevel(logging.DEBUG)
    from .server import serve

    return serve()
