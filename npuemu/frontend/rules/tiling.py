"""Lowering of the tiling builtins: ``tiling_key_is`` and ``get_user_workspace``.

``tiling_key_is(k)`` folds to a constant: true exactly when ``k`` is the
launch's tiling key (``Options.tiling_key``), so an ``if`` on it keeps only
the branch of that key.  Every key tested is recorded in
``lw.facts.tiling_keys``; ``jit`` uses the set to check launches and to
share one binary between keys of kernels that test none.
"""
from __future__ import annotations

from ...language import tiling as lang
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import GlobalAddressT, Value, const

MAX_TILING_KEY = (1 << 64) - 1      # keys are uint64 (SetTilingKey)


@rule(lang.tiling_key_is)
def _tiling_key_is(lw: LoweringContext, call: Call) -> Value:
    k = call.bind_to(lw, lang.tiling_key_is)["key"]
    if not k.is_const or isinstance(k.const, bool) or not isinstance(k.const, int):
        lw.type_error(f"tiling_key_is() needs a constant integer key, got {lw.describe(k)}", call.node)
    key = int(k.const)
    if not 0 <= key <= MAX_TILING_KEY:
        lw.type_error(f"tiling keys are non-negative 64-bit integers, got {key}", call.node)
    lw.facts.tiling_keys.add(key)
    return const(getattr(lw.options, "tiling_key", None) == key)


@rule(lang.get_user_workspace)
def _get_user_workspace(lw: LoweringContext, call: Call) -> Value:
    ws = call.bind_to(lw, lang.get_user_workspace)["workspace"]
    if not isinstance(ws.type, GlobalAddressT):
        lw.type_error(f"get_user_workspace() needs the workspace GlobalAddress, got {lw.describe(ws)}", call.node)
    skip = lw.platform.system_workspace_size
    return Value(ws.type, code=(ws.code[0], f"({ws.code[1]} + {skip})"))
