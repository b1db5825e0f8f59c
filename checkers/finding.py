"""The finding types, re-exported from ``contracts.finding`` where they live.

Kept for plugin code written against ``checkers.finding`` (a kind outside
this repository builds its fixes from ``Edit`` and ``Fix``); new code imports
``contracts.finding``.
"""

from contracts.finding import Applicability, Edit, Finding, Fix

__all__ = ["Applicability", "Edit", "Finding", "Fix"]
