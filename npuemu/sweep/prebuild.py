"""Build a kernel case's binaries once, on the client, before the case is shipped.

The case's host function runs as usual up to each launch: its tiling runs,
its arrays are allocated, and then, instead of launching, the kernel is
built for exactly the arguments the launch would pass (``kernel.compile``).
Each binary lands in the binary store (``NPUEMU_CACHE_DIR``) under the sha256
of its key; the case carries those sha256s, and a worker that shares the
store loads the binaries from there, verified, without lowering the kernel
again.  A worker that does not share it builds what it needs on first use.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .cases import Case


class _BuildOnly:
    """Stands in for a kernel inside ``run_op``: ``kernel[n](*args, **options)`` builds instead of launching."""

    def __init__(self, kernel: Any, built: list[Any]):
        self._kernel = kernel
        self._built = built

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kernel, name)

    def __getitem__(self, key: Any) -> Any:
        def build(*args: Any, **options: Any) -> None:
            self._built.append(self._kernel.compile(list(args), **options))
        return build


@contextlib.contextmanager
def _build_instead_of_launch(built: list[Any]) -> Iterator[None]:
    """Within the block, the bundled kernels' host functions build their binaries and launch nothing.

    Not thread-safe: it swaps the bundled kernels' ``run_op`` (as
    :func:`npuemu.testing.bundled.capture_tilings` does).
    """
    from ..kernels import _host
    original = _host.run_op

    def run_op(kernel: Any, *args: Any, **kwargs: Any) -> Any:
        return original(_BuildOnly(kernel, built), *args, **kwargs)

    _host.run_op = run_op
    try:
        yield
    finally:
        _host.run_op = original


def build_case(case: Case) -> Case:
    """``case`` with the sha256 keys of the binaries its launches use, built (or found) here.

    A case whose host function does not go through ``run_op``, or that fails
    before its launch, is returned unchanged: it runs, and fails, the same way
    on the worker.
    """
    if case.kind != "kernel":
        return case
    from .execute import kernel_entry, kernel_inputs
    built: list[Any] = []
    try:
        k = kernel_entry(case.target)
        with _build_instead_of_launch(built):
            k.run(*kernel_inputs(case), platform=case.platform, check=case.check)
    except Exception:          # noqa: BLE001 - the case reports it when it runs
        pass
    keys = [b.sha256 for b in built if b.key.persistent]
    return case.with_binaries(list(dict.fromkeys(keys))) if keys else case
