"""``# noqa: AC301 -- reason``: suppressions that carry their reason.

A comment suppresses a finding when it sits on any line of the flagged
node's span (``Finding.span_lines``): formatters move a trailing comment to
the closing parenthesis of a call or signature they wrap, and a suppression
that stops working when black runs is one nobody trusts.

Only AC codes are ours. A plain ``# noqa`` suppresses nothing here -- a
contract is a decision about one named invariant, so the suppression must
name it -- and other tools' codes in the same comment are left to them.

Comments are found with ``tokenize``, so ``"# noqa"`` inside a string (a
rule's own example) is not a suppression; and only files whose text holds
"noqa" at all are tokenized.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from contracts.finding import Finding, Fix

from .codes import MISSING_REASON, UNUSED_SUPPRESSION

# Compiled on first use (re caches them): most files hold no "noqa", and a
# one-file check should not pay for three patterns it never runs.
_NOQA = r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)(?P<rest>.*)"
_CODE = r"[A-Za-z]+[0-9]+"
_REASON = r"^[\s,]*--\s*(?P<reason>\S.*)$"
_PREFIX = "AC"
# What any comment naming one of our codes must spell, searched over the whole
# text before it is tokenized: a file whose "noqa" comments name only other
# tools' codes (the stdlib's four) costs a search, not a tokenize.
_NAMES_OURS = r"#\s*noqa\s*:\s*(?:[A-Za-z]+[0-9]+[\s,]+)*" + _PREFIX + r"[A-Za-z]*[0-9]+"


@dataclass(frozen=True, slots=True)
class Directive:
    """One ``# noqa`` comment's AC codes, where it sits and whether it gives a reason."""

    line: int
    column: int  # 1-based character column of the `#`
    end_column: int
    codes: tuple[str, ...]
    reason: str
    text: str = ""  # the directive as written, from its `#` to the comment's end
    lead: int = 0  # blanks before it on its line; -1 when nothing but blanks precede it

    def as_tuple(self) -> tuple:
        return (
            self.line,
            self.column,
            self.end_column,
            self.codes,
            self.reason,
            self.text,
            self.lead,
        )

    def without(self, code: str) -> Fix | None:
        """The safe fix for an unused ``code``: the code gone from the comment.

        A comment cannot change what the program does, so the fix is safe
        (ruff's RUF100 fix is, for the same reason). The other codes, other
        tools' included, and the reason stay; a directive left naming nothing
        goes, with the blanks before it, and a line that held only it goes too.
        """
        from contracts.finding import Edit

        match = re.match(_NOQA, self.text, re.I)
        if match is None:
            return None
        written = re.findall(_CODE, match["codes"])
        kept = [c for c in written if c.upper() != code]
        if len(kept) == len(written):
            return None
        if kept:
            begin, end = match.span("codes")
            new = self.text[:begin] + ", ".join(kept) + self.text[end:]
            edit = Edit(self.line, self.column, self.line, self.end_column, new)
        elif self.lead < 0:
            edit = Edit(self.line, 1, self.line + 1, 1, "")
        else:
            edit = Edit(self.line, self.column - self.lead, self.line, self.end_column, "")
        return Fix(
            message=f"Remove the unused `{code}` from the suppression",
            edits=(edit,),
            rewrites_comment=True,
        )


def has_noqa(text: str) -> bool:
    # Two substring tests rather than a case-insensitive search: this runs on
    # every file, and mixed-case spellings are not worth a regex over each.
    return "noqa" in text or "NOQA" in text


def parse_directives(text: str) -> tuple[Directive, ...]:
    """Every ``# noqa`` comment naming at least one AC code; () when the file cannot be tokenized."""
    if not has_noqa(text) or re.search(_NAMES_OURS, text, re.I) is None:
        return ()
    import io
    import tokenize

    out: list[Directive] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if tok.type != tokenize.COMMENT or "noqa" not in tok.string.lower():
                continue
            match = re.search(_NOQA, tok.string, re.I)
            if match is None:
                continue
            codes = tuple(
                c.upper()
                for c in re.findall(_CODE, match["codes"])
                if c.upper().startswith(_PREFIX)
            )
            if not codes:
                continue
            reason = re.match(_REASON, match["rest"])
            before = tok.line[: tok.start[1] + match.start()]
            out.append(
                Directive(
                    line=tok.start[0],
                    column=tok.start[1] + match.start() + 1,
                    end_column=tok.start[1] + len(tok.string) + 1,
                    codes=codes,
                    reason=reason["reason"].strip() if reason else "",
                    text=tok.string[match.start() :],
                    lead=-1 if not before.strip() else len(before) - len(before.rstrip()),
                )
            )
    except (tokenize.TokenError, SyntaxError):
        return tuple(out)
    return tuple(out)


def apply_suppressions(
    findings: list[Finding],
    directives: tuple[Directive, ...],
    *,
    path: str,
    ran_codes: Container[str],
    unknown_codes: Container[str] = (),
) -> list[Finding]:
    """Drop suppressed findings; add AC901 for a missing reason and AC902 for an unused code.

    ``ran_codes`` are the codes looked for in this file: a code outside it
    (not selected, per-file-ignored) is not reported unused. A code in
    ``unknown_codes`` is no rule's at all (a typo, a retired code): its AC902
    says so, since "suppresses nothing on this line" would send the reader
    looking for a finding that can never exist.
    """
    if not directives:
        return findings
    used: set[tuple[int, str]] = set()
    kept: list[Finding] = []
    for f in findings:
        first, last = f.span_lines if f.span_lines != (0, 0) else (f.line, f.end_line)
        hit = None
        for d in directives:
            if first <= d.line <= last and f.code in d.codes:
                hit = d
                break
        if hit is None:
            kept.append(f)
        else:
            used.add((hit.line, f.code))
    for d in directives:
        if not d.reason:
            kept.append(
                _suppression_finding(
                    MISSING_REASON,
                    path,
                    d,
                    f"`# noqa: {', '.join(d.codes)}` gives no reason: write why after `--`",
                )
            )
        for code in d.codes:
            if (d.line, code) in used or code in (MISSING_REASON, UNUSED_SUPPRESSION):
                continue
            if code in unknown_codes:
                kept.append(
                    _suppression_finding(
                        UNUSED_SUPPRESSION,
                        path,
                        d,
                        f"`# noqa: {code}` names no rule, so it suppresses nothing "
                        "(`atom-contracts rules` lists the codes)" + _nearest_code(code),
                        fix=d.without(code),
                    )
                )
            elif code in ran_codes:
                kept.append(
                    _suppression_finding(
                        UNUSED_SUPPRESSION,
                        path,
                        d,
                        f"`# noqa: {code}` suppresses nothing on this line",
                        fix=d.without(code),
                    )
                )
    return kept


def _suppression_finding(
    code: str, path: str, d: Directive, message: str, fix: Fix | None = None
) -> Finding:
    return Finding(
        fix=fix,
        code=code,
        contract="",
        kind="suppression",
        path=path,
        line=d.line,
        column=d.column,
        end_line=d.line,
        end_column=d.end_column,
        message=message,
        span_lines=(d.line, d.line),
    )


def _nearest_code(code: str) -> str:
    """The did-you-mean hint for a code no rule has (every kind imported: a rare path)."""
    from contracts.fields import did_you_mean

    from .rules import all_codes

    return did_you_mean(code, all_codes())
