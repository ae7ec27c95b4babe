"""Building a SuperKernel: from a list of launches (:func:`combine`) or a recorded scope (:func:`scope`)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from ..binary.kernel_binary import KernelBinary
from ..errors import SourceLoc, SuperKernelError
from ..runtime.binding import bind_arguments
from ..runtime.launch import recording
from .model import SubKernel, SuperKernel, caller_loc, default_name
from .options import SuperKernelOptions, as_options

Options = SuperKernelOptions | str | Mapping[str, Any] | None


@dataclass
class Launch:
    """One launch for :func:`combine`: a kernel (``@asc.jit`` function or built :class:`KernelBinary`),
    its block dim and arguments; ``options`` are launch options of a jit kernel (``kernel_type=``,
    ``tiling_key=``, ``check=``, ``platform=``, ...); ``name`` names it in the SuperKernel's options and
    messages; ``dynamic`` marks a dynamic-shape binary; ``stream`` is its graph stream (stream fusion)."""

    kernel: Any
    block_dim: int
    args: Sequence[Any] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    dynamic: bool = False
    stream: int = 0


def _record(into: list[SubKernel], where: SourceLoc | None = None, name: str = "", dynamic: bool = False,
            stream: int = 0) -> Any:
    def recorder(binary: KernelBinary, block_dim: int, values: Mapping[str, Any], debug: bool) -> None:
        into.append(SubKernel(binary, block_dim, dict(values), name=name, where=where or caller_loc(),
                              dynamic=dynamic, debug=debug, stream=stream))
    return recorder


def sub_kernel(launch: Launch | SubKernel | tuple[Any, ...]) -> SubKernel:
    """The :class:`SubKernel` of one launch given as a :class:`Launch`, a tuple ``(kernel, block_dim,
    args[, kwargs])`` or a :class:`SubKernel`."""
    if isinstance(launch, SubKernel):
        return launch
    if isinstance(launch, tuple):
        if not 2 <= len(launch) <= 4:
            raise SuperKernelError("a SuperKernel launch is (kernel, block_dim, args[, kwargs]) or a Launch")
        launch = Launch(*launch)
    where = caller_loc()
    if isinstance(launch.kernel, KernelBinary):
        values = bind_arguments(launch.kernel, launch.block_dim, tuple(launch.args), dict(launch.kwargs))
        return SubKernel(launch.kernel, launch.block_dim, values, name=launch.name, where=where,
                         dynamic=launch.dynamic, stream=launch.stream)
    got: list[SubKernel] = []
    with recording(_record(got, where, launch.name, launch.dynamic, launch.stream)):
        launch.kernel[launch.block_dim](*launch.args, **dict(launch.kwargs))
    if len(got) != 1:
        raise SuperKernelError(f"launching {launch.kernel!r} recorded {len(got)} launches; give one kernel")
    return got[0]


def combine(launches: Sequence[Launch | SubKernel | tuple[Any, ...]], options: Options = None,
            name: str | None = None, events: Sequence[tuple[int | str, int | str]] = ()) -> SuperKernel:
    """Fuse ``launches`` (in order) into one :class:`SuperKernel`; ``options`` in GE string form
    (``"early-start=0:feed-sync-all=1"``) or as a dict; ``events``: notify/wait events as (sender, receiver)
    pairs of sub-kernel names or indices.  Run it with ``sk.run()``."""
    opts = as_options(options)
    subs = tuple(sub_kernel(x) for x in launches)
    return SuperKernel(name or default_name(subs), subs, opts, tuple(events))


class Scope:
    """What :func:`scope` yields: the launches recorded so far, and the SuperKernel once the block ends."""

    def __init__(self, name: str | None, options: SuperKernelOptions):
        self.name = name
        self.options = options
        self.events: list[tuple[int | str, int | str]] = []
        self.subs: list[SubKernel] = []
        self.superkernel: SuperKernel | None = None
        self.profile: Any = None      # the run's SuperKernelProfile (profile=True, or every launch profiled)

    def event(self, sender: int | str, receiver: int | str) -> None:
        """Add a notify/wait event from sub-kernel ``sender`` to ``receiver`` (names or indices)."""
        self.events.append((sender, receiver))


@contextlib.contextmanager
def scope(name: str | None = "", options: Options = None, *, run: bool = True,
          timeout: float | None = None, max_steps: int | None = None, profile: bool = False) -> Iterator[Scope]:
    """Record every launch in the block (``kernel[n](...)``, the bundled kernels' functions, op-layer
    calls) and, when the block ends, run them as one SuperKernel, as torchair's ``super_kernel_scope``.

    Outputs of the recorded launches are written when the block ends (``run=False``: not at all; run
    ``s.superkernel.run()`` yourself).  ``name=None`` fuses nothing: launches run one by one.  When every
    launch is made with ``profile=True``, ``s.profile`` is the SuperKernel's cost-model profile
    (``profile=True`` requires that, as :meth:`SuperKernel.run`).
    """
    opts = as_options(options)
    s = Scope(name, opts)
    if name is None:
        yield s
        return
    with recording(_record(s.subs)):
        yield s
    if not s.subs:
        return
    s.superkernel = SuperKernel(name or default_name(s.subs), tuple(s.subs), opts, tuple(s.events))
    if run:
        s.profile = s.superkernel.run(timeout=timeout, max_steps=max_steps, profile=profile).profile


__all__ = ["Launch", "combine", "scope", "Scope", "sub_kernel"]
