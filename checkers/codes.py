"""The codes the checker reports of its own accord, each spelled once.

No contract kind declares these; ``builtin_rules`` documents each (``atom-contracts
explain AC001``). Plain strings in a module that imports nothing, so the flake8
plugin, which must import only the standard library until it checks a file, can
name them too.
"""

#: ``[tool.atom-contracts]`` does not load (flake8 and the language server report it
#: on the file; the CLI exits 2 naming it).
CONFIG_ERROR = "AC000"
#: A file a contract applies to that cannot be decoded or parsed.
UNCHECKABLE = "AC001"
#: A contract's check (or the checker itself) raised on a file.
CHECKER_FAILED = "AC002"
#: A suppression comment that gives no reason after ``--``.
MISSING_REASON = "AC901"
#: A code in a suppression comment that suppressed nothing.
UNUSED_SUPPRESSION = "AC902"
