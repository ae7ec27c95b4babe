"""Lowering of statements: assignments, ``if``, loops, ``assert`` and ``return``.

:class:`StatementLowering` is one part of :class:`~npuemu.frontend.lower.Lowerer`
(which holds the storage, emitting and error methods it calls); expressions
are in :mod:`npuemu.frontend.expressions`.
"""
from __future__ import annotations

import ast
import builtins
from typing import Any

from ..errors import UnsupportedSyntaxError
from ..language.builtin import builtin_name
from . import registry
from .expressions import _num_kind
from .types import RecordT, ScalarT, TupleT, Value, const, is_number, scalar


class StatementLowering:
    """The ``stmt_*`` visitors of the lowerer."""

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
        if isinstance(target, ast.Subscript) and not isinstance(target.slice, ast.Slice):
            self.assign_item(target, v, node)
            return
        self.fail(f"cannot assign to {ast.unparse(target)} in a kernel", node, UnsupportedSyntaxError)

    def assign_item(self, target: ast.Subscript, v: Value, node: ast.AST) -> None:
        """``obj[i] = v`` for a value whose type has a ``__setitem__`` rule."""
        obj = self.expr(target.value)
        rule = registry.METHOD_RULES.get((type(obj.type), "__setitem__"))
        if rule is None:
            self.fail(f"cannot assign to an element of {self.describe(obj)}", node, UnsupportedSyntaxError)
        rule(self, registry.Call("__setitem__", node, [self.expr(target.slice), v], {}, recv=obj))

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
        with self.sync_region("if"):
            with self.em.block(f"if {self.truth(test, node.test)}:"):
                self.block(node.body)
            if node.orelse:
                self.sync_plan.orelse()
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
        plan_mark = self.sync_plan.mark()
        test = self.expr(node.test)
        if test.is_const and not test.const:
            return
        if len(self.em.lines) == mark:
            header = "while True:" if test.is_const else f"while {self.truth(test, node.test)}:"
            with self.em.block(header), self.sync_region("loop"):
                self.loop_step(node)
                self.block(node.body)
            return
        # the condition needs statements: re-evaluate them at the top of every iteration
        del self.em.lines[mark:]
        self.sync_plan.rollback(plan_mark)
        with self.em.block("while True:"), self.sync_region("loop"):
            test = self.expr(node.test)
            self.emit(f"if not ({self.truth(test, node.test)}):")
            self.emit("    break")
            self.loop_step(node)
            self.block(node.body)

    def stmt_With(self, node: ast.With) -> None:
        """``with obj.m(...) as name:`` where ``m`` is a loop context (registry.LOOP_CONTEXTS): a loop."""
        ctx = node.items[0].context_expr if len(node.items) == 1 else None
        if isinstance(ctx, ast.Call) and isinstance(ctx.func, ast.Attribute) and isinstance(ctx.func.value, ast.Name):
            recv = self.expr(ctx.func.value)
            counter = registry.LOOP_CONTEXTS.get((type(recv.type), ctx.func.attr))
            if counter is not None:
                body = list(node.body)
                target = node.items[0].optional_vars
                if target is not None:
                    read = ast.Call(func=ast.Attribute(value=ctx.func.value, attr=counter, ctx=ast.Load()),
                                    args=[], keywords=[])
                    body.insert(0, ast.copy_location(ast.Assign(targets=[target], value=read), node))
                    ast.fix_missing_locations(body[0])
                self.stmt_While(ast.copy_location(ast.While(test=ctx, body=body, orelse=[]), node))
                return
        self.fail("'With' statements are not supported in kernels, except `with matmul.iterate() as count:` "
                  "(a loop over an asc.adv.Matmul's tiles)", node, UnsupportedSyntaxError)

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
        with self.em.block(f"for {var} in range({', '.join(args)}):"), self.sync_region("loop"):
            self.loop_step(node)
            self.block(node.body)

    def loop_step(self, node: ast.stmt) -> None:
        """Count one iteration of a loop; past the core's step limit, let the launch stop it.

        Every loop gets the check, so Ctrl-C, a time or step budget and another
        core's fault can end any kernel that does not finish: a load and a
        compare per iteration (isa/runaway.py).  The budgets are core state,
        read at run time, so the generated code does not depend on them.
        """
        steps = self.declare_runtime("_steps", "np.int64(0)")
        self.emit(f"{steps} += 1")
        with self.em.block(f"if {steps} > {self.isa('runaway', 'limit')}(_st):"):
            self.emit_isa("runaway", "poll", ["_st", steps], node)

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
        self.sync_plan.jump("break")
        self.emit("break")

    def stmt_Continue(self, node: ast.Continue) -> None:
        self.sync_plan.jump("continue")
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
