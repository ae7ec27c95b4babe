"""SoC profiles as data, the PlatformAscendC host API, custom profiles and ``npuemu platforms``."""
from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import cli
from npuemu.errors import CapacityError, PlatformError
from npuemu.host import CoreMemType, PlatformAscendC
from npuemu import profiles
from npuemu.platform import DEFAULT_PLATFORM, Platform, default_platform, get_platform, platforms

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
A2 = ("Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4")
A3 = ("Ascend910_9392", "Ascend910_9391", "Ascend910_9382", "Ascend910_9381", "Ascend910_9372", "Ascend910_9362")


def test_builtin_profiles_cover_a2_and_a3():
    names = {p.name for p in platforms()}
    assert set(A2) | set(A3) <= names
    assert DEFAULT_PLATFORM == "Ascend910B1"


@pytest.mark.parametrize("name", A2 + A3)
def test_every_profile_has_the_2201_core_buffers_and_a_source_for_each_value(name):
    p = get_platform(name)
    assert (p.ub_size, p.l1_size, p.l0a_size, p.l0b_size, p.l0c_size, p.bt_size, p.fixbuf_size) == \
        (192 * KIB, 512 * KIB, 64 * KIB, 64 * KIB, 128 * KIB, 1 * KIB, 7 * KIB)
    assert p.system_workspace_size == 16 * MIB
    assert p.cube_fp16_macs_per_cycle == 4096 and p.vector_bytes_per_cycle == 256
    assert p.aiv_count == 2 * p.aic_count                        # separated architecture, AIC:AIV = 1:2
    recorded = dict(p.sources)
    assert set(profiles.PROFILES[name]) == set(recorded)
    assert all(key in profiles.SOURCES for key in recorded.values())
    assert set(p.unconfirmed) <= set(recorded)
    assert "hbm_bandwidth_gbps" in p.unconfirmed                 # no CANN file states it


def test_values_quoted_from_the_ini_files():
    b1, b2, b4, c = (get_platform(n) for n in ("Ascend910B1", "Ascend910B2", "Ascend910B4", "Ascend910_9392"))
    assert (b1.aic_count, b1.aiv_count, b1.cube_freq_mhz, b1.l2_size, b1.hbm_size) == (24, 48, 1850, 192 * MIB, 64 * GIB)
    assert (b1.ddr_rate, b1.l2_read_rate, b1.l2_write_rate, b1.l1_to_l0a_rate, b1.ub_to_l2_rate) == (32, 110, 86, 512, 64)
    assert b2.cube_freq_mhz == 1800 and "cube_freq_mhz" not in b2.unconfirmed
    assert (b4.aic_count, b4.aiv_count, b4.l2_size, b4.hbm_size) == (20, 40, 96 * MIB, 32 * GIB)
    assert "cube_freq_mhz" in b4.unconfirmed
    assert (c.aic_count, c.aiv_count, c.l2_size) == (24, 48, 192 * MIB)
    assert {"aic_count", "aiv_count"} <= set(get_platform("Ascend910_9391").unconfirmed)
    # 24 AIC x 4096 MAC x 2 FLOP x 1.85 GHz: the ~364 TFLOPS fp16 per die of ascend-c.md §4.3
    assert b1.cube_fp16_tflops == pytest.approx(363.7, abs=0.1)
    assert b1.ini_ddr_bandwidth_gbps == pytest.approx(1420.8)
    assert "ini" in b1.source("aic_count") and "Ascend910B1.ini" in b1.source("cube_freq_mhz")


def test_default_platform_is_ascend910b1(monkeypatch):
    monkeypatch.delenv("NPUEMU_PLATFORM", raising=False)
    assert default_platform().name == "Ascend910B1"


def test_platform_ascendc_reports_the_profile():
    pa = PlatformAscendC("Ascend910B3")
    assert (pa.get_core_num_aic(), pa.get_core_num_aiv(), pa.get_core_num()) == (20, 40, 40)
    sizes = {t: pa.get_core_mem_size(t) for t in CoreMemType if t is not CoreMemType.RESERVED}
    assert sizes == {CoreMemType.L0_A: 65536, CoreMemType.L0_B: 65536, CoreMemType.L0_C: 131072,
                     CoreMemType.L1: 524288, CoreMemType.L2: 192 * MIB, CoreMemType.UB: 196608,
                     CoreMemType.HBM: 64 * GIB, CoreMemType.FB: 7168, CoreMemType.BT: 1024}
    assert [int(t) for t in (CoreMemType.L0_A, CoreMemType.UB, CoreMemType.HBM, CoreMemType.FB, CoreMemType.BT)] == \
        [0, 5, 6, 7, 8]
    assert pa.get_lib_api_workspace_size() == 16 * MIB
    assert (pa.get_core_mem_bw(CoreMemType.L2), pa.get_core_mem_bw(CoreMemType.HBM)) == (110, 32)
    with pytest.raises(ValueError):
        pa.get_core_mem_bw(CoreMemType.UB)
    with pytest.raises(ValueError):
        pa.get_core_mem_size(CoreMemType.RESERVED)
    capped = PlatformAscendC("Ascend910B1", core_num=5)
    assert (capped.get_core_num_aiv(), capped.get_core_num_aic()) == (5, 5)


def test_calc_tsch_num_blocks(caplog):
    calc = PlatformAscendC.calc_tsch_num_blocks
    assert calc(48, 24, 48) == 24            # the documented example
    assert calc(47, 24, 48) == 24
    assert calc(1, 24, 48) == 1
    with caplog.at_level(logging.ERROR, logger="npuemu.host"):
        assert calc(49, 24, 48) == 0         # 25 AI cores needed, 24 exist: CANN logs an error and returns 0
    assert "only 24 AI cores" in caplog.text
    assert calc(30, 0, 48) == 30             # no cube cores: one block per slice
    assert calc(30, 24, 0) == 30
    assert calc(30, 30, 20) == 30            # more cube than vector cores
    assert calc(30, 24, 24) == 30            # ratio 1: no limit is checked
    assert calc(100, 24, 24) == 100


def test_custom_profile_records_what_the_user_set():
    p = Platform.custom("test-platforms-7core", aiv_count=7, ub_size=64 * KIB, cube_freq_mhz=1000.0)
    assert get_platform("test-platforms-7core") is p
    assert (p.aiv_count, p.ub_size, p.aic_count) == (7, 64 * KIB, 24)
    assert p.source("aiv_count") == profiles.SOURCES["custom"] and "Ascend910B1.ini" in p.source("aic_count")
    assert "cube_freq_mhz" not in p.unconfirmed and "hbm_bandwidth_gbps" in p.unconfirmed
    pa = PlatformAscendC(p)
    assert (pa.get_core_num_aiv(), pa.get_core_mem_size(CoreMemType.UB)) == (7, 64 * KIB)
    # a platform derived from a custom one inherits its values and sources
    q = Platform.custom("test-platforms-7core-b", base=p, hbm_bandwidth_gbps=800.0)
    assert q.aiv_count == 7 and q.source("aiv_count") == profiles.SOURCES["custom"]


@pytest.mark.parametrize("overrides, message", [
    ({"no_such_field": 1}, "unknown platform fields"),
    ({"aiv_count": 0, "aic_count": 0}, "at least one core"),
    ({"ub_size": 1000}, "UB"),
    ({"l1_size": -1}, "non-negative"),
    ({"cube_freq_mhz": 0.0}, "positive"),
])
def test_bad_custom_profiles_are_rejected(overrides, message):
    with pytest.raises(PlatformError, match=message):
        Platform.custom("test-platforms-bad", **overrides)


def test_profiles_are_frozen_data():
    p = get_platform("Ascend910B1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.aiv_count = 8  # type: ignore[misc]
    assert hash(p) == hash(get_platform("Ascend910B1"))


def test_cli_lists_profiles_and_their_sources(capsys):
    assert cli.main(["platforms"]) == 0
    out = capsys.readouterr().out
    for name in A2 + A3:
        assert name in out
    for heading in ("AIC", "AIV", "UB KiB", "L0A/B/C KiB", "BT KiB", "MHz", "L2 MiB", "HBM GB/s", "fp16 TFLOPS",
                    "sysWS MiB"):
        assert heading in out
    assert cli.main(["platforms", "Ascend910B4"]) == 0
    detail = capsys.readouterr().out
    assert "cube_freq_mhz" in detail and "UNCONFIRMED" in detail and "Ascend910B4.ini" in detail
    assert "ub_to_l2_rate" in detail and "system_workspace_size" in detail
    # the installed command, in a fresh process: the built-in profiles, one line each
    run = subprocess.run([sys.executable, "-m", "npuemu", "platforms"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    listed = [line.split()[0] for line in run.stdout.splitlines()[1:] if line.startswith("Ascend")]
    assert listed == list(profiles.PROFILES)
    b4 = next(line for line in run.stdout.splitlines() if line.startswith("Ascend910B4 "))
    assert b4.split()[1:4] == ["20", "40", "192"]                   # AIC, AIV, UB KiB


@asc.jit
def _ub_hog(x: asc.GlobalAddress, nbytes: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, nbytes)


def test_launches_honour_a_custom_profiles_ub_size():
    """96 KiB of UB fits the 192 KiB of Ascend910B1 but not a custom part with 64 KiB."""
    small = Platform.custom("test-platforms-64k-ub", ub_size=64 * KIB)
    x = np.zeros(8, np.float32)
    _ub_hog[1](x, 96 * KIB, platform="Ascend910B1")
    with pytest.raises(CapacityError):
        _ub_hog[1](x, 96 * KIB, platform=small)


# ---------------------------------------------------------------------------- docs/platforms.md is the data

DOCS = Path(__file__).resolve().parent.parent / "docs" / "platforms.md"
RATES = ("ddr_rate", "l2_read_rate", "l2_write_rate", "l1_to_l0a_rate", "l1_to_l0b_rate", "ub_to_l2_rate")


def _doc_table(first_heading: str) -> list[list[str]]:
    lines = DOCS.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_heading} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def _cell(text: str) -> tuple[float, bool]:
    """(number, confirmed) of a table cell such as ``1600 **U**``, ``192 MiB`` or ``256*``."""
    confirmed = "**U**" not in text and not text.endswith("*")
    return float(text.replace("**U**", "").rstrip("*").split()[0]), confirmed


def test_the_per_soc_table_of_the_docs_is_the_profile_data():
    rows = {r[0]: r[1:] for r in _doc_table("SoC")}
    assert list(rows) == list(profiles.PROFILES)                     # every built-in profile, in order
    columns = (("aic_count", 1), ("aiv_count", 1), ("cube_freq_mhz", 1), ("l2_size", MIB), ("hbm_size", GIB),
               ("hbm_bandwidth_gbps", 1))
    for name, cells in rows.items():
        p = get_platform(name)
        for (field, unit), text in zip(columns, cells):
            value, confirmed = _cell(text)
            assert value * unit == getattr(p, field), (name, field)
            assert confirmed == (field not in p.unconfirmed), (name, field, text)
        for field, text in zip(RATES, cells[-1].split(" / ")):
            value, confirmed = _cell(text)
            assert value == getattr(p, field) and confirmed == (field not in p.unconfirmed), (name, field, text)


def test_the_per_core_table_of_the_docs_is_the_profile_data():
    documented = {}
    for cells in _doc_table("field"):
        for field in cells[0].replace("`", "").split(", "):
            documented[field] = cells[1]
    for p in (get_platform(n) for n in profiles.PROFILES):
        for field in ("ub_size", "l1_size", "l0a_size", "l0b_size", "l0c_size", "bt_size", "fixbuf_size",
                      "cube_fp16_macs_per_cycle", "vector_bytes_per_cycle"):
            assert int(documented[field].split()[0]) == getattr(p, field), (p.name, field)
        assert documented["system_workspace_size"] == "16 MiB" and p.system_workspace_size == 16 * MIB


def test_cli_mistakes_end_in_one_line_not_a_traceback(capsys):
    assert cli.main(["platforms", "Nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("npuemu platforms: error: unknown platform 'Nope'; known: ")
    assert cli.main(["demo", "--kernel", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown kernel nosuch; the bundled kernels are add, " in err[0]
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith("npuemu ")
