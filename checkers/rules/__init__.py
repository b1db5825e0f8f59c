"""The contract kinds: one module each, with its rules, docs and proof cases.

Kinds are looked up by name and imported on first use, so a configuration
that declares two kinds pays for two modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module

from contracts.fields import did_you_mean

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    from contracts.contract import Contract

# kind name -> "module:Class" under checkers.rules
KIND_PATHS: dict[str, str] = {
    "keyword-only": "keyword_only:KeywordOnly",
    "leaf-package": "leaf_package:LeafPackage",
    "input-assert": "input_assert:InputAssert",
    "retired-name": "retired_name:RetiredName",
    "banned-import": "banned_import:BannedImport",
    "importorskip": "importorskip:ImportOrSkip",
    "required-keyword": "required_keyword:RequiredKeyword",
    "published-keys": "published_keys:PublishedKeys",
    "reachable-calls": "reachable_calls:ReachableCalls",
    "units": "units:Units",
}


def kind_class(kind: str) -> type[Contract]:
    """The class of a kind; KeyError naming the kind and the known ones."""
    try:
        target = KIND_PATHS[kind]
    except KeyError:
        raise KeyError(
            f"unknown contract kind {kind!r} (known: {', '.join(KIND_PATHS)})"
            + did_you_mean(kind, KIND_PATHS)
        ) from None
    module, _, cls = target.partition(":")
    return getattr(import_module(f"{__name__}.{module}"), cls)


def matching_no_rule(prefixes: Iterable[str], loaded: Iterable[type[Contract]] = ()) -> list[str]:
    """The code prefixes no rule's code starts with (``""``, i.e. ``ALL``, matches every one).

    The linter's codes and the ``loaded`` kinds' are tried first; every kind
    is imported only when a prefix matches none of them, so a selection of
    the declared contracts' own codes costs no import.
    """
    from ..builtin_rules import BUILTIN_RULES

    codes = {r.code for r in BUILTIN_RULES} | {c for kind in loaded for c in kind.codes()}

    def unmatched(pending: Iterable[str]) -> list[str]:
        return [p for p in pending if not any(c.startswith(p) for c in codes)]

    pending = unmatched(prefixes)
    if pending:
        codes.update(all_codes())
        pending = unmatched(pending)
    return pending


def all_codes() -> list[str]:
    """Every rule's code, the linter's own and every kind's (each kind imported)."""
    from ..builtin_rules import BUILTIN_RULES

    kinds = [c for kind in KIND_PATHS for c in kind_class(kind).codes()]
    return sorted({r.code for r in BUILTIN_RULES}.union(kinds))
