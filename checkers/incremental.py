"""Reparse only the statements an edit touched: the language server's keystroke.

Parsing is most of a keystroke's check: ``ast.parse`` of a 2,000-line module
costs 10-50 ms here, the contracts after it a few. But an edit inside one
function leaves every other statement's tree as it was, so the server's
next tree is the previous one with the touched statements parsed again.

Why the splice is the tree a full parse gives. At the start of a line where
a statement of a body begins (between two top-level statements, or two
statements of one ``def``/``class`` body), Python's tokenizer holds no open
bracket, no unfinished string and no pending continuation; its only state
is the indentation stack. So when the lines an edit changed, widened to the
whole statements they touch (and the comment or blank lines between them),
parse on their own into complete statements at the body's indentation, the
full text tokenizes and parses into the statements before, those, and the
statements after -- and when they do not parse on their own, the full parse
decides (it may fail, or a new ``\"\"\"`` may swallow the rest of the file:
either way it is not a splice). ``ast.parse`` itself is context-free (an
``await`` or a ``return`` parses anywhere; the compiler, which never runs
here, judges those), so a body's statements parse the same wrapped in an
``if 1:`` at their own indentation, which keeps every column.

Only an edit that leaves the line count as it was is spliced: then no
statement outside the touched ones moves and their nodes are reused as
they are (shared, never mutated). Typing inside a line is most keystrokes;
Enter and a backspace that joins lines are a full parse, as is a text with
a tab or a form feed in its indentation (the tokenizer's tab and page rules
compare columns across the whole indentation stack, which the wrapper does
not hold) or one that spells ``barry_as_FLUFL`` (a future import that
changes how the rest of the file tokenizes).

What the splice refuses -- most often a buffer that does not parse, half
the keystrokes of typing a call -- is parsed from the last top-level
statement before the edit to the end of the file (``tail``), with the lines
above it blanked: the whole text's tree, or the whole text's SyntaxError at
the same place with the same message, for the cost of the tail's parse up
to its error. Enter and a backspace that joins lines go that way too.
"""

from __future__ import annotations

import ast
import copy
import warnings

from .source import SourceFile

# Bodies spliced into rather than reparsed whole: where the statements of a
# function or class sit, and nothing else (an `if` or `try` body is reparsed
# with its whole statement: its branches' lists are not one statement list).
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def successor(previous: SourceFile | None, path: str, text: str, abspath: str) -> SourceFile:
    """``text`` as a SourceFile, its tree (or its syntax error) found from ``previous``'s tree.

    ``previous`` is the same file's last SourceFile (None: none yet). When
    it did not parse, the last one that did stands in for it (kept on each
    successor as ``_parsed``): a buffer typed through a run of unparsable
    keystrokes is still compared with the last tree there was. The tree is
    spliced where that is exact (``splice``); otherwise the text from the
    top-level statement before the edit on is parsed (``tail``), which gives
    the tree, or the very error, a parse of the whole text gives; otherwise
    the text is parsed in full, as any SourceFile's is, when first asked for.
    """
    source = SourceFile(path, text, abspath=abspath)
    base = None
    if previous is not None:
        base = previous if previous.__dict__.get("tree") is not None else _parsed(previous)
    if base is None:
        return source
    base.__dict__.pop("_parsed", None)  # one tree kept back at most, never a chain of them
    source._parsed = base
    tree = splice(base.tree, base.lines, source.lines)
    if tree is None:
        tree = tail(base.tree, base.lines, source.lines)
    if isinstance(tree, SyntaxError):
        tree.filename = path  # as SourceFile.tree's own parse names it
        source.__dict__["tree"] = None
        source.parse_error = tree
    elif tree is not None:
        source.__dict__["tree"] = tree
    return source


def _parsed(source: SourceFile) -> SourceFile | None:
    """The last SourceFile with a tree that ``source`` (one without) was found from."""
    return source.__dict__.get("_parsed")


def splice(tree: ast.Module, old: list[str], new: list[str]) -> ast.Module | None:
    """The tree of ``new`` built from ``tree`` (the tree of ``old``), or None to parse in full."""
    if len(old) != len(new):
        return None
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b), None)
    if first is None:
        return tree
    last = next(i for i in range(len(new) - 1, -1, -1) if old[i] != new[i])
    if "barry_as_FLUFL" in "".join(new[first : last + 1]):
        return None
    return _splice_body(tree, tree.body, new, first, last, indent=0, lo=0, hi=len(new) - 1)


def tail(tree: ast.Module, old: list[str], new: list[str]) -> ast.Module | SyntaxError | None:
    """The tree of ``new`` (or the SyntaxError its parse raises), from a parse of its tail only.

    ``tree`` is the tree of ``old``. The tail starts at the last top-level
    statement that starts on a line before the first changed one, and the
    lines above it are blanked, so every position (and every line number a
    message names, "does not match opening parenthesis '(' on line N") is
    the whole text's. None when there is no such statement or the tail
    cannot stand for the whole (see below): parse in full.

    Why the tail's result is the whole text's. The lines above the tail are
    unchanged and were complete top-level statements; the tail's first line
    is unchanged too, so its first token is the one that, in ``old``, began
    a new statement rather than continuing the one before (no ``else:``, no
    ``except``). At the start of that line the tokenizer holds nothing open
    (the splice's argument, at the top level, where the indentation stack
    is empty as well), so the whole text's tokens are the head's, then the
    tail's. The parser's ``statements`` loop takes the head's statements as
    before -- no rule looks past a top-level statement's end but at the one
    token that could continue it, the tail's first -- and then parses the
    tail exactly as it parses the tail alone: the same statements, or a
    failure at the same furthest token, the same second pass over the
    tail's tokens for a more specific message, the same scan of the rest
    for a tokenizer error. Left to the full parse: a future import that
    changes the tokenizer (``barry_as_FLUFL``), a backslash ending a line
    between the head and the tail (it would join the two), and what a
    parse cannot finish (a NUL byte, nesting too deep for the parser).
    """
    first = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    if old == new:
        return tree
    body = tree.body
    k = next((i for i in range(len(body) - 1, -1, -1) if _start(body[i]) < first), None)
    if k is None:
        return None
    start = _start(body[k])
    if k > 0 and _end(body[k - 1]) >= start:
        return None  # `a = 1; b = 2`: the line is shared with the head
    gap = old[_end(body[k - 1]) if k > 0 else 0 : start]
    if any(line.rstrip("\r\n").endswith("\\") for line in gap):
        return None
    rest = "".join(new[start:])
    if "barry_as_FLUFL" in rest or "barry_as_FLUFL" in "".join(new[:start]):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the full parse, if it comes to one, warns
            module = ast.parse("\n" * start + rest)
    except SyntaxError as exc:
        # No line: not a parse's error but the text's (a NUL byte, refused before parsing,
        # as SyntaxError or ValueError by the Python version), which the full parse says.
        return exc if exc.lineno is not None else None
    except (ValueError, RecursionError, MemoryError):
        return None
    clone = copy.copy(tree)
    clone.body = [*body[:k], *module.body]
    return clone


def _start(node: ast.stmt) -> int:
    """0-based first line of a statement, its decorators included."""
    lines = [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]
    return min(lines) - 1


def _end(node: ast.stmt) -> int:
    return node.end_lineno - 1


def _splice_body(parent, body, new, first, last, *, indent, lo, hi):
    """``parent`` (a module or scope) with the statements of ``body`` that lines
    ``first..last`` touch parsed again from ``new``; ``lo..hi`` the lines the
    body's statements and the gaps between them may occupy."""
    # Statements wholly before and wholly after the change; widened until no
    # touched statement shares a line with an untouched one (`a = 1; b = (`).
    i = sum(1 for node in body if _end(node) < first)
    j = i
    reach = last
    while j < len(body) and _start(body[j]) <= reach:
        reach = max(reach, _end(body[j]))
        j += 1
    while i > 0 and i < len(body) and _end(body[i - 1]) >= _start(body[i]):
        i -= 1
    start = _end(body[i - 1]) + 1 if i > 0 else lo
    stop = _start(body[j]) - 1 if j < len(body) else hi
    if start > first or stop < last:
        return None
    # One scope holds the whole change, inside its body: splice there instead.
    if j == i + 1 and isinstance(body[i], _SCOPES):
        scope = body[i]
        # The body's lines: after the header's last line (a guess that can only
        # fall short, onto a line like `):` that parses as nothing) to the scope's end.
        inner_lo = _header_end(scope) + 1
        if inner_lo <= first and last <= _end(scope) and _start(scope.body[0]) >= inner_lo:
            inner = _splice_body(
                scope,
                scope.body,
                new,
                first,
                last,
                indent=scope.body[0].col_offset,
                lo=inner_lo,
                hi=_end(scope),
            )
            if inner is None:
                return None
            return _replaced(parent, body, i, j, [inner])
    region = new[start : stop + 1]
    if any(line[: len(line) - len(line.lstrip())].strip(" ") for line in region if line.strip()):
        return None  # a tab or form feed in an indentation: see the module's docstring
    fresh = _parse(region, start, indent)
    if fresh is None:
        return None
    return _replaced(parent, body, i, j, fresh)


def _parse(region: list[str], offset: int, indent: int) -> list[ast.stmt] | None:
    """The statements of ``region`` (lines from 0-based ``offset``) at column ``indent``."""
    text = "".join(region)
    if indent:
        text = "if 1:\n" + text
        offset -= 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the full parse, if it comes to one, warns
            module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    statements = module.body
    if indent:
        if len(statements) != 1:
            return None  # something dedented out of the wrapper: not this body's statements
        statements = statements[0].body
    if any(node.col_offset != indent for node in statements):
        return None
    for node in statements:
        ast.increment_lineno(node, offset)
    return statements


def _header_end(scope: ast.stmt) -> int:
    """0-based last line of a ``def``/``class`` header that the AST shows (the colon may be later)."""
    if isinstance(scope, ast.ClassDef):
        parts = [*scope.bases, *scope.keywords]
    else:
        parts = [scope.args, scope.returns]
    parts += getattr(scope, "type_params", [])  # 3.12
    ends = [scope.lineno]
    for part in parts:
        if part is not None:
            ends += [n.end_lineno for n in ast.walk(part) if getattr(n, "end_lineno", None)]
    return max(ends) - 1


def _replaced(parent, body, i, j, replacement):
    """A shallow copy of ``parent`` whose body has ``body[i:j]`` replaced; a scope's
    end is its last statement's, which the new statements may have moved."""
    new_body = [*body[:i], *replacement, *body[j:]]
    if isinstance(parent, ast.Module):
        clone = copy.copy(parent)
        clone.body = new_body
        return clone
    if not new_body:
        return None  # a body with no statement does not parse
    clone = copy.copy(parent)
    clone.body = new_body
    clone.end_lineno = new_body[-1].end_lineno
    clone.end_col_offset = new_body[-1].end_col_offset
    return clone


__all__ = ["splice", "successor", "tail"]
