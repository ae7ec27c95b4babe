"""The printed summary of a :class:`~npuemu.cost.model.Profile`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .model import MSPROF_NAMES, PIPES, CostError

if TYPE_CHECKING:
    from .model import Profile


def summary(p: "Profile") -> str:
    """The task's duration and bound, then one row per pipe of each core type: msprof's name, the mean
    busy time over the cores of that type (us), its ratio to the type's time and the instructions issued."""
    try:
        bound = f"{p.bound}-bound"
    except CostError:
        bound = "no instruction charged"
    lines = [
        f"kernel {p.kernel} on {p.platform.name}: {len(p.cores)} cores ({p.active_cores} at once), {bound}",
        f"  task {p.task_us:10.2f} us = cores {p.kernel_us:.2f} us + launch {p.overhead_cycles / p.clock_mhz:.2f} us"
        f"  ({p.task_cycles:.0f} cycles at {p.clock_mhz:g} MHz)",
        f"  GM traffic {p.gm_bytes} B, HBM utilisation {100 * p.hbm_utilisation:.1f} %, "
        f"cube {100 * p.cube_utilisation:.1f} %, vector {100 * p.vector_utilisation:.1f} % of peak",
        f"  {'metric':<22}{'time (us)':>12}{'ratio':>9}{'instr/core':>12}",
    ]
    m = p.metrics
    for kind, names in MSPROF_NAMES.items():
        cores = [c for c in p.cores if c.kind == kind]
        if not cores:
            continue
        lines.append(f"  {kind + '_time':<22}{m[kind + '_time']:>12.3f}")
        for pipe in PIPES:
            if pipe not in names:
                continue
            key = f"{kind}_{names[pipe]}"
            n = sum(c.count[pipe] for c in cores) / len(cores)
            lines.append(f"  {key + '_time':<22}{m[key + '_time']:>12.3f}{m[key + '_ratio']:>9.3f}{n:>12.1f}")
    return "\n".join(lines)
