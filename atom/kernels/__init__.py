"""Store kernels over bound views: a torch reference the CPU tests run, and an optional Triton
kernel (``triton_store``) imported only lazily, so nothing CI imports reaches triton."""
