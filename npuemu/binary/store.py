"""The binary store: descriptors of built binaries, addressed by the sha256 of their key.

``<cache>/binaries/<sha256>.json`` describes one binary; its generated module,
link file and machine code live in the kernel cache beside it
(``<cache>/npuemu_kernels``).  A process that needs a binary it has not built
looks it up here by key before lowering anything.  A descriptor is checked
when it is read (its key against its name, its generated module against its
checksum); one that fails is removed with a warning and the binary is built
again.
"""
from __future__ import annotations

import contextlib
import json
import warnings
from pathlib import Path

from ..codegen.cache import check_entry, roots, write_atomic
from ..errors import NpuemuError
from .kernel_binary import KernelBinary, ModuleMismatch, from_descriptor


class BinaryStoreWarning(UserWarning):
    """A stored binary was damaged or stale and is rebuilt."""


def store_dir() -> Path:
    """Where new descriptors are written."""
    return roots().write / "binaries"


def put(binary: KernelBinary) -> None:
    """Record ``binary`` (its generated files are already in the kernel cache); keys without a
    source fingerprint are not stored: they do not identify the kernel in another process."""
    if not binary.key.persistent:
        return
    path = store_dir() / f"{binary.sha256}.json"
    if not path.exists():
        write_atomic(path, json.dumps(binary.descriptor(), indent=1).encode())


def get(sha256: str) -> KernelBinary | None:
    """The stored binary of key hash ``sha256``, or None (absent, or damaged and removed)."""
    found = [r / "binaries" / f"{sha256}.json" for r in roots().read]
    path = next((p for p in found if p.exists()), found[0])
    try:
        check_entry(path)
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.warn(f"npuemu: cannot read stored binary {path} ({exc}); building it again",
                      BinaryStoreWarning, stacklevel=2)
        return None
    try:
        desc = json.loads(text)
        if desc.get("sha256") != sha256:
            raise NpuemuError("its name does not match its key")
        return from_descriptor(desc, str(path))
    except ModuleMismatch:
        # the kernel cache lost or damaged the module: the rebuild says so; the descriptor goes with it
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        return None
    except (ValueError, KeyError, TypeError, NpuemuError) as exc:
        warnings.warn(f"npuemu: stored binary {path} is damaged ({exc}); removed, building it again",
                      BinaryStoreWarning, stacklevel=2)
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        return None
