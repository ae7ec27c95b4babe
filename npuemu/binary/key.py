"""The identity of a kernel binary: a canonical key and its sha256.

A :class:`BinaryKey` names everything a binary's machine code depends on and
nothing else:

==============  ===============================================================
``kernel``      the kernel's qualified name in its module (for people; the source hash identifies it)
``source``      sha256 of the kernel's source and of everything it refers to: helpers,
                module constants, classes (``npuemu.frontend.fingerprint``); empty when
                something it refers to has no stable description (then the binary is
                built afresh in every process, never looked up on disk)
``args``        one :class:`ArgSpec` per kernel parameter: kind, dtype, format, ConstExpr value
``kernel_type`` the ``KernelType`` name (which cores run it)
``platform``    the SoC profile's name and a sha256 of all its fields
``check``       the check level the code was generated for (``off`` / ``default`` / ``full``)
``tiling_key``  the tiling key, or None for a kernel that does not branch on one
``sync``        ``auto`` when the lowering inserts synchronisation (``auto_sync``), ``verify`` when it
                reports redundant synchronisation (``verify_sync``), ``auto+verify``, or empty
``profile``     True when the code charges the cost model (``profile=True``, docs/cost-model.md)
``compiler``    sha256 of npuemu's own language, frontend, codegen and instruction sources
``version``     the key format itself
==============  ===============================================================

No path appears in it: a checkout moved to another folder keeps its keys.
The canonical text is JSON with sorted keys and no spaces; the sha256 of that
text is the binary's identity in the binary store.  ``debug`` is not part of
the key: debug mode runs the same generated code in CPython.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any

KEY_VERSION = 1


@dataclass(frozen=True)
class ArgSpec:
    """One kernel parameter's part of the key.

    ``kind`` is ``gm`` (a GM address: ``dtype`` and storage ``format``),
    ``int``/``float``/``bool`` (a run-time scalar), ``struct`` (``type`` is the
    struct class, ``value`` its field layout) or ``const`` (a ConstExpr:
    ``type`` is the value's type, ``value`` its canonical text).
    """

    name: str
    kind: str
    dtype: str | None = None
    format: str | None = None
    type: str | None = None
    value: str | None = None

    def describe(self) -> str:
        """``x=gm:float16``: the parameter as the generated module's header shows it."""
        if self.kind == "gm":
            fmt = "" if self.format in (None, "ND") else f":{self.format}"
            return f"{self.name}=gm:{self.dtype}{fmt}"
        if self.kind == "const":
            prefix = f"{self.type}:"
            shown = self.value[len(prefix):] if self.value and self.value.startswith(prefix) else self.value
            return f"{self.name}=const:{self.type}={shown}"
        if self.kind == "struct":
            return f"{self.name}=struct:{self.type}"
        return f"{self.name}={self.kind}"


@dataclass(frozen=True)
class BinaryKey:
    """Everything a kernel binary depends on; see the module docstring for each field."""

    kernel: str
    source: str
    args: tuple[ArgSpec, ...]
    kernel_type: str
    platform: str
    platform_profile: str
    check: str
    tiling_key: int | None
    compiler: str
    version: int = KEY_VERSION
    sync: str = ""
    profile: bool = False

    @property
    def persistent(self) -> bool:
        """Whether the key identifies the kernel across processes (its source hash is known)."""
        return bool(self.source)

    def to_json(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["args"] = [{k: v for k, v in vars(a).items() if v is not None} for a in self.args]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "BinaryKey":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        values["args"] = tuple(ArgSpec(**a) for a in d["args"])
        return cls(**values)

    def canonical(self) -> str:
        """The key as canonical JSON text (sorted keys, no whitespace)."""
        return _canonical(self)

    @property
    def sha256(self) -> str:
        """Hex sha256 of :meth:`canonical`: the binary's identity."""
        return _sha256(self)

    def describe(self) -> str:
        """One line for people: parameters, kernel type, platform, check level and tiling key."""
        text = ", ".join(a.describe() for a in self.args)
        text += f"; kernel_type={self.kernel_type}; platform={self.platform}; check={self.check}"
        if self.tiling_key is not None:
            text += f"; tiling_key={self.tiling_key}"
        if self.sync:
            text += f"; sync={self.sync}"
        if self.profile:
            text += "; profile"
        return text


@functools.lru_cache(maxsize=4096)
def _canonical(key: BinaryKey) -> str:
    return json.dumps(key.to_json(), sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=4096)
def _sha256(key: BinaryKey) -> str:
    return hashlib.sha256(_canonical(key).encode()).hexdigest()
