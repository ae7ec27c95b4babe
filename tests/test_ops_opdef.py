"""Operator definitions: columns, Cartesian lists, follow, and errors at definition time."""
from __future__ import annotations

import pytest

from npuemu.ops.codes import OpDefError
from npuemu.ops.opdef import Attr, Input, OpDef, Output


def _add(**kw):
    return OpDef("Add", inputs=[Input("x1", dtype=["float16", "float32", "bfloat16"]), Input("x2", follow="x1")],
                 outputs=[Output("y", follow="x1")], attrs=[Attr("alpha", "float", default=1.0)], **kw)


def test_columns_and_follow():
    op = _add()
    assert [c.inputs[0][0] for c in op.columns] == ["float16", "float32", "bfloat16"]
    assert all(c.inputs[0] == c.inputs[1] == c.outputs[0] for c in op.columns)
    assert all(f == "ND" for c in op.columns for _, f in (*c.inputs, *c.outputs))
    assert op.attr_values({}) == {"alpha": 1.0} and op.attr_values({"alpha": 2}) == {"alpha": 2}


def test_dtype_list_and_format_list_are_cartesian():
    op = OpDef("Cast", inputs=[Input("x", dtype_list=["float16", "float32"], format_list=["ND", "NZ"])],
               outputs=[Output("y", dtype=["float32", "int32"])])
    got = {(c.inputs[0], c.outputs[0][0]) for c in op.columns}
    assert len(op.columns) == 8 and (("float16", "FRACTAL_NZ"), "int32") in got


def test_follow_dtype_only_keeps_its_own_format():
    op = OpDef("Op", inputs=[Input("a", dtype=["float16", "float32"], format=["NZ", "ND"]),
                             Input("b", format=["ND", "ND"], follow="a", follow_type="dtype")],
               outputs=[Output("y", follow="a")])
    assert [c.inputs[1] for c in op.columns] == [("float16", "ND"), ("float32", "ND")]
    assert [c.outputs[0][1] for c in op.columns] == ["FRACTAL_NZ", "ND"]


@pytest.mark.parametrize("kw, message", [
    (dict(inputs=[Input("x", dtype=["float16", "float32"])], outputs=[Output("y", dtype=["float16"])]),
     r"op Bad: columns: every dtype and format list must have the same length.*input 'x' dtype: 2"),
    (dict(inputs=[Input("x", dtype=["half"])], outputs=[Output("y", follow="x")]),
     r"op Bad: input 'x' dtype: unknown data type 'half'"),
    (dict(inputs=[Input("x", dtype=["float16"], format=["NCDHW"])], outputs=[Output("y", follow="x")]),
     r"op Bad: input 'x' format: unknown format 'NCDHW'"),
    (dict(inputs=[Input("x", dtype=["float16"])], outputs=[Output("y", follow="z")]),
     r"op Bad: output 'y' follow: follows 'z', which is not an input"),
    (dict(inputs=[Input("x", follow="w"), Input("w", dtype=["float16"])], outputs=[Output("y", follow="x")]),
     r"op Bad: input 'x' follow: follows 'w', which is not declared before it"),
    (dict(inputs=[Input("x", dtype=["float16"])], outputs=[Output("y", follow="x")],
          attrs=[Attr("alpha", "float", default="one")]),
     r"op Bad: attribute 'alpha': value 'one' is not a float"),
    (dict(inputs=[Input("x", dtype=["float16"])], outputs=[Output("y", follow="x")], impl_modes=["fast"]),
     r"op Bad: impl_modes: unknown implementation mode 'fast'"),
    (dict(inputs=[Input("x", dtype=["float16"])], outputs=[Output("y", follow="x", param_type="optional")]),
     r"op Bad: output 'y': outputs cannot be optional"),
    (dict(inputs=[Input("x")], outputs=[Output("y", follow="x")]),
     r"op Bad: input 'x': needs dtype, dtype_list or follow"),
])
def test_bad_definitions_fail_when_made(kw, message):
    with pytest.raises(OpDefError, match=message):
        OpDef("Bad", **kw)


def test_attribute_values_are_checked_per_call():
    op = _add()
    with pytest.raises(OpDefError, match=r"op Add: attribute 'alpha' must be float, got 'x'"):
        op.attr_values({"alpha": "x"})
    with pytest.raises(OpDefError, match=r"op Add has no attribute beta"):
        op.attr_values({"beta": 1})
