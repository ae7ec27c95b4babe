"""Operators: what a framework calls, built on kernel binaries.

An operator is declared as CANN's ``OpDef`` does (:mod:`.opdef`): its inputs,
outputs and attributes, the data types and formats it supports in columns
(one column, one kernel binary), its kernel, tiling and shape-inference
functions.  Its binaries are built and indexed per platform, selected at
call time by a key of data-type and format bytes, and run through the
two-phase API of aclnn.  Nothing here is imported by the runtime.
"""
