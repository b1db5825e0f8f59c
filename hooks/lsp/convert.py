"""Findings in LSP's terms: diagnostics, edits, code actions, hover text.

Positions: a ``Finding`` is 1-based lines and 1-based *character* (code
point) columns over the lines the tokenizer sees (``\\n``, ``\\r\\n``,
``\\r``; not form feeds). LSP is 0-based lines and columns in the
negotiated encoding (UTF-16 unless the client offers another), so every
column goes through the session's ``PositionCodec``. The lines are split
here the tokenizer's way, not pygls's ``splitlines``, which also breaks on
form feeds and would put every later finding on the wrong line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from lsprotocol import types

from checkers.codes import MISSING_REASON, UNCHECKABLE, UNUSED_SUPPRESSION
from contracts.finding import Edit, Finding

SOURCE = "atom-contracts"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.atom-contracts"
UNSAFE_KIND = f"{types.CodeActionKind.QuickFix.value}.unsafe"
# Findings about suppression hygiene and files not checked: worth seeing, but
# they are not a contract broken.
_WARNING_CODES = frozenset({UNCHECKABLE, MISSING_REASON, UNUSED_SUPPRESSION})


def split_lines(text: str) -> list[str]:
    return io.StringIO(text, newline="").readlines()


class Positions:
    """Converts between one text's finding positions and LSP positions."""

    def __init__(self, text: str, codec) -> None:
        self.lines = split_lines(text)
        self.codec = codec

    def to_lsp(self, line: int, column: int) -> types.Position:
        """A 1-based line and 1-based character column as an LSP position."""
        if line < 1:
            return types.Position(line=0, character=0)
        if line > len(self.lines):
            # Past the last line (a finding at end of file): the end of the text.
            if not self.lines:
                return types.Position(line=0, character=0)
            last = self.lines[-1]
            if last.endswith(("\n", "\r")):
                return types.Position(line=len(self.lines), character=0)
            return types.Position(
                line=len(self.lines) - 1, character=self.codec.client_num_units(last)
            )
        text = self.lines[line - 1].rstrip("\r\n")
        prefix = text[: max(column - 1, 0)]
        return types.Position(line=line - 1, character=self.codec.client_num_units(prefix))

    def from_lsp(self, position: types.Position) -> tuple[int, int]:
        """An LSP position as a 1-based line and 1-based character column."""
        if position.line >= len(self.lines):
            return len(self.lines) + 1, 1
        text = self.lines[position.line].rstrip("\r\n")
        units = 0
        for index, char in enumerate(text):
            if units >= position.character:
                return position.line + 1, index + 1
            units += self.codec.client_num_units(char)
        return position.line + 1, len(text) + 1

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.to_lsp(line, column), end=self.to_lsp(end_line, end_column))

    def of(self, finding: Finding) -> types.Range:
        return self.range(finding.line, finding.column, finding.end_line, finding.end_column)

    def edit(self, edit: Edit) -> types.TextEdit:
        return types.TextEdit(
            range=self.range(edit.line, edit.column, edit.end_line, edit.end_column),
            new_text=edit.content,
        )

    def end(self) -> types.Position:
        return self.to_lsp(len(self.lines) + 1, 1)


def severity(code: str) -> types.DiagnosticSeverity:
    return (
        types.DiagnosticSeverity.Warning
        if code in _WARNING_CODES
        else types.DiagnosticSeverity.Error
    )


def diagnostic(finding: Finding, positions: Positions) -> types.Diagnostic:
    from checkers.reporters import rule_url

    data = {"contract": finding.contract, "kind": finding.kind}
    if finding.fix is not None:
        data["fix"] = finding.fix.applicability
    message = finding.message
    if finding.contract:
        message += f" (contract `{finding.contract}`)"
    return types.Diagnostic(
        range=positions.of(finding),
        message=message,
        severity=severity(finding.code),
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)),
        source=SOURCE,
        data=data,
    )


def diagnostics(findings: Sequence[Finding], text: str, codec) -> list[types.Diagnostic]:
    positions = Positions(text, codec)
    return [diagnostic(f, positions) for f in findings]


def touches(finding: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether the finding's span and the (1-based) range [start, end] share a position."""
    return (finding.line, finding.column) <= end and start <= (
        finding.end_line,
        finding.end_column,
    )


def on_statement(finding: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether the (1-based) range [start, end] reaches a line of the finding's statement.

    What an editor underlines is the finding's own span (the condition of an
    ``assert``, a parameter): the place the CLI's column names. Its fix and
    its suppression belong to the whole statement -- the fix rewrites it, and
    a ``# noqa`` on any of its lines suppresses it -- so they are offered from
    any of its lines: the cursor on ``assert``, in the message, on the
    closing bracket. A range that ends at the start of a line (a whole line
    selected) does not reach into that line.
    """
    first, last = finding.span_lines if finding.span_lines != (0, 0) else (0, 0)
    first = min(first or finding.line, finding.line)
    last = max(last, finding.end_line)
    end_line = end[0] - 1 if end[1] == 1 and end[0] > start[0] else end[0]
    return start[0] <= last and first <= end_line


def minimal_edit(old: str, new: str, positions: Positions) -> types.TextEdit:
    """One edit turning ``old`` into ``new``: the changed middle only, so an editor keeps
    the cursor, folds and marks of every line the fixes did not touch."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    # Whole lines are easier on every client's diff view: widen to line starts.
    start = old.rfind("\n", 0, prefix) + 1
    return types.TextEdit(
        range=types.Range(
            start=_offset_position(old, start, positions),
            end=_offset_position(old, len(old) - suffix, positions),
        ),
        new_text=new[start : len(new) - suffix],
    )


def _offset_position(text: str, offset: int, positions: Positions) -> types.Position:
    line = 1
    line_start = 0
    for index, content in enumerate(positions.lines):
        if line_start + len(content) > offset:
            line = index + 1
            break
        line_start += len(content)
    else:
        return positions.end()
    return positions.to_lsp(line, offset - line_start + 1)


def hover(findings: Sequence[Finding], kind: types.MarkupKind) -> types.MarkupContent:
    """The findings' hover in ``kind``: Markdown, or plain text laid out as
    ``atom-contracts explain`` prints a rule (headings, then indented text)."""
    if kind == types.MarkupKind.Markdown:
        value = "\n\n---\n\n".join(hover_markdown(f) for f in findings)
    else:
        value = "\n\n----\n\n".join(hover_text(f) for f in findings)
    return types.MarkupContent(kind=kind, value=value)


def hover_markdown(finding: Finding) -> str:
    """The rule's Why and Use instead, under the finding's own message."""
    from checkers.reporters import rule_url
    from checkers.rule_docs import rule_index

    entry = rule_index().get(finding.code)
    head = f"**{finding.code}**"
    if entry is not None:
        head += f" `{entry.rule.name}`"
    if finding.contract:
        head += f" -- contract `{finding.contract}`"
    out = [head, "", finding.message]
    if entry is not None:
        out += ["", "**Why is this bad?** " + " ".join(entry.rule.why.split())]
        if entry.valid is not None:
            out += ["", "**Use instead**", "", "```python", entry.valid.source.rstrip("\n"), "```"]
        if entry.rule.fix_safety:
            out += ["", "**Fix safety.** " + " ".join(entry.rule.fix_safety.split())]
    out += ["", f"[{finding.code} in the contract reference]({rule_url(finding.code)})"]
    return "\n".join(out)


def hover_text(finding: Finding) -> str:
    """``hover_markdown``'s content for a client that shows text as it is."""
    from checkers.reporters import rule_url
    from checkers.rule_docs import rule_index

    entry = rule_index().get(finding.code)
    head = finding.code
    if entry is not None:
        head += f" {entry.rule.name}"
    if finding.contract:
        head += f" -- contract {finding.contract}"
    out = [head, "", finding.message]
    if entry is not None:
        out += ["", "Why is this bad?", "    " + " ".join(entry.rule.why.split())]
        if entry.valid is not None:
            code = entry.valid.source.rstrip("\n").splitlines()
            out += ["", "Use instead", *("    " + line if line.strip() else "" for line in code)]
        if entry.rule.fix_safety:
            out += ["", "Fix safety", "    " + " ".join(entry.rule.fix_safety.split())]
    out += ["", f"{finding.code} in the contract reference: {rule_url(finding.code)}"]
    return "\n".join(out)


def hover_kind(capabilities: types.ClientCapabilities) -> types.MarkupKind:
    """The first markup kind in the client's ``hover.contentFormat`` (its order of
    preference) that the server writes; plain text when it names none."""
    text_document = capabilities.text_document
    hover_caps = text_document.hover if text_document is not None else None
    for kind in (hover_caps.content_format if hover_caps is not None else None) or ():
        if kind in (types.MarkupKind.Markdown, types.MarkupKind.PlainText):
            return types.MarkupKind(kind)
    return types.MarkupKind.PlainText


def _line_ends(text: str) -> dict[int, tuple[int, str | None]]:
    """1-based line -> (0-based character column where its code ends, its comment or None),
    for every line that ends outside a string; {} when the text does not tokenize."""
    import tokenize

    ends: dict[int, tuple[int, str | None]] = {}
    comments: dict[int, tuple[int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = (tok.start[1], tok.string)
            elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                row = tok.start[0]
                if row in comments:
                    ends[row] = (comments[row][0], comments[row][1])
                else:
                    ends[row] = (tok.start[1], None)
    except (tokenize.TokenError, SyntaxError):
        return {}
    return ends


def suppression(finding: Finding, text: str) -> tuple[int, int, int, str, int] | None:
    """Where ``# noqa: CODE -- `` goes for this finding, and what to insert.

    Returns (1-based line, 1-based start column, 1-based end column, text,
    offset of the reason's cursor within the text). The comment goes on a line
    of the flagged span (any line suppresses, see checkers.suppression) that
    ends in code rather than inside a string, preferring the finding's own
    line and one without a comment. A line that already carries an AC
    suppression gets the code added to it, sharing that reason: a second
    ``# noqa`` in the same comment would be read as part of the first's reason.
    """
    from checkers.suppression import parse_directives

    ends = _line_ends(text)
    lines = split_lines(text)
    first, last = (
        finding.span_lines
        if finding.span_lines != (0, 0)
        else (
            finding.line,
            finding.end_line,
        )
    )
    candidates = [finding.line, *(n for n in range(first, last + 1) if n != finding.line)]
    directives = {d.line: d for d in parse_directives(text)}
    for line in candidates:
        if line in ends and ends[line][1] is None:
            column = ends[line][0]
            code_text = lines[line - 1][:column] if line <= len(lines) else ""
            pad = "" if not code_text.strip() else "  "
            insert = f"{pad}# noqa: {finding.code} -- "
            start = len(code_text.rstrip()) + 1 if code_text.strip() else column + 1
            return line, start, column + 1, insert, len(insert)
    for line in candidates:
        directive = directives.get(line)
        if directive is not None and finding.code not in directive.codes:
            # After the last code of the existing list, so both share its reason.
            comment = ends.get(line, (0, ""))[1] or ""
            found = re.search(r"#\s*noqa\s*:\s*(?:[A-Za-z]+[0-9]+[\s,]*)+", comment, re.I)
            if found is None:
                continue
            codes_end = len(comment[: found.end()].rstrip(" ,"))
            column = directive.column + codes_end - found.start()
            insert = f", {finding.code}"
            return line, column, column, insert, len(insert)
    if finding.line <= len(lines):
        # The text does not tokenize (mid-edit): the end of the finding's line.
        content = lines[finding.line - 1].rstrip("\r\n")
        insert = f"  # noqa: {finding.code} -- "
        return finding.line, len(content) + 1, len(content) + 1, insert, len(insert)
    return None
