"""Lowering: a kernel's Python AST becomes the body of a generated generator function.

One :class:`Lowerer` compiles one specialisation of one kernel.  It walks the
kernel's statements, inlines ``@asc.jit`` helpers, folds compile-time
constants, and emits plain Python that manipulates integers and calls the
compiled instructions in :mod:`npuemu.isa`.  Calls to the kernel language are
delegated to the rules in :mod:`npuemu.frontend.rules` (see ``registry``).
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import re
from typing import Any, Iterator, NoReturn

from .. import errors
from ..errors import KernelCompileError, KernelTypeError, SourceLoc, UnsupportedSyntaxError
from ..codegen.emitter import Emitter
from .autosync import LOCAL, SyncPlan, gm_memory
from .costs import CostPlan
from .expressions import ExpressionLowering
from .facts import LoweringFacts
from .scope import Scope
from .statements import StatementLowering
from .source import ParsedFunction
from .types import (GlobalTensorT, KType, LocalTensorT, RecordT, ScalarT, TupleT, Value, is_number, scalar)

class Lowerer(StatementLowering, ExpressionLowering):
    """Lowers one kernel specialisation to generated Python source."""

    def __init__(self, kernel_name: str, platform: Any, options: Any):
        self.kernel_name = kernel_name
        self.platform = platform
        self.options = options
        self.em = Emitter()
        self.scopes: list[Scope] = []
        self.runtime_vars: dict[str, str] = {}   # storage name -> initial value expression
        self.counters: dict[str, int] = {}
        self.facts = LoweringFacts(kernel_type=options.resolved_kernel_type)   # what rules learn (see facts.py)
        self._inline_count = 0
        self.epilogue: list[str] = []            # statements run when a core reaches the kernel's end
        # every access and the control flow around it, for automatic synchronisation (autosync.py)
        self.sync_plan = SyncPlan(options.resolved_kernel_type)
        # each instruction's duration, in a binary built with profile=True (costs.py)
        self.costs = CostPlan(platform, bool(getattr(options, "profile", False)))

    def at_kernel_end(self, line: str) -> None:
        """Emit ``line`` once, after the kernel body (e.g. a check that no event flag is left set)."""
        if line not in self.epilogue:
            self.epilogue.append(line)

    # ------------------------------------------------------------------ errors and locations

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def loc(self, node: ast.AST | None) -> SourceLoc:
        sc = self.scope
        p = sc.parsed
        lineno = getattr(node, "lineno", p.tree.lineno) if node is not None else p.tree.lineno
        col = (getattr(node, "col_offset", 0) if node is not None else 0) + p.indent
        return SourceLoc(p.filename, p.first_line + lineno - 1, col, p.name, p.line_text(lineno), sc.call_site)

    def loc_id(self, node: ast.AST | None) -> int:
        return self.em.loc_id(self.loc(node))

    def fail(self, message: str, node: ast.AST | None, cls: type[KernelCompileError] = KernelCompileError
             ) -> NoReturn:
        # ``from None``: a rule may fail while handling a Python exception; that is not the user's business
        raise cls(f"in kernel '{self.kernel_name}': {message}", self.loc(node)) from None

    def type_error(self, message: str, node: ast.AST | None) -> NoReturn:
        self.fail(message, node, KernelTypeError)

    # ------------------------------------------------------------------ emitting

    def emit(self, line: str) -> None:
        self.em.emit(line)

    def isa(self, module: str, fn: str) -> str:
        """Name under which generated code calls instruction ``npuemu.isa.<module>.<fn>``."""
        return self.em.import_fn(f"npuemu.isa.{module}", fn)

    def call_isa(self, module: str, fn: str, args: list[str], node: ast.AST | None) -> str:
        """Expression calling an instruction; the call site's location id is appended.

        Literal arguments are passed as ``np.int64``/``np.bool_`` values: Numba
        compiles a callee once per distinct *literal* argument, so a bare ``3``
        would give every call site its own copy of the instruction.
        """
        if self.costs.pending and module not in _BOOKKEEPING:
            for line in self.costs.flush(fn, self.call_isa):
                self.emit(line)
        args = [*args, str(self.loc_id(node))]
        return f"{self.isa(module, fn)}({', '.join(_unliteral(a) for a in args)})"

    def emit_isa(self, module: str, fn: str, args: list[str], node: ast.AST | None) -> None:
        self.emit(self.call_isa(module, fn, args, node))

    @contextlib.contextmanager
    def emit_block(self, header: str) -> Iterator[None]:
        """A context manager: what is emitted inside it is the body of the statement ``header``."""
        with self.em.block(header), self.sync_region("loop" if header.startswith(("for", "while")) else "if"):
            yield

    @contextlib.contextmanager
    def emit_if(self, condition: str) -> Iterator[None]:
        """A context manager: what is emitted inside it runs only when the expression ``condition`` holds."""
        with self.em.block(f"if {condition}:"), self.sync_region("if"):
            yield

    @contextlib.contextmanager
    def sync_region(self, kind: str) -> Iterator[None]:
        """Record a runtime ``if`` branch or loop body around what is lowered inside (see autosync.py)."""
        self.sync_plan.enter(kind)
        try:
            yield
        finally:
            self.sync_plan.leave()

    def declare_runtime(self, name: str, init: str) -> str:
        """Declare variable ``name``, set to the expression ``init`` once at the top of the kernel.

        Declaring a name again keeps its first initialiser (rules declare what they use as they go).
        """
        self.runtime_vars.setdefault(name, init)
        return name

    def update_variable(self, name: str, new: Value) -> bool:
        """Give variable ``name`` of the current scope the value ``new`` (a mutating method's receiver).

        Runtime storage is updated in place, so every name sharing it (a helper's parameter and its
        caller's variable) sees the change.  False if ``name`` is no runtime variable of the scope.
        """
        cur = self.scope.bindings.get(name)
        if cur is None or cur.is_const:
            return False
        new = _without_region(new, gm=False)       # set_global_buffer checks the region itself
        if cur.code and all(c in self.runtime_vars for c in cur.code):
            self.emit(f"{', '.join(cur.code)} = {', '.join(new.code)}")
            self.rebind_type(name, Value(new.type, code=cur.code))
        else:
            self.rebind_type(name, self.fresh_value(new, name))
        return True

    def new_var(self, hint: str, kind: str = "int") -> str:
        """A fresh runtime variable, declared (initialised) at the top of the kernel."""
        name = self.em.tmp(hint)
        self.declare(name, kind)
        return name

    def declare(self, name: str, kind: str) -> None:
        # typed initial values: a variable only ever assigned constants must not stay a Numba literal
        self.runtime_vars.setdefault(name, {"int": "np.int64(0)", "float": "_f32(0.0)",
                                            "bool": "np.bool_(False)"}[kind])

    def fresh_value(self, value: Value, hint: str = "t") -> Value:
        """Evaluate ``value``'s runtime parts once into new variables (constants stay)."""
        return self._store(self._template(value, self.em.tmp(hint) + "_", keep_consts=True), value, None)

    @property
    def declares_access(self) -> bool:
        """Whether rules declare their accesses: always (the sync analysis reads them at every level;
        only a ``full`` binary gets the race and initialisation check calls)."""
        return True

    @property
    def profile(self) -> bool:
        """Whether this binary charges the cost model (``profile=True``, docs/cost-model.md)."""
        return self.costs.enabled

    def cost_isa(self, fn: str, args: list[str], node: ast.AST | None) -> None:
        """In a profiled binary, emit ``isa.cost.<fn>(_st, *args, issue cycles, loc)`` (a sync's timing)."""
        if self.costs.enabled:
            self.emit_isa("cost", fn, ["_st", *args, repr(self.costs.issue)], node)

    def cube_steps(self, expr: str) -> None:
        """The cube steps (16 x 16 x k0 each) of the ``mmad`` being lowered, for the cost model."""
        self.costs.cube_steps(expr)

    def cost_access(self, pipe: int, memory: str, nbytes: str, write: bool, gm: bool, node: ast.AST | None,
                    dtype: Any = None) -> None:
        """Declare an access to the cost model (only a profiled binary collects them; see costs.py)."""
        self.costs.access(pipe, memory, nbytes, write, gm, dtype, node)

    @property
    def full_check(self) -> bool:
        """Whether this binary is built for check level ``full`` (race, initialisation and DCache checks)."""
        return getattr(self.options, "check", "default") == "full"

    def local_access(self, pipe: int, addr: str, nbytes: str, write: bool, node: ast.AST | None,
                     where: tuple[str, tuple[int, int] | None] = (LOCAL, None), dtype: Any = None) -> None:
        """Declare that pipe ``pipe`` (an ``isa.hb`` pipe) reads/writes ``nbytes`` of local memory at ``addr``.

        Only a ``full`` binary gets the check call; rules declare every operand of
        every instruction (at every level, see ``declares_access``) so the race and
        initialisation checks and the sync analysis see all accesses.
        ``where``: the memory (``UB``, ``L1``, ...; ``local``: unknown) and the byte offsets in it the
        access stays within when known at compile time (``rules.access.where``), for auto sync.
        """
        self.sync_access(pipe, where[0], where[1], int(write) == 1, node)   # kind 2 (READ_SPAN) reads
        self.cost_access(pipe, where[0], nbytes, int(write) == 1, False, node, dtype)
        if self.full_check:
            self.emit_isa("checks", "local_access", ["_st", "_sh", str(pipe), addr, nbytes, str(write)], node)

    def gm_access(self, pipe: int, rid: str, off: str, nbytes: str, write: bool, node: ast.AST | None,
                  origin: int | None = None) -> None:
        """Declare a DMA access of ``nbytes`` at byte ``off`` of GM region ``rid`` (see ``local_access``);
        ``origin``: the region id when known at compile time."""
        self.sync_access(pipe, gm_memory(origin), None, bool(write), node)
        self.cost_access(pipe, gm_memory(origin), nbytes, bool(write), True, node)
        if self.full_check:
            self.emit_isa("checks", "gm_access", ["_st", "_sh", "_gsh", "_dc", str(pipe), rid, off, nbytes,
                                                  str(write)], node)

    def finish_sync(self) -> None:
        """Once the kernel is lowered: turn the sync placeholders into syncs (auto sync) or drop them."""
        enabled = bool(getattr(self.options, "auto_sync", False) or self.facts.auto_ub)
        cost = self.costs.issue if self.costs.enabled else None
        if self.sync_plan.finish(self.em.lines, enabled, self.isa, self.full_check, cost):
            self.at_kernel_end(f"{self.isa('sync', 'check_flags_clear')}(_st)")
        if getattr(self.options, "verify_sync", False):
            self.facts.redundant_syncs = self.sync_plan.redundant_reports(self.em.locs, self.kernel_name)

    def sync_barrier(self, node: ast.AST | None) -> None:
        """Record a full barrier for automatic synchronisation and sync verification."""
        self.sync_plan.barrier(self.loc_id(node))

    def sync_wait(self, src: int, dst: int, node: ast.AST | None) -> None:
        """Record an explicit ``wait_flag`` ordering ``isa.hb`` pipe ``src`` before ``dst``."""
        self.sync_plan.wait(src, dst, self.loc_id(node))

    def sync_access(self, pipe: int, memory: str, region: tuple[int, int] | None, write: bool,
                    node: ast.AST | None) -> None:
        """Record an access for automatic synchronisation; the syncs it needs go just here (autosync.py)."""
        self.emit(self.sync_plan.access(pipe, memory, region, write, self.loc_id(node)))

    def wait_until(self, ready: str, node: ast.AST | None) -> None:
        """Emit a cross-core wait: the core yields to the scheduler until the expression ``ready`` holds.

        ``ready`` is re-evaluated every time the core is resumed; the yielded
        value (the wait's source-location id + 1) tells the scheduler where the
        core waits.  Any kernel containing a wait compiles as a generator.
        """
        self.facts.blocking = True
        with self.em.block(f"while not ({ready}):"):
            self.emit(f"yield np.int64({self.loc_id(node) + 1})")

    def u64_expr(self, v: Value, node: ast.AST | None, what: str = "value") -> str:
        """An integer as a signed 64-bit expression (constants >= 2**63 wrap, as the uint64 bits)."""
        if v.is_const and isinstance(v.const, int) and not isinstance(v.const, bool):
            c = int(v.const)
            if not -(1 << 63) <= c < (1 << 64):
                self.type_error(f"{what} {c} does not fit in 64 bits", node)
            return repr(c - (1 << 64) if c >= (1 << 63) else c)
        return self.int_expr(v, node, what)

    def count(self, key: str) -> int:
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n

    # ------------------------------------------------------------------ values

    def materialize(self, v: Value, node: ast.AST | None, kind: str | None = None) -> str:
        """Python expression of a scalar value (constants are rendered as literals)."""
        if isinstance(v.type, ScalarT):
            if kind == "float" and v.type.kind != "float":
                return f"_f32({v.code[0]})"
            return v.code[0]
        if v.is_const and is_number(v):
            c = v.const
            if isinstance(c, bool):
                return "True" if c else "False"
            if isinstance(c, int) and not isinstance(c, bool):
                return f"_f32({float(c)!r})" if kind == "float" else repr(int(c))
            if isinstance(c, float):
                return f"_f32({c!r})"
        if v.is_const and hasattr(v.const, "__index__"):
            return repr(int(v.const))
        self.type_error(f"expected a number, got {self.describe(v)}", node)

    def int_expr(self, v: Value, node: ast.AST | None, what: str = "value") -> str:
        if isinstance(v.type, ScalarT) and v.type.kind in ("int", "bool"):
            return v.code[0]
        if v.is_const and isinstance(v.const, int):
            return repr(int(v.const))
        if v.is_const and hasattr(v.const, "__index__") and not isinstance(v.const, float):
            return repr(int(v.const))
        self.type_error(f"{what} must be an integer, got {self.describe(v)}", node)

    def const_value(self, v: Value, node: ast.AST | None, what: str = "value") -> Any:
        if not v.is_const:
            self.type_error(f"{what} must be a compile-time constant, got a runtime {self.describe(v)}", node)
        return v.const

    @staticmethod
    def describe(v: Value) -> str:
        if v.is_const:
            c = v.const
            return f"constant {c!r}" if isinstance(c, (int, float, str, bool)) else f"{type(c).__name__} {c!r}"
        return v.type.describe()

    # ------------------------------------------------------------------ storage

    def _template(self, v: Value, prefix: str, keep_consts: bool = False) -> Value:
        """Storage for ``v``: one runtime variable per runtime component.

        Constant numbers get storage too (a variable holding one may be reassigned) unless
        ``keep_consts``; other constants (dtypes, enums, ...) are kept as they are.
        """
        if v.is_const:
            if is_number(v) and not keep_consts:
                kind = "bool" if isinstance(v.const, bool) else "float" if isinstance(v.const, float) else "int"
                name = prefix + "v" if prefix.endswith("_") else prefix
                self.declare(name, kind)
                return scalar(kind, name)
            return v
        if isinstance(v.type, (RecordT, TupleT)):
            names = v.type.names if isinstance(v.type, RecordT) else [str(i) for i in range(v.type.n)]
            items = tuple(self._template(it, f"{prefix}{n}_", keep_consts) for it, n in zip(v.items, names))
            return Value(v.type, items=items)
        code = []
        for f in v.type.fields:
            name = f"{prefix}{f}"
            kind = v.type.kind if isinstance(v.type, ScalarT) else "int"
            self.declare(name, kind)
            code.append(name)
        return Value(v.type, code=tuple(code))

    def _store(self, tmpl: Value, v: Value, node: ast.AST | None, name: str = "") -> Value:
        """Emit assignments of ``v`` into storage ``tmpl``; returns the storage value."""
        if tmpl.is_const:
            if not (v.is_const and _same_const(tmpl.const, v.const)):
                self.type_error(f"variable '{name}' is a compile-time constant ({tmpl.const!r}) and cannot be "
                                f"reassigned to {self.describe(v)}", node)
            return tmpl
        if isinstance(tmpl.type, ScalarT):
            if not is_number(v):
                self.type_error(f"variable '{name}' holds a {tmpl.type.describe()}; cannot assign "
                                f"{self.describe(v)}", node)
            vk = v.type.kind if isinstance(v.type, ScalarT) else (
                "float" if isinstance(v.const, float) else "int")
            if tmpl.type.kind in ("int", "bool") and vk == "float":
                self.type_error(f"variable '{name}' was first assigned an integer and now a float; "
                                f"initialise it with a float (e.g. 0.0)", node)
            self.emit(f"{tmpl.code[0]} = {self.materialize(v, node, tmpl.type.kind)}")
            return tmpl
        if isinstance(tmpl.type, (RecordT, TupleT)):
            if type(v.type) is not type(tmpl.type) or v.type != tmpl.type:
                self.type_error(f"variable '{name}' holds a {tmpl.type.describe()}; cannot assign "
                                f"{self.describe(v)}", node)
            for t_item, v_item in zip(tmpl.items, v.items):
                self._store(t_item, v_item, node, name)
            return tmpl
        if not _compatible(tmpl.type, v.type):
            self.type_error(f"variable '{name}' holds a {tmpl.type.describe()}; cannot assign "
                            f"{self.describe(v)}", node)
        if tmpl.code != v.code:
            self.emit(f"{', '.join(tmpl.code)} = {', '.join(v.code)}" if len(tmpl.code) > 1
                      else f"{tmpl.code[0]} = {v.code[0]}")
        return Value(v.type, code=tmpl.code)

    def bind(self, name: str, v: Value, node: ast.AST | None) -> None:
        """Python ``name = v`` in the current scope."""
        sc = self.scope
        existing = sc.bindings.get(name)
        if existing is not None and existing.is_const and is_number(existing):
            existing = None     # the value a compile-time unrolled loop left in its variable
        if sc.parsed.assigned_names.get(name, 0) + (name in sc.parsed.param_names) <= 1:
            # bound by one statement: a constant stays a constant.  Lowered again (the body
            # of a compile-time unrolled loop), the statement defines the name afresh.
            if v.is_const:
                sc.bindings[name] = v
                return
            if existing is not None and (existing.is_const or existing.type != v.type):
                existing = self._template(v, self.em.tmp(name) + "_")
        else:
            v = _without_region(v)      # a name assigned again may hold either tensor where it is used
        if existing is None:
            existing = self._template(v, f"{sc.prefix}{name}_")
        sc.bindings[name] = self._store(existing, v, node, name)

    def bind_params(self, params: dict[str, Value], node: ast.AST | None) -> None:
        """Bind a function's parameters on entry.

        A parameter the body reassigns gets storage of its own, initialised here, so the body
        works on a copy (the caller's variable is unaffected) and reassignments inside loops
        see the value of the previous iteration.  Other parameters share the caller's value,
        so mutating methods (``set_global_buffer``) act on the caller's object.
        """
        sc = self.scope
        for name, v in params.items():
            if sc.parsed.assigned_names.get(name, 0):
                v = _without_region(v)
                sc.bindings[name] = self._store(self._template(v, f"{sc.prefix}{name}_"), v, node, name)
            else:
                sc.bindings[name] = v

    def rebind_type(self, name: str, v: Value) -> None:
        """Change the static type of variable ``name`` (e.g. a GlobalTensor once bound).

        A helper's parameter shares its storage with the caller's variable; every binding of
        that storage, in every active scope, takes the new type.
        """
        old = self.scope.bindings.get(name)
        self.scope.bindings[name] = v
        if old is None or not old.code or old.code != v.code:
            return
        for sc in self.scopes[:-1]:
            for n, b in sc.bindings.items():
                if b.code == old.code and type(b.type) is type(v.type):
                    sc.bindings[n] = v

    # ------------------------------------------------------------------ entry points

    def lower_kernel(self, parsed: ParsedFunction, params: dict[str, Value]) -> None:
        self.scopes.append(Scope(parsed, "v_", None))
        self.bind_params(params, None)
        self.block(parsed.tree.body, top_level=True)
        self.scopes.pop()

    def block(self, stmts: list[ast.stmt], top_level: bool = False) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Return):
                last = top_level and i == len(stmts) - 1
                self.stmt_return(s, last)
                continue
            self.stmt(s)

    def stmt(self, node: ast.stmt) -> None:
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"'{type(node).__name__}' statements are not supported in kernels",
                      node, UnsupportedSyntaxError)
        outer, self.em.statement = self.em.statement, self.loc_id(node)
        try:
            handler(node)
            if self.costs.pending:      # accesses of code that calls no instruction (scalar get_value)
                for line in self.costs.flush(None, self.call_isa):
                    self.emit(line)
        except errors.NpuemuError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in npuemu: still point at the kernel line
            err = KernelCompileError(
                f"in kernel '{self.kernel_name}': internal error while compiling this statement "
                f"({type(exc).__name__}: {exc}); please report it with the kernel", self.loc(node))
            raise err from None
        finally:
            self.em.statement = outer



_INT_LITERAL = re.compile(r"-?\d+")
# isa modules whose calls are no instruction of their own: the checks, the race clocks, the cost model
_BOOKKEEPING = frozenset({"checks", "hb", "cost"})


def _unliteral(arg: str) -> str:
    if _INT_LITERAL.fullmatch(arg):
        return f"np.int64({arg})"
    if arg in ("True", "False"):
        return f"np.bool_({arg})"
    return arg


def _without_region(v: Value, gm: bool = True) -> Value:
    """``v`` with the compile-time UB range of a LocalTensor (and with ``gm`` the GM region of a
    GlobalTensor) forgotten: autosync.py then assumes any."""
    if isinstance(v.type, LocalTensorT) and v.type.region is not None:
        return Value(dataclasses.replace(v.type, region=None), const=v.const, code=v.code, items=v.items)
    if gm and isinstance(v.type, GlobalTensorT) and v.type.origin is not None:
        return Value(dataclasses.replace(v.type, origin=None), const=v.const, code=v.code, items=v.items)
    return v


def _same_const(a: Any, b: Any) -> bool:
    try:
        return a is b or (type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001
        return False


def _compatible(held: KType, new: KType) -> bool:
    if held == new:
        return True
    # an unbound GlobalTensor takes the dtype of the first buffer bound to it
    return isinstance(held, GlobalTensorT) and isinstance(new, GlobalTensorT) and held.dtype is None


__all__ = ["Lowerer", "Scope"]
