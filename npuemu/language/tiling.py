"""Kernel side of host tiling: tiling-key branches and the user workspace.

``if asc.tiling_key_is(1): ...`` selects the code for the tiling key the host
tiling function chose (CANN's ``TILING_KEY_IS``).  The key is a launch option
(``kernel[n](..., tiling_key=1)``; ``npuemu.host.run_op`` passes the key of
the tiling result), and part of the kernel's specialisation: each key gets its
own binary containing only its branches.  Launching with a key the kernel
never tests is a ``LaunchError`` naming the keys it does test.

``asc.get_user_workspace(workspace)`` skips the system part of a workspace
buffer laid out by ``run_op`` (system workspace first, then the user's), as
CANN's ``GetUserWorkspace`` does.
"""
from __future__ import annotations

from .builtin import builtin
from .core import GlobalAddress

__all__ = ["tiling_key_is", "get_user_workspace"]


@builtin
def tiling_key_is(key: int) -> bool:
    """True when the launch's tiling key is ``key`` (a non-negative compile-time constant)."""


@builtin
def get_user_workspace(workspace: GlobalAddress) -> GlobalAddress:
    """The user part of a workspace GlobalAddress: ``workspace`` + the platform's system workspace size."""
