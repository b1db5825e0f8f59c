"""A fix's new statement laid out as the project's formatter would lay it out.

A fix that writes ``if not (cond):`` and ``raise ValueError("...")`` on one line each is
right until a line passes the formatter's line length, or the condition came from an assert
that spanned lines: ``ruff format --check`` then fails on a file it passed before, and the fix
shows up a second time in review as the formatter's change. So the fix is written in the layout
ruff's formatter (and black, whose style it follows) gives the same code:

- a group that fits on its line stays on it: ``if not (a and b):``;
- one that does not opens its bracket at the end of the line, holds its content one indent
  deeper, and closes on a line of its own: ``raise ValueError(\\n    "..."\\n)``;
- content that still does not fit is split at its loosest operators, one operand a line with
  the operator leading: commas first (each item then ends in one), then ``and``/``or``, then
  comparisons; content with none of these splits its last bracket the same way;
- what has no split point left (a long string) stays whole on its own line.

Only what this module can lay out with certainty is laid out: content holding a comment, a
trailing comma the formatter keeps exploded ("magic"), a backslash continuation or an operator
this module does not split (arithmetic) is left as the source spells it (``None``), and the
fix keeps its plain layout. Widths count East Asian wide characters twice, as ruff does.

The line length is the project's (``line-length`` of the nearest ``.ruff.toml``, ``ruff.toml``
or ``pyproject.toml`` with ``[tool.ruff]``, else its ``[tool.black]``), 88 when none says.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import tokenize
from functools import lru_cache

DEFAULT_LINE_LENGTH = 88
#: A comma before a closing bracket, perhaps a magic one: the tokenizer decides.
_MAYBE_MAGIC = re.compile(r",\s*[)\]}]")
#: One string literal on one line (a message, mostly): an atom, decided without a tokenizer.
_ONE_STRING = re.compile(r"""[rRbBuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_OPEN, _CLOSE = "([{", ")]}"
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">=", "in", "is", "not"})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "//", "%", "@", "**", "<<", ">>", "&", "|", "^"})


def width(text: str) -> int:
    """Display columns of ``text``: wide and full-width characters take two."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# -- flattening source text -----------------------------------------------------------------


class _Tok:
    __slots__ = ("end", "kind", "start", "string")

    def __init__(self, kind: int, string: str, start: int, end: int) -> None:
        self.kind, self.string, self.start, self.end = kind, string, start, end


def _tokens(text: str) -> list[_Tok] | None:
    """The tokens of an expression's text, offsets into ``text``; None if it does not tokenize
    as one bracketed expression (or holds a comment: the formatter keeps those on their lines)."""
    wrapped = "(" + text + ")"
    starts = [0]
    for line in io.StringIO(wrapped, newline="").readlines():
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(wrapped, newline="").readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.COMMENT:
                return None
            begin = starts[tok.start[0] - 1] + tok.start[1] - 1
            end = starts[tok.end[0] - 1] + tok.end[1] - 1
            out.append(_Tok(tok.type, tok.string, begin, end))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    # Drop the wrapping brackets again.
    if len(out) < 3 or out[0].string != "(" or out[-1].string != ")":
        return None
    return out[1:-1]


def flat(text: str) -> str | None:
    """``text`` on one line, joined where the formatter joins lines, or None where it keeps
    them (a comment, a backslash continuation). A magic trailing comma is kept (``f(a,)``),
    and so is a string spanning lines: ``fits`` then says no, as the formatter keeps both."""
    if "\n" not in text and "\r" not in text and "#" not in text:
        return text  # one line already, and no comment to keep it from being one
    tokens = _tokens(text)
    if tokens is None:
        return None
    parts: list[str] = []
    previous: _Tok | None = None
    for tok in tokens:
        if tok.kind == tokenize.NL:
            continue
        if previous is not None:
            gap = text[previous.end : tok.start]
            if "\\" in gap:
                return None
            if "\n" in gap or "\r" in gap:
                joined = previous.string in _OPEN or tok.string in _CLOSE
                parts.append("" if joined else " ")
            else:
                parts.append(gap)
        parts.append(tok.string)
        previous = tok
    return "".join(parts) if parts else None


def _magic_commas(tokens: list[_Tok]) -> list[_Tok]:
    """The trailing commas that keep their bracket exploded: every comma before a closing
    bracket but a one-element tuple's, which the tuple needs."""
    import keyword

    out = []
    openers: list[tuple[int, int]] = []  # (index of the bracket, commas inside it)
    for i, tok in enumerate(tokens):
        if tok.kind != tokenize.OP:
            continue
        if tok.string in _OPEN:
            openers.append((i, 0))
        elif tok.string == "," and openers:
            index, commas = openers[-1]
            openers[-1] = (index, commas + 1)
        elif tok.string in _CLOSE and openers:
            index, commas = openers.pop()
            if i == 0 or tokens[i - 1].string != ",":
                continue
            before = tokens[index - 1] if index > 0 else None
            called = before is not None and (
                (before.kind == tokenize.NAME and not keyword.iskeyword(before.string))
                or before.string in _CLOSE
            )
            if tok.string == ")" and commas == 1 and not called:
                continue  # `(x,)`: a tuple of one
            out.append(tokens[i - 1])
    return out


def fits(line: str, line_length: int) -> bool:
    """Whether ``line`` stays one line under the formatter: short enough, and no magic
    trailing comma in it."""
    if "\n" in line or width(line) > line_length:
        return False  # too wide, or a string that spans lines: never on one
    if not _MAYBE_MAGIC.search(line):
        return True
    tokens = _tokens(line.strip())
    return tokens is not None and not _magic_commas(tokens)


def plain(text: str) -> str:
    """Flat ``text`` without its magic trailing commas: how a message quotes the code."""
    if not _MAYBE_MAGIC.search(text):
        return text
    tokens = _tokens(text)
    if tokens is None:
        return text
    for comma in reversed(_magic_commas(tokens)):
        text = text[: comma.start] + text[comma.end :]
    return text


# -- laying out one group -------------------------------------------------------------------


def _top_level(tokens: list[_Tok]) -> list[tuple[int, _Tok]]:
    """(index, token) of every token outside any bracket."""
    depth = 0
    out = []
    for i, tok in enumerate(tokens):
        if tok.string in _OPEN and tok.kind == tokenize.OP:
            depth += 1
            continue
        if tok.string in _CLOSE and tok.kind == tokenize.OP:
            depth -= 1
            continue
        if depth == 0:
            out.append((i, tok))
    return out


_REFUSED = frozenset({"lambda", "yield"})
_KEYWORD_OPERANDS = frozenset({"True", "False", "None"})
#: Arithmetic operators from the loosest-binding class to the tightest, as the formatter
#: splits them (``**``, which binds right to left, is not split here).
_ARITHMETIC_CLASSES = (
    frozenset({"|"}),
    frozenset({"^"}),
    frozenset({"&"}),
    frozenset({"<<", ">>"}),
    frozenset({"+", "-"}),
    frozenset({"*", "/", "//", "%", "@"}),
)


def _ends_operand(tok: _Tok | None) -> bool:
    """Whether ``tok`` can end an operand, so an operator after it is binary, not unary."""
    import keyword

    if tok is None:
        return False
    if tok.kind == tokenize.NAME:
        return not keyword.iskeyword(tok.string) or tok.string in _KEYWORD_OPERANDS
    return tok.kind in (tokenize.NUMBER, *_STRING_ENDS) or tok.string in _CLOSE


def _split_points(tokens: list[_Tok]) -> tuple[str, list[tuple[int, int]]] | None:
    """The loosest split the formatter makes in this content, as ``(kind, spans)``: each span
    the (start, end) of the operator or keyword a new line starts with. ``kind`` is "comma"
    (items, each then ending in one), "clause" (a comprehension's ``for`` and ``if``),
    "operator", or "" where there is none; None when the content holds what this module does
    not model (a lambda, a ternary, a slice, a walrus, ``**``)."""
    top = _top_level(tokens)
    words = [tok.string for _, tok in top if tok.kind == tokenize.NAME]
    commas = [
        (tok.start, tok.end) for _, tok in top if tok.kind == tokenize.OP and tok.string == ","
    ]
    if commas and "for" not in words:  # a comprehension's commas are its target's
        return "comma", commas
    if _REFUSED & set(words) or any(
        tok.kind == tokenize.OP and tok.string in (":", ":=", "=", "->") for _, tok in top
    ):
        return None
    if "for" in words:
        clauses = []
        seen_for = False
        for i, (_, tok) in enumerate(top):
            if tok.kind != tokenize.NAME:
                continue
            if tok.string == "async" and i + 1 < len(top) and top[i + 1][1].string == "for":
                clauses.append((tok.start, top[i + 1][1].end))
                seen_for = True
            elif tok.string == "for" and not (i > 0 and top[i - 1][1].string == "async"):
                clauses.append((tok.start, tok.end))
                seen_for = True
            elif tok.string == "if" and seen_for:
                clauses.append((tok.start, tok.end))
        return "clause", clauses
    if "if" in words or "else" in words:
        return None  # a ternary
    logic = [
        (tok.start, tok.end)
        for _, tok in top
        if tok.kind == tokenize.NAME and tok.string in ("and", "or")
    ]
    if logic:
        return "operator", logic
    strings = _adjacent_strings(top)
    if strings:
        return "operator", strings  # implicit concatenation: one string a line
    compare: list[tuple[int, int]] = []
    for i, (index, tok) in enumerate(top):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if tok.kind == tokenize.OP and tok.string in ("==", "!=", "<", ">", "<=", ">="):
            compare.append((tok.start, tok.end))
        elif tok.kind == tokenize.NAME and tok.string == "in":
            if not (i > 0 and top[i - 1][1].string == "not"):
                compare.append((tok.start, tok.end))
        elif tok.kind == tokenize.NAME and tok.string == "not":
            if following is not None and following.string == "in":
                compare.append((tok.start, following.end))  # `not in`; a unary `not` is none
        elif tok.kind == tokenize.NAME and tok.string == "is":
            if following is not None and following.string == "not":
                compare.append((tok.start, following.end))
            else:
                compare.append((tok.start, tok.end))
    if compare:
        return "operator", compare
    if any(tok.kind == tokenize.OP and tok.string == "**" for _, tok in top):
        return None  # binds right to left: not modelled
    for operators in _ARITHMETIC_CLASSES:
        binary = [
            (tok.start, tok.end)
            for index, tok in top
            if tok.kind == tokenize.OP
            and tok.string in operators
            and _ends_operand(tokens[index - 1] if index > 0 else None)
        ]
        if binary:
            return "operator", binary
    return "", []


_STRING_STARTS = {tokenize.STRING, getattr(tokenize, "FSTRING_START", -1)}
_STRING_ENDS = {tokenize.STRING, getattr(tokenize, "FSTRING_END", -1)}


def _adjacent_strings(top: list[tuple[int, _Tok]]) -> list[tuple[int, int]]:
    """An empty span before each string that directly follows another outside brackets."""
    out = []
    for (_, before), (_, tok) in itertools.pairwise(top):
        if before.kind in _STRING_ENDS and tok.kind in _STRING_STARTS:
            out.append((tok.start, tok.start))
    return out


def body(
    text: str, indent: str, line_length: int, prefix: str = "", *, exploded: bool = False
) -> list[str] | None:
    """The lines of ``text`` as the content of an exploded bracket at ``indent``, the first
    after ``prefix`` (an operator it follows); None when this module cannot tell how the
    formatter would lay it out. ``exploded``: the bracket ends in a magic trailing comma,
    so its items go one a line whatever their width."""
    if not exploded and fits(indent + prefix + text, line_length):
        return [indent + prefix + text]
    if _ONE_STRING.fullmatch(text):
        return [indent + prefix + text]  # one string: nothing to split, whatever its width
    tokens = _tokens(text)
    if tokens is None:
        return None
    split = _split_points(tokens)
    if split is None:
        return None
    kind, spans = split
    if kind in ("comma", "clause") and prefix:
        return None  # items or clauses after an operator: not modelled
    if kind == "comma":
        lines: list[str] = []
        start = 0
        for begin, end in [*spans, (len(text), len(text))]:
            item = text[start:begin].strip()
            start = end
            if not item:
                continue
            laid = body(item, indent, line_length - 1)
            if laid is None:
                return None
            laid[-1] += ","
            lines.extend(laid)
        return lines
    if kind in ("operator", "clause"):
        # One operand a line, each after the operator it follows; the first after the
        # operator this whole text follows. A chain of different operators splits at each
        # in turn, all at one indent (``a\nand b == c`` -> ``a\nand b\n== c``).
        lines = []
        pieces = [(prefix, text[: spans[0][0]])]
        for (begin, end), (after, _) in zip(spans, [*spans[1:], (len(text), 0)], strict=True):
            operator = text[begin:end]
            pieces.append((operator + " " if operator else "", text[end:after]))
        for position, (operator, operand) in enumerate(pieces):
            if kind == "clause" and position:
                # A clause (`for x in xs`, `if x`) splits only at its last bracket.
                laid = _clause(operand.strip(), indent, line_length, operator)
            else:
                laid = body(operand.strip(), indent, line_length, operator)
            if laid is None:
                return None
            lines.extend(laid)
        return lines
    return _last_bracket(text, tokens, indent, line_length, prefix)


def _clause(text: str, indent: str, line_length: int, prefix: str) -> list[str] | None:
    if fits(indent + prefix + text, line_length):
        return [indent + prefix + text]
    tokens = _tokens(text)
    if tokens is None:
        return None
    return _last_bracket(text, tokens, indent, line_length, prefix)


def _last_bracket(
    text: str, tokens: list[_Tok], indent: str, line_length: int, prefix: str
) -> list[str] | None:
    """``head(`` / content / ``)``: the last bracket, when the text ends with it, opened."""
    whole = [indent + prefix + text]
    if not tokens or tokens[-1].string not in _CLOSE:
        return whole  # an atom too long for any line: the formatter leaves it
    depth = 0
    opening = None
    for i in range(len(tokens) - 1, -1, -1):
        s = tokens[i].string
        if s in _CLOSE:
            depth += 1
        elif s in _OPEN:
            depth -= 1
            if depth == 0:
                opening = tokens[i]
                break
    if opening is None:
        return None
    head = prefix + text[: opening.end]
    inner = text[opening.end : tokens[-1].start].strip()
    index = tokens.index(opening)
    literal = not _ends_operand(tokens[index - 1] if index > 0 else None)
    if not inner:
        return whole
    if width(indent + head) > line_length and any(
        t.string in _OPEN for t in tokens[:-1] if t is not opening
    ):
        return None  # the formatter would split an earlier bracket: not modelled
    return group(head, inner, tokens[-1].string, indent, line_length, literal=literal)


def group(
    head: str,
    inner: str,
    tail: str,
    indent: str,
    line_length: int,
    trailer: str = "",
    *,
    literal: bool = False,
) -> list[str] | None:
    """``head + inner + tail`` on one line at ``indent`` if it fits; else ``head`` ending its
    line, ``inner`` one indent deeper, ``tail`` on its own line. ``trailer``: what follows on
    the line (a comment), which counts toward its width unless it is a pragma. ``literal``:
    the bracket is a tuple, list, set or dict display, whose items the formatter puts one a
    line once the display does not fit on its line (call arguments may share one)."""
    one = f"{indent}{head}{inner}{tail}"
    if fits(one, line_length - _trailer_width(trailer)):
        return [one]
    magic = False
    if inner.rstrip().endswith(","):
        tokens = _tokens(f"{head}{inner}{tail}".strip())
        magic = tokens is not None and any(
            comma.end == len(head.lstrip()) + len(inner.rstrip()) for comma in _magic_commas(tokens)
        )
    items = literal and (_split_points(_tokens(inner) or []) or ("",))[0] == "comma"
    laid = body(inner, indent + "    ", line_length, exploded=magic or items)
    if laid is None:
        return None
    return [f"{indent}{head}", *laid, f"{indent}{tail}"]


def laid_out(
    path: str,
    indent: str,
    head: str,
    condition: str,
    colon: str,
    call: str,
    argument: str,
    close: str,
    trailer: str = "",
) -> str:
    """A clause and the one statement it guards -- ``if not (cond):`` / ``raise E(msg)`` --
    laid out for the file at ``path`` (its first line without ``indent``, which the edit
    keeps). ``trailer`` is what the edit leaves after it on the last line (a comment). Where
    either part cannot be laid out with certainty, both keep the plain layout: the source's
    own text, one line each."""
    length = line_length(path)
    plain = f"{head}{condition}{colon}\n{indent}    {call}{argument}{close}"
    if (
        "\n" not in condition + argument
        and not _MAYBE_MAGIC.search(condition + argument)
        and width(f"{indent}{head}{condition}{colon}") <= length
        and width(f"{indent}    {call}{argument}{close}") <= length - _trailer_width(trailer)
    ):
        return plain  # the common case, decided without a tokenizer: two lines that fit
    joined_condition, joined_argument = flat(condition), flat(argument)
    if joined_condition is None or joined_argument is None:
        return plain
    clause = group(head, joined_condition, colon, indent, length)
    statement = group(call, joined_argument, close, indent + "    ", length, trailer)
    if clause is None or statement is None:
        return plain
    laid = "\n".join([*clause, *statement])[len(indent) :]
    if laid == plain:
        return laid
    # A long argument wrapped whole (`raise E(\n    "..."\n)`) under a one-line clause moves
    # no token; any other layout is checked to parse to the plain text's statements.
    wrapped = len(clause) == 1 and len(statement) == 3 and statement[1].strip() == joined_argument
    if clause[0].strip() == f"{head}{joined_condition}{colon}" and (len(statement) == 1 or wrapped):
        return laid
    return laid if _parses(indent, laid) else plain


def _parses(indent: str, laid: str) -> bool:
    """Whether a layout parses: the last guard against a split this module got wrong.

    A layout moves line breaks and indentation inside brackets and adds trailing commas
    after the last of two or more items (call arguments, displays, subscripts), none of
    which changes what the code means; what it can get wrong is a text that no longer
    parses (a comma split inside a comprehension's target), and the fixer would then take
    one fix a pass where it could take them all. Checked only where the layout split more
    than one argument's brackets."""
    import ast
    import textwrap

    try:
        ast.parse(textwrap.dedent(indent + laid + "\n"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


#: Comments the formatter does not count toward a line's width (ruff's pragma comments).
_PRAGMAS = ("noqa", "type:", "pyright:", "pylint:", "nosec", "isort:", "ruff:", "mypy:")


def _trailer_width(trailer: str) -> int:
    comment = trailer.strip()
    if not comment:
        return 0
    if comment.startswith("#") and comment[1:].lstrip().lower().startswith(_PRAGMAS):
        return 0
    # Written two spaces after the code, as the formatter writes a trailing comment.
    return 2 + width(comment)


# -- the project's line length --------------------------------------------------------------


@lru_cache(maxsize=1024)
def line_length(path: str) -> int:
    """The formatter's line length for the file at ``path`` (see the module's docstring)."""
    return _line_length_in(os.path.dirname(os.path.abspath(path)))


@lru_cache(maxsize=256)
def _line_length_in(directory: str) -> int:
    found = _configured(directory)
    if found is not None:
        return found
    parent = os.path.dirname(directory)
    return DEFAULT_LINE_LENGTH if parent == directory else _line_length_in(parent)


def _configured(directory: str) -> int | None:
    import tomllib

    for name, table in (
        (".ruff.toml", ()),
        ("ruff.toml", ()),
        ("pyproject.toml", ("tool", "ruff")),
    ):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
            continue
        for key in table:
            data = data.get(key) if isinstance(data, dict) else None
        if isinstance(data, dict):
            value = data.get("line-length")
            if isinstance(value, int) and 0 < value <= 320:
                return value
            return DEFAULT_LINE_LENGTH  # ruff's configuration, with ruff's default
        if name == "pyproject.toml":
            tool = _table(path, "black")
            if tool is not None:
                return tool
    return None


def _table(pyproject: str, tool: str) -> int | None:
    import tomllib

    try:
        with open(pyproject, "rb") as fh:
            black = tomllib.load(fh).get("tool", {}).get(tool)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError, AttributeError):
        return None
    if isinstance(black, dict):
        value = black.get("line-length")
        return value if isinstance(value, int) and value > 0 else DEFAULT_LINE_LENGTH
    return None
