"""Code actions: each finding's fix, "fix all safe", and "suppress with a reason".

- A safe fix is a ``quickfix`` (preferred: an editor may apply it on its
  own); an unsafe one is ``quickfix.unsafe``, titled so, never preferred --
  the CLI applies it only under ``--unsafe-fixes`` and an editor must not
  make it look like the same thing.
- ``source.fixAll.atom-contracts`` applies every safe fix the way ``check
  --fix`` does (``checkers.fixer.fix_text``: non-overlapping, reparsed, to a
  fixpoint), as one edit of the lines that changed.
- "Suppress" inserts ``# noqa: AC101 -- `` and leaves the cursor after the
  dashes, where the reason goes: as a snippet where the client takes
  snippet edits (LSP 3.18), otherwise by a ``window/showDocument`` that
  selects that spot once the edit is applied. A suppression without a
  reason is itself a finding (AC901), so the action does not stop short.
"""

from __future__ import annotations

from lsprotocol import types

from checkers.codes import MISSING_REASON, UNUSED_SUPPRESSION
from contracts.finding import Finding

from . import convert
from .guard import guarded

PLACE_CURSOR = "atom-contracts.placeCursor"  # the command a suppression's action runs

_NO_SUPPRESSION = frozenset(
    {MISSING_REASON, UNUSED_SUPPRESSION}
)  # findings about suppressions themselves


def _wants(only, kind: str) -> bool:
    """Whether the request's ``only`` filter admits an action of ``kind`` (LSP's prefix rule)."""
    if not only:
        return not kind.startswith("source")  # source actions only when asked for
    return any(kind == k or kind.startswith(f"{k}.") for k in only)


def _edit(ls, uri: str, version, edits: list) -> types.WorkspaceEdit:
    caps = ls.client_capabilities.workspace
    edit_caps = caps.workspace_edit if caps is not None else None
    if edit_caps is not None and edit_caps.document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: edits})


def _snippets(ls) -> bool:
    caps = ls.client_capabilities.workspace
    edit_caps = caps.workspace_edit if caps is not None else None
    return bool(
        edit_caps is not None and edit_caps.document_changes and edit_caps.snippet_edit_support
    )


def _show_document(ls) -> bool:
    window = ls.client_capabilities.window
    return bool(window is not None and window.show_document and window.show_document.support)


def _matches(finding: Finding, diagnostics) -> bool:
    return any(d.code == finding.code and d.source == convert.SOURCE for d in diagnostics or ())


def code_actions(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    text = ls.text_of(uri)
    if text is None:
        return []  # no buffer and no file: nothing to act on
    document = ls.workspace.get_text_document(uri)
    findings = ls.check_document(uri)
    positions = convert.Positions(text, ls.workspace.position_codec)
    start = positions.from_lsp(params.range.start)
    end = positions.from_lsp(params.range.end)
    only = params.context.only
    here = [f for f in findings if convert.on_statement(f, start, end)]
    actions: list[types.CodeAction] = []
    for finding in here:
        diag = convert.diagnostic(finding, positions)
        fix = finding.fix
        if fix is not None and fix.edits:
            safe = fix.applicability == "safe"
            kind = types.CodeActionKind.QuickFix.value if safe else convert.UNSAFE_KIND
            if _wants(only, kind):
                actions.append(
                    types.CodeAction(
                        title=f"{fix.message} ({finding.code})"
                        if safe
                        else f"Unsafe fix: {fix.message} ({finding.code}) -- review the change",
                        kind=kind,
                        diagnostics=[diag],
                        is_preferred=safe,
                        edit=_edit(
                            ls, uri, document.version, [positions.edit(e) for e in fix.edits]
                        ),
                    )
                )
        if finding.code not in _NO_SUPPRESSION and _wants(only, types.CodeActionKind.QuickFix):
            action = _suppress(ls, uri, document.version, finding, text, positions, diag)
            if action is not None:
                actions.append(action)
    if _wants(only, convert.FIX_ALL_KIND) and any(
        f.fix is not None and f.fix.edits and f.fix.applicability == "safe" for f in findings
    ):
        action = _fix_all(ls, uri, document, text, positions)
        if action is not None:
            actions.append(action)
    return actions


def _suppress(ls, uri, version, finding, text, positions, diag) -> types.CodeAction | None:
    spot = convert.suppression(finding, text)
    if spot is None:
        return None
    line, column, end_column, insert, cursor = spot
    where = positions.range(line, column, line, end_column)
    command = None
    if _snippets(ls):
        escaped = insert.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")
        edit: object = types.SnippetTextEdit(
            range=where,
            snippet=types.StringValue(value=escaped[:cursor] + "$0" + escaped[cursor:]),
        )
    else:
        edit = types.TextEdit(range=where, new_text=insert)
        if _show_document(ls):
            # Applied first, then the command: the cursor lands where the reason goes.
            target = positions.to_lsp(line, column)
            after = types.Position(
                line=target.line,
                character=target.character
                + ls.workspace.position_codec.client_num_units(insert[:cursor]),
            )
            command = types.Command(
                title="Write the reason",
                command=PLACE_CURSOR,
                arguments=[uri, after.line, after.character],
            )
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line, with a reason",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=False,
        edit=_edit(ls, uri, version, [edit]),
        command=command,
    )


def _fix_all(ls, uri, document, text, positions) -> types.CodeAction | None:
    from checkers.fixer import fix_text

    path = document.path
    declaration = ls.declaration_for(path) if path else None
    if declaration is None or declaration.config is None:
        return None
    new, applied = fix_text(text, lambda t: declaration.check_detached(path, t), unsafe=False)
    if not applied or new == text:
        return None
    return types.CodeAction(
        title=f"Fix all safe atom-contracts findings ({applied})",
        kind=convert.FIX_ALL_KIND,
        edit=_edit(ls, uri, document.version, [convert.minimal_edit(text, new, positions)]),
    )


def place_cursor(ls, args) -> None:
    uri, line, character = args[0], int(args[1]), int(args[2])
    where = types.Position(line=line, character=character)
    ls.window_show_document(
        types.ShowDocumentParams(
            uri=uri, take_focus=True, selection=types.Range(start=where, end=where)
        )
    )


def register(server) -> None:
    """Code actions, the command that places the cursor after a suppression, and hover."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                convert.FIX_ALL_KIND,
            ]
        ),
    )
    @guarded(list)
    def code_action(ls, params: types.CodeActionParams):
        ls.unsent(params.text_document.uri)
        return code_actions(ls, params)

    @server.command(PLACE_CURSOR)
    @guarded()
    def place_cursor_command(ls, *args):
        place_cursor(ls, args)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def hover(ls, params: types.HoverParams):
        uri = params.text_document.uri
        ls.unsent(uri)
        findings = ls.check_document(uri)
        positions = convert.Positions(ls.text_of(uri) or "", ls.workspace.position_codec)
        at = positions.from_lsp(params.position)
        hits = [f for f in findings if convert.touches(f, at, at)]
        if not hits:
            return None
        return types.Hover(
            contents=convert.hover(hits, convert.hover_kind(ls.client_capabilities)),
            range=positions.of(hits[0]),
        )
