"""What a lowering rule may ask of the lowerer.

A rule (see :mod:`.registry`) receives the :class:`~npuemu.frontend.lower.Lowerer`
lowering the kernel, typed as :class:`LoweringContext`: the members listed
here are the whole interface between rules and the lowerer.  They report
errors at the call's source line, turn argument values into expressions,
emit generated code and record what the kernel needs at launch.  Everything
else of the lowerer (scopes, storage, the emitter) is its own business.
"""
from __future__ import annotations

import ast
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from .facts import LoweringFacts
from .types import Value

if TYPE_CHECKING:
    from ..errors import KernelCompileError
    from ..options import Options
    from ..platform import Platform


class LoweringContext(Protocol):
    """The members of the lowerer that rules use."""

    platform: Platform
    """The SoC profile the kernel is built for (memory sizes, buffer limits, DCache geometry)."""

    options: Options
    """The build's options (kernel type, check level, tiling key, ...)."""

    facts: LoweringFacts
    """What the rules learn about the kernel: launch-relevant facts and lowering state shared by rules."""

    @property
    def declares_access(self) -> bool:
        """Whether rules must declare their accesses (``access.py``): guard the work of building them with it."""

    @property
    def full_check(self) -> bool:
        """Whether the binary is built for check level ``full`` (race, initialisation and DCache checks)."""

    @property
    def profile(self) -> bool:
        """Whether the binary charges the cost model (``profile=True``, docs/cost-model.md)."""

    # ------------------------------------------------------------------ errors

    def fail(self, message: str, node: ast.AST | None, cls: type[KernelCompileError] = ...) -> NoReturn:
        """Raise a compile error (``cls``, default ``KernelCompileError``) pointing at ``node``."""

    def type_error(self, message: str, node: ast.AST | None) -> NoReturn:
        """Raise a ``KernelTypeError`` pointing at ``node``."""

    def describe(self, v: Value) -> str:
        """``v`` as error messages name it (``constant 3``, ``LocalTensor[float32, VECIN]``)."""

    # ------------------------------------------------------------------ values

    def const_value(self, v: Value, node: ast.AST | None, what: str = "value") -> Any:
        """The compile-time constant ``v`` holds; a type error naming ``what`` if it is a runtime value."""

    def int_expr(self, v: Value, node: ast.AST | None, what: str = "value") -> str:
        """An integer value as an expression; a type error naming ``what`` for anything else."""

    def u64_expr(self, v: Value, node: ast.AST | None, what: str = "value") -> str:
        """An integer as a signed 64-bit expression (constants >= 2**63 wrap to their uint64 bits)."""

    def materialize(self, v: Value, node: ast.AST | None, kind: str | None = None) -> str:
        """A number as an expression, converted to float32 when ``kind`` is ``"float"``."""

    def truth(self, v: Value, node: ast.AST) -> str:
        """A runtime number or bool as a condition expression."""

    def fresh_value(self, value: Value, hint: str = "t") -> Value:
        """``value`` with its runtime parts evaluated once, into new variables (constants stay)."""

    def new_var(self, hint: str, kind: str = "int") -> str:
        """A new runtime variable of kind ``int``, ``float`` or ``bool``, declared at the top of the kernel."""

    def declare_runtime(self, name: str, init: str) -> str:
        """Declare variable ``name`` set to the expression ``init`` at the top of the kernel (first one wins)."""

    def update_variable(self, name: str, new: Value) -> bool:
        """Give variable ``name`` the value ``new`` in place; False if it is no runtime variable of the scope."""

    def count(self, key: str) -> int:
        """How many times ``count(key)`` was called before (queue and buffer ids)."""

    # ------------------------------------------------------------------ code

    def emit(self, line: str) -> None:
        """Append a line of generated code at the current indentation."""

    sync_plan: Any
    """The kernel's accesses and control flow, for automatic synchronisation (``frontend/autosync.py``)."""

    def emit_if(self, condition: str) -> AbstractContextManager[None]:
        """A context manager: what is emitted inside it runs only when the expression ``condition`` holds."""

    def emit_block(self, header: str) -> AbstractContextManager[None]:
        """A context manager: what is emitted inside it is the body of the compound statement ``header``
        (``for i in range(n):``)."""

    def isa(self, module: str, fn: str) -> str:
        """The name under which generated code calls the instruction ``npuemu.isa.<module>.<fn>``."""

    def loc_id(self, node: ast.AST | None) -> int:
        """The id of ``node``'s source location, as instructions receive it."""

    def call_isa(self, module: str, fn: str, args: list[str], node: ast.AST | None) -> str:
        """An expression calling an instruction with ``args`` and the location id of ``node``."""

    def emit_isa(self, module: str, fn: str, args: list[str], node: ast.AST | None) -> None:
        """Emit a call of an instruction with ``args`` and the location id of ``node``."""

    def local_access(self, pipe: int, addr: str, nbytes: str, write: bool, node: ast.AST | None,
                     where: tuple[str, tuple[int, int] | None] = ..., dtype: Any = None) -> None:
        """Declare to the race and initialisation checks that ``pipe`` touches local memory (``full`` only);
        ``where``: the memory and compile-time byte range, for automatic synchronisation; ``dtype``: the
        operand's element type, for the cost model."""

    def cost_access(self, pipe: int, memory: str, nbytes: str, write: bool, gm: bool, node: ast.AST | None,
                    dtype: Any = None) -> None:
        """Declare an access to the cost model only (rules that declare strided accesses themselves)."""

    def cube_steps(self, expr: str) -> None:
        """The cube steps (16 x 16 x k0 each, an expression) of the ``mmad`` being lowered, for the cost model."""

    def cost_isa(self, fn: str, args: list[str], node: ast.AST | None) -> None:
        """In a profiled binary, emit ``isa.cost.<fn>(_st, *args, issue cycles, loc)``: a sync's timing."""

    def sync_access(self, pipe: int, memory: str, region: tuple[int, int] | None, write: bool,
                    node: ast.AST | None) -> None:
        """Record an access for automatic synchronisation (``full`` only; rules that declare accesses
        themselves instead of through ``local_access``/``gm_access`` call it)."""

    def sync_barrier(self, node: ast.AST | None) -> None:
        """Record a full barrier (``pipe_barrier(PIPE_ALL)``, ``data_sync_barrier``) for sync insertion/verification."""

    def sync_wait(self, src: int, dst: int, node: ast.AST | None) -> None:
        """Record an explicit ``wait_flag`` ordering ``isa.hb`` pipe ``src`` before ``dst`` (sync verification)."""

    def gm_access(self, pipe: int, rid: str, off: str, nbytes: str, write: bool, node: ast.AST | None,
                  origin: int | None = None) -> None:
        """Declare to the race checks that ``pipe`` touches GM region ``rid`` (``full`` only); ``origin``:
        the region id when known at compile time."""

    def wait_until(self, ready: str, node: ast.AST | None) -> None:
        """Emit a cross-core wait: the core yields to the scheduler until the expression ``ready`` holds."""

    def inline_values(self, jitfn: Any, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> Value:
        """Inline the ``@asc.jit`` helper (a ``KernelFunction``) ``jitfn`` as if called at ``node`` with these
        argument values: library code written in the kernel language (the high-level Matmul API)."""

    def at_kernel_end(self, line: str) -> None:
        """Emit ``line`` once, after the kernel body."""


__all__ = ["LoweringContext"]
