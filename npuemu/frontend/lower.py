"""Lowering: a kernel's Python AST becomes the body of a generated generator function.

One :class:`Lowerer` compiles one specialisation of one kernel.  It walks the
kernel's statements, inlines ``@asc.jit`` helpers, folds compile-time
constants, and emits plain Python that manipulates integers and calls the
compiled instructions in :mod:`npuemu.isa`.  Calls to the kernel language are
delegated to the rules in :mod:`npuemu.frontend.rules` (see ``registry``).
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from .. import errors
from ..errors import KernelCompileError, KernelTypeError, SourceLoc, UnknownAPIError, UnsupportedSyntaxError
from ..language.builtin import builtin_name
from . import registry
from ..codegen.emitter import Emitter
from .kernel import KernelFunction, is_constexpr
from .source import ParsedFunction, parse_function
from .types import (BOOL, FLOAT, INT, GlobalTensorT, KType, RecordT, ScalarT, TupleT, Value, const,
                    is_number, scalar)

_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod), ast.Div: ("/", operator.truediv),
    ast.Pow: ("**", operator.pow), ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift),
    ast.BitAnd: ("&", operator.and_), ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor),
}
_CMPOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge), ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
    ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b),
}
_CONST_ONLY_CMP = {"is", "is not", "in", "not in"}
_INT_ONLY = {"<<", ">>", "&", "|", "^"}
# operators that fault on a zero divisor: (int instruction, float instruction) in npuemu.isa.arith
_DIVISIONS = {"/": ("div_f32", "div_f32"), "//": ("floordiv_int", "floordiv_f32"), "%": ("mod_int", "mod_f32")}
MAX_INLINE_DEPTH = 64


@dataclass
class Scope:
    """Variables of one function body: the kernel, or one inlined helper call."""

    parsed: ParsedFunction
    prefix: str
    call_site: SourceLoc | None
    bindings: dict[str, Value] = field(default_factory=dict)
    returned: Value | None = None

    @functools.cached_property
    def namespace(self) -> dict[str, Any]:
        fn = self.parsed.fn
        ns = dict(fn.__globals__)
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    ns[name] = cell.cell_contents
                except ValueError:
                    pass
        return ns


class Lowerer:
    """Lowers one kernel specialisation to generated Python source."""

    def __init__(self, kernel_name: str, platform: Any, options: Any):
        self.kernel_name = kernel_name
        self.platform = platform
        self.options = options
        self.em = Emitter()
        self.scopes: list[Scope] = []
        self.runtime_vars: dict[str, str] = {}   # storage name -> initial value expression
        self.counters: dict[str, int] = {}
        from .facts import FlagsView, LoweringFacts
        self.facts = LoweringFacts(kernel_type=options.resolved_kernel_type)   # what rules learn (see facts.py)
        self.flags = FlagsView(self.facts)       # the facts under the keys of the former flags dict
        self._inline_count = 0
        self.epilogue: list[str] = []            # statements run when a core reaches the kernel's end

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
        args = [*args, str(self.loc_id(node))]
        return f"{self.isa(module, fn)}({', '.join(_unliteral(a) for a in args)})"

    def emit_isa(self, module: str, fn: str, args: list[str], node: ast.AST | None) -> None:
        self.emit(self.call_isa(module, fn, args, node))

    def emit_if(self, condition: str) -> Any:
        """A context manager: what is emitted inside it runs only when the expression ``condition`` holds."""
        return self.em.block(f"if {condition}:")

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
    def full_check(self) -> bool:
        """Whether this binary is built for check level ``full`` (race, initialisation and DCache checks)."""
        return getattr(self.options, "check", "default") == "full"

    def local_access(self, pipe: int, addr: str, nbytes: str, write: bool, node: ast.AST | None) -> None:
        """Declare that pipe ``pipe`` (an ``isa.hb`` pipe) reads/writes ``nbytes`` of local memory at ``addr``.

        Only a ``full`` binary gets the check call; rules declare every operand of
        every instruction so the race and initialisation checks see all accesses.
        """
        if self.full_check:
            self.emit_isa("checks", "local_access", ["_st", "_sh", str(pipe), addr, nbytes, str(write)], node)

    def gm_access(self, pipe: int, rid: str, off: str, nbytes: str, write: bool, node: ast.AST | None) -> None:
        """Declare a DMA access of ``nbytes`` at byte ``off`` of GM region ``rid`` (see ``local_access``)."""
        if self.full_check:
            self.emit_isa("checks", "gm_access", ["_st", "_sh", "_gsh", "_dc", str(pipe), rid, off, nbytes,
                                                  str(write)], node)

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
        try:
            handler(node)
        except errors.NpuemuError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in npuemu: still point at the kernel line
            err = KernelCompileError(
                f"in kernel '{self.kernel_name}': internal error while compiling this statement "
                f"({type(exc).__name__}: {exc}); please report it with the kernel", self.loc(node))
            raise err from None

    # ------------------------------------------------------------------ statements

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or comment string
        self.expr(node.value)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Assign(self, node: ast.Assign) -> None:
        v = self.expr(node.value)
        for target in node.targets:
            self.assign(target, v, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        v = self.expr(node.value)
        # annotations are not evaluated (as in Python), but ``: float`` makes the variable a float
        is_float = isinstance(node.annotation, ast.Name) and node.annotation.id == "float"
        if is_float and is_number(v) and _num_kind(v) == "int":
            # ``total: float = n`` declares a float variable (later ``total /= 2`` stays a float)
            v = const(float(v.const)) if v.is_const else scalar("float", self.materialize(v, node, "float"))
        self.assign(node.target, v, node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            self.fail("augmented assignment is only supported to a variable", node, UnsupportedSyntaxError)
        cur = self.expr(ast.Name(node.target.id, ast.Load(), lineno=node.lineno, col_offset=node.col_offset))
        rhs = self.expr(node.value)
        self.bind(node.target.id, self.binop(node.op, cur, rhs, node), node)

    def assign(self, target: ast.expr, v: Value, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, v, node)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(v, len(target.elts), node)
            if len(items) > 1:
                # evaluate every item before assigning any target (``a, b = b, a``)
                items = tuple(it if it.is_const else self.fresh_value(it, "u") for it in items)
            for t, it in zip(target.elts, items):
                self.assign(t, it, node)
            return
        if isinstance(target, ast.Attribute):
            self.assign_attribute(target, v, node)
            return
        self.fail(f"cannot assign to {ast.unparse(target)} in a kernel", node, UnsupportedSyntaxError)

    def assign_attribute(self, target: ast.Attribute, v: Value, node: ast.AST) -> None:
        if not isinstance(target.value, ast.Name):
            self.fail("only fields of a variable can be assigned", node, UnsupportedSyntaxError)
        obj = self.lookup(target.value.id, target.value)
        if not isinstance(obj.type, RecordT) or target.attr not in obj.type.names:
            self.fail(f"cannot assign attribute '{target.attr}' of {self.describe(obj)}", node,
                      UnsupportedSyntaxError)
        idx = obj.type.names.index(target.attr)
        old = obj.items[idx]
        if old.is_const:  # a constant field: give the whole record storage first
            obj = self._store(self._template(obj, f"{self.scope.prefix}{target.value.id}_"), obj, node)
            old = obj.items[idx]
        new_item = self._store(old, v, node, f"{target.value.id}.{target.attr}")
        items = list(obj.items)
        items[idx] = new_item
        self.scope.bindings[target.value.id] = Value(obj.type, items=tuple(items))

    def unpack(self, v: Value, n: int, node: ast.AST) -> tuple[Value, ...]:
        if isinstance(v.type, TupleT):
            items = v.items
        elif v.is_const and isinstance(v.const, (tuple, list)):
            items = tuple(const(x) for x in v.const)
        else:
            self.type_error(f"cannot unpack {self.describe(v)}", node)
        if len(items) != n:
            self.type_error(f"cannot unpack {len(items)} values into {n} names", node)
        return items

    def stmt_If(self, node: ast.If) -> None:
        test = self.expr(node.test)
        if test.is_const:
            self.block(node.body if test.const else node.orelse)
            return
        with self.em.block(f"if {self.truth(test, node.test)}:"):
            self.block(node.body)
        if node.orelse:
            with self.em.block("else:"):
                self.block(node.orelse)

    def truth(self, v: Value, node: ast.AST) -> str:
        if isinstance(v.type, ScalarT):
            return v.code[0]
        self.type_error(f"a condition must be a number or bool, got {self.describe(v)}", node)

    def stmt_While(self, node: ast.While) -> None:
        if node.orelse:
            self.fail("while/else is not supported in kernels", node, UnsupportedSyntaxError)
        mark = len(self.em.lines)
        test = self.expr(node.test)
        if test.is_const and not test.const:
            return
        if len(self.em.lines) == mark:
            header = "while True:" if test.is_const else f"while {self.truth(test, node.test)}:"
            with self.em.block(header):
                self.block(node.body)
            return
        # the condition needs statements: re-evaluate them at the top of every iteration
        del self.em.lines[mark:]
        with self.em.block("while True:"):
            test = self.expr(node.test)
            self.emit(f"if not ({self.truth(test, node.test)}):")
            self.emit("    break")
            self.block(node.body)

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            self.fail("for/else is not supported in kernels", node, UnsupportedSyntaxError)
        it = node.iter
        if isinstance(it, ast.Call):
            fn = self.expr(it.func)
            if fn.is_const and (fn.const is builtins.range or builtin_name(fn.const) == "range"):
                self.for_range(node, it)
                return
            if fn.is_const and builtin_name(fn.const) == "static_range":
                bounds = [self.const_value(self.expr(a), a, "static_range bound") for a in it.args]
                self.unrolled(node, list(builtins.range(*bounds)))
                return
        seq = self.expr(it)
        if seq.is_const and isinstance(seq.const, (tuple, list)):
            self.unrolled(node, list(seq.const))
            return
        if isinstance(seq.type, TupleT):
            self.unrolled(node, list(seq.items))
            return
        self.fail("a kernel loop must iterate over range(...), asc.range(...), asc.static_range(...) "
                  "or a constant tuple", node.iter, UnsupportedSyntaxError)

    def for_range(self, node: ast.For, call: ast.Call) -> None:
        if call.keywords or not 1 <= len(call.args) <= 3:
            self.fail("range() takes 1 to 3 positional arguments", call, UnsupportedSyntaxError)
        bounds = [self.expr(a) for a in call.args]
        args = [self.int_expr(b, a, "a range bound") for b, a in zip(bounds, call.args)]
        if len(bounds) == 3 and not (bounds[2].is_const and bounds[2].const != 0):
            args[2] = self.call_isa("arith", "range_step", [args[2]], call.args[2])
        if not isinstance(node.target, ast.Name):
            self.fail("the loop variable must be a single name", node.target, UnsupportedSyntaxError)
        var = self.target_storage(node.target.id)
        with self.em.block(f"for {var} in range({', '.join(args)}):"):
            self.block(node.body)

    def target_storage(self, name: str) -> str:
        sc = self.scope
        cur = sc.bindings.get(name)
        if cur is not None and isinstance(cur.type, ScalarT) and cur.type.kind == "int" and \
                cur.code[0].startswith(sc.prefix):
            return cur.code[0]
        storage = f"{sc.prefix}{name}_v"
        self.declare(storage, "int")
        sc.bindings[name] = scalar("int", storage)
        return storage

    def unrolled(self, node: ast.For, values: list[Any]) -> None:
        for n in _loop_exits(node.body):
            self.fail("break/continue inside a compile-time unrolled loop", n, UnsupportedSyntaxError)
        for val in values:
            v = val if isinstance(val, Value) else const(val)
            if isinstance(node.target, ast.Name):
                self.scope.bindings[node.target.id] = v if v.is_const else self.fresh_value(v)
            else:
                self.assign(node.target, v, node)
            self.block(node.body)

    def stmt_Break(self, node: ast.Break) -> None:
        self.emit("break")

    def stmt_Continue(self, node: ast.Continue) -> None:
        self.emit("continue")

    def stmt_Assert(self, node: ast.Assert) -> None:
        test = self.expr(node.test)
        if test.is_const:
            if not test.const:
                msg = self.assert_message(node.msg) if node.msg is not None else ""
                self.fail(f"assertion failed: {msg or ast.unparse(node.test)}", node)
            return
        self.fail("assert needs a compile-time condition in kernels (runtime asserts are not supported)",
                  node, UnsupportedSyntaxError)

    def assert_message(self, msg: ast.expr) -> str:
        """The text of a failed assert's message; an f-string shows its constant fields' values."""
        if not isinstance(msg, ast.JoinedStr):
            return str(self.const_value(self.expr(msg), msg, "assert message"))
        parts = []
        for part in msg.values:
            if isinstance(part, ast.FormattedValue):
                v = self.expr(part.value)
                convert = {ord("r"): repr, ord("a"): ascii}.get(part.conversion, str)
                parts.append(convert(v.const) if v.is_const else "{" + ast.unparse(part.value) + "}")
            else:
                parts.append(str(part.value))
        return "".join(parts)

    def stmt_return(self, node: ast.Return, last: bool) -> None:
        if len(self.scopes) == 1:
            if node.value is not None or not last:
                self.fail("a kernel cannot return (results are written to its output arguments)", node,
                          UnsupportedSyntaxError)
            return
        if not last:
            self.fail("'return' is only supported as the last statement of an @asc.jit helper", node,
                      UnsupportedSyntaxError)
        v = self.expr(node.value) if node.value is not None else const(None)
        self.scope.returned = v if v.is_const else self.fresh_value(v, "ret")

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> Value:
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"'{type(node).__name__}' expressions are not supported in kernels",
                      node, UnsupportedSyntaxError)
        return handler(node)

    def expr_Constant(self, node: ast.Constant) -> Value:
        return const(node.value)

    def lookup(self, name: str, node: ast.AST) -> Value:
        sc = self.scope
        if name in sc.bindings:
            return sc.bindings[name]
        ns = sc.namespace
        if name in ns:
            return const(ns[name])
        if hasattr(builtins, name):
            return const(getattr(builtins, name))
        self.fail(f"name '{name}' is not defined", node, UnknownAPIError)

    def expr_Name(self, node: ast.Name) -> Value:
        return self.lookup(node.id, node)

    def expr_Tuple(self, node: ast.Tuple | ast.List) -> Value:
        items = [self.expr(e) for e in node.elts]
        if all(i.is_const for i in items):
            vals = [i.const for i in items]
            return const(tuple(vals) if isinstance(node, ast.Tuple) else vals)
        return Value(TupleT(len(items)), items=tuple(items))

    expr_List = expr_Tuple

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        obj = self.expr(node.value)
        if obj.is_const:
            try:
                return const(getattr(obj.const, node.attr))
            except AttributeError:
                self.fail(f"{self.describe(obj)} has no attribute '{node.attr}'", node, UnknownAPIError)
        if isinstance(obj.type, RecordT) and node.attr in obj.type.names:
            return obj.item(node.attr)
        rule = registry.ATTR_RULES.get((type(obj.type), node.attr))
        if rule is None:
            self.fail(f"{obj.type.describe()} has no attribute '{node.attr}'", node, UnknownAPIError)
        return rule(self, obj, node)

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        obj = self.expr(node.value)
        if isinstance(node.slice, ast.Slice):
            s = node.slice
            if s.upper is not None or s.step is not None:
                self.fail("tensor slices take a start index only (t[i:])", node, UnsupportedSyntaxError)
            start = self.expr(s.lower) if s.lower is not None else const(0)
            return self.subscript(obj, start, node)
        index = self.expr(node.slice)
        if obj.is_const and index.is_const:
            try:
                return const(obj.const[index.const])
            except Exception as exc:  # noqa: BLE001 - report any failure as a compile error
                self.type_error(f"cannot index {self.describe(obj)}: {exc}", node)
        if isinstance(obj.type, TupleT):
            i = self.const_value(index, node.slice, "a tuple index")
            return obj.items[i]
        return self.subscript(obj, index, node)

    def subscript(self, obj: Value, start: Value, node: ast.AST) -> Value:
        rule = registry.METHOD_RULES.get((type(obj.type), "__getitem__"))
        if rule is None:
            self.fail(f"{self.describe(obj)} cannot be indexed", node, UnsupportedSyntaxError)
        return rule(self, registry.Call("__getitem__", node, [start], {}, recv=obj))  # type: ignore[arg-type]

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        v = self.expr(node.operand)
        if v.is_const:
            ops = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                   ast.Invert: operator.invert}
            try:
                return const(ops[type(node.op)](v.const))
            except Exception as exc:  # noqa: BLE001
                self.type_error(f"cannot evaluate {ast.unparse(node)}: {exc}", node)
        if not isinstance(v.type, ScalarT):
            self.type_error(f"unary operator on {self.describe(v)}", node)
        if isinstance(node.op, ast.Not):
            return scalar("bool", f"(not {v.code[0]})")
        if isinstance(node.op, ast.Invert):
            if v.type.kind == "float":
                self.type_error("~ needs an integer", node)
            return scalar("int", f"(~{v.code[0]})")
        sym = "-" if isinstance(node.op, ast.USub) else "+"
        kind = "int" if v.type.kind == "bool" else v.type.kind
        return scalar(kind, f"({sym}{v.code[0]})")

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
        sym, fn = _BINOPS[type(op)]
        if a.is_const and b.is_const:
            try:
                return const(fn(a.const, b.const))
            except Exception as exc:  # noqa: BLE001
                self.type_error(f"cannot evaluate {a.const!r} {sym} {b.const!r}: {exc}", node)
        rule = registry.METHOD_RULES.get((type(a.type), f"__{type(op).__name__.lower()}__"))
        if rule is not None:
            return rule(self, registry.Call(sym, node, [b], {}, recv=a))  # type: ignore[arg-type]
        rule = registry.METHOD_RULES.get((type(b.type), f"__r{type(op).__name__.lower()}__"))
        if rule is not None:
            return rule(self, registry.Call(sym, node, [a], {}, recv=b))  # type: ignore[arg-type]
        if not (is_number(a) and is_number(b)):
            self.type_error(f"unsupported operand types for {sym}: {self.describe(a)} and {self.describe(b)}",
                            node)
        ka, kb = _num_kind(a), _num_kind(b)
        kind = "float" if sym == "/" or "float" in (ka, kb) else "int"
        if kind == "float" and sym in _INT_ONLY:
            self.type_error(f"operator {sym} needs integers", node)
        x, y = self.materialize(a, node, kind), self.materialize(b, node, kind)
        if sym in _DIVISIONS and not (b.is_const and b.const != 0):
            fn = _DIVISIONS[sym][kind == "float"]
            call = self.call_isa("arith", fn, [x, y], node)   # faults on a zero divisor
            return scalar(kind, f"_f32({call})" if kind == "float" else call)
        return scalar(kind, f"_f32({x} {sym} {y})" if kind == "float" else f"({x} {sym} {y})")

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        is_and = isinstance(node.op, ast.And)
        vals = [self.expr(node.values[0])]
        mark = len(self.em.lines)
        vals.extend(self.expr(v) for v in node.values[1:])
        if len(self.em.lines) != mark:
            # a later operand runs statements (an API call): run them only when Python would,
            # so that ``i < n and t.get_value(i) > 0`` does not read t[n]
            del self.em.lines[mark:]
            result = self.new_var("bo", "bool")
            self.emit(f"{result} = {self._bool_code(vals[0], node)}")
            for sub in node.values[1:]:
                with self.em.block(f"if {result}:" if is_and else f"if not {result}:"):
                    self.emit(f"{result} = {self._bool_code(self.expr(sub), node)}")
            return scalar("bool", result)
        if all(v.is_const for v in vals):
            out = vals[0].const
            for v in vals[1:]:
                out = (out and v.const) if is_and else (out or v.const)
            return const(out)
        parts = [self._bool_code(v, node) for v in vals]
        return scalar("bool", "(" + (" and " if is_and else " or ").join(parts) + ")")

    def _bool_code(self, v: Value, node: ast.AST) -> str:
        return repr(bool(v.const)) if v.is_const else f"bool({self.truth(v, node)})"

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.expr(node.left)
        terms: list[str] = []
        folded = True
        result = True
        for op, rnode in zip(node.ops, node.comparators):
            right = self.expr(rnode)
            sym, fn = _CMPOPS.get(type(op), (None, None))
            if sym is None:
                self.fail(f"comparison '{type(op).__name__}' is not supported in kernels", node,
                          UnsupportedSyntaxError)
            if left.is_const and right.is_const:
                result = result and bool(fn(left.const, right.const))
            elif sym in ("in", "not in") and _is_number_set(right) and is_number(left):
                # ``n in (1, 2)``: a chain of equality tests
                x = self.materialize(left, node)
                eq = " or ".join(f"({x} == {self.materialize(const(c), node)})" for c in right.const) or "False"
                folded = False
                terms.append(f"({eq})" if sym == "in" else f"(not ({eq}))")
            else:
                if sym in _CONST_ONLY_CMP or not (is_number(left) and is_number(right)):
                    self.type_error(f"cannot compare {self.describe(left)} and {self.describe(right)} "
                                    f"at run time", node)
                folded = False
                terms.append(f"({self.materialize(left, node)} {sym} {self.materialize(right, node)})")
            left = right
        if folded:
            return const(result)
        if not result:
            return const(False)
        return scalar("bool", " and ".join(terms) if len(terms) > 1 else terms[0])

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.expr(node.test)
        if test.is_const:
            return self.expr(node.body if test.const else node.orelse)
        mark = len(self.em.lines)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if len(self.em.lines) != mark:
            self.fail("a conditional expression whose branches call kernel APIs; use an if statement",
                      node, UnsupportedSyntaxError)
        cond = self.truth(test, node.test)
        if is_number(a) and is_number(b):
            kind = "float" if "float" in (_num_kind(a), _num_kind(b)) else "int"
            return scalar(kind, f"({self.materialize(a, node, kind)} if {cond} else "
                                f"{self.materialize(b, node, kind)})")
        if a.type != b.type or not a.type.fields:
            self.type_error(f"the branches of a conditional expression differ: {self.describe(a)} and "
                            f"{self.describe(b)}", node)
        return Value(a.type, code=tuple(f"({x} if {cond} else {y})" for x, y in zip(a.code, b.code)))

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Value:
        self.fail("f-strings are not supported in kernels; use asc.printf with a format string", node,
                  UnsupportedSyntaxError)

    # ------------------------------------------------------------------ calls

    def expr_Call(self, node: ast.Call) -> Value:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.fail("*args and **kwargs are not supported in kernel calls", node, UnsupportedSyntaxError)
        if isinstance(node.func, ast.Attribute):
            recv = self.expr(node.func.value)
            if not recv.is_const:
                return self.method_call(recv, node.func.attr, node)
            try:
                fn = const(getattr(recv.const, node.func.attr))
            except AttributeError:
                self.fail(f"{self.describe(recv)} has no attribute '{node.func.attr}'", node, UnknownAPIError)
        else:
            fn = self.expr(node.func)
        if not fn.is_const:
            rule = registry.METHOD_RULES.get((type(fn.type), "__call__"))
            if rule is None:
                self.fail(f"{self.describe(fn)} is not callable", node, UnsupportedSyntaxError)
            return self._apply(rule, "__call__", node, recv=fn)
        return self.call_const(fn.const, node)

    def _apply(self, rule: registry.Rule, name: str, node: ast.Call, recv: Value | None = None) -> Value:
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        out = rule(self, registry.Call(name, node, args, kwargs, recv=recv,
                                       recv_node=getattr(node.func, "value", None)))
        return const(None) if out is None else out

    def method_call(self, recv: Value, name: str, node: ast.Call) -> Value:
        rule = registry.METHOD_RULES.get((type(recv.type), name))
        if rule is None:
            self.fail(f"{recv.type.describe()} has no method '{name}'", node, UnknownAPIError)
        return self._apply(rule, name, node, recv)

    def call_const(self, fn: Any, node: ast.Call) -> Value:
        rule = registry.func_rule(fn)
        if rule is not None:
            return self._apply(rule, getattr(fn, "__name__", str(fn)), node)
        if isinstance(fn, KernelFunction):
            return self.inline(fn, node)
        if builtin_name(fn) is not None:
            self.fail(f"asc.{builtin_name(fn)} is not supported by npuemu yet", node, UnknownAPIError)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        if all(a.is_const for a in args) and all(v.is_const for v in kwargs.values()) and callable(fn):
            try:  # a plain Python function on constants runs at compile time
                return const(fn(*[a.const for a in args], **{k: v.const for k, v in kwargs.items()}))
            except errors.NpuemuError:
                raise
            except Exception as exc:  # noqa: BLE001
                self.fail(f"compile-time call {getattr(fn, '__name__', fn)}(...) failed: "
                          f"{type(exc).__name__}: {exc}", node)
        name = getattr(fn, "__qualname__", repr(fn))
        self.fail(f"{name}() is called with run-time values; only @asc.jit helpers and the kernel API can "
                  f"take them (decorate {name} with @asc.jit?)", node, UnknownAPIError)

    def inline(self, jitfn: Any, node: ast.Call) -> Value:
        parsed = parse_function(jitfn.fn)
        if len(self.scopes) > MAX_INLINE_DEPTH or any(s.parsed.fn is jitfn.fn for s in self.scopes):
            self.fail(f"recursive call of @asc.jit helper '{parsed.name}' (helpers are inlined)", node,
                      UnsupportedSyntaxError)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        sig = inspect.signature(jitfn.fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            self.fail(f"bad call of helper '{parsed.name}': {exc}", node, KernelTypeError)
        params: dict[str, Value] = {}
        for pname, p in sig.parameters.items():
            v = bound.arguments[pname] if pname in bound.arguments else const(p.default)
            if is_constexpr(p.annotation) and not v.is_const:
                self.type_error(f"argument '{pname}' of helper '{parsed.name}' is a ConstExpr but got a "
                                f"runtime {v.type.describe()}", node)
            params[pname] = v
        self._inline_count += 1
        scope = Scope(parsed, f"h{self._inline_count}_", self.loc(node))
        self.scopes.append(scope)
        try:
            self.bind_params(params, node)
            self.block(parsed.tree.body, top_level=True)
        finally:
            self.scopes.pop()
        return scope.returned if scope.returned is not None else const(None)


def _loop_exits(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The ``break``/``continue`` statements that leave the loop whose body is ``stmts``."""
    out: list[ast.stmt] = []
    stack: list[ast.AST] = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            out.append(n)
        elif isinstance(n, (ast.For, ast.While)):
            stack.extend(n.orelse)          # an inner loop's own body exits the inner loop
        elif isinstance(n, ast.stmt):
            stack.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _is_number_set(v: Value) -> bool:
    """A constant tuple, list or range of numbers (the right side of a runtime ``in``)."""
    return v.is_const and isinstance(v.const, (tuple, list, range)) and all(
        isinstance(c, (int, float)) and not hasattr(c, "__members__") for c in v.const)


_INT_LITERAL = re.compile(r"-?\d+")


def _unliteral(arg: str) -> str:
    if _INT_LITERAL.fullmatch(arg):
        return f"np.int64({arg})"
    if arg in ("True", "False"):
        return f"np.bool_({arg})"
    return arg


def _num_kind(v: Value) -> str:
    if isinstance(v.type, ScalarT):
        return "int" if v.type.kind == "bool" else v.type.kind
    return "float" if isinstance(v.const, float) else "int"


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


__all__ = ["Lowerer", "Scope", "BOOL", "FLOAT", "INT"]
