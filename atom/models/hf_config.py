"""An HF ``config.json`` as the engine reads it: a mapping that says what it lacks by name.

The engine takes any config a user points it at, so every read of a field that sizes something
goes through :meth:`HfConfig.require`, and a config that cannot be priced is refused with the
field it is missing and the file it came from -- never a ``KeyError`` from deep inside sizing, and
never a default that happens to price the wrong model.

A multimodal wrapper nests the language model under ``text_config``; :meth:`HfConfig.text_config`
is the one place that unwraps it, and the family predicate reads what it returns while the
wrapper's own ``model_type`` stays available to whoever asks the wrapper.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The largest integer a config field may hold. Head dims, head counts, layer counts and ranks are
#: all indexed by int32 arithmetic in the kernels; `head_dim: 1000000000000` would otherwise price
#: 14,901 TiB a block without a word.
MAX_CONFIG_INT = 2**31 - 1


class ConfigFieldError(ValueError):
    """A config lacks, or mistypes, a field the engine needs to price or build it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        super().__init__(f"{source}: field {field!r} {problem}")


def read_config_json(raw: bytes, where: str) -> Any:
    """The JSON document in ``raw``, or a ValueError naming ``where`` -- never a traceback.

    HF writes config.json as UTF-8; anything else, text that is not JSON, and a
    document nested deeper than the stdlib decoder can recurse (it raises
    RecursionError, not JSONDecodeError) are each refused by file.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"config file {where!r} is not UTF-8: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"config file {where!r} is not JSON: {exc}") from None
    except RecursionError:
        raise ValueError(
            f"config file {where!r} is nested too deeply to read "
            f"(deeper than about {sys.getrecursionlimit()} levels)"
        ) from None


class HfConfig:
    """A read-only view of one HF config dict, named by where it came from.

    ``source`` is the registry stem or the path it was loaded from; it leads every refusal so a
    user with several configs open knows which one is short.
    """

    def __init__(self, data: Mapping[str, Any], source: str) -> None:
        if not isinstance(data, Mapping):
            raise TypeError(f"{source}: a config must be a JSON object, got {type(data).__name__}")
        self._data = dict(data)
        self.source = source

    @classmethod
    def from_file(cls, path: str | Path) -> HfConfig:
        """Load ``path``, or ``path/config.json`` when handed a checkpoint directory."""
        p = Path(path)
        if p.is_dir():
            p = p / "config.json"
        if not p.is_file():
            raise ValueError(f"config file {str(p)!r} does not exist")
        return cls(read_config_json(p.read_bytes(), str(p)), str(p))

    # -- reads -------------------------------------------------------------------------------

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def require(self, key: str) -> Any:
        if key not in self._data or self._data[key] is None:
            raise ConfigFieldError(self.source, key, "is missing")
        return self._data[key]

    def require_int(self, key: str, *, minimum: int = 1) -> int:
        value = self.require(key)
        return self._check_int(key, value, minimum)

    def int_or(self, key: str, default: int, *, minimum: int = 0) -> int:
        """An integer field with a documented default; a present but mistyped value is refused."""
        if self._data.get(key) is None:
            return default
        return self._check_int(key, self._data[key], minimum)

    def _check_int(self, key: str, value: Any, minimum: int) -> int:
        # bool is an int subclass; `true` as a head count is a typo, not a 1.
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigFieldError(self.source, key, f"must be an integer, got {value!r}")
        if value < minimum:
            raise ConfigFieldError(self.source, key, f"must be >= {minimum}, got {value}")
        if value > MAX_CONFIG_INT:
            raise ConfigFieldError(
                self.source,
                key,
                f"is {value}, above {MAX_CONFIG_INT} (2**31 - 1): every count a config declares "
                "is indexed by 32-bit kernel arithmetic, so this is a typo, not a model",
            )
        return value

    @property
    def model_type(self) -> str:
        value = self._data.get("model_type")
        return value if isinstance(value, str) else "unknown"

    def text_config(self) -> HfConfig:
        """The language model's config: ``text_config`` of a multimodal wrapper, else itself."""
        nested = self._data.get("text_config")
        if nested is None:
            return self
        if not isinstance(nested, Mapping):
            raise ConfigFieldError(self.source, "text_config", "must be a JSON object")
        merged = dict(nested)
        # A wrapper commonly states the dtype once, at the top.
        merged.setdefault("torch_dtype", self._data.get("torch_dtype"))
        return HfConfig(merged, f"{self.source}:text_config")

    def as_dict(self) -> dict[str, Any]:
        return dict(self._data)

    def with_overrides(self, **fields: Any) -> HfConfig:
        """A copy with ``fields`` replaced: how tests state a config that differs by one fact."""
        data = dict(self._data)
        data.update(fields)
        return HfConfig(data, self.source)

    def __repr__(self) -> str:
        return f"HfConfig({self.source!r}, model_type={self.model_type!r})"
