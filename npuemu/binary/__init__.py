"""Kernel binaries: what a build produces and a launch consumes.

A :class:`KernelBinary` is one compiled specialisation of one kernel, with a
canonical key (:mod:`.key`) and the typed facts its lowering learned
(:mod:`.facts`).  It exists apart from any launch: it can be saved, loaded in
another process and launched there without the kernel's source being parsed
or lowered again (:mod:`.store`).  Nothing here imports the frontend.
"""
