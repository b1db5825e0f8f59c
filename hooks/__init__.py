"""Where users meet the contracts: coding-agent hooks and pre-commit entry points.

Each public module is one hook, run as ``atom-contracts hook NAME`` (the CLI
lists the modules here whose names do not start with ``_``) or as ``python -m
hooks.NAME``; the underscored modules are their parts. pre-commit needs no
module of its own: ``.pre-commit-hooks.yaml`` runs ``atom-contracts check``.

Nothing here imports torch, ``atom`` or libcst at import time, and a hook
imports the checker only once it knows it has a file to check.
"""
