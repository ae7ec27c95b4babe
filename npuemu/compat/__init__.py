"""Compatibility layers that run code written for other Ascend toolchains on npuemu.

- :mod:`npuemu.compat.pyasc`: run pyasc scripts unmodified
  (``python -m npuemu.compat.pyasc SCRIPT``).

Nothing here is imported by ``import npuemu``: a layer takes effect only when
it is run or explicitly installed.
"""
