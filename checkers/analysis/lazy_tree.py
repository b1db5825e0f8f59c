"""A module's tree with its function bodies parsed when first asked for.

The rules that read a function at a time (input-assert, required-keyword)
ask about a few functions of a module: the ones an ``assert`` or a call sits
in, their callers, a class's constructors. Parsing the rest is most of a cold
run. So the module is parsed once as a *skeleton* -- its text with the body
of every top-level function and every method of a top-level class replaced
by ``...`` on the body's first line, every line kept, so every other node is
where the whole parse puts it -- and a body is parsed alone when the
analysis first reaches it (``materialize``), then hung on the skeleton's own
``FunctionDef`` node, whose header (decorators, signature) the skeleton
already parsed. A function's end position is set from the text before any
question is asked, as the whole parse sets it.

Why the skeleton is the whole tree less those bodies. Each body is cut at
lines where a statement of the module (column 0), or of a top-level class's
body (its indentation), begins. Such a line is found by a text scan that
knows where every string that spans lines is (``_MULTILINE``: one regular
expression over the text, consuming code, comments and one-line strings,
stopping only at a multi-line string) and skips what cannot start a statement:
a line inside such a string, a blank or comment line, one that opens with a
closing bracket, one continuing a backslash. What is left can still be a line
inside brackets (``x = f(\\n1)``); but a body cut there keeps the bracket's
opening inside what is replaced and its closing outside, so the skeleton does
not parse (an unmatched bracket), and the whole file is parsed instead. A
body parsed alone must give the statement the skeleton holds (its name, its
place, its decorators, its end); anything else raises ``WholeTreeNeeded``,
and the rule runs again on the whole tree. So every answer is the whole
parse's, or the whole parse decides.

What this gives up, and only this: a syntax error inside a body no rule
reached is not reported (a whole parse reports it as AC001). Such errors are
a linter's for the syntax (ruff reports every one); the contracts judge
code that runs.

Not used: on Python 3.12 and later for a file with an f-string (an f-string
may hold its own quotes there, which the scan does not follow), for text with
a tab, a form feed, a lone carriage return or a NUL, and where the text spells
``barry_as_FLUFL`` (a future import that changes how the rest tokenizes).
"""

from __future__ import annotations

import ast
import re
import sys
from bisect import bisect_right
from itertools import accumulate

from ..source import WholeTreeNeeded

# The body of a string with each quote, one-line (no line break inside) or any.
_DQ1 = r'"(?!"")(?:[^"\\\r\n]++|\\[^\r\n])*+"'
_SQ1 = r"'(?!'')(?:[^'\\\r\n]++|\\[^\r\n])*+'"
_TDQ1 = r'"""(?:[^"\\\r\n]++|\\[^\r\n]|"(?!""))*+"""'
_TSQ1 = r"'''(?:[^'\\\r\n]++|\\[^\r\n]|'(?!''))*+'''"
_TDQ = r'"""(?:[^"\\]++|\\[\s\S]|"(?!""))*+"""'
_TSQ = r"'''(?:[^'\\]++|\\[\s\S]|'(?!''))*+'''"
_DQ = r'"(?!"")(?:[^"\\\r\n]++|\\[\s\S])*+"'
_SQ = r"'(?!'')(?:[^'\\\r\n]++|\\[\s\S])*+'"
_COMMENT = r"#[^\r\n]*+"
# Everything up to the next string that spans lines, which is captured; a
# quote that opens no string is captured alone (the scan cannot follow: no skeleton);
# matched from where the last one ended, so no search ever starts inside a string.
_MULTILINE = re.compile(
    rf"(?:[^'\"#]++|{_COMMENT}|{_TDQ1}|{_TSQ1}|{_DQ1}|{_SQ1})*+(?:({_TDQ}|{_TSQ}|{_DQ}|{_SQ}|['\"])|\Z)"
)
# One token of those the scan skips, at a position known to start one.
TOKEN = re.compile(rf"{_COMMENT}|{_TDQ}|{_TSQ}|{_DQ}|{_SQ}")
_HEADER_STOPS = re.compile(r"[()\[\]{}:#'\"]")
_QUOTE_OR_HASH = re.compile(r"[#'\"]")
_OPENERS, _CLOSERS = "([{", ")]}"
_F_STRING = re.compile(r"(?<![\w])(?:[rR]?[fF]|[fF][rR])['\"]")


class Unit:
    """One deferred function: where its text is, and whether its body is parsed."""

    __slots__ = ("body_end", "body_start", "done", "end", "first_line", "in_class", "start")

    def __init__(self, start, end, first_line, in_class, body_start, body_end) -> None:
        self.start = start  # offset of its first decorator's (or its def's) line
        self.end = end  # offset just past the line its last code character is on
        self.first_line = first_line
        self.in_class = in_class
        self.body_start = body_start  # the body's text: [body_start, body_end)
        self.body_end = body_end
        self.done = False


class LazyTree:
    """The skeleton (``tree``) and the units whose bodies are parsed on demand."""

    def __init__(self, text: str, tree: ast.Module, units: dict[ast.AST, Unit]) -> None:
        self.text = text
        self.tree = tree
        self.units = units
        tree.lazy = self  # every analysis holding the tree can reach its bodies

    def materialize(self, node: ast.AST | None) -> None:
        """Parse the body of ``node`` if it is a deferred function not yet parsed."""
        unit = self.units.get(node) if node is not None else None
        if unit is None or unit.done:
            return
        text = self.text[unit.start : unit.end]
        if unit.in_class:  # a method: at its own indentation, as a statement of `if 1:`
            source = "\n" * (unit.first_line - 2) + "if 1:\n" + text
        else:
            source = "\n" * (unit.first_line - 1) + text
        try:
            parsed = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise WholeTreeNeeded(f"a body does not parse alone: {exc}") from None
        body = parsed.body[0].body if unit.in_class and parsed.body else parsed.body
        real = body[0] if len(body) == 1 else None
        if not (
            real is not None
            and type(real) is type(node)
            and real.name == node.name
            and real.lineno == node.lineno
            and real.col_offset == node.col_offset
            and len(real.decorator_list) == len(node.decorator_list)
            and (real.end_lineno, real.end_col_offset) == (node.end_lineno, node.end_col_offset)
        ):
            raise WholeTreeNeeded(f"the body of {node.name!r} parses to another statement")
        node.body = real.body
        node.type_comment = real.type_comment
        unit.done = True

    def materialize_all(self) -> None:
        for node in list(self.units):
            self.materialize(node)

    def pending(self) -> list[Unit]:
        """The units whose bodies are not parsed, in the order of the text."""
        return sorted((u for u in self.units.values() if not u.done), key=lambda u: u.start)

    def unit_of(self, node: ast.AST) -> Unit | None:
        return self.units.get(node)

    def mentions(self, node: ast.AST, word: str) -> bool:
        """Whether a deferred function's text may spell ``word`` (True for any other node):
        it does, or it is not ASCII (Python reads identifiers NFKC-normalised, so ``ﬁll``
        is ``fill``)."""
        unit = self.units.get(node)
        if unit is None or unit.done or self.text.find(word, unit.start, unit.end) >= 0:
            return True
        return not self.text[unit.start : unit.end].isascii()


def materialize(tree: ast.AST, node: ast.AST | None) -> None:
    """``node``'s body parsed, if ``tree`` is a skeleton and ``node`` one of its deferred functions."""
    lazy = getattr(tree, "lazy", None)
    if lazy is not None:
        lazy.materialize(node)


def build(text: str, lines: list[str]) -> LazyTree | None:
    """The skeleton of ``text`` (split into ``lines`` as the tokenizer splits it), or None
    where the scan cannot stand for the tokenizer, nothing is deferred, or the skeleton does
    not parse (the whole parse then decides, and reports the error)."""
    if (
        "\t" in text
        or "\f" in text
        or "\0" in text
        or "barry_as_FLUFL" in text
        or text.count("\r") != text.count("\r\n")
        or (sys.version_info >= (3, 12) and _F_STRING.search(text))
    ):
        return None
    spans = _multiline_spans(text)
    if spans is None:
        return None
    starts = list(accumulate(map(len, lines), initial=0))
    scan = _Scan(text, lines, starts, spans)
    plan = scan.units()
    if not plan:
        return None
    skeleton = scan.skeleton(plan)
    try:
        tree = ast.parse(skeleton)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    units = scan.attach(tree, plan)
    if units is None:
        return None
    return LazyTree(text, tree, units)


def _multiline_spans(text: str) -> list[tuple[int, int]] | None:
    """(start, end) of every string token that spans lines; None where a quote opens none."""
    spans = []
    pos = 0
    while True:
        match = _MULTILINE.match(text, pos)
        if match is None or match.group(1) is None:
            return spans if match is not None else None
        start, end = match.span(1)
        pos = end
        if end - start == 1:
            return None  # an unterminated string: the tokenizer errs, the whole parse says where
        spans.append((start, end))


class _Scan:
    """The text's statement lines, the units cut at them, and the skeleton they make."""

    def __init__(self, text, lines, starts, spans) -> None:
        self.text = text
        self.lines = lines
        self.starts = starts  # offset of each line (1-based line n at starts[n - 1])
        self.spans = spans
        self.span_starts = [s for s, _ in spans]
        # Whether any line ends in a backslash (a continuation to rule out at each cut).
        self.backslashes = "\\\n" in text or "\\\r\n" in text

    def _in_string(self, offset: int) -> bool:
        """Whether ``offset`` is inside a multi-line string (its opening quote is not)."""
        i = bisect_right(self.span_starts, offset) - 1
        return i >= 0 and self.spans[i][0] < offset < self.spans[i][1]

    def _line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def _statement_lines(self, indent: int, start: int, end: int) -> list[int]:
        """Offsets of the lines in ``[start, end)`` that may begin a statement at ``indent``."""
        pattern = _LINE_AT.get(indent)
        if pattern is None:
            # Anchored on the line break before: a literal the search skips ahead to.
            pattern = _LINE_AT[indent] = re.compile(rf"\n {{{indent}}}[^\s#)\]}}]")
        text = self.text
        found = [match.start() + 1 for match in pattern.finditer(text, max(start - 1, 0), end)]
        if start == 0 and _FIRST_LINE.match(text):
            found.insert(0, 0)
        if self.spans:
            spans, k, kept = self.spans, 0, []
            for at in found:
                while k < len(spans) and spans[k][1] <= at:
                    k += 1
                if k < len(spans) and spans[k][0] < at:
                    continue  # inside a string that spans lines
                kept.append(at)
            found = kept
        if self.backslashes:
            found = [at for at in found if not self._continued(at)]
        return found

    def _continued(self, at: int) -> bool:
        """Whether the line before ``at`` ends in a backslash that continues it."""
        text = self.text
        if at < 2:
            return False
        before = at - 1
        if text[before] == "\n":
            before -= 1
            if before >= 0 and text[before] == "\r":
                before -= 1
        if before < 0 or text[before] != "\\":
            return False
        # Code, or a comment's last character? Read the line's tokens.
        line = self._line_of(before)
        pos = self.starts[line - 1]
        i = bisect_right(self.span_starts, pos) - 1
        if i >= 0 and pos < self.spans[i][1]:
            pos = self.spans[i][1]  # the line starts inside a string that ends on it
        while pos <= before:
            stop = _HEADER_STOPS.search(text, pos, before + 1)
            if stop is None:
                return True
            char = text[stop.start()]
            if char in "#'\"":
                token = TOKEN.match(text, stop.start())
                if token is None:
                    return True
                if token.end() > before:
                    return False  # the backslash is inside a comment or a string
                pos = token.end()
            else:
                pos = stop.end()
        return True

    def units(self) -> list[tuple]:
        """(def offset, first offset, end offset, in class, class offset) of each unit."""
        text = self.text
        module_lines = self._statement_lines(0, 0, len(text))
        plan = []
        for k, at in enumerate(module_lines):
            end = module_lines[k + 1] if k + 1 < len(module_lines) else len(text)
            word = _first_word(text, at)
            if word in ("def", "async"):
                first = _decorated_from(text, module_lines, k)
                plan.append((at, first, end, False, None))
            elif word == "class":
                plan.extend(self._methods(at, end))
        return plan

    def _methods(self, class_at: int, class_end: int) -> list[tuple]:
        header_end = self._header_end(class_at, class_end)
        if header_end is None:
            return []
        body = self._first_code_line(header_end, class_end)
        if body is None:
            return []
        indent = _indent(self.text, body)
        if indent == 0:
            return []
        lines = self._statement_lines(indent, body, class_end)
        out = []
        for k, at in enumerate(lines):
            if _first_word(self.text, at) not in ("def", "async"):
                continue
            end = lines[k + 1] if k + 1 < len(lines) else class_end
            out.append((at, _decorated_from(self.text, lines, k), end, True, class_at))
        return out

    def _header_end(self, at: int, end: int) -> int | None:
        """Offset of the line after the header at ``at`` (a ``def`` or ``class`` line); None
        when the header is not one of the two shapes read here (it is then not deferred, and
        the skeleton parses it whole): one line ending in its colon, or a black-style
        bracket closed at the header's own indentation (``) -> int:``). Its strings and
        comments taken out, its brackets must balance and its code end in the colon, so
        that colon is the header's: a one-line body ends in something else."""
        text = self.text
        line_end = text.find("\n", at, end)
        if line_end < 0:
            return None
        line = _code_of(text[at:line_end])
        if line.endswith(":"):
            return line_end + 1 if _balanced(line) else None
        if not line.endswith(("(", "[")):
            return None
        indent = _indent(text, at)
        close = _CLOSING_LINE.get(indent)
        if close is None:
            close = _CLOSING_LINE[indent] = re.compile(
                rf"\n {{{indent}}}[)\]][^\n]*:[ ]*(?:#[^\n]*)?\r?\n"
            )
        match = close.search(text, line_end, end)
        if match is None:
            return None
        header = _code_of(text[at : match.end()])
        return match.end() if header.endswith(":") and _balanced(header) else None

    def _first_code_line(self, start: int, end: int) -> int | None:
        """Offset of the first line in ``[start, end)`` that is neither blank nor a comment."""
        if start < len(self.text) and _CODE_LINE_HERE.match(self.text, start):
            return start
        match = _CODE_LINE.search(self.text, max(start - 1, 0), end)
        return match.start() + 1 if match else None

    def _code_end(self, start: int, end: int) -> int:
        """Offset just past the last code character in ``[start, end)`` (comments skipped)."""
        text = self.text
        pos = end
        while True:
            while pos > start and text[pos - 1] in " \r\n":
                pos -= 1
            line = self._line_of(pos - 1)
            line_start = self.starts[line - 1]
            if self._in_string(line_start):
                i = bisect_right(self.span_starts, line_start) - 1
                line_start = self.spans[i][1]
            comment = None
            scan = line_start
            while scan < pos:
                stop = _QUOTE_OR_HASH.search(text, scan, pos)
                if stop is None:
                    break
                token = TOKEN.match(text, stop.start())
                if token is None:
                    break
                if text[stop.start()] == "#":
                    comment = stop.start()
                    break
                scan = token.end()
            if comment is None:
                return pos
            pos = comment

    def skeleton(self, plan: list[tuple]) -> str:
        """The text with each unit's body replaced by ``...`` on its first line, lines kept."""
        text = self.text
        pieces = []
        cursor = 0
        self.cut: list[tuple] = []
        for at, first, end, in_class, class_at in plan:
            header_end = self._header_end(at, end)
            if header_end is None:
                continue
            body = self._first_code_line(header_end, end)
            if body is None:
                continue
            code_end = self._code_end(body, end)
            last_line = self._line_of(code_end - 1)
            body_end = self.starts[last_line] if last_line < len(self.starts) else len(text)
            body_end = min(body_end, len(text))
            indent = _indent(text, body)
            pieces.append(text[cursor:header_end])
            region = text[header_end:body_end]
            breaks = region.count("\n")
            lead = text.count("\n", header_end, body)
            filler = "\n" * lead + " " * indent + "..." + "\n" * (breaks - lead)
            pieces.append(filler)
            cursor = body_end
            self.cut.append((at, first, in_class, class_at, body, code_end, body_end, indent))
        pieces.append(text[cursor:])
        return "".join(pieces)

    def attach(self, tree: ast.Module, plan) -> dict[ast.AST, Unit] | None:
        """Each unit's ``FunctionDef`` in the skeleton, its end set as the whole parse sets it;
        None when one is not where the scan put it."""
        text = self.text
        by_line: dict[int, ast.AST] = {}
        classes: dict[int, ast.ClassDef] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                classes[stmt.lineno] = stmt
                for inner in stmt.body:
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        by_line[inner.lineno] = inner
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                by_line[stmt.lineno] = stmt
        units: dict[ast.AST, Unit] = {}
        for at, first, in_class, _class_at, body, code_end, body_end, indent in self.cut:
            line = self._line_of(at)
            node = by_line.get(line)
            body_line = self._line_of(body)
            if (
                node is None
                or node.col_offset != _indent(text, at)
                or len(node.body) != 1
                or not isinstance(node.body[0], ast.Expr)
                or not isinstance(node.body[0].value, ast.Constant)
                or node.body[0].value.value is not Ellipsis
                or node.body[0].lineno != body_line
                or node.body[0].col_offset != indent
            ):
                return None
            end_line = self._line_of(code_end - 1)
            end_text = self.lines[end_line - 1][: code_end - self.starts[end_line - 1]]
            node.end_lineno = end_line
            node.end_col_offset = len(end_text.encode("utf-8"))
            units[node] = Unit(first, body_end, self._line_of(first), in_class, body, body_end)
        for klass in classes.values():
            last = klass.body[-1] if klass.body else None
            if last is not None and last in units:
                klass.end_lineno, klass.end_col_offset = last.end_lineno, last.end_col_offset
        return units


_LINE_AT: dict[int, re.Pattern] = {}


def _first_word(text: str, at: int) -> str:
    match = _WORD.match(text, at)
    return match.group(1) if match else ""


_WORD = re.compile(r"[ ]*([A-Za-z_]+)(?=[\s(:])")


def _code_of(header: str) -> str:
    """A header's code: its strings and comments taken out (the header starts at a
    statement, so the tokens are found from a code position, as the tokenizer finds
    them), and its end stripped."""
    if "#" in header or "'" in header or '"' in header:
        header = TOKEN.sub("", header)
    return header.rstrip(" \r\n")


def _balanced(code: str) -> bool:
    return (
        code.count("(") == code.count(")")
        and code.count("[") == code.count("]")
        and code.count("{") == code.count("}")
    )


_CLOSING_LINE: dict[int, re.Pattern] = {}


def _indent(text: str, at: int) -> int:
    return _SPACES.match(text, at).end() - at


_SPACES = re.compile(r"[ ]*")
_NOT_A_BREAK = re.compile(r"[^\r\n]")
_CODE_LINE = re.compile(r"\n[ ]*[^\s#]")
_CODE_LINE_HERE = re.compile(r"[ ]*[^\s#]")
_FIRST_LINE = re.compile(r"[^\s#)\]}]")


def _decorated_from(text: str, lines: list[int], k: int) -> int:
    """The offset of the first decorator line right above statement line ``k`` (or its own)."""
    first = lines[k]
    while k > 0 and text[lines[k - 1] + _indent(text, lines[k - 1])] == "@":
        k -= 1
        first = lines[k]
    return first


__all__ = ["TOKEN", "LazyTree", "WholeTreeNeeded", "build", "materialize"]
