"""The models this package ships configs for, by file stem (``deepseek-r1``).

The configs under ``configs/`` are facts, copied with their ``_sources``; the registry is the
directory listing and nothing else, so adding a model is adding a file. A user's own config is
loaded from a path by the same function, which is why both return the same :class:`HfConfig`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from atom.models.hf_config import HfConfig, read_config_json

_CONFIG_PACKAGE = "atom.models"


def _config_dir():
    return resources.files(_CONFIG_PACKAGE).joinpath("configs")


def model_names() -> list[str]:
    """Every registry stem, sorted."""
    return sorted(
        entry.name[: -len(".json")]
        for entry in _config_dir().iterdir()
        if entry.name.endswith(".json")
    )


def load_model_config(name: str) -> HfConfig:
    """The shipped config for registry stem ``name``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a model name must be a non-empty string, got {name!r}")
    entry = _config_dir().joinpath(f"{name}.json")
    if not entry.is_file():
        # contracts.fields.did_you_mean's spelling and 0.75 cutoff, written here again: atom
        # imports nothing of contracts (contracts.runtime imports atom; the graph would loop).
        from difflib import get_close_matches

        names = model_names()
        if name.endswith(".json") or "/" in name:
            hint = f"; a config file is given as --config {name}"
        else:
            near = get_close_matches(name, names, n=1, cutoff=0.75)
            hint = f"; did you mean `{near[0]}`?" if near else ""
        raise ValueError(f"no model {name!r} in the registry (known: {', '.join(names)}){hint}")
    return HfConfig(read_config_json(entry.read_bytes(), str(entry)), name)


def load_config(name_or_path: str | Path) -> HfConfig:
    """A registry stem, or any path to an HF ``config.json`` (or a directory holding one)."""
    text = str(name_or_path)
    if (
        isinstance(name_or_path, Path)
        or text.endswith(".json")
        or "/" in text
        or Path(text).is_dir()
    ):
        return HfConfig.from_file(name_or_path)
    return load_model_config(text)


def is_draft_head(config: HfConfig) -> bool:
    """A config whose architecture declares it an EAGLE draft head rather than a model to serve."""
    archs = config.get("architectures") or []
    return any(isinstance(a, str) and "eagle" in a.lower() for a in archs)


def config_path(name: str) -> Path:
    """The on-disk path of a shipped config (for messages and the subprocess tests)."""
    return Path(str(_config_dir().joinpath(f"{name}.json")))
