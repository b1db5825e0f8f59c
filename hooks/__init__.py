"""Where users meet the contracts: coding-agent hooks and pre-commit entry points."""
