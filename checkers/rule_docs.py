"""Rule documentation rendered from the rule classes, never written twice.

ruff's shape -- What it does / Why is this bad? / Example / Use instead /
Fix safety / Options -- with every section taken from what the kind already
declares: the ``Rule`` carries the prose, the first INVALID example that
expects the code is the Example, the first VALID one is Use instead, and
Options are the kind's fields with their ``doc``. ``atom-contracts explain``,
``atom-contracts rules`` and docs/contracts.md all come from here, so the
reference cannot drift from the examples the test suite runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.contract import Contract, Example, Rule

from . import codes
from .builtin_rules import BUILTIN_RULES

# The checker's own codes have no kind; their examples are written here (Python, but for
# AC000's, which is a declaration in TOML).
_BUILTIN_EXAMPLES: dict[str, tuple[str, str]] = {
    codes.CONFIG_ERROR: (
        '[[tool.atom-contracts.contracts]]\nid = "allocate-takes-blocks"\n'
        'kind = "keyword-onyl"\nfunctions = ["allocate"]\nparameters = ["blocks"]\n',
        '[[tool.atom-contracts.contracts]]\nid = "allocate-takes-blocks"\n'
        'kind = "keyword-only"\nfunctions = ["allocate"]\nparameters = ["blocks"]\n',
    ),
    codes.UNCHECKABLE: ("def allocate(blocks:\n    ...\n", "def allocate(*, blocks):\n    ...\n"),
    codes.CHECKER_FAILED: (
        "def check(x):\n    if x == 0:\n        pass\n    elif x == 1:  # ... 2,000 branches\n"
        "        pass\n",
        "# The same file, after the rule is fixed: no finding of the checker's own.\n",
    ),
    codes.MISSING_REASON: (
        "assert isinstance(config, dict)  # noqa: AC301\n",
        "assert isinstance(config, dict)  # noqa: AC301 -- type narrowing for the checker only\n",
    ),
    codes.UNUSED_SUPPRESSION: (
        "size = len(blocks)  # noqa: AC301 -- left over from the assert this line once was\n",
        "size = len(blocks)\n",
    ),
}


@dataclass(frozen=True)
class RuleEntry:
    rule: Rule
    kind: type[Contract] | None = None
    invalid: Example | None = None
    valid: Example | None = None
    options: tuple[tuple[str, str, bool, Any, str], ...] = field(
        default=()
    )  # key, type, required, default, doc

    @property
    def kind_name(self) -> str:
        return self.kind.KIND if self.kind is not None else "(built-in)"

    @property
    def language(self) -> str:
        """The language of the entry's examples: TOML for a declaration's own code."""
        return "toml" if self.rule.code == codes.CONFIG_ERROR else "python"


def _first_invalid(kind: type[Contract], code: str) -> Example | None:
    for ex in kind.INVALID:
        if any(e.code == code for e in ex.expect):
            return ex
    return kind.INVALID[0] if kind.INVALID else None


def kind_entries(kind: type[Contract]) -> list[RuleEntry]:
    options = []
    for f in kind.fields().values():
        options.append((f.key, f.type_name, f.required, None if f.required else f.default, f.doc))
    valid = kind.VALID[0] if kind.VALID else None
    return [
        RuleEntry(rule, kind, _first_invalid(kind, rule.code), valid, tuple(options))
        for rule in kind.RULES
    ]


def builtin_entries() -> list[RuleEntry]:
    out = []
    for rule in BUILTIN_RULES:
        invalid, valid = _BUILTIN_EXAMPLES[rule.code]
        out.append(RuleEntry(rule, None, Example(source=invalid), Example(source=valid)))
    return out


def all_entries(*, strict: bool = True) -> list[RuleEntry]:
    """Every code: the kinds' rules in registry order, then the linter's own.

    ``strict=False`` skips a kind whose module is not importable (a partial
    install); the docs and ``rules`` command are strict.
    """
    from .rules import KIND_PATHS, kind_class

    out: list[RuleEntry] = []
    for kind in KIND_PATHS:
        try:
            cls = kind_class(kind)
        except ModuleNotFoundError:
            if strict:
                raise
            continue
        out.extend(kind_entries(cls))
    out.extend(builtin_entries())
    return out


_INDEX: dict[str, RuleEntry] | None = None


def rule_index() -> dict[str, RuleEntry]:
    global _INDEX
    if _INDEX is None:
        _INDEX = {e.rule.code: e for e in all_entries(strict=False)}
    return _INDEX


def anchor(code: str) -> str:
    """The anchor GitHub gives the rule's ``### AC101 keyword-only-parameter`` heading in
    docs/contracts.md; the bare code for one no rule has."""
    entry = rule_index().get(code)
    return f"{code.lower()}-{entry.rule.name}" if entry is not None else code.lower()


# -- TOML of an example's declaration ------------------------------------


def toml_value(value: Any) -> str:
    """``value`` spelled as TOML: the declarations the docs show and the tests write."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value)  # JSON's escapes are a subset of a TOML basic string's
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML spelling for {value!r} ({type(value).__name__})")


def toml_key(key: str) -> str:
    """A bare key where TOML allows one (ASCII letters, digits, ``-``, ``_``), else quoted."""
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else toml_value(key)


def declaration(kind: type[Contract], ex: Example, contract_id: str | None = None) -> str:
    lines = [
        "[[tool.atom-contracts.contracts]]",
        f'id = "{contract_id or kind.KIND}"',
        f'kind = "{kind.KIND}"',
    ]
    lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in ex.params.items())
    return "\n".join(lines) + "\n"


def kind_story(kind: type[Contract]) -> str:
    """The kind module's docstring: why the kind exists."""
    module = inspect.getmodule(kind)
    return inspect.cleandoc(module.__doc__ or "") if module is not None else ""


# -- text (explain) and markdown (docs/contracts.md) -----------------------


def _indent(text: str, prefix: str = "    ") -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(True))


def _example_block(entry: RuleEntry, ex: Example, md: bool) -> str:
    path_note = f"# {ex.path}\n" if entry.kind is not None and ex.path else ""
    code = path_note + ex.source.rstrip("\n") + "\n"
    if md:
        return f"```{entry.language}\n{code}```\n"
    return _indent(code)


def _options(entry: RuleEntry, md: bool) -> str:
    if entry.kind is None:
        return "None: the checker's own code.\n"
    out = []
    for key, type_name, required, default, doc in entry.options:
        if required:
            status = "required"
        elif default is None:
            status = "optional"
        else:
            status = f"default {toml_value(default)}"
        out.append(f"- `{key}` ({type_name}, {status}): {doc}\n")
    return "".join(out) if out else "None.\n"


def render_text(entry: RuleEntry) -> str:
    r = entry.rule
    out = [f"{r.code} ({r.name})  kind: {entry.kind_name}\n\n"]
    out.append("What it does\n" + _indent(r.what.strip() + "\n") + "\n")
    out.append("Why is this bad?\n" + _indent(r.why.strip() + "\n") + "\n")
    if entry.invalid is not None:
        out.append("Example\n" + _example_block(entry, entry.invalid, md=False))
        if entry.kind is not None:
            out.append(
                "\n    declared as:\n" + _indent(declaration(entry.kind, entry.invalid), "      ")
            )
        out.append("\n")
    if entry.valid is not None:
        out.append("Use instead\n" + _example_block(entry, entry.valid, md=False) + "\n")
    out.append("Fix safety\n" + _indent(r.fix_safety.strip() + "\n") + "\n")
    out.append("Options\n" + _indent(_options(entry, md=False)))
    return "".join(out)


def render_markdown_rule(entry: RuleEntry) -> str:
    r = entry.rule
    out = [f"### {r.code} {r.name}\n\n"]
    out.append(f"**What it does.** {r.what.strip()}\n\n")
    out.append(f"**Why is this bad?** {r.why.strip()}\n\n")
    if entry.invalid is not None:
        out.append("**Example**\n\n" + _example_block(entry, entry.invalid, md=True) + "\n")
        if entry.kind is not None:
            out.append(
                "declared as\n\n```toml\n" + declaration(entry.kind, entry.invalid) + "```\n\n"
            )
    if entry.valid is not None:
        out.append("**Use instead**\n\n" + _example_block(entry, entry.valid, md=True) + "\n")
    out.append(f"**Fix safety.** {r.fix_safety.strip()}\n\n")
    out.append("**Options**\n\n" + _options(entry, md=True) + "\n")
    return "".join(out)


MARKDOWN_HEADER = """\
# Contract reference

<!-- Generated by `atom-contracts rules --output-format markdown > docs/contracts.md`
     from the rule classes; tests/checkers/test_docs.py fails when this file is stale. -->

Every code the checker reports, grouped by contract kind. Each kind is declared in
`[[tool.atom-contracts.contracts]]` of `pyproject.toml`; each example below is one the
test suite runs. Suppress a finding with `# noqa: CODE -- reason` on any line of the
flagged statement; a suppression without a reason (AC901) or one that suppresses
nothing (AC902) is itself a finding. Adopters who also run ruff must list the prefix
in `lint.external = ["AC"]`, or `ruff check --fix` deletes these comments (RUF100).

"""


def render_markdown(entries: list[RuleEntry]) -> str:
    out = [MARKDOWN_HEADER]
    out.append("| code | name | kind |\n| --- | --- | --- |\n")
    for e in entries:
        out.append(f"| [{e.rule.code}](#{anchor(e.rule.code)}) | {e.rule.name} | {e.kind_name} |\n")
    out.append("\n")
    current: object = object()
    for e in entries:
        if e.kind is not current:
            current = e.kind
            if e.kind is not None:
                out.append(f"## Kind `{e.kind.KIND}`\n\n{kind_story(e.kind)}\n\n")
            else:
                out.append(
                    "## The checker's own codes\n\n"
                    "Reported by the checker itself, whatever is declared.\n\n"
                )
        out.append(render_markdown_rule(e))
    return "".join(out).rstrip("\n") + "\n"


def entry_json(e: RuleEntry) -> dict:
    return {
        "code": e.rule.code,
        "name": e.rule.name,
        "kind": e.kind.KIND if e.kind is not None else None,
        "what_it_does": e.rule.what,
        "why_is_this_bad": e.rule.why,
        "example": e.invalid.source if e.invalid else None,
        "use_instead": e.valid.source if e.valid else None,
        "fix_safety": e.rule.fix_safety,
        "options": [
            {"key": k, "type": t, "required": req, "default": d, "doc": doc}
            for k, t, req, d, doc in e.options
        ],
    }
