"""The contract kinds: one module each, with its rules, docs and proof cases.

Kinds are looked up by name and imported on first use, so a configuration
that declares two kinds pays for two modules.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

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
}


def kind_class(kind: str) -> type[Contract]:
    """The class of a kind; KeyError naming the kind and the known ones."""
    try:
        target = KIND_PATHS[kind]
    except KeyError:
        raise KeyError(f"unknown contract kind {kind!r} (known: {', '.join(KIND_PATHS)})") from None
    module, _, cls = target.partition(":")
    return getattr(import_module(f"{__name__}.{module}"), cls)


def all_kinds() -> list[type[Contract]]:
    return [kind_class(k) for k in KIND_PATHS]
