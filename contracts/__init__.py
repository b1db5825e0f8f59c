"""What must hold: the vocabulary of contract kinds and their declaration.

A *contract* is a named, declared invariant of a codebase: an instance of a
*kind* (``keyword-only``, ``leaf-package`` ...) with parameters, declared in
``[[tool.atom-contracts.contracts]]`` of a ``pyproject.toml``.

This package knows nothing of files, terminals or torch. ``contracts.fields``
declares parameter types once so a contract's configuration is validated by
one generic loop; ``contracts.contract`` is the base every kind derives from;
``contracts.config`` loads and validates the pyproject table, with its globs
compiled by ``contracts.globs`` (git's semantics, without pathspec's import cost).

``contracts.runtime`` holds the runtime contract checks and hypothesis
strategies, which need the engine (and so torch). It is never imported from
here: importing ``contracts`` must stay cheap enough for a pre-commit hook.
"""
