"""Ops by name: what ``npuemu.ops.call("Add", ...)`` and ``npuemu build Add`` look up.

An op is registered under its op type (``OpDef.name``, CANN's ``OP_ADD``
name).  Registering a second, different op under a taken name is an error;
registering the same op again does nothing, so a module that declares ops
can be imported twice.  Importing :mod:`npuemu.ops.library` registers the
op library (the by-name entry points, ``npuemu.ops.call`` and ``npuemu
build``, import it first).
"""
from __future__ import annotations

import threading

from .codes import OpDefError
from .opdef import OpDef

_ops: dict[str, OpDef] = {}
_lock = threading.Lock()


def register(op: OpDef) -> OpDef:
    """Make ``op`` known by its name; returns it (usable as a decorator-style call)."""
    if not isinstance(op, OpDef):
        raise OpDefError(f"only an OpDef can be registered, got {type(op).__name__}")
    with _lock:
        known = _ops.get(op.name)
        if known is not None and known is not op:
            raise OpDefError(f"an op named {op.name!r} is already registered; give the new op another name "
                             f"or unregister the old one first")
        _ops[op.name] = op
    return op


def unregister(name: str) -> None:
    """Forget the op named ``name`` (no error if it is not registered)."""
    with _lock:
        _ops.pop(name, None)


def get(name: str) -> OpDef:
    """The op registered as ``name``; an unknown name is an :class:`OpDefError` listing the known ones."""
    op = _ops.get(name)
    if op is None:
        raise OpDefError(f"no op named {name!r}; registered ops: {', '.join(names()) or 'none'}")
    return op


def names() -> list[str]:
    """The registered op names, sorted."""
    with _lock:
        return sorted(_ops)
