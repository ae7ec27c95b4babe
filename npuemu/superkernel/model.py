"""What a SuperKernel is made of: its sub-kernels (binary, block dim, arguments) and its launch config."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..binary.kernel_binary import KernelBinary
from ..errors import CostError, SourceLoc, SuperKernelError
from ..language.enums import KernelType
from .config import launch_config
from .events import Event, resolve_events
from .options import SuperKernelOptions
from .scan import early_start_calls

@dataclass(frozen=True)
class SubKernel:
    """One launch of a SuperKernel: a built binary on ``block_dim`` blocks with its arguments by name.

    ``name`` is what the options' kernel lists (``dcci-*``) and error messages call it (default: the
    binary's kernel name); ``where`` the user's line that added it; ``dynamic``: a dynamic-shape binary
    (always cleaned before and after, never early-started, spec §1.8); ``stream``: its graph stream
    (what ``stream-fusion`` orders by).
    """

    binary: KernelBinary
    block_dim: int
    values: Mapping[str, Any]
    name: str = ""
    where: SourceLoc | None = None
    dynamic: bool = False
    debug: bool = False
    stream: int = 0

    @property
    def kernel_type(self) -> KernelType:
        return KernelType(self.binary.kernel_type)

    @property
    def label(self) -> str:
        return self.name or self.binary.name


@dataclass(frozen=True)
class SuperKernel:
    """Sub-kernels fused into one launch: ``kernel_type`` and ``block_dim`` follow spec §1.3; ``events``:
    notify/wait events as (sender, receiver) pairs of sub-kernel names or indices (held as indices)."""

    name: str
    subs: tuple[SubKernel, ...]
    options: SuperKernelOptions
    events: tuple[Event, ...] = ()
    kernel_type: KernelType = field(init=False)
    block_dim: int = field(init=False)

    def __post_init__(self) -> None:
        if not self.subs:
            raise SuperKernelError(f"SuperKernel '{self.name}' has no sub-kernels")
        platforms = {s.binary.platform.name for s in self.subs}
        if len(platforms) > 1:
            raise SuperKernelError(f"SuperKernel '{self.name}': its sub-kernels are built for different platforms "
                                   f"({', '.join(sorted(platforms))}); build them all for one")
        kt, bd = launch_config([(s.kernel_type, s.block_dim) for s in self.subs], self.options.debug_aic_num,
                               self.options.debug_aiv_num)
        object.__setattr__(self, "events", resolve_events(self.name, [s.label for s in self.subs], self.events))
        object.__setattr__(self, "kernel_type", kt)
        object.__setattr__(self, "block_dim", bd)
        if self.options.early_start == 0:
            for s in self.subs:
                set_, wait = early_start_calls(s.binary)
                if (set_ or wait) and not s.dynamic:
                    raise SuperKernelError(
                        f"SuperKernel '{self.name}': sub-kernel '{s.label}' calls "
                        f"{'set_next_task_start' if set_ else 'wait_pre_task_end'} (its compile info says early "
                        f"start), which early-start=0 does not allow; use early-start=1, or 2 to make the calls "
                        f"no-ops")
        for s in self.subs:
            if s.block_dim <= 0:
                raise SuperKernelError(f"SuperKernel '{self.name}': sub-kernel '{s.label}' has block dim "
                                       f"{s.block_dim}; give a positive block dim")

    def label(self, k: int) -> str:
        """How errors name sub-kernel ``k``."""
        return f"{self.subs[k].label} (sub-kernel {k} of SuperKernel {self.name})"

    @property
    def platform(self) -> Any:
        return self.subs[0].binary.platform

    def run(self, *, timeout: float | None = None, max_steps: int | None = None, profile: bool = False) -> Any:
        """Run the SuperKernel (its outputs are written in place, as by the separate launches); returns the
        run's record (``complements[slot]``: the feed-sync-all barriers core ``slot`` ran; ``profile``: the
        cost model's :class:`~npuemu.superkernel.profile.SuperKernelProfile` of the launch when every
        sub-kernel is built with ``profile=True``, else None).  ``profile=True`` requires that: a sub-kernel
        built without it is a :class:`~npuemu.errors.CostError`."""
        from .execute import run_superkernel
        from .profile import unprofiled
        if profile and unprofiled(self):
            raise CostError(f"SuperKernel '{self.name}': sub-kernel(s) {', '.join(unprofiled(self))} are not built "
                            f"with profile=True; launch them with profile=True (or set NPUEMU_PROFILE=1) to "
                            f"profile the SuperKernel")
        return run_superkernel(self, timeout=timeout, max_steps=max_steps, profile=profile)


def caller_loc() -> SourceLoc | None:
    """The innermost line of the caller's code outside npuemu (where a sub-kernel was added)."""
    frame = inspect.currentframe()
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if not (module == "npuemu" or module.startswith("npuemu.") or module == "contextlib"):
            info = inspect.getframeinfo(frame, context=1)
            text = info.code_context[0] if info.code_context else ""
            return SourceLoc(info.filename, info.lineno, 0, info.function, text)
        frame = frame.f_back
    return None


def default_name(subs: Sequence[SubKernel]) -> str:
    """``sk_start_<first>_end_<last>``, as CANN names a fused scope's origin op."""
    return f"sk_start_{subs[0].label}_end_{subs[-1].label}" if subs else "sk_empty"


__all__ = ["SubKernel", "SuperKernel", "caller_loc", "default_name"]
