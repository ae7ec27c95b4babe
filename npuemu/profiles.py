"""The built-in SoC profiles as data: one table per SoC, every value with its source.

Each profile maps a :class:`~npuemu.platform.Platform` field to an
``(value, source, confirmed)`` entry.  ``source`` is a key of :data:`SOURCES`;
``confirmed`` is False for values that were inferred, taken from a third-party
simulator or cost model rather than a CANN platform file, or assumed equal to
a sister part.  Those fields end up in ``Platform.unconfirmed`` and are shown
as UNCONFIRMED by ``npuemu platforms`` and in docs/platforms.md.

The CANN platform files (``<cann>/<arch>-linux/data/platform_config/<SoC>.ini``)
are not published by Huawei; the values below come from public quotes of them
(sections ``[SoCInfo]``, ``[AICoreSpec]``, ``[AICoreMemoryRates]``) and from
the Ascend C documentation of the 2201 architecture (Atlas A2 = 910B, A3 =
910_93xx).  A value quoted from an ini file counts as confirmed.

Memory rates are bytes per cycle per core at the cube clock, as in the ini
files; sizes are bytes; bandwidths are GB/s (10**9 bytes per second).
"""
from __future__ import annotations

from typing import Any

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

Entry = tuple[Any, str, bool]

SOURCES: dict[str, str] = {
    "ini-B1": "Ascend910B1.ini as quoted by a public roofline write-up (CANN 9.0.0): ai_core_cnt=24, "
              "vector_core_cnt=48, cube_freq=1850, memory_size=64 GB, l2_size=201326592, "
              "[AICoreMemoryRates] ddr_rate=32, l2_read_rate=110, l2_write_rate=86, "
              "l1_to_l0_a_rate=512, ub_to_l2_rate=64",
    "ini-B2": "Ascend910B2.ini as quoted publicly: [SoCInfo] ai_core_cnt=24, cube_core_cnt=24, "
              "vector_core_cnt=48, memory_size=68719476736, l2_size=201326592; [AICoreSpec] "
              "cube_freq=1800, cube_m/n/k_size=16, l0_a/b_size=65536, l0_c_size=131072, l1_size=524288, "
              "fb0..fb3_size=2048/1024/2048/2048, bt_size=1024, ub_size=196608",
    "ini-B3": "Ascend910B3.ini as quoted by a public op design note (ai_core_cnt=20, vector_core_cnt=40); "
              "a device probe reports CUBE_CORES=20, VECTOR_CORES=40",
    "ini-B4": "Ascend910B4.ini [SoCInfo] as quoted publicly: ai_core_cnt=20, cube_core_cnt=20, "
              "vector_core_cnt=40, memory_size=34359738368, l2_size=100663296",
    "ini-B4-1": "Ascend910B4-1.ini as quoted by a public op design note (ai_core_cnt=20, vector_core_cnt=40)",
    "ini-9392": "Ascend910_9392.ini as printed by a public device-query sample: 24 AI cores, 24 cube, "
                "48 vector, L2 192 MB, UB 192 KB, L1 512 KB, L0A/L0B 64 KB, L0C 128 KB",
    "aicorespec": "[AICoreSpec] of the 2201 parts: Ascend910B2.ini quotes l0_a/b_size=65536, l1_size=524288, "
                  "fb0..fb3_size=2048/1024/2048/2048 (7 KiB fixpipe), cube_m/n/k_size=16; the Ascend910B1.ini "
                  "and Ascend910_9392.ini quotes give the same L1/L0/UB sizes",
    "arch-2201": "Ascend C docs for NPU architecture 2201 (asc-devkit: hardware constraints 2201, Vector "
                 "logical architecture): UB 192 KB, L0C 128 KB, BiasTable 1 KB, one vector beat reads "
                 "256 B; the per-core buffers are the same on every A2/A3 part",
    "catlass-B3": "hicann/catlass include/acot/arch/arch.hpp, struct AscendC910B3: 20 AIC, 40 AIV, "
                  "192 KB UB, 512 KB L1, 64/64/128 KB L0A/L0B/L0C, 1 KB bias, 7 KB fixpipe, 192 MB L2",
    "devkit-ws": "asc-devkit impl/utils/tiling/platform/platform_ascendc.cpp: GetLibApiWorkSpaceSize() "
                 "is 16 MiB on DAV_2201 (A2/A3)",
    "fixture-B4": "a third-party test fixture reproducing Ascend910B4.ini: cube_freq=1500, ddr_rate=32",
    "sim-config": "a third-party performance simulator's device table (910B2/B3 1.8 GHz and 1.6 TB/s, "
                  "910B4 1.5 GHz and 0.8 TB/s, A3 1.6 TB/s per die)",
    "dvm-table": "a third-party runtime's SoC table (AI core count and L2 size per SoC name; it lists 25 "
                 "cores for 910B1, against 24 in the ini, so its counts may be physical cores)",
    "npu-smi-A3": "npu-smi on an A3 (910C) board, as reported by a public roofline write-up: Aicore Freq "
                  "1850 MHz, 64 GB HBM per die",
    "hbm-public": "public figures for 910B/910C-class parts: about 1.6 TB/s of HBM bandwidth per die; the "
                  "ini rates give 32 B/cycle x 24 cores x 1.85 GHz = 1.42 TB/s",
    "same-as-B1": "no source for this part; assumed equal to Ascend910B1 (same 2201 architecture)",
    "same-as-B2": "no source for this part; assumed equal to Ascend910B2",
    "same-as-B4": "no source for this part; assumed equal to Ascend910B4",
    "same-as-9392": "no source for this part; assumed equal to Ascend910_9392",
    "other-soc": "l1_to_l0_b_rate=256 is quoted for other SoCs; the 2201 value is not quoted",
    "sys-cycle": "Ascend C GetSystemCycle docs: the system counter runs at 50 MHz on Atlas A2/A3 "
                 "(time in us = cycles / 50)",
    "custom": "set by the user (Platform.custom)",
    "pto-bw": "PTO Tile Lib's trace-only cost model for A2/A3 (Huawei pto-isa, "
              "include/pto/costmodel/arch_config.hpp, kA2A3ArchConfig; mirrored at zouzias/pto-isa-mirror): "
              "per-direction bandwidths in GiB/s per core, GM->UB 100.9, GM->L1 135.0, UB->GM 188.46, "
              "L1->GM 32, UB->UB 1024, L0C->GM 70, L0C->L1 128, L1->L0A 441, L1->L0B 220.5, L1->BT 32, "
              "L1->FB 32, at a 1.85 GHz clock (EstimateBandwidthCycles: bytes / 2^30 / GiB/s x clock)",
    "pto-cce": "PTO Tile Lib's A2/A3 CCE cost model, include/pto/costmodel/a2a3/cce_costmodel/"
               "cce_cycle_profiles.csv: startup and per-repeat cycles of each vector intrinsic for "
               "fp16, fp32 and integer operands (e.g. kVaddProfile fp16 5.93 + 2.07 per repeat)",
    "pto-default": "npuemu's default for vector ops cce_cycle_profiles.csv does not list: vadd's profile "
                   "(kVaddProfile, startup 6, 2 cycles per repeat), the commonest binary op",
    "cube-2201": "Ascend C docs, hardware constraints 2201: fp32 cube throughput is a quarter of fp16's; "
                 "int8 at twice fp16's (16 x 16 x 32 per cycle: C0 = 32 for int8); pto-isa's mad cost "
                 "(2 cycles per 16x16x8 fp32 step, 1 per fp16 or int8 step) agrees",
    "scalar-issue": "npuemu's assumption: the scalar unit issues one instruction per cycle in program "
                    "order (Ascend C basic architecture: one in-order issue stream per core); no cycle "
                    "figure is published",
    "pto-hill": "PTO Tile Lib's fitted bandwidth model for A2/A3 (pto-isa include/pto/costmodel/arch_config.hpp, "
                "MakeFittedHillModel, an on-device fit: bandwidth(B) = peak x B / (K + B), so a transfer takes "
                "(K + B) / peak): K / peak is the fixed time of one transfer, GM->UB 30643 B at 247.16 GiB/s "
                "= 115.5 ns, GM->L1 1107 B at 28.61 GiB/s = 36.0 ns, UB->GM 1755 B at 28.19 GiB/s = 58.0 ns, "
                "L0C->GM 29104 B at 41.25 GiB/s = 657.1 ns; npuemu adds it to the flat rates of pto-bw",
    "launch-overhead": "a public benchmark write-up on 910C: small kernels carry about 10 us of fixed "
                       "launch overhead (ascend-c.md section 4.3, [3rd-party])",
}

# ---- cost model tables (docs/cost-model.md)

# pto-isa kA2A3ArchConfig bandwidths, GiB/s per core, by direction
A2A3_TRANSFER_GIBPS: tuple[tuple[str, float], ...] = (
    ("gm_to_ub", 100.9), ("gm_to_l1", 135.0), ("ub_to_gm", 188.46), ("l1_to_gm", 32.0), ("ub_to_ub", 1024.0),
    ("l0c_to_gm", 70.0), ("l0c_to_l1", 128.0), ("l1_to_l0a", 441.0), ("l1_to_l0b", 220.5), ("l1_to_bt", 32.0),
    ("l1_to_fb", 32.0),
)

# the fixed time of one GM transfer, ns, by direction: K / peak of pto-isa's fitted Hill model
A2A3_TRANSFER_LATENCY_NS: tuple[tuple[str, float], ...] = tuple(
    (direction, round(k_bytes / (peak_gibps * (1 << 30)) * 1e9, 2)) for direction, k_bytes, peak_gibps in (
        ("gm_to_ub", 30643.0, 247.16), ("gm_to_l1", 1107.0, 28.61), ("ub_to_gm", 1755.0, 28.19),
        ("l0c_to_gm", 29104.0, 41.25)))

# MAC rate of each mmad input class relative to fp16 (cube_fp16_macs_per_cycle)
A2A3_CUBE_RATES: tuple[tuple[str, float], ...] = (("fp16", 1.0), ("fp32", 0.25), ("int8", 2.0))

# (npuemu op, fp16 startup, fp16 per repeat, fp32 startup, fp32 per repeat, int startup, int per repeat)
# from cce_cycle_profiles.csv (profile named in the comment); None: the profile has no integer fit, the
# fp16 figures are used
A2A3_VECTOR_OP_CYCLES: tuple[tuple, ...] = (
    ("add", 5.934212, 2.065788, 5.933726, 2.066274, 4.985765, 2.000853),      # kVaddProfile
    ("sub", 5.934157, 2.065843, 5.935091, 2.064909, 4.985765, 2.000853),      # kVsubProfile
    ("mul", 6.865515, 2.134485, 6.868098, 2.131902, 6.106646, 1.999717),      # kVmulProfile
    ("div", 13.0, 8.0, 13.0, 4.0, None, None),                                # kVdivProfile
    ("max", 4.0, 2.0, 4.0, 2.0, 4.985765, 2.000853),                          # kVmaxProfile
    ("min", 4.0, 2.0, 4.0, 2.0, 4.985765, 2.000853),                          # kVminProfile
    ("adds", 6.0, 1.0, 6.0, 1.0, 5.010874, 1.000947),                         # kVaddsProfile
    ("muls", 7.0, 1.0, 7.0, 1.0, 6.045203, 0.999906),                         # kVmulsProfile
    ("maxs", 4.0, 1.0, 4.0, 1.0, 5.010874, 1.000947),                         # kVmaxsProfile
    ("mins", 4.0, 1.0, 4.0, 1.0, 5.010874, 1.000947),                         # kVminsProfile
    ("bitwise_and", 2.059771, 1.999717, 2.059771, 1.999717, None, None),      # kVandProfile
    ("bitwise_or", 2.059771, 1.999717, 2.059771, 1.999717, None, None),       # kVorProfile
    ("bitwise_not", 2.088006, 0.999735, 2.088006, 0.999735, None, None),      # kVnotProfile
    ("abs", 4.0, 1.0, 4.0, 1.0, None, None),                                  # kVabsProfile
    ("exp", 12.011812, 3.988188, 12.0, 2.0, None, None),                      # kVexpProfile
    ("ln", 13.985971, 4.014029, 14.0, 2.0, None, None),                       # kVlnProfile
    ("sqrt", 13.0, 4.0, 13.0, 2.0, None, None),                               # kVsqrtProfile
    ("rsqrt", 4.791896, 1.064811, 4.791896, 1.064811, None, None),            # kVrsqrtProfile
    ("relu", 4.0, 1.0, 4.0, 1.0, None, None),                                 # kVreluProfile
    ("leaky_relu", 7.0, 1.0, 7.0, 1.0, None, None),                           # kVlreluProfile
    ("axpy", 18.0, 2.0, 18.0, 2.0, None, None),                               # kVaxpyProfile
    ("duplicate", 1.0, 1.0, 1.0, 1.0, None, None),                            # kVectorDupProfile
    ("brcb", 1.0, 1.0, 1.0, 1.0, None, None),                                 # kVbrcbProfile
    ("shl", 6.045203, 0.999906, 6.045203, 0.999906, None, None),              # kVshlProfile
    ("shr", 6.045203, 0.999906, 6.045203, 0.999906, None, None),              # kVshrProfile
    ("copy", 13.0, 1.0, 0.936906, 1.063094, None, None),                      # kVcopyProfile
    ("cast", 5.0, 2.0, 6.0, 1.0, None, None),                                 # kVconvF162f32Profile
    ("reduce_sum", 23.0, 7.0, 20.0, 7.0, None, None),                         # kVcaddProfile
    ("reduce_max", 9.0, 7.0, 8.0, 7.0, None, None),                           # kVcmaxProfile
    ("reduce_min", 9.0, 7.0, 8.0, 7.0, None, None),                           # kVcminProfile
    ("block_reduce_sum", 15.0, 7.0, 12.0, 1.0, None, None),                   # kVcgaddProfile
    ("block_reduce_max", 6.0, 7.0, 5.0, 1.0, None, None),                     # kVcgmaxProfile
    ("block_reduce_min", 6.0, 7.0, 5.0, 1.0, None, None),                     # kVcgminProfile
    ("select", 5.0, 2.0, 5.0, 2.0, None, None),                               # kVselCmpMaskProfile
    ("gather", 6.635214, 24.008236, 4.965026, 12.000331, None, None),         # kVgatherProfile
)
A2A3_VECTOR_DEFAULT: tuple[float, float] = (5.934212, 2.065788)              # kVaddProfile fp16



def _c(value: Any, source: str) -> Entry:
    """A value read in a CANN platform file quote or the official docs."""
    return (value, source, True)


def _u(value: Any, source: str) -> Entry:
    """An UNCONFIRMED value (inferred, third-party, or assumed equal to a sister part)."""
    return (value, source, False)


# the cost model's entries of every 2201 profile
_COST_2201: dict[str, Entry] = {
    "transfer_gibps": _u(A2A3_TRANSFER_GIBPS, "pto-bw"),
    "transfer_latency_ns": _u(A2A3_TRANSFER_LATENCY_NS, "pto-hill"),
    "cube_rate_vs_fp16": _c(A2A3_CUBE_RATES, "cube-2201"),
    "vector_op_cycles": _u(A2A3_VECTOR_OP_CYCLES, "pto-cce"),
    "vector_default_cycles": _u(A2A3_VECTOR_DEFAULT, "pto-default"),
    "scalar_issue_cycles": _u(1.0, "scalar-issue"),
    "scalar_access_cycles": _u(1.0, "scalar-issue"),
    "launch_overhead_us": _u(10.0, "launch-overhead"),
}


# Per-core buffers, cube and vector widths and the system workspace: architectural (2201) values,
# the same on every A2/A3 part.
_CORE_2201: dict[str, Entry] = {
    "ub_size": _c(192 * KIB, "arch-2201"),
    "l1_size": _c(512 * KIB, "aicorespec"),
    "l0a_size": _c(64 * KIB, "aicorespec"),
    "l0b_size": _c(64 * KIB, "aicorespec"),
    "l0c_size": _c(128 * KIB, "arch-2201"),
    "bt_size": _c(1 * KIB, "arch-2201"),
    "fixbuf_size": _c(7 * KIB, "aicorespec"),
    "cube_fp16_macs_per_cycle": _c(16 * 16 * 16, "aicorespec"),
    "vector_bytes_per_cycle": _c(256, "arch-2201"),
    "system_workspace_size": _c(16 * MIB, "devkit-ws"),
    "system_counter_mhz": _c(50.0, "sys-cycle"),
}

# [AICoreMemoryRates] of Ascend910B1.ini; other parts assume the same rates.
_RATES_B1: dict[str, Entry] = {
    "ddr_rate": _c(32, "ini-B1"),
    "l2_read_rate": _c(110, "ini-B1"),
    "l2_write_rate": _c(86, "ini-B1"),
    "l1_to_l0a_rate": _c(512, "ini-B1"),
    "l1_to_l0b_rate": _u(256, "other-soc"),
    "ub_to_l2_rate": _c(64, "ini-B1"),
}


def _rates_like_b1(source: str = "same-as-B1") -> dict[str, Entry]:
    return {k: (v, source if ok else src, False) for k, (v, src, ok) in _RATES_B1.items()}


def _profile(**entries: Entry) -> dict[str, Entry]:
    return {**_CORE_2201, **_COST_2201, **entries}


PROFILES: dict[str, dict[str, Entry]] = {
    "Ascend910B1": _profile(
        aic_count=_c(24, "ini-B1"), aiv_count=_c(48, "ini-B1"), cube_freq_mhz=_c(1850.0, "ini-B1"),
        l2_size=_c(192 * MIB, "ini-B1"), hbm_size=_c(64 * GIB, "ini-B1"),
        hbm_bandwidth_gbps=_u(1600.0, "hbm-public"), **_RATES_B1),
    "Ascend910B2": _profile(
        aic_count=_c(24, "ini-B2"), aiv_count=_c(48, "ini-B2"), cube_freq_mhz=_c(1800.0, "ini-B2"),
        l2_size=_c(192 * MIB, "ini-B2"), hbm_size=_c(64 * GIB, "ini-B2"),
        hbm_bandwidth_gbps=_u(1600.0, "sim-config"), **_rates_like_b1()),
    "Ascend910B2C": _profile(
        aic_count=_u(24, "dvm-table"), aiv_count=_u(48, "same-as-B2"), cube_freq_mhz=_u(1800.0, "same-as-B2"),
        l2_size=_u(192 * MIB, "dvm-table"), hbm_size=_u(64 * GIB, "same-as-B2"),
        hbm_bandwidth_gbps=_u(1600.0, "same-as-B2"), **_rates_like_b1()),
    "Ascend910B3": _profile(
        aic_count=_c(20, "ini-B3"), aiv_count=_c(40, "ini-B3"), cube_freq_mhz=_u(1800.0, "sim-config"),
        l2_size=_c(192 * MIB, "catlass-B3"), hbm_size=_u(64 * GIB, "sim-config"),
        hbm_bandwidth_gbps=_u(1600.0, "sim-config"), **_rates_like_b1()),
    "Ascend910B4": _profile(
        aic_count=_c(20, "ini-B4"), aiv_count=_c(40, "ini-B4"), cube_freq_mhz=_u(1500.0, "fixture-B4"),
        l2_size=_c(96 * MIB, "ini-B4"), hbm_size=_c(32 * GIB, "ini-B4"),
        hbm_bandwidth_gbps=_u(800.0, "sim-config"),
        **{**_rates_like_b1(), "ddr_rate": _u(32, "fixture-B4")}),
    "Ascend910B4-1": _profile(
        aic_count=_c(20, "ini-B4-1"), aiv_count=_c(40, "ini-B4-1"), cube_freq_mhz=_u(1500.0, "same-as-B4"),
        l2_size=_u(96 * MIB, "dvm-table"), hbm_size=_u(32 * GIB, "same-as-B4"),
        hbm_bandwidth_gbps=_u(800.0, "same-as-B4"), **_rates_like_b1()),
    "Ascend910_9392": _profile(
        aic_count=_c(24, "ini-9392"), aiv_count=_c(48, "ini-9392"), cube_freq_mhz=_u(1850.0, "npu-smi-A3"),
        l2_size=_c(192 * MIB, "ini-9392"), hbm_size=_u(64 * GIB, "npu-smi-A3"),
        hbm_bandwidth_gbps=_u(1600.0, "hbm-public"), **_rates_like_b1()),
    "Ascend910_9391": _profile(
        aic_count=_u(24, "same-as-9392"), aiv_count=_u(48, "same-as-9392"),
        cube_freq_mhz=_u(1850.0, "same-as-9392"), l2_size=_u(192 * MIB, "dvm-table"),
        hbm_size=_u(64 * GIB, "same-as-9392"), hbm_bandwidth_gbps=_u(1600.0, "same-as-9392"), **_rates_like_b1()),
    "Ascend910_9382": _profile(
        aic_count=_u(24, "dvm-table"), aiv_count=_u(48, "dvm-table"), cube_freq_mhz=_u(1850.0, "same-as-9392"),
        l2_size=_u(192 * MIB, "dvm-table"), hbm_size=_u(64 * GIB, "same-as-9392"),
        hbm_bandwidth_gbps=_u(1600.0, "same-as-9392"), **_rates_like_b1()),
    "Ascend910_9381": _profile(
        aic_count=_u(24, "dvm-table"), aiv_count=_u(48, "dvm-table"), cube_freq_mhz=_u(1850.0, "same-as-9392"),
        l2_size=_u(192 * MIB, "dvm-table"), hbm_size=_u(64 * GIB, "same-as-9392"),
        hbm_bandwidth_gbps=_u(1600.0, "same-as-9392"), **_rates_like_b1()),
    "Ascend910_9372": _profile(
        aic_count=_u(20, "dvm-table"), aiv_count=_u(40, "dvm-table"), cube_freq_mhz=_u(1850.0, "same-as-9392"),
        l2_size=_u(192 * MIB, "dvm-table"), hbm_size=_u(64 * GIB, "same-as-9392"),
        hbm_bandwidth_gbps=_u(1600.0, "same-as-9392"), **_rates_like_b1()),
    "Ascend910_9362": _profile(
        aic_count=_u(20, "dvm-table"), aiv_count=_u(40, "dvm-table"), cube_freq_mhz=_u(1850.0, "same-as-9392"),
        l2_size=_u(168 * MIB, "dvm-table"), hbm_size=_u(64 * GIB, "same-as-9392"),
        hbm_bandwidth_gbps=_u(1600.0, "same-as-9392"), **_rates_like_b1()),
}


def profile_fields(name: str) -> tuple[dict[str, Any], tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(field values, (field, source key) pairs, unconfirmed field names) of built-in profile ``name``."""
    entries = PROFILES[name]
    values = {k: v for k, (v, _, _) in entries.items()}
    sources = tuple((k, src) for k, (_, src, _) in entries.items())
    unconfirmed = tuple(k for k, (_, _, ok) in entries.items() if not ok)
    return values, sources, unconfirmed
