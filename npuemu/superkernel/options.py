"""SuperKernel options: the GE option string ``"k=v:k=v"`` and its dict form (spec §1.2).

The string is parsed as CANN's ``super_kernel_option_parse`` does: strip
surrounding double quotes, split on ``:``, drop empty parts, skip (with a
warning) a part without ``=``, split each part on its first ``=``.  An empty
key or value, a repeated key and an unknown key are errors (CANN's EB0500;
here :class:`~npuemu.errors.SuperKernelOptionError`), as is a value outside
the key's range.  The dict form takes the same keys, with ``_`` accepted for
``-`` and lists for the kernel-name lists, as torchair's
``format_super_kernel_options`` flattens them.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from ..errors import SuperKernelOptionError

EARLY_START_MODES = {0: "disabled", 1: "EnableV2", 2: "V2DisableSubKernel"}
PRELOAD_MODES = ("max", "none", "per-func")


@dataclass(frozen=True)
class SuperKernelOptions:
    """The options of one SuperKernel (defaults: CANN's GE defaults, spec §1.2).

    feed_sync_all: complement ``sync_all`` on cores idle in a sub-kernel that synchronises all cores.
    stream_fusion: cube and vector sub-kernels on their own streams (forces early start off).
    strict_scope_check: ``bypass`` or ``abort`` (recorded; a scope npuemu cannot fuse is an error anyway).
    dcci_before_kernel_start / dcci_after_kernel_end / dcci_disable_on_kernel: sub-kernel names (§1.8).
    debug_aic_num / debug_aiv_num: force the SuperKernel's core counts (§1.3); 0: derived.
    early_start: 0 disabled, 1 EnableV2 (default), 2 V2 barriers without the sub-kernels' own calls.
    preload_code: ``max`` | ``none`` | ``per-func`` (instruction-cache preloading; no effect here).
    split_mode: code copies of each sub-kernel, 1..64 (semantically neutral).
    func_align: alignment of the entry, 0 or a power of two >= 2 (no effect here).
    debug_dcci_all: a PIPE_ALL barrier and whole-DCache clean after every sub-kernel on every core.
    debug_sync_all: a full-core barrier after every sub-kernel.
    profiling: accepted (no effect here).
    compile_options: extra compiler flags (recorded).
    """

    feed_sync_all: bool = False
    stream_fusion: bool = False
    strict_scope_check: str | None = None
    dcci_before_kernel_start: tuple[str, ...] = ()
    dcci_after_kernel_end: tuple[str, ...] = ()
    dcci_disable_on_kernel: tuple[str, ...] = ()
    debug_aic_num: int = 0
    debug_aiv_num: int = 0
    early_start: int = 1
    preload_code: str = "per-func"
    split_mode: int = 4
    func_align: int = 512
    debug_dcci_all: bool = False
    debug_sync_all: bool = False
    profiling: bool = False
    compile_options: tuple[str, ...] = field(default=())

    @property
    def effective_early_start(self) -> int:
        """The early-start mode in force: stream fusion turns it off (spec §1.2)."""
        return 0 if self.stream_fusion else self.early_start


_KEYS = {f.name.replace("_", "-"): f.name for f in fields(SuperKernelOptions)}


def _flag(key: str, v: str) -> bool:
    if v not in ("0", "1"):
        raise SuperKernelOptionError(f"option '{key}' takes 0 or 1, got '{v}'")
    return v == "1"


def _count(key: str, v: str) -> int:
    if not v.isdigit():
        raise SuperKernelOptionError(f"option '{key}' takes a non-negative integer, got '{v}'")
    return int(v)


def _names(key: str, v: str) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in v.split(","))
    if not all(parts):
        raise SuperKernelOptionError(f"option '{key}' takes a ','-separated list of kernel names, got '{v}'")
    return parts


def _value(key: str, v: str) -> Any:
    """The typed value of option ``key`` given as the string ``v`` (range errors raise)."""
    if key in ("feed-sync-all", "stream-fusion", "debug-dcci-all", "debug-sync-all", "profiling"):
        return _flag(key, v)
    if key in ("debug-aic-num", "debug-aiv-num"):
        return _count(key, v)
    if key in ("dcci-before-kernel-start", "dcci-after-kernel-end", "dcci-disable-on-kernel", "compile-options"):
        return _names(key, v)
    if key == "strict-scope-check":
        return v
    if key == "early-start":
        if v not in ("0", "1", "2"):
            raise SuperKernelOptionError(f"option 'early-start' takes 0 (disabled), 1 (EnableV2) or 2 "
                                         f"(V2DisableSubKernel), got '{v}'")
        return int(v)
    if key == "preload-code":
        if v not in PRELOAD_MODES:
            raise SuperKernelOptionError(f"option 'preload-code' takes one of {', '.join(PRELOAD_MODES)}, got '{v}'")
        return v
    if key == "split-mode":
        n = _count(key, v)
        if not 0 < n <= 64:
            raise SuperKernelOptionError(f"option 'split-mode' takes an integer in (0, 64], got '{v}'")
        return n
    if key == "func-align":
        n = _count(key, v)
        if n == 1 or (n and n & (n - 1)):
            raise SuperKernelOptionError(f"option 'func-align' takes 0 or a power of two >= 2, got '{v}'")
        return n
    raise SuperKernelOptionError(f"option '{key}' is not supported; the options are {', '.join(sorted(_KEYS))}")


def parse_options(text: str) -> SuperKernelOptions:
    """Parse a GE option string such as ``"feed-sync-all=1:early-start=0"`` (spec §1.2's rules)."""
    if not isinstance(text, str):
        raise SuperKernelOptionError(f"SuperKernel options must be a string 'k=v:k=v' or a dict, got "
                                     f"{type(text).__name__}")
    s = text.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        s = s[1:-1]
    got: dict[str, Any] = {}
    for part in s.split(":"):
        if not part:
            continue
        if "=" not in part:
            warnings.warn(f"SuperKernel option '{part}' has no '=': skipped", stacklevel=2)
            continue
        key, v = part.split("=", 1)
        key, v = key.strip(), v.strip()
        if not key or not v:
            raise SuperKernelOptionError(f"option '{part}': key-value pair is missing (write key=value)")
        if key in got:
            raise SuperKernelOptionError(f"option '{key}' has been set (given twice in '{text}')")
        if key not in _KEYS:
            raise SuperKernelOptionError(f"option '{key}' is not supported; the options are "
                                         f"{', '.join(sorted(_KEYS))}")
        got[key] = _value(key, v)
    return SuperKernelOptions(**{_KEYS[k]: v for k, v in got.items()})


def options_from_dict(d: Mapping[str, Any]) -> SuperKernelOptions:
    """The dict form: keys with ``-`` or ``_``, values as strings, ints, bools or (for name lists) lists."""
    got: dict[str, Any] = {}
    for raw, v in d.items():
        key = str(raw).replace("_", "-")
        if key not in _KEYS:
            raise SuperKernelOptionError(f"option '{raw}' is not supported; the options are "
                                         f"{', '.join(sorted(_KEYS))}")
        if key in got:
            raise SuperKernelOptionError(f"option '{key}' has been set (given as both '-' and '_' names)")
        if isinstance(v, (list, tuple)):
            text = ",".join(str(x) for x in v)
        elif isinstance(v, bool):
            text = "1" if v else "0"
        else:
            text = str(v)
        if not text:
            raise SuperKernelOptionError(f"option '{raw}': key-value pair is missing (empty value)")
        got[key] = _value(key, text)
    return SuperKernelOptions(**{_KEYS[k]: v for k, v in got.items()})


def as_options(given: SuperKernelOptions | str | Mapping[str, Any] | None) -> SuperKernelOptions:
    """Options given as an object, a GE string, a dict, or None (the defaults)."""
    if given is None:
        return SuperKernelOptions()
    if isinstance(given, SuperKernelOptions):
        return given
    if isinstance(given, Mapping):
        return options_from_dict(given)
    return parse_options(given)


__all__ = ["SuperKernelOptions", "parse_options", "options_from_dict", "as_options"]
