"""``@asc.jit``: the kernel object users hold, with its build and launch syntax.

:class:`JITFunction` joins the three roles the rest of npuemu keeps apart:
the passive kernel (:class:`npuemu.frontend.kernel.KernelFunction`), its
builder (:class:`npuemu.frontend.build.KernelBuilder`) and the runtime's
launch (:func:`npuemu.runtime.launch.launch`)::

    binary = kernel.compile([asc.float32, asc.float32, asc.float32, int, 512])   # build, no launch
    kernel[8](x, y, z, 4096, 512)             # build (once) and launch
    kernel[8, stream](x, y, z, 4096, 512)     # after what is queued on the stream (then waits, as pyasc)

The same decorated function called from another kernel is a helper and is
inlined there.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

from .binary.kernel_binary import KernelBinary
from .cost import Profile
from .errors import LaunchError
from .frontend.build import KernelBuilder
from .frontend.kernel import KernelFunction
from .frontend.specialize import signature_kinds, specialize
from .options import OPTION_NAMES, from_environment
from .runtime.launch import launch
from .runtime.stream import Stream


class JITFunction(KernelFunction):
    """A kernel or helper written in the kernel language (what ``@asc.jit`` returns)."""

    def __init__(self, fn: Callable[..., Any], **options: Any):
        super().__init__(fn, **options)
        self.builder = KernelBuilder(self)
        # the Profile of the kernel's last launch with profile=True (for launches made by helpers, such as
        # the bundled kernels' runners, that do not hand back what the launch returns)
        self.last_profile: Profile | None = None

    def __getitem__(self, key: Any) -> "Launcher":
        core_num, stream = key, None
        if isinstance(key, tuple):
            if len(key) not in (1, 2):
                raise LaunchError(f"launch kernel '{self.__name__}' as {self.__name__}[core_num] or "
                                  f"{self.__name__}[core_num, stream]")
            core_num = key[0]
            stream = key[1] if len(key) == 2 else None
        try:
            n = operator.index(core_num) if not isinstance(core_num, bool) else None
        except TypeError:
            n = None
        if n is None or n <= 0:
            raise LaunchError(f"kernel '{self.__name__}': core_num must be a positive int, got {core_num!r}")
        if stream is not None and not isinstance(stream, Stream):
            raise LaunchError(f"kernel '{self.__name__}': the stream of {self.__name__}[core_num, stream] must be "
                              f"an npuemu.Stream (or None), got {type(stream).__name__}")
        return Launcher(self, n, stream)

    def compile(self, signature: Any = None, /, **given: Any) -> KernelBinary:
        """Build the binary for ``signature`` without launching it.

        ``signature`` lists, per parameter (in order, or as a dict by name; or
        as keyword arguments): a kernel dtype (``asc.float16``), NumPy dtype or
        example array for a GM address; ``int``/``float``/``bool`` for a scalar;
        the ``Struct`` class for tiling data; the value of a ConstExpr.  Launch
        options (``platform``, ``check``, ``kernel_type``, ``tiling_key``, ...)
        go with the keywords.  Unless ``debug=True`` the machine code is
        compiled (or loaded from the cache) too.
        """
        options_given = {k: given.pop(k) for k in list(given) if k in OPTION_NAMES}
        options = from_environment(**{**self.options, **options_given})
        kinds = signature_kinds(self, signature, given)
        return self.builder.binary(kinds, options, native=not options.debug)

    def tiling_keys(self, signature: Any = None, /, **given: Any) -> tuple[int, ...]:
        """The tiling keys the kernel branches on (``asc.tiling_key_is``) for ``signature`` (as :meth:`compile`)."""
        options_given = {k: given.pop(k) for k in list(given) if k in OPTION_NAMES}
        options = from_environment(**{**self.options, **options_given})
        return self.builder.tiling_keys(signature_kinds(self, signature, given), options)

    def binaries(self) -> list[KernelBinary]:
        """The binaries this process has built or loaded for the kernel."""
        return self.builder.binaries()


class Launcher:
    """``kernel[core_num, stream]``: call it with the kernel's arguments to run it."""

    def __init__(self, kernel: JITFunction, core_num: int, stream: Stream | None):
        self.jit = kernel
        self.core_num = core_num
        self.stream = stream

    def __call__(self, *args: Any, **kwargs: Any) -> Profile | None:
        """Run the kernel; with ``profile=True`` return the launch's :class:`npuemu.cost.Profile`."""
        overrides = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTION_NAMES}
        options = from_environment(**{**self.jit.options, **overrides})
        kinds, values = specialize(self.jit, args, kwargs)
        binary = self.jit.builder.binary(kinds, options, native=not options.debug)
        got: list[Profile] = []
        launch(binary, self.core_num, values, debug=options.debug, stream=self.stream, timeout=options.timeout,
               max_steps=options.max_steps, on_times=(lambda t: got.append(Profile(t))) if binary.profile else None)
        if got:
            self.jit.last_profile = got[0]
        return got[0] if got else None


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Decorator: ``@asc.jit``, ``@asc.jit(kernel_type=..., check=...)`` or ``asc.jit(fn, check=...)``."""
    if fn is not None:
        return JITFunction(fn, **options)
    return lambda f: JITFunction(f, **options)
