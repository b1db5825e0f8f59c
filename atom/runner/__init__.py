"""The runner's share of the KV pools: one walk, one price, one paged buffer, one bind, and the
transfer regions a P/D connector registers."""
