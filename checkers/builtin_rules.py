"""The checker's own codes: a declaration that does not load, a file it could not check, its
own failure on one, and suppressions.

These are not contract kinds -- nothing declares them -- but they are
documented in the same shape (``atom-contracts explain AC901``) and rendered
into docs/contracts.md beside the kinds' rules.
"""

from __future__ import annotations

from contracts.contract import Rule

from . import codes

CONFIG_ERROR = Rule(
    code=codes.CONFIG_ERROR,
    name="declaration-does-not-load",
    what=(
        "Reports a `[tool.atom-contracts]` table that cannot be loaded -- an unknown kind, a "
        "misspelled or missing field, a bad glob, a duplicated id -- where a tool has no "
        "other way to say so: flake8 reports it on line 1 of each file it checks, the "
        "language server on the table's line. The CLI exits 2 with the same message."
    ),
    why=(
        "A declaration that does not load checks nothing, and a run that checks nothing is "
        "green. Saying so on the file keeps a misspelled kind from passing for a clean "
        "project in an editor or a flake8 run, where a traceback would abort the run and "
        "silence would pass it. Always on: `select` and `ignore` are read from the "
        "declaration that did not load."
    ),
)

UNCHECKABLE = Rule(
    code=codes.UNCHECKABLE,
    name="uncheckable-file",
    what=(
        "Reports a file that a declared contract applies to but that cannot be read as text "
        "or parsed as Python, instead of crashing the run or skipping it silently."
    ),
    why=(
        "A contract that could not look at a file has not passed on it. Reporting it keeps "
        "one broken file from hiding behind a green check. A file no contract reads past its "
        "text pre-filter is not parsed at all (that is what keeps a whole-tree check cheap), "
        "so a syntax error there is left to ruff, which reports every one. AC001 is always "
        "on: `select` and `ignore` do not turn it off; `per-file-ignores` does."
    ),
)

CHECKER_FAILED = Rule(
    code=codes.CHECKER_FAILED,
    name="checker-failed",
    what=(
        "Reports a file on which a contract's check (or the linter itself) raised, naming "
        "the contract and the exception, in place of that contract's findings on the file."
    ),
    why=(
        "A bug in one rule, or code deeper than it walks (a 2,000-branch `elif` chain), must "
        "not take the run down: every other file's findings still print, and this file is "
        "not reported as passing -- the run stays red until the checker is fixed. It is the "
        "checker's failure, not the file's: report it. Always on, like AC001; "
        "`per-file-ignores` turns it off for the files named."
    ),
)

MISSING_REASON = Rule(
    code=codes.MISSING_REASON,
    name="suppression-without-reason",
    what="Reports a `# noqa: AC...` comment that names no reason after `--`.",
    why=(
        "A suppression is a decision someone made about one line; without the reason, the "
        "next reader cannot tell a deliberate exception from a silenced bug, and cannot know "
        "when it stops applying. The suppression still suppresses -- its intent is clear -- "
        "but the missing reason is itself a finding, so the check stays red until one is "
        "written: `# noqa: AC301 -- why this assert stays`."
    ),
)

UNUSED_SUPPRESSION = Rule(
    code=codes.UNUSED_SUPPRESSION,
    name="unused-suppression",
    what=(
        "Reports an AC code in a `# noqa` comment that suppressed no finding on the lines it "
        "covers, or that is no rule's code at all. A plain `# noqa` and other tools' codes "
        "are left alone."
    ),
    why=(
        "A suppression outlives what it suppressed: the code is fixed or moved, and the "
        "comment stays to hide the next finding on that line. A code is only reported unused "
        "when its check ran on the file, so `--select` and `per-file-ignores` never make a "
        "needed suppression look stale. A code no rule has (`AC999`, a typo) can never "
        "suppress anything, and the message says so rather than sending the reader looking "
        "for the finding."
    ),
    fix_safety=(
        "The fix is safe: it removes the unused code from the comment, keeping the other "
        "codes (other tools' too) and the reason, and removes a comment left naming nothing "
        "(its whole line, when the comment stood alone). A comment cannot change what the "
        "program does. It is the one safe fix here: every other rule's rewrite changes a "
        "signature, an import or an exception, each documented as unsafe or not offered."
    ),
)

BUILTIN_RULES = (CONFIG_ERROR, UNCHECKABLE, CHECKER_FAILED, MISSING_REASON, UNUSED_SUPPRESSION)
