"""A PNG of a profiled launch: the pipeline of the first cores, and each pipe's busy ratio.

For people who would rather look than read: the top panel draws one row per
(core, pipe) with a bar per recorded instruction, the bottom panel msprof's
``*_ratio`` figures per core type.  Needs matplotlib (``pip install
'npuemu[plot]'``); the trace JSON (:mod:`npuemu.cost.trace`) shows the same
pipeline in ui.perfetto.dev without it.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .model import MSPROF_NAMES, PIPES, CostError

if TYPE_CHECKING:
    from .model import Profile

MAX_CORES = 4          # cores drawn in the timeline (the slowest first)


def write_chart(p: "Profile", path: "str | os.PathLike[str]", cores: int = MAX_CORES) -> str:
    """Draw ``p`` to the PNG ``path`` (the ``cores`` slowest cores' pipelines); returns the path."""
    import matplotlib
    matplotlib.use("Agg")               # files only: no display needed
    import matplotlib.pyplot as plt

    order = sorted(range(len(p.cores)), key=lambda i: -p.cores[i].cycles)[:max(1, cores)]
    rows = [(i, pipe) for i in order for pipe in range(len(PIPES))
            if i < len(p.trace) and (p.trace[i][:, 0] == pipe).any()]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 2.5 + 0.28 * len(rows) + 2.5),
                                      gridspec_kw={"height_ratios": [max(len(rows), 1), 6]})
    tick_us = 1.0 / (p.tick * p.clock_mhz)
    for y, (i, pipe) in enumerate(rows):
        spans = p.trace[i][p.trace[i][:, 0] == pipe]
        top.broken_barh([(float(s) * tick_us, float(e - s) * tick_us) for _, s, e, _ in spans], (y - 0.4, 0.8),
                        color=f"C{pipe}", edgecolor="white", linewidth=0.3)
    top.set_yticks(range(len(rows)), [f"{p.cores[i].label} {PIPES[pipe]}" for i, pipe in rows], fontsize=7)
    top.invert_yaxis()
    top.set_xlabel("µs (model time)")
    top.set_title(f"{p.kernel} on {p.platform.name}: {p.task_us:.2f} µs, {_bound(p)}", fontsize=10)
    names, ratios = [], []
    m = p.metrics
    for kind, pipes in MSPROF_NAMES.items():
        for pipe, name in pipes.items():
            key = f"{kind}_{name}_ratio"
            if key in m:
                names.append(key.removesuffix("_ratio"))
                ratios.append(m[key])
    bottom.barh(range(len(names)), ratios, color="C0")
    bottom.set_yticks(range(len(names)), names, fontsize=7)
    bottom.invert_yaxis()
    bottom.set_xlim(0, 1)
    bottom.set_xlabel("busy ratio (mean over the cores of the type)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return os.fspath(path)


def _bound(p: "Profile") -> str:
    try:
        return f"{p.bound}-bound"
    except CostError:             # a launch that charged nothing has no bound
        return "no instruction charged"
