"""Host side of an op: platform queries, tiling, and launching kernels with their tiling."""
