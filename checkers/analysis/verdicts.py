"""``Origin``: why ``origins`` calls a value input, phrased for the finding's message."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Origin:
    """Why a value is input, phrased for the message."""

    what: str
    config: bool = False  # a configuration object: what a function makes of it is input too
