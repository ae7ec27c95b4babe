"""``@asc.jit``: kernels, helpers, specialisation and the launch syntax.

``kernel[core_num](args)`` / ``kernel[core_num, stream](args)`` classifies the
arguments, finds or builds the kernel binary for that specialisation
(argument kinds and dtypes, ConstExpr values, options, platform) and hands it
to the runtime.  The same decorated function called from another kernel is a
helper and is inlined there.
"""
from __future__ import annotations

import inspect
import operator
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable

from ..codegen import compiler
from ..codegen.module import module_source
from ..errors import KernelCompileError, LaunchError, SourceLoc, UnsupportedSyntaxError
from ..language.struct import Struct
from ..options import OPTION_NAMES, Options, from_environment
from ..runtime.args import ArgKind, classify
from ..platform import Platform, get_platform
from . import rules  # noqa: F401 - registers the lowering rules
from .lower import Lowerer, _is_constexpr
from .source import parse_function
from .types import ArrayT, GlobalAddressT, RecordT, Value, const, scalar


@dataclass
class KernelBinary:
    """A compiled specialisation plus what the launcher needs to feed it."""

    compiled: compiler.CompiledKernel
    gm_params: list[str]                 # parameter names of the GM regions, in region order
    scalar_params: list[tuple[str, tuple[str, ...], str]]  # (param, struct path, kind) per runtime scalar
    kernel_type: Any
    platform: Platform
    facts: dict[str, Any]                # what the lowering learned (e.g. uses_tpipe)


def _scalar_kind(dtype: Any) -> str:
    return "float" if dtype.is_float else "int"


class JITFunction:
    """A kernel or helper written in the kernel language."""

    def __init__(self, fn: Callable[..., Any], **options: Any):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        variadic = [p.name for p in self.signature.parameters.values()
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if variadic:
            raise UnsupportedSyntaxError(
                f"in kernel '{fn.__name__}': *{variadic[0]}: variable arguments are not supported in kernels",
                _param_loc(fn, variadic[0]))
        clash = sorted(OPTION_NAMES & set(self.signature.parameters))
        if clash:
            raise UnsupportedSyntaxError(
                f"in kernel '{fn.__name__}': parameter name(s) {', '.join(clash)} clash with launch options "
                f"(kernel[n](..., {clash[0]}=...) sets the option); rename them", _param_loc(fn, clash[0]))
        from_environment(**options)     # validate option names and values now
        self.options = dict(options)
        self._binaries: dict[Any, KernelBinary] = {}
        self._tiling_keys: dict[Any, frozenset[int]] = {}   # keys each specialisation tests (asc.tiling_key_is)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<asc.jit kernel {self.fn.__module__}.{self.fn.__qualname__}>"

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
        return Launcher(self, n, stream)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise LaunchError(f"'{self.__name__}' is an @asc.jit kernel: launch it as {self.__name__}[core_num](...), "
                          f"or call it from another kernel")

    # ------------------------------------------------------------------ specialisation

    def specialize(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                   options: Options) -> tuple[tuple[ArgKind, ...], dict[str, Any]]:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise LaunchError(f"kernel '{self.__name__}': {exc}") from None
        bound.apply_defaults()
        kinds = []
        for name, p in self.signature.parameters.items():
            try:
                kinds.append(classify(name, bound.arguments[name], _is_constexpr(p.annotation)))
            except LaunchError as exc:
                raise LaunchError(f"kernel '{self.__name__}': {exc}") from None
        return tuple(kinds), dict(bound.arguments)

    def binary(self, kinds: tuple[ArgKind, ...], options: Options) -> KernelBinary:
        platform = get_platform(options.platform)
        base = (kinds, options.resolved_kernel_type, platform.key, options.check)
        b = self._binaries.get(self._binary_key(base, options))
        if b is None:
            with self._lock:
                key = self._binary_key(base, options)
                b = self._binaries.get(key)
                if b is None:
                    b = self._build(kinds, options, platform, base)
                    self._binaries[self._binary_key(base, options)] = b
        return b

    def _binary_key(self, base: tuple[Any, ...], options: Options) -> tuple[Any, ...]:
        """The cache key of a binary: the tiling key is part of it only if the kernel tests keys.

        Which keys a specialisation tests is learned when it is first lowered;
        from then on a launch with a key it does not test fails here, before
        anything is built.
        """
        tested = self._tiling_keys.get(base)
        if not tested:
            return base
        self._check_tiling_key(tested, options.tiling_key)
        return (*base, options.tiling_key)

    def _check_tiling_key(self, tested: frozenset[int], key: int | None) -> None:
        if not tested:
            return
        keys = ", ".join(map(str, sorted(tested)))
        if key is None:
            raise LaunchError(f"kernel '{self.__name__}' branches on the tiling key (asc.tiling_key_is: {keys}); "
                              f"launch it with tiling_key=<key>")
        if key not in tested:
            raise LaunchError(f"kernel '{self.__name__}': tiling key {key} has no branch in the kernel; "
                              f"supported tiling keys: {keys}")

    def _build(self, kinds: tuple[ArgKind, ...], options: Options, platform: Platform,
               base: tuple[Any, ...] | None = None) -> KernelBinary:
        parsed = parse_function(self.fn)
        params: dict[str, Value] = {}
        gm_params: list[str] = []
        scalar_params: list[tuple[str, tuple[str, ...], str]] = []
        arg_names: list[str] = []

        def struct_value(cls: type[Struct], pname: str, path: tuple[str, ...]) -> Value:
            names, items = [], []
            from ..language.struct import ArrayField, StructField
            for fname, f in cls._struct_fields_:
                names.append(fname)
                if isinstance(f, StructField):
                    items.append(struct_value(f.struct_type, pname, path + (fname,)))
                elif isinstance(f, ArrayField):
                    # one read-only array parameter (int64 or float32 elements) per array field
                    kind = _scalar_kind(f.dtype)
                    var = "a_" + "__".join((pname, *path, fname))
                    arg_names.append(var)
                    scalar_params.append((pname, path + (fname,), kind + "[]"))
                    items.append(Value(ArrayT(kind, f.n, var, ".".join((pname, *path, fname)))))
                else:
                    kind = _scalar_kind(f.dtype)
                    var = "a_" + "__".join((pname, *path, fname))
                    arg_names.append(var)
                    scalar_params.append((pname, path + (fname,), kind))
                    items.append(scalar(kind, var))
            return Value(RecordT(cls, tuple(names)), items=tuple(items))

        for (name, _), kind in zip(self.signature.parameters.items(), kinds):
            if kind.kind == "const":
                params[name] = const(kind.const)
            elif kind.kind == "gm":
                params[name] = Value(GlobalAddressT(kind.dtype), code=(str(len(gm_params)), "0"))
                gm_params.append(name)
            elif kind.kind == "struct":
                params[name] = struct_value(kind.dtype, name, ())
            else:
                var = f"a_{name}"
                arg_names.append(var)
                scalar_params.append((name, (), kind.kind))
                params[name] = scalar(kind.kind, var)

        lw = Lowerer(self.__name__, platform, options)
        lw.flags["kernel_type"] = options.resolved_kernel_type
        lw.lower_kernel(parsed, params)
        tested = frozenset(lw.flags.get("tiling_keys", ()))
        if base is not None:
            self._tiling_keys[base] = tested
        self._check_tiling_key(tested, options.tiling_key)     # before anything is compiled
        lw.flags["tiling_keys"] = tuple(sorted(tested))
        spec = ", ".join(f"{n}={_describe_kind(k)}" for n, k in zip(self.signature.parameters, kinds))
        spec += f"; kernel_type={options.resolved_kernel_type.name}; platform={platform.name}; check={options.check}"
        if tested:
            spec += f"; tiling_key={options.tiling_key}"
        origin = f"{parsed.filename}:{parsed.first_line} ({self.__name__})"
        source = module_source(lw.em, lw.runtime_vars, arg_names, origin, spec, lw.epilogue,
                               generator=bool(lw.flags.get("blocking")))
        ck = compiler.build(self.__name__, source, lw.em.locs)
        return KernelBinary(ck, gm_params, scalar_params, options.resolved_kernel_type, platform,
                            dict(lw.flags))


class Launcher:
    """``kernel[core_num, stream]``: call it with the kernel's arguments to run it."""

    def __init__(self, jit: JITFunction, core_num: int, stream: Any):
        self.jit = jit
        self.core_num = core_num
        self.stream = stream

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        overrides = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTION_NAMES}
        options = from_environment(**{**self.jit.options, **overrides})
        kinds, values = self.jit.specialize(args, kwargs, options)
        binary = self.jit.binary(kinds, options)
        from ..runtime.launch import run
        run(binary, values, self.core_num, options)


def _describe_kind(k: ArgKind) -> str:
    """One argument's part of the specialisation line in a generated module's header."""
    if k.kind == "const":
        # no object addresses: the header is part of the text whose hash names the cached module
        return f"const:{type(k.const).__name__}={re.sub(r' at 0x[0-9a-fA-F]+', '', repr(k.const))}"
    if k.kind == "gm":
        return f"gm:{k.dtype.name}"
    if k.kind == "struct":
        return f"struct:{k.dtype.__name__}"
    return k.kind


def _param_loc(fn: Callable[..., Any], param: str) -> SourceLoc | None:
    """Where parameter ``param`` of ``fn`` is declared (None when the source is unavailable)."""
    try:
        parsed = parse_function(fn)
    except KernelCompileError:
        return None
    a = parsed.tree.args
    params = (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg)
    node = next((p for p in params if p is not None and p.arg == param), parsed.tree)
    return SourceLoc(parsed.filename, parsed.first_line + node.lineno - 1, node.col_offset + parsed.indent,
                     parsed.name, parsed.line_text(node.lineno))


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Decorator: ``@asc.jit`` or ``@asc.jit(kernel_type=..., debug=...)``."""
    if fn is not None:
        return JITFunction(fn)
    return lambda f: JITFunction(f, **options)
