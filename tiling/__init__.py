"""Host tiling functions for the bundled kernels."""
