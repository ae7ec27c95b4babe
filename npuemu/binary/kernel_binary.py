"""One built kernel specialisation, as a value: key, generated code, facts, machine code.

A :class:`KernelBinary` is what ``kernel.compile(...)`` returns and what
``kernel[n](...)`` launches.  Its parts:

* ``key`` (:class:`~npuemu.binary.key.BinaryKey`) and ``sha256``: its identity;
* ``module``: the generated Python module (``npuemu.codegen.compiler``), which
  runs as is in debug mode and is compiled by Numba for everything else;
* ``facts`` (:class:`~npuemu.binary.facts.KernelFacts`), ``locs`` (the source
  location of every instruction call, for error messages), ``kernel_type`` and
  ``platform``: what the launch needs, learned when the kernel was lowered.

:meth:`KernelBinary.save` writes all of it, machine code included, to one
archive; :func:`load_binary` brings it back in another process (or on another
machine with the same npuemu and Numba) without the kernel's Python source.
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..codegen import abi
from ..codegen.cache import check_entry, ensure_package, find_entry, record_entry, roots, write_atomic
from ..codegen.compiler import GeneratedModule, compile_native, generated_module
from ..errors import LaunchError, SourceLoc
from ..language.enums import KernelType
from ..platform import Platform, get_platform
from .facts import KernelFacts
from .key import BinaryKey

FORMAT = "npuemu-kernel-binary"
FORMAT_VERSION = 1


class ModuleMismatch(LaunchError):
    """A binary's generated module is missing or not the one it was built with."""


@dataclass(eq=False)
class KernelBinary:
    """A kernel compiled for one specialisation; see the module docstring."""

    key: BinaryKey
    name: str
    module: GeneratedModule
    facts: KernelFacts
    locs: tuple[SourceLoc, ...]
    kernel_type: KernelType
    platform: Platform
    _native: Callable[..., Any] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __repr__(self) -> str:
        return f"<KernelBinary {self.name} {self.sha256[:12]}: {self.key.describe()}>"

    @property
    def sha256(self) -> str:
        """The binary's identity: sha256 of its key's canonical text."""
        return self.key.sha256

    @property
    def source(self) -> str:
        """The generated Python module."""
        return self.module.source

    @property
    def check(self) -> str:
        """The check level the binary was built for."""
        return self.key.check

    @property
    def profile(self) -> bool:
        """Whether the binary charges the cost model (built with ``profile=True``)."""
        return self.key.profile

    @property
    def signature(self) -> tuple[Any, ...]:
        """The Numba argument types of the machine code (``npuemu.codegen.abi``)."""
        return abi.numba_signature(len(self.facts.gm_params), [p.kind for p in self.facts.scalar_params])

    def python(self) -> Callable[..., Any]:
        """The generated kernel function run by CPython (debug mode)."""
        return self.module.python_fn

    def native(self) -> Callable[..., Any]:
        """The compiled kernel function; compiled (or loaded from the cache) on first use."""
        if self._native is None:
            with self._lock:
                if self._native is None:
                    self._native = compile_native(self.module, self.signature)
        return self._native

    @property
    def is_native(self) -> bool:
        """Whether the machine code is already in this process."""
        return self._native is not None

    # ------------------------------------------------------------------ persistence

    def descriptor(self) -> dict[str, Any]:
        """Everything but the generated files, as JSON-compatible data."""
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "sha256": self.sha256, "key": self.key.to_json(),
            "name": self.name, "module": self.module.path.stem,
            "module_sha256": hashlib.sha256(self.module.source.encode()).hexdigest(),
            "kernel_type": self.kernel_type.name, "platform": _platform_json(self.platform),
            "facts": self.facts.to_json(), "locs": [_loc_json(loc) for loc in self.locs],
        }

    def relocated(self, old_root: str, new_root: str) -> "KernelBinary":
        """The binary with the source locations under folder ``old_root`` moved to ``new_root``
        (a checkout that moved since the binary was built: messages name the files where they are now)."""
        def move(loc: SourceLoc | None) -> SourceLoc | None:
            if loc is None:
                return None
            name = loc.filename
            if name == old_root or name.startswith(old_root.rstrip("/") + "/"):
                name = new_root.rstrip("/") + name[len(old_root.rstrip("/")):]
            return dataclasses.replace(loc, filename=name, called_from=move(loc.called_from))

        return dataclasses.replace(self, locs=tuple(move(loc) for loc in self.locs), _native=self._native,
                                   _lock=threading.Lock())

    def save(self, path: str | Path) -> Path:
        """Write the binary, machine code included, to the archive ``path`` (a zip file); returns ``path``.

        The machine code is compiled first if this process has not done so.
        """
        self.native()
        path = Path(path)
        buf = io.BytesIO()
        files = _module_files(self.module.path)
        digests = {}
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, data in files.items():
                zf.writestr(rel, data)
                digests[rel] = hashlib.sha256(data).hexdigest()
            zf.writestr("binary.json", json.dumps({**self.descriptor(), "files": digests}, indent=1))
        write_atomic(path, buf.getvalue())
        return path


def load_binary(path: str | Path) -> KernelBinary:
    """The binary saved at ``path`` by :meth:`KernelBinary.save`, ready to launch.

    Every file is checked against the archive's checksums and the key against
    its sha256; the generated module and its machine code are installed in
    this process's kernel cache (``NPUEMU_CACHE_DIR``) and the machine code is
    loaded, so the first launch does not compile anything.
    """
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            desc = json.loads(zf.read("binary.json"))
            files = {rel: zf.read(rel) for rel in desc.get("files", {})}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise LaunchError(f"{path}: not a readable npuemu kernel binary ({type(exc).__name__}: {exc})") from None
    _check_descriptor(desc, str(path))
    for rel, data in files.items():
        if hashlib.sha256(data).hexdigest() != desc["files"][rel]:
            raise LaunchError(f"{path}: file {rel} does not match its checksum: the archive is damaged")
    _install(files)
    binary = from_descriptor(desc, str(path))
    binary.native()
    return binary


def from_descriptor(desc: dict[str, Any], origin: str) -> KernelBinary:
    """A binary from its descriptor; its generated module must already be in the kernel cache."""
    _check_descriptor(desc, origin)
    key = BinaryKey.from_json(desc["key"])
    if key.sha256 != desc["sha256"]:
        raise LaunchError(f"{origin}: the binary's key does not match its sha256: the descriptor is damaged")
    src_path = find_entry(f"{desc['module']}.py") or roots().write / "npuemu_kernels" / f"{desc['module']}.py"
    try:
        check_entry(src_path)
        source = src_path.read_text()
    except OSError as exc:
        raise ModuleMismatch(f"{origin}: the generated module {src_path} is missing ({exc})") from None
    if hashlib.sha256(source.encode()).hexdigest() != desc["module_sha256"]:
        raise ModuleMismatch(f"{origin}: the generated module {src_path} does not match the binary")
    module = generated_module(desc["name"], source)
    return KernelBinary(key=key, name=desc["name"], module=module, facts=KernelFacts.from_json(desc["facts"]),
                        locs=tuple(_loc(d) for d in desc["locs"]), kernel_type=KernelType[desc["kernel_type"]],
                        platform=_platform(desc["platform"]))


def _check_descriptor(desc: Any, origin: str) -> None:
    if not isinstance(desc, dict) or desc.get("format") != FORMAT:
        raise LaunchError(f"{origin}: not an npuemu kernel binary")
    if desc.get("format_version") != FORMAT_VERSION:
        raise LaunchError(f"{origin}: kernel binary format {desc.get('format_version')} is not supported by this "
                          f"npuemu (it reads format {FORMAT_VERSION}); rebuild the binary")


def _module_files(module_path: Path) -> dict[str, bytes]:
    """The generated module, its link file and its Numba cache files, by path relative to the cache package."""
    stem = module_path.stem
    out = {module_path.name: module_path.read_bytes()}
    links = module_path.with_suffix(".links")
    if links.exists():
        out[links.name] = links.read_bytes()
    pycache = module_path.parent / "__pycache__"
    for p in sorted(pycache.glob(f"{stem}.*")):
        if p.suffix in (".nbi", ".nbc"):
            out[f"__pycache__/{p.name}"] = p.read_bytes()
    return out


def _install(files: dict[str, bytes]) -> None:
    """Put a binary's files into this process's kernel cache (files already there are kept)."""
    package = ensure_package(roots().write)
    for rel, data in files.items():
        target = package / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
    module = next(package / rel for rel in files if rel.endswith(".py") and "/" not in rel)
    record_entry(module)        # the archive vouched for every file: the entry's manifest says so


def _loc_json(loc: SourceLoc | None) -> Any:
    if loc is None:
        return None
    return [loc.filename, loc.lineno, loc.col, loc.function, loc.line_text, _loc_json(loc.called_from)]


def _loc(d: Any) -> SourceLoc | None:
    if d is None:
        return None
    filename, lineno, col, function, text, called_from = d
    return SourceLoc(filename, lineno, col, function, text, _loc(called_from))


def _platform_json(p: Platform) -> dict[str, Any]:
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}


def _platform(d: dict[str, Any]) -> Platform:
    """The profile a binary was built for: the registered one of that name if identical, else a copy."""
    values = {k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v
              for k, v in d.items()}
    p = Platform(**values)
    try:
        known = get_platform(p.name)
    except Exception:  # noqa: BLE001 - a custom profile this process never registered
        return p
    return known if known.key == p.key else p
