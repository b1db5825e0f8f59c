"""The language server's spliced tree is the tree a full parse gives, or none at all."""

from __future__ import annotations

import ast
import functools
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.incremental import splice, successor, tail
from checkers.source import SourceFile

REPO = Path(__file__).resolve().parents[2]
# Real modules of every shape: nested classes, decorators, docstrings, long calls.
CORPUS = [
    REPO / "checkers" / "incremental.py",
    REPO / "checkers" / "project.py",
    REPO / "atom" / "pool_layout" / "entry_arena.py",
    REPO / "hooks" / "lsp" / "server.py",
]


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def full(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `0x` typed before a name: a SyntaxWarning
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


@functools.cache
def parsed(old: str) -> SourceFile:
    before = SourceFile("m.py", old)
    assert before.tree is not None
    return before


def spliced(old: str, new: str) -> ast.Module | None:
    before = parsed(old)  # shared between examples: a splice never mutates it
    return splice(before.tree, before.lines, SourceFile("m.py", new).lines)


def agrees(old: str, new: str) -> ast.Module | None:
    """The splice, checked against the full parse: equal when there is one."""
    tree = spliced(old, new)
    if tree is not None:
        reference = full(new)
        assert reference is not None, "spliced a text that does not parse"
        assert dump(tree) == dump(reference)
    return tree


# Characters that open and close what a tokenizer tracks across lines.
KEYS = st.sampled_from([*list("abcx_ ()[]{}:,.=+-'\"#\\@0\t"), '"""', "\x0c", "else:", "def "])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.sampled_from(CORPUS),
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(0, 2), KEYS), min_size=1, max_size=3
    ),
)
def test_a_splice_is_the_full_parse(path, edits):
    old = path.read_text(encoding="utf-8")
    agrees(old, edited(old, edits))


def edited(old: str, edits) -> str:
    """``old`` after ``edits``: (where, column, op, key) -- insert, delete one character,
    overwrite, or (op 3) a backspace at the start of the next line, joining the two."""
    lines = old.splitlines(keepends=True)
    for where, column, op, key in edits:
        i = min(int(where * len(lines)), len(lines) - 1)
        body = lines[i].rstrip("\r\n")
        end = lines[i][len(body) :]
        c = min(int(column * (len(body) + 1)), len(body))
        if op == 0:
            body = body[:c] + key + body[c:]
        elif op == 1:
            body = body[:c] + body[c + 1 :]
        elif op == 2:
            body = body[:c] + key + body[c + len(key) :]
        elif i + 1 < len(lines):
            lines[i + 1] = body + lines.pop(i + 1)
            continue
        lines[i] = body + end
    return "".join(lines)


FUNCTION = """\
import os


class Pool:
    def carve(self, blocks):
        size = blocks * 2
        return size

    def price(self):
        return 1


value = 3
"""


def test_typing_inside_a_method_reparses_only_it_and_reuses_the_rest():
    new = FUNCTION.replace("size = blocks * 2", "size = blocks * 4")
    tree = agrees(FUNCTION, new)
    assert tree is not None
    old_tree = ast.parse(FUNCTION)
    # Not the same objects as a fresh parse would give; the untouched ones shared.
    before = SourceFile("m.py", FUNCTION)
    again = splice(before.tree, before.lines, SourceFile("m.py", new).lines)
    assert again.body[0] is before.tree.body[0]  # `import os`
    assert again.body[2] is before.tree.body[2]  # `value = 3`
    assert again.body[1] is not before.tree.body[1]  # the class: a copy with a new method
    assert again.body[1].body[1] is before.tree.body[1].body[1]  # `price`, untouched
    assert dump(old_tree) == dump(before.tree)  # nothing mutated


def test_the_same_text_is_the_same_tree():
    before = SourceFile("m.py", FUNCTION)
    assert splice(before.tree, before.lines, before.lines) is before.tree


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        # An opened string swallows the statements after the ones touched.
        ('a = 1\nb = 2\nc = 3  # """\n', 'a = """\nb = 2\nc = 3  # """\n', "string"),
        # A decorator typed above a def belongs to the def below it.
        ("x = 1\n\ndef f():\n    pass\n", "x = 1\n@dec\ndef f():\n    pass\n", "decorator"),
        # An `else:` continues the `if` before the touched line.
        ("if a:\n    b\n\nc = 1\n", "if a:\n    b\nelse:\n    c = 1\n", "else"),
        # A line indented deeper joins the block before it.
        ("if a:\n    b\nc = 1\n", "if a:\n    b\n    c = 1\n", "indent"),
        # A backslash continues onto the next statement.
        ("a = 1\n+2\n", "a = 1 \\\n+2\n", "continuation"),
    ],
)
def test_an_edit_that_reaches_beyond_its_statements_is_a_full_parse(old, new, why):
    assert full(new) is not None  # the full parse takes it: the splice must not
    assert agrees(old, new) is None, why


def test_a_body_whose_last_statement_shrinks_moves_its_scope_end():
    old = "def f():\n    x = (1,\n         2)\n\n\ny = 1\n"
    new = "def f():\n    x = (1, 2)\n    # 2)\n\n\ny = 1\n"
    tree = agrees(old, new)
    assert tree is not None and tree.body[0].end_lineno == 2


def test_a_line_added_or_a_tab_is_a_full_parse():
    assert (
        spliced(FUNCTION, FUNCTION.replace("size = blocks * 2\n", "size = 2\n        z = 1\n"))
        is None
    )
    assert agrees(FUNCTION, FUNCTION.replace("        return size", "\treturn size ")) is None


def test_successor_sets_the_tree_or_the_error_a_full_parse_gives():
    before = SourceFile("m.py", FUNCTION, abspath="/p/m.py")
    before.tree  # noqa: B018 - parsed, as the server's last check left it
    after = successor(before, "m.py", FUNCTION.replace("* 2", "* 3"), "/p/m.py")
    assert "tree" in after.__dict__ and after.abspath == "/p/m.py"
    text = FUNCTION.replace("* 2", "* (")
    broken = successor(before, "m.py", text, "/p/m.py")
    assert "tree" in broken.__dict__ and broken.tree is None  # found without a full parse
    assert error(broken.parse_error) == error(parse_error(text))
    assert broken.parse_error.filename == "m.py"  # as SourceFile.tree's own parse names it
    assert "tree" not in successor(None, "m.py", FUNCTION, "/p/m.py").__dict__


def test_a_run_of_unparsable_buffers_is_compared_with_the_last_tree_there_was():
    before = SourceFile("m.py", FUNCTION)
    before.tree  # noqa: B018
    typed = before
    for end in ("* (", "* (b", "* (bl", "* (blocks)"):
        typed = successor(typed, "m.py", FUNCTION.replace("* 2", end), "/p/m.py")
        assert "tree" in typed.__dict__  # never left to a full parse
    assert dump(typed.tree) == dump(full(FUNCTION.replace("* 2", "* (blocks)")))
    assert typed.__dict__.get("_parsed") is before  # the last tree, and only that one, kept
    assert before.__dict__.get("_parsed") is None


def error(exc: BaseException | None):
    if exc is None:
        return None
    return (type(exc), exc.msg, exc.lineno, exc.offset, exc.end_lineno, exc.end_offset, exc.text)


def parse_error(text: str) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        return exc
    return None


def tail_agrees(old: str, new: str):
    """``tail``'s answer, checked against the full parse: the same tree, or the same error."""
    before = parsed(old)
    found = tail(before.tree, before.lines, SourceFile("m.py", new).lines)
    if isinstance(found, SyntaxError):
        assert error(found) == error(parse_error(new))
    elif found is not None:
        reference = full(new)
        assert reference is not None, "a tree for a text that does not parse"
        assert dump(found) == dump(reference)
    return found


# Enter and a backspace that joins two lines too: the tail takes a line count that moves.
TAIL_KEYS = st.sampled_from([*list("abx_ ()[]{}:,.=+'\"#\\@0\t\n"), '"""', "else:", "def ", "):"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.sampled_from(CORPUS),
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(0, 3), TAIL_KEYS),
        min_size=1,
        max_size=3,
    ),
)
def test_a_tail_parse_is_the_full_parse_tree_or_error(path, edits):
    old = path.read_text(encoding="utf-8")
    tail_agrees(old, edited(old, edits))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A bracket opened and never closed: the tokens run on to the end.
        ("a = 1\n\ndef f():\n    x = 1\n\nb = 2\n", "a = 1\n\ndef f():\n    x = g(\n\nb = 2\n"),
        # A message that names a line: the line is the whole text's.
        ("a = 1\nb = [\n    1,\n]\n", "a = 1\nb = [\n    1,\n)\n"),
        # A string opened that swallows the rest.
        ("a = 1\nb = 2\nc = 3\n", 'a = 1\nb = 2\nc = """3\n'),
        # An indentation error, and an `else:` that joins the `if` the tail starts at.
        ("if a:\n    b = 1\nc = 2\n", "if a:\n    b = 1\n  c = 2\n"),
        ("if a:\n    b = 1\nc = 2\n", "if a:\n    b = 1\nelse:\n    c = 2\n"),
        # Enter inside a line: the line count moves, and the tail still parses.
        ("a = 1\nb = f(1, 2)\n", "a = 1\nb = f(1,\n 2)\n"),
    ],
)
def test_a_tail_parse_on_the_edits_that_defeat_the_splice(old, new):
    assert spliced(old, new) is None
    assert tail_agrees(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("a = 1\n", "(a = 1\n", "the edit is on the first statement's first line"),
        ("a = 1; b = 2\nc = 3\n", "a = 1; b = 2\nc = (\n", "the head shares a line with the tail"),
        ("a = 1\nb = 2\n", "from __future__ import barry_as_FLUFL\na = 1\nb = 2 <> 3\n", "FLUFL"),
        ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nc = 3\x00\n", "a NUL byte"),
    ],
)
def test_a_tail_parse_leaves_to_the_full_parse_what_it_cannot_stand_for(old, new, why):
    before = parsed(old)
    assert tail(before.tree, before.lines, SourceFile("m.py", new).lines) is None, why


def test_what_int_inference_keeps_per_statement_reads_the_new_trees_module():
    # The function is shared by the two trees; the module binding it reads is not.
    from checkers.analysis.int_kinds import INT, TENSOR, IntInference

    old = "import torch\nn = 4\n\n\ndef f(x):\n    return torch.repeat_interleave(x, n)\n"
    new = old.replace("n = 4", "n = x.sum()")
    before = SourceFile("m.py", old)
    before.tree  # noqa: B018 - parsed, as the server's last check left it
    after = successor(before, "m.py", new, "m.py")
    assert after.tree.body[2] is before.tree.body[2]  # `def f`, reused

    def verdict(tree):
        call = tree.body[2].body[0].value
        inference = IntInference(tree)
        return inference.verdict(call.args[1], inference.scope_of(call))

    assert verdict(before.tree) == INT
    assert verdict(after.tree) == TENSOR == verdict(ast.parse(new))
    assert verdict(before.tree) == INT  # and back: nothing of the other tree kept


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_calls_walked_per_statement_come_in_ast_walks_order(path):
    # required-keyword walks each top-level statement on its own; merged, the calls
    # are the whole module's ast.walk order, twice over (the second from what it kept).
    from checkers.rules.required_keyword import _imports_and_calls

    tree = ast.parse(path.read_text(encoding="utf-8"))
    walked = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for _ in range(2):
        _aliases, _modules, calls = _imports_and_calls(tree)
        assert calls == walked
