"""How contracts are found: discovery, one parse per file, one module per kind.

Nothing here imports torch or ``atom``: the static checks never import or
run the code they check, and a pre-commit environment installs in seconds.
"""
