"""A Dask worker preload (``dask worker --preload``): the worker claims another npuemu version, as a worker
installed from another release would; tests/test_sweep.py checks it is refused."""
import npuemu

npuemu.__version__ = "9.9.9-other"
