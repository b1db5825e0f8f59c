"""Units as the units kind reads them: a product of base units with integer powers.

``"byte/block"`` is ``(("block", -1), ("byte", 1))``; a project's ``names`` map name globs to
such units (``_Vocabulary``), and a conversion is a ratio whose unit turns one into the other
(``page/block``). ``SCALAR`` is a number written in the code, which goes with any unit.
Nothing here reads code: ``checkers.analysis.unit_flow`` walks a function with these.
"""

from __future__ import annotations

import re

SCALAR = "scalar"  # a number written in the code: goes with any unit, scales by nothing


def parse_unit(text: str) -> tuple[tuple[str, int], ...]:
    """``"byte/block"`` -> ``(("block", -1), ("byte", 1))``; ``"1"`` -> ``()``."""
    text = text.strip()
    if text == "1":
        return ()
    top, slash, bottom = text.partition("/")
    if "/" in bottom:
        raise ValueError(f"{text!r} has more than one `/`")
    exps: dict[str, int] = {}
    for part, sign in ((top, 1), (bottom, -1)) if slash else ((top, 1),):
        names = [p.strip() for p in part.split("*")]
        if part.strip() == "1" and sign == 1 and slash:
            continue
        for n in names:
            if not n.isidentifier():
                raise ValueError(
                    f"{text!r} is not a unit: base names (identifiers) joined by `*`, "
                    "over at most one `/`, or `1`"
                )
            exps[n] = exps.get(n, 0) + sign
    return tuple(sorted((b, e) for b, e in exps.items() if e))


def fmt(unit) -> str:
    if unit == ():
        return "1"
    top = [b if e == 1 else f"{b}^{e}" for b, e in unit if e > 0]
    bottom = [b if e == -1 else f"{b}^{-e}" for b, e in unit if e < 0]
    text = "*".join(top) or "1"
    return f"{text}/{'*'.join(bottom)}" if bottom else text


_COUNTING = ("num_", "n_", "total_", "max_", "min_")
# A name that is a phrase (`bytes_for_tokens`, `tokens_per_page`) is not read by its last word,
# nor is one that asks a question (`can_store_tokens`, `is_full_blocks`): its answer is a truth.
_PHRASE = re.compile(r"_(?:for|per|of|to|from|in|by)_|^_*(?:is|has|can|should|does)_")


class _Vocabulary:
    """Names to units, with the algebra the declaration's counts imply."""

    def __init__(self, names: dict[str, str], counts) -> None:
        self.exact: dict[str, tuple] = {}
        globs = []
        for name, unit in names.items():
            parsed = parse_unit(unit)
            if "*" in name or "?" in name:
                literal = len(name.replace("*", "").replace("?", ""))
                regex = re.compile(
                    "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in name)
                )
                # `*_bytes`: the literal tail after the last `*`, for `_per_own_word`
                suffix = name.rpartition("*")[2] if name.startswith("*") and "?" not in name else ""
                globs.append((literal, regex, parsed, suffix))
            else:
                self.exact[name] = parsed
        globs.sort(key=lambda g: -g[0])
        self.globs = globs
        self.bases = frozenset(
            b for u in (*self.exact.values(), *(g[2] for g in globs)) for b, _ in u
        )
        self.counts = frozenset(counts)
        self._memo: dict[str, tuple | None] = {}

    def of(self, name: str):
        found = self._memo.get(name, False)
        if found is not False:
            return found
        found = self.exact.get(name)
        if found is None and not _PHRASE.search(name):
            for _literal, regex, unit, suffix in self.globs:
                if regex.fullmatch(name):
                    found = self._per_own_word(name, suffix, unit)
                    break
        self._memo[name] = found
        return found

    def _per_own_word(self, name: str, suffix: str, unit):
        """``row_bytes`` under ``*_bytes``: when the word before the glob's suffix names a base
        unit (``row``), the name is per one of it -- a row's bytes are byte/row."""
        if not suffix or not name.endswith(suffix):
            return unit
        stem = name[: -len(suffix)].rstrip("_")
        if stem.startswith(_COUNTING) or stem in ("num", "n", "total", "max", "min"):
            return unit  # `num_token_blocks` counts blocks; it is not per token
        word = stem.rpartition("_")[2]
        if word in self.bases and all(b != word for b, _ in unit):
            return self.mul(unit, ((word, 1),), -1)
        return unit

    def is_count(self, unit) -> bool:
        return bool(unit) and all(b in self.counts for b, _ in unit)

    def mul(self, a, b, sign: int = 1):
        if a is None or b is None:
            return None
        if b is SCALAR:
            return a
        if a is SCALAR:
            return b if sign == 1 else tuple((n, -e) for n, e in b)
        if self.is_count(b) and not self.is_count(a):
            return a
        if self.is_count(a) and not self.is_count(b):
            return b if sign == 1 else tuple((n, -e) for n, e in b)
        if sign == 1 and a and b and _plain(a) and _plain(b):
            # Two counts multiplied: one of them is per the other (`num_reqs *
            # num_bonus_tokens` are tokens, `num_tokens * num_draft_tokens` too), which the
            # names do not say.
            return None
        exps = dict(a)
        for n, e in b:
            exps[n] = exps.get(n, 0) + sign * e
        found = tuple(sorted((n, e) for n, e in exps.items() if e))
        # Units that cancel leave a plain number (bytes over bytes a block counts blocks of
        # some size): it goes with anything, as a number written in the code does.
        return found if found else SCALAR

    def conversions(self, frm, to) -> list[tuple[str, str]]:
        """Declared ratio names that turn ``frm`` into ``to``: ``(name, "*" or "/")``."""
        out = []
        for name, unit in self.exact.items():
            if not any(e < 0 for _, e in unit) or not any(e > 0 for _, e in unit):
                continue  # a conversion is a ratio of two units
            if self.mul(frm, unit) == to:
                out.append((name, "*"))
            elif self.mul(frm, unit, -1) == to:
                out.append((name, "/"))
        return out


def real(unit) -> bool:
    return unit is not None and unit is not SCALAR


def _sum(a, b):
    """The unit of ``a + b`` once they are checked: a number beside a unit takes the unit;
    an unknown beside anything is unknown (it might be the other unit, or another)."""
    if a is None or b is None:
        return None
    if a is SCALAR:
        return b
    return a


def compatible(a, b) -> bool:
    """Whether two known units may be added, compared or assigned.

    Equal units may; so may a rate and a count of its numerator -- a block's
    size in tokens (``token/block``) is also one block's worth of tokens, so
    ``num_tokens > block_size`` and ``step = block_tokens`` compare tokens
    with tokens. Two rates over different denominators may not: bytes per page
    are not bytes per block.
    """
    if a == b:
        return True
    a_rate, b_rate = not _plain(a), not _plain(b)
    if a_rate == b_rate:
        return False
    rate, count = (a, b) if a_rate else (b, a)
    return _numerator(rate) == count


def comparable(a, b) -> bool:
    """Whether two known units may be compared: as ``compatible``, and two rates of one
    numerator over different denominators too.

    A block's size in tokens and a kernel block's are each one denominator's worth of
    tokens, so ``logical_block_size < kernel_block_size`` compares tokens with tokens: it
    asks how the two denominators relate (the check before a ratio is taken, or that it
    is 1), where adding, assigning or choosing one for the other would mix them.
    """
    if compatible(a, b):
        return True
    return not _plain(a) and not _plain(b) and _numerator(a) == _numerator(b)


def _plain(unit) -> bool:
    """A count: no unit below the line."""
    return all(e > 0 for _, e in unit)


def _numerator(unit) -> tuple:
    """What is above the line: ``token`` of ``token/block``."""
    return tuple(p for p in unit if p[1] > 0)
