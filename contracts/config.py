"""Load ``[tool.atom-contracts]`` from a pyproject.toml into validated contracts.

The table is found the way ruff finds its own: walk up from where the check
starts and take the first ``pyproject.toml`` that declares
``[tool.atom-contracts]``; its directory is the project root, against which
every glob and reported path is relative. A pyproject without the table is
walked past, so a nested package's build file does not hide the declaration
of the repository that holds it.

Everything is validated before a file is read: an unknown key, a missing or
mistyped parameter, a bad glob, an unknown kind or a duplicated id is a
``ConfigError`` that names the table, the key and the value, and the CLI
exits 2 with it. A configuration that is half applied is worse than none:
the contracts it drops are exactly the ones nobody notices are gone.

The kinds are looked up through a registry passed in by the caller
(``checkers.rules.kind_class``), so this module never imports the checker.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .fields import ConfigError, compile_globs, did_you_mean

try:
    # The built-in module, not hashlib: hashlib loads OpenSSL first (~2.5 ms
    # of a one-file check) to offer the same BLAKE2.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b


def content_digest(data: bytes) -> bytes:
    """The digest a file's bytes are known by: the cache's proof that a file is unchanged,
    and the key under which the linter and the program share a tree parsed of them."""
    return blake2b(data, digest_size=16).digest()


TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    from typing import Any

    from .contract import Contract
    from .globs import GlobSet

TABLE = "tool.atom-contracts"
_CACHE_DIR = ".atom-contracts-cache"  # the engine's cache; it creates the folder
CONTRACTS_TABLE = f"[[{TABLE}.contracts]]"

# A code or a prefix of one: up to three letters, then up to three digits
# (flake8's shape, so suppression comments and flake8 agree on what a code is).
_CODE_PREFIX = re.compile(r"[A-Z]{1,3}[0-9]{0,3}")

_TOP_LEVEL_KEYS = (
    "src",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "select",
    "ignore",
    "contracts",
)

KindRegistry = Callable[[str], "type[Contract]"]


@dataclass(frozen=True)
class Config:
    """A validated declaration: where the project is and what must hold in it."""

    root: Path
    pyproject: Path | None = None
    src: tuple[str, ...] = (".",)
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None  # None: every code
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    contracts: tuple[Contract, ...] = ()
    # Digest of the table as declared: part of the cache key, so editing a
    # contract's parameters can never serve findings computed under the old ones.
    fingerprint: str = ""
    # The globs compiled once, when the Config is made (which is also where a bad one is
    # refused); derived from ``exclude`` and ``per_file_ignores``, so never passed in.
    _exclude_globs: GlobSet | None = field(init=False, compare=False, repr=False)
    _ignore_globs: tuple[tuple[GlobSet, tuple[str, ...]], ...] = field(
        init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        exclude = (
            compile_globs(self.exclude, where=f"[{TABLE}]: `exclude`") if self.exclude else None
        )
        where = f"[{TABLE}.per-file-ignores]"
        ignores = tuple(
            (compile_globs([glob], where=where), codes) for glob, codes in self.per_file_ignores
        )
        # A frozen dataclass sets its own derived fields through object.__setattr__.
        object.__setattr__(self, "_exclude_globs", exclude)
        object.__setattr__(self, "_ignore_globs", ignores)

    @property
    def src_roots(self) -> tuple[Path, ...]:
        return tuple((self.root / s).resolve() for s in self.src)

    def exclude_spec(self):
        """The compiled ``exclude`` globs, or None when there are none."""
        return self._exclude_globs

    def ignored_codes(self, path: str) -> tuple[str, ...]:
        """Code prefixes ``per-file-ignores`` turns off for one (root-relative) path."""
        if not self.per_file_ignores:
            return ()
        out: list[str] = []
        for globs, codes in self._ignore_globs:
            if globs.match_file(path):
                out.extend(codes)
        return tuple(out)


def find_pyproject(
    start: Path, *, use_cache: bool = True, write_cache: bool = True
) -> tuple[Path, Mapping[str, Any]] | None:
    """The nearest ``pyproject.toml`` at or above ``start`` declaring the table, and that table."""
    start = start.resolve()
    here = start if start.is_dir() else start.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        try:
            data = candidate.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
        except OSError as exc:
            raise ConfigError(f"{candidate}: cannot be read: {exc}") from None
        # A text test before TOML: most pyprojects on the way up are not ours.
        if b"atom-contracts" not in data:
            continue
        table = _table_of(candidate, data, use_cache=use_cache, write_cache=write_cache)
        if table is not None:
            return candidate, table
    return None


def _table_of(
    path: Path, data: bytes, *, use_cache: bool, write_cache: bool = True
) -> Mapping[str, Any] | None:
    """The ``[tool.atom-contracts]`` table of one pyproject, or None when it has none.

    The parsed table is kept in ``.atom-contracts-cache/pyproject.marshal``
    keyed by the file's bytes: importing tomllib and parsing a pyproject
    costs about 10 ms, an eighth of the one-file budget, for an answer that
    changes only when the file does.
    """
    digest = content_digest(data)
    memo = path.parent / _CACHE_DIR / "pyproject.marshal"
    if use_cache:
        import marshal

        try:
            stored_digest, stored_table = marshal.loads(memo.read_bytes())
            if stored_digest == digest:
                return stored_table
        except (OSError, EOFError, ValueError, TypeError):
            pass
    if data.startswith(b"\xef\xbb\xbf"):
        # tomllib says "Invalid statement (at line 1, column 1)", which names nothing to fix.
        raise ConfigError(
            f"{path}: starts with a UTF-8 byte-order mark, which TOML readers refuse "
            "(pip's too, so the project would not build either): save it as UTF-8 without one"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8: {exc}") from None
    parsed = _parse_toml(text, path)
    tool = parsed.get("tool")
    table = tool.get("atom-contracts") if isinstance(tool, Mapping) else None
    if use_cache and write_cache and table is not None and memo.parent.is_dir():
        import marshal

        # A read-only checkout, or a value marshal cannot hold: parse next time.
        with contextlib.suppress(OSError, ValueError):
            memo.write_bytes(marshal.dumps((digest, table)))
    return table


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        # tomllib recurses once per level of nesting: a value deeper than the
        # recursion limit is valid TOML that Python cannot read, pip included.
        import sys

        raise ConfigError(
            f"{path}: not readable TOML: a value is nested too deeply "
            f"(deeper than about {sys.getrecursionlimit() // 2} levels)"
        ) from None


def load_config(
    start: Path,
    registry: KindRegistry,
    *,
    config_file: Path | None = None,
    use_cache: bool = True,
    write_cache: bool = True,
) -> Config:
    """Find and validate the declaration governing ``start``.

    ``config_file`` names the pyproject explicitly (``--config``); its
    directory is then the root. ``write_cache`` False reads the parsed table's
    memo but never writes it (the agent hook writes no file it was not asked to). Without a declaration anywhere above
    ``start`` the result has no contracts and is rooted at ``start``: the
    engine's own codes (unreadable files, suppressions) still apply.
    """
    if config_file is not None:
        path = config_file.resolve()
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"--config {config_file}: cannot be read: {exc}") from None
        table = _table_of(path, data, use_cache=use_cache, write_cache=write_cache)
        if table is None:
            raise ConfigError(
                f"--config {config_file}: no [{TABLE}] table in {path}" + _near_misses([path])
            )
    else:
        found = find_pyproject(start, use_cache=use_cache, write_cache=write_cache)
        if found is None:
            base = start.resolve()
            return Config(root=base if base.is_dir() else base.parent)
        path, table = found
    return parse_table(table, root=path.parent, registry=registry, pyproject=path)


class NoDeclaration(ConfigError):
    """No ``pyproject.toml`` at or above a start declares the table: nothing would be checked."""


def missing_declaration(start: Path) -> NoDeclaration:
    """The error for a run that found no table: where it looked, and near misses it passed.

    Only built on the way to exit 2, so parsing every pyproject on the way up
    (for a ``[tool.atom_contracts]`` that the text pre-filter skipped) costs
    nothing on a normal run.
    """
    start = start.resolve()
    here = start if start.is_dir() else start.parent
    seen = [d / "pyproject.toml" for d in (here, *here.parents) if (d / "pyproject.toml").is_file()]
    where = ", ".join(str(p) for p in seen) if seen else "none exists"
    return NoDeclaration(
        f"no [{TABLE}] table in any pyproject.toml at or above {here} (looked in: {where})"
        + _near_misses(seen)
        + "; nothing would be checked (docs/adoption.md shows a declaration)"
    )


def _spelling(name: str) -> str:
    return re.sub(r"[-_. ]", "", name.lower())


def _near_misses(paths: list[Path]) -> str:
    """``; <path> declares [tool.atom_contracts]: ...`` for each table spelled almost like ours."""
    wanted = _spelling("atom-contracts")
    notes = []
    for path in paths:
        try:
            parsed = _parse_toml(path.read_text(encoding="utf-8"), path)
        except (OSError, UnicodeDecodeError, ConfigError):
            continue
        tool = parsed.get("tool")
        if not isinstance(tool, Mapping):
            continue
        for key in tool:
            if key == "atom-contracts":
                continue
            spelled = _spelling(key)
            if spelled in (wanted, wanted[:-1]) or (
                spelled.startswith("atom") and "contract" in spelled
            ):
                notes.append(f"{path} declares [tool.{key}], but the table is spelled [{TABLE}]")
    return "".join(f"; {n}" for n in notes)


def parse_table(
    table: Any,
    *,
    root: Path,
    registry: KindRegistry,
    pyproject: Path | None = None,
) -> Config:
    """Validate a ``[tool.atom-contracts]`` table (already parsed) into a Config."""
    where = f"[{TABLE}]"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table, got {table!r}")
    for key in table:
        if key not in _TOP_LEVEL_KEYS:
            raise ConfigError(
                f"{where}: unknown key `{key}` (known: {', '.join(_TOP_LEVEL_KEYS)})"
                + did_you_mean(key, _TOP_LEVEL_KEYS)
            )
    src = _string_list(table, "src", where, default=(".",))
    for s in src:
        if not (root / s).is_dir():
            raise ConfigError(f"{where}: `src` entry {s!r} is not a directory under {root}")
    # ruff's pair: `extend-exclude` adds to `exclude` (here there are no defaults to keep,
    # but a shared base config sets `exclude` and a project adds its own).
    exclude = _string_list(table, "exclude", where, default=()) + _string_list(
        table, "extend-exclude", where, default=()
    )
    select = _codes(table, "select", where) if "select" in table else None
    ignore = _codes(table, "ignore", where) if "ignore" in table else ()
    pfi = _per_file_ignores(table.get("per-file-ignores", {}), f"[{TABLE}.per-file-ignores]")
    contracts = _contracts(table.get("contracts", []), registry)
    return Config(
        root=root.resolve(),
        pyproject=pyproject,
        src=src,
        exclude=exclude,
        select=select,
        ignore=ignore,
        per_file_ignores=pfi,
        contracts=contracts,
        fingerprint=blake2b(repr(_canonical(table)).encode(), digest_size=16).hexdigest(),
    )


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_canonical(v) for v in value)
    return value


def _string_list(
    table: Mapping, key: str, where: str, *, default: tuple[str, ...]
) -> tuple[str, ...]:
    if key not in table:
        return default
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def parse_codes(value: Any, where: str) -> tuple[str, ...]:
    """Validate a list of code prefixes (``AC3``, ``AC301``, ``ALL``) by shape."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of code prefixes, got {value!r}")
    for code in value:
        if code != "ALL" and not _CODE_PREFIX.fullmatch(code):
            raise ConfigError(
                f"{where}: {code!r} is not a code or code prefix "
                "(up to three capital letters then up to three digits, e.g. AC3 or AC301)"
            )
    return tuple("" if c == "ALL" else c for c in value)


def _codes(table: Mapping, key: str, where: str) -> tuple[str, ...]:
    return parse_codes(table[key], f"{where}: `{key}`")


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of glob = [codes], got {value!r}")
    out = []
    for glob, codes in value.items():
        out.append((glob, parse_codes(codes, f"{where}: `{glob}`")))
    return tuple(out)


def _contracts(value: Any, registry: KindRegistry) -> tuple[Contract, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{CONTRACTS_TABLE} must be an array of tables, got {value!r}")
    seen: dict[str, int] = {}
    out = []
    for index, table in enumerate(value, start=1):
        where = f"{CONTRACTS_TABLE} #{index}"
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table, got {table!r}")
        contract_id = table.get("id")
        if isinstance(contract_id, str) and contract_id:
            where = f"{where} (id {contract_id!r})"
        kind = table.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ConfigError(f"{where}: `kind` must be a non-empty string, got {kind!r}")
        try:
            cls = registry(kind)
        except KeyError as exc:
            raise ConfigError(f"{where}: `kind` {kind!r}: {exc.args[0]}") from None
        contract = cls.from_table(table, where)
        if contract.id in seen:
            raise ConfigError(
                f"{where}: `id` {contract.id!r} is already declared by {CONTRACTS_TABLE} "
                f"#{seen[contract.id]}"
            )
        seen[contract.id] = index
        out.append(contract)
    return tuple(out)
