"""The runner's name for the transfer regions, which live in ``atom.pool_layout.transfer``.

The target and draft builders both export their regions through them, and the
builders sit below the runner, so the regions moved down to where both import
them; this module keeps the runner's existing import path.
"""

from atom.pool_layout.transfer import KVTransferTensors, TransferRegion, owned_regions, owned_role

__all__ = ["KVTransferTensors", "TransferRegion", "owned_regions", "owned_role"]
