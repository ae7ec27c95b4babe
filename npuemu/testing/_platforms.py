"""The built-in SoC profiles, as opposed to custom ones registered by user code or tests."""
from __future__ import annotations


def builtin_names() -> list[str]:
    """Names of the profiles npuemu ships, in their documented order (stable across processes)."""
    try:
        from ..profiles import PROFILES
    except ImportError:          # an npuemu without the profile tables: every registered Ascend part
        from ..platform import platforms
        return [p.name for p in platforms() if p.name.startswith("Ascend")]
    return list(PROFILES)
