"""Rule for ``asc.property``: a compile-time constant of the binary's platform."""
from __future__ import annotations

from ...language import properties as lang
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value, const


@rule(lang.property)
def _property(lw: LoweringContext, call: Call) -> Value:
    prop = lw.const_value(call.bind_to(lw, lang.property)["prop"], call.node, "the property")
    if not isinstance(prop, lang.Property):
        lw.type_error(f"asc.property() takes one of the asc property constants (asc.TOTAL_L1_SIZE, ...), "
                      f"got {prop!r}", call.node)
    if isinstance(prop.source, int):
        return const(prop.source)
    return const(int(getattr(lw.platform, prop.source)))
