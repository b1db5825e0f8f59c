"""retired-name: a name that must have zero occurrences left, comments and strings included.

The refactor record closes its renames with a list, each entry "something
with zero occurrences left in `atom/`": ``StateArena -> EntryMajorArena``,
``Eagle3DraftBuilder -> DraftKvBuilder``, ``is_qwen_next`` / ``is_kimi_linear``
-> ``attn_family``, ``runner.use_mla`` -- the last one on a whole section of
the architecture guide describing a branch that no longer existed. A rename
is only done when nothing spells the old name: a comment that still says
``StateArena`` tells the next reader the type is state-specific, which is the
misreading the rename was made to end. So occurrences in comments and strings
count exactly like identifiers, and the one place an old spelling must stay
(aiter's own parameter name, say) carries a suppression with its reason.

Matching is by whole word, with ``_`` a word character: ``StateArena``
matches in ``a StateArena`` and ``StateArena.`` but not in ``StateArenaV2``
or ``MyStateArena``. The scan is a regular expression over each line of the
text rather than a walk of tokens: every occurrence is a finding wherever it
sits, so telling code from comments would only decide what the message says,
and a file that does not parse is scanned all the same.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import Field

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    from typing import Any

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

RULES = (
    Rule(
        code="AC401",
        name="retired-name",
        what=(
            "Flags every whole-word occurrence of a retired name -- as an identifier, an "
            "attribute, in an import, a string or a comment -- at the occurrence itself."
        ),
        why=(
            "A rename is finished only when nothing spells the old name. One left in a "
            "comment or a docstring keeps teaching the meaning the rename retired, and a "
            "search for the old name still finds a place that seems to use it."
        ),
        fix_safety=(
            "This rule offers no fix: a comment or docstring usually needs rewording, not "
            "a token swap, and the replacement may be a different construct (a family "
            "predicate instead of a boolean) rather than a new spelling."
        ),
    ),
)


class RetiredNames(Field):
    """A list of names, or a table of name -> what replaces it (shown in the message)."""

    type_name = "list of names, or table of name -> replacement"

    def parse(self, value: Any, where: str) -> dict[str, str]:
        if isinstance(value, list):
            if not value or not all(isinstance(v, str) and v.strip() for v in value):
                raise self._fail(value, where, "a non-empty list of non-empty names")
            return dict.fromkeys(value, "")
        if isinstance(value, Mapping) and value:
            for name, hint in value.items():
                if not name.strip():
                    raise self._fail(value, where, "a table whose names are not empty")
                if not isinstance(hint, str):
                    raise self._fail(hint, f"{where}: `{self.key}.{name}`", "a string")
            return dict(value)
        raise self._fail(value, where, "a non-empty list of names or table of name -> replacement")


_RENAMES = {
    "names": {
        "StateArena": "EntryMajorArena",
        "SplitStateArena": "SplitEntryMajorArena",
        "StateField": "EntryField",
        "state_arena": "entry_arena",
    }
}


class RetiredName(Contract):
    KIND = "retired-name"
    RULES = RULES
    NEEDS_TREE = False  # a text scan: a file that does not parse still spells names

    names = RetiredNames(
        doc=(
            'The retired names. A list (`["StateArena"]`), or a table of name -> '
            'what replaces it (`{ StateArena = "EntryMajorArena" }`), which the message '
            "then names. A name is matched as a whole word (`_` counts as a word "
            "character); it may contain dots (`runner.use_mla`)."
        )
    )

    VALID = (
        Example(
            source=(
                "from atom.pool_layout.entry_arena import EntryMajorArena\n"
                "\n"
                "# An EntryMajorArena is laid out entry-major.\n"
                "arena = EntryMajorArena(fields)\n"
            ),
            params=_RENAMES,
            path="atom/runner/pool_builder.py",
        ),
        Example(
            source=(
                "class StateArenaV2:\n"
                "    pass\n"
                "\n"
                "MyStateArena = StateArenaV2\n"
                "state_arena_bytes = 0  # the StateArena_ prefix is another word\n"
            ),
            params=_RENAMES,
            note="Whole words only: a longer identifier that contains the name is another name.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "from atom.pool_layout.state_arena import StateArena\n"
                "\n"
                "# A StateArena is laid out entry-major.\n"
                "arena = StateArena(fields)\n"
                'print("StateArena.")\n'
            ),
            params=_RENAMES,
            path="atom/runner/pool_builder.py",
            expect=(
                Expect("AC401", 1, 23, "`state_arena`"),
                Expect("AC401", 1, 42, "`EntryMajorArena`"),
                Expect("AC401", 3, 5, "`StateArena`"),
                Expect("AC401", 4, 9, "`StateArena`"),
                Expect("AC401", 5, 8, "`StateArena`"),
            ),
            note="In an import, a comment, code and a string: each occurrence, where it is.",
        ),
        Example(
            source=(
                "def carve(pool):\n"
                '    """Carve the pool.\n'
                "\n"
                "    Was a SplitStateArena before the rename.\n"
                '    """\n'
            ),
            params=_RENAMES,
            expect=(Expect("AC401", 4, 11, "`SplitEntryMajorArena`"),),
            note="Inside a docstring; `StateArena` inside `SplitStateArena` is not a word.",
        ),
        Example(
            source="if runner.use_mla or cfg.is_qwen_next():\n    pass\n",
            params={"names": ["use_mla", "is_qwen_next"]},
            expect=(
                Expect("AC401", 1, 11, "`use_mla`"),
                Expect("AC401", 1, 26, "`is_qwen_next`"),
            ),
            note="The list form: attributes and calls.",
        ),
        Example(
            source="if runner.use_mla:\n    torch.ops.legacy.paged_attention()\n",
            params={"names": [".use_mla", "ops.legacy."]},
            expect=(
                Expect("AC401", 1, 10, "`.use_mla`"),
                Expect("AC401", 2, 11, "`ops.legacy.`"),
            ),
            note=(
                "A name that starts or ends in a non-word character has no word edge on that "
                "side: `.use_mla` matches after `runner`, and `ops.legacy.` before `paged`."
            ),
        ),
        Example(
            source="if runner.use_mla:\n    pass\n",
            params={"names": {"runner": "engine", "runner.use_mla": "runner.attn_family"}},
            expect=(Expect("AC401", 1, 4, "`runner.use_mla`"),),
            note=(
                "Names overlap at a word edge: the longest is tried first, so the dotted name "
                "is reported, not the shorter `runner` at the same column."
            ),
        ),
        Example(
            source="# é StateArena\n",
            params=_RENAMES,
            expect=(Expect("AC401", 1, 5),),
            note="Columns count characters, not UTF-8 bytes.",
        ),
    )

    def __init__(self, id: str, **params: Any) -> None:
        super().__init__(id, **params)
        self._pattern: re.Pattern[str] | None = None

    def needles(self) -> tuple[str, ...]:
        return tuple(self.names)

    @property
    def pattern(self) -> re.Pattern[str]:
        """One alternation over every name, longest first, with word edges where needed.

        A lookaround is only added on a side where the name itself ends in a
        word character: ``is_qwen_next()`` must still match before a space.
        """
        if self._pattern is None:
            alternatives = []
            for name in sorted(self.names, key=len, reverse=True):
                head = r"(?<!\w)" if re.match(r"\w", name[0]) else ""
                tail = r"(?!\w)" if re.match(r"\w", name[-1]) else ""
                alternatives.append(f"{head}{re.escape(name)}{tail}")
            self._pattern = re.compile("|".join(alternatives))
        return self._pattern

    def check(self, source, project) -> Iterator:
        pattern = self.pattern
        if pattern.search(source.text) is None:
            return
        strings: list[tuple[int, int, int, int]] | None = None
        # Python's own line breaks only: str.splitlines also breaks on a form
        # feed, which the stdlib uses between sections, and would drift from
        # the line numbers every other tool reports.
        for lineno, text in enumerate(_LINE_BREAK.split(source.text), start=1):
            for match in pattern.finditer(text):
                if strings is None:
                    strings = _multiline_strings(source)
                name = match.group()
                hint = self.names.get(name, "")
                now = f" (now `{hint}`)" if hint else ""
                span = (lineno, match.start() + 1, lineno, match.end() + 1)
                yield self.finding(
                    source,
                    span,
                    f"`{name}` is a retired name{now}; a rename is done only when nothing "
                    "spells the old name, comments and strings included",
                    span_node=_suppression_span(strings, span),
                )


def _multiline_strings(source) -> list[tuple[int, int, int, int]]:
    """(string start, string end, statement start, statement end) per multi-line string.

    A suppression comment cannot sit inside a string, so an occurrence there is
    suppressed from the lines of the statement holding the string.
    """
    tree = source.tree
    if tree is None:
        return []
    found: list[tuple[int, int, int, int]] = []
    stack: list[tuple[ast.AST, ast.stmt | None]] = [(tree, None)]
    while stack:
        node, stmt = stack.pop()
        if isinstance(node, ast.stmt):
            stmt = node
        if (
            isinstance(node, (ast.Constant, ast.JoinedStr))
            and (isinstance(node, ast.JoinedStr) or isinstance(node.value, str))
            and stmt is not None
            and (node.end_lineno or node.lineno) > node.lineno
        ):
            found.append((node.lineno, node.end_lineno, stmt.lineno, stmt.end_lineno))
            continue
        stack.extend((child, stmt) for child in ast.iter_child_nodes(node))
    return found


def _suppression_span(
    strings: list[tuple[int, int, int, int]], span: tuple[int, int, int, int]
) -> tuple[int, int, int, int]:
    line = span[0]
    best: tuple[int, int, int, int] | None = None
    for start, end, stmt_start, stmt_end in strings:
        if start <= line <= end and (best is None or start >= best[0]):
            best = (start, end, stmt_start, stmt_end)
    if best is None:
        return span
    return (best[2], 1, best[3], 1)
