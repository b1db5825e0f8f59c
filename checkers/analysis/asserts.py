"""What an ``assert`` statement is to ``input-assert``, apart from where its value came from.

Whether a file can hold one at all (a test file's asserts are the test; a
file with no line starting an ``assert`` statement is never parsed), whether
a function is a test's (``test*`` functions, ``Test*`` classes), the
exception its check raises (``TypeError`` for an ``isinstance``/``issubclass``
condition, else ``ValueError``), and the fix that raises it in place of the
assert, laid out as the project's formatter would lay it out.
"""

from __future__ import annotations

import ast
import re

from .names import dotted, source_segment
from .scopes import Scope

TEST_FILE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
# A statement starts after a line break -- `^` (after \n) or a lone \r, which
# Python reads as one too -- or a `;`/`:`, past Python's indentation
# whitespace, form feed included. The pattern is the definition;
# `has_assert_statement` answers the same without running it.
_ASSERT_LINE = re.compile(r"(?:^|[\r;:])[ \t\f]*assert\b", re.MULTILINE)
_WORD_CHAR = re.compile(r"\w")


def has_assert_statement(text: str) -> bool:
    """``_ASSERT_LINE.search(text) is not None``, from each ``assert`` looking back.

    The pattern has no literal to start from, so the regex engine tries it at
    every line start and every colon of the file: 8x slower on vLLM's and the
    stdlib's files than finding each ``assert`` and reading the characters
    before it (blanks, then a line break, ``;``, ``:`` or the start of the
    text) and the one after (not a word character, as ``\\b`` reads it).
    """
    find = text.find
    at = find("assert")
    while at >= 0:
        start = at
        while start and text[start - 1] in " \t\f":
            start -= 1
        if (start == 0 or text[start - 1] in "\n\r;:") and not _WORD_CHAR.match(text, at + 6):
            return True
        at = find("assert", at + 6)
    return False


def is_test_function(func: Scope | None) -> bool:
    while func is not None:
        if func.name.startswith("test"):
            return True
        if func.klass is not None and func.klass.name.startswith("Test"):
            return True
        func = func.parent
    return False


def exception_for(test: ast.expr) -> str:
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Call) and dotted(inner.func, through_calls=True) in (
        "isinstance",
        "issubclass",
    ):
        return "TypeError"
    return "ValueError"


def fix(source, node: ast.Assert, exc: str, branch: tuple[ast.expr, bool] | None = None):
    """``if not (cond): raise Exc(msg)`` in place of the assert, when it owns its lines; for
    ``assert False`` ending a branch, ``raise Exc(msg)`` alone (``branch``: the test that
    chooses it, and whether it is taken when the test fails)."""
    from checkers.fix_layout import flat, group, laid_out, line_length, plain
    from checkers.literals import preferred_quote, string_literal
    from contracts.finding import Edit, Fix

    line, col, end_line, end_col = source.span(node)
    first = source.lines[line - 1]
    indent = first[: col - 1]
    if indent.strip():
        return None  # shares its line with something before it (`if x: assert y`)
    rest = source.lines[end_line - 1][end_col - 1 :]
    if rest.strip() and not rest.lstrip().startswith("#"):
        return None  # `assert x; other()`
    test = source_segment(source, node.test)
    if not test:
        return None
    if node.msg is not None:
        message = source_segment(source, node.msg)
        if not message:
            return None
    elif branch is None:
        one_line = test if "\n" not in test else flat(test)
        said = "expected " + (plain(one_line) if one_line else " ".join(test.split()))
        message = string_literal(said, preferred_quote(source))
    else:
        chosen, failed = source_segment(source, branch[0]), branch[1]
        if not chosen:
            return None
        # Reached where the test failed (an `else:`, past `if T: return`): T was expected.
        said = ("expected " if failed else "unexpected: ") + " ".join(chosen.split())
        message = string_literal(said, preferred_quote(source))
    # As the project's formatter lays it out (checkers/fix_layout.py), where that is known;
    # else the plain lines (a message over several stays inside the call's parentheses).
    if branch is None:
        content = laid_out(
            source.abspath, indent, "if not (", test, "):", f"raise {exc}(", message, ")", rest
        )
    else:
        content = f"raise {exc}({message})"
        joined = flat(message)
        laid = (
            None
            if joined is None
            else group(f"raise {exc}(", joined, ")", indent, line_length(source.abspath), rest)
        )
        if laid is not None:
            content = "\n".join(laid)[len(indent) :]
    return Fix(
        message=f"Raise {exc} instead of asserting",
        edits=(Edit(line, col, end_line, end_col, content),),
        applicability="unsafe",
    )
