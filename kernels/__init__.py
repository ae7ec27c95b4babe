"""Kernels written in the npuemu kernel language: the bundled op library."""
