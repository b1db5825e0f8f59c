"""Where users meet the contracts: coding-agent hooks and pre-commit entry points.

Each public module is one hook, run as ``atom-contracts hook NAME``: the CLI
finds it as an entry point (``[project.entry-points."atom_contracts.hooks"]``),
never by this package's name, which a consumer's own ``hooks/`` would shadow.
The underscored modules are their parts. pre-commit needs no
module of its own: ``.pre-commit-hooks.yaml`` runs ``atom-contracts check``.

Nothing here imports torch, ``atom`` or libcst at import time, and a hook
imports the checker only once it knows it has a file to check.
"""
