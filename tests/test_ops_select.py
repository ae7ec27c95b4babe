"""Binary selection: the key bytes and hash of CANN's opapi, impl mode and format rules, refusals, speed."""
from __future__ import annotations

import struct

import numpy as np

from npuemu.ops import selection_key as sk
from npuemu.ops.codes import FORMAT_END

# --------------------------------------------------------------------------- key bytes and hash


def test_context_bytes():
    assert sk.context_key(False, "high_performance") == b"0/1/"     # IMPL_MODE_HIGH_PERFORMANCE = 0x2: index 1
    assert sk.context_key(True, "high_precision") == b"1/2/"        # IMPL_MODE_HIGH_PRECISION = 0x4: index 2
    assert sk.impl_mode_char("default") == b"0"


def test_tensor_bytes_are_ge_codes_with_markers():
    assert sk.tensor_key("float16", "ND") == bytes([1, 2])
    assert sk.tensor_key("bfloat16", "FRACTAL_NZ") == bytes([27, 29])
    assert sk.tensor_key("float32", "ND", rank=4) == bytes([0, 2, FORMAT_END + 4])
    assert sk.tensor_key("int8", "ND", count=3) == bytes([2, 2, FORMAT_END + 3])
    assert sk.tensor_key("int8", "ND", count=200) == bytes([2, 2, (FORMAT_END + 200) & 0xFF])   # a char wraps


def test_attribute_bytes():
    assert sk.attr_key("bool", True) == b"/\x01"
    assert sk.attr_key("int", -2) == b"/" + b"\xfe" + b"\xff" * 7                    # int64 little-endian
    assert sk.attr_key("float", 1.5) == b"/" + struct.pack("<f", 1.5)
    assert sk.attr_key("list_int", [3, 4, 5]) == b"/[\x03]"
    assert sk.attr_key("str", "gelu") == b"/gelu"
    # the index side encodes by JSON type: the same values give the same bytes
    assert [sk.json_attr_key(v) for v in (True, -2, 1.5, [3, 4, 5], "gelu")] == [
        sk.attr_key(t, v) for t, v in (("bool", True), ("int", -2), ("float", 1.5), ("list_int", [3, 4, 5]),
                                       ("str", "gelu"))]


def test_hash_of_one_word():
    # b"0/1/" zero-padded: w = 0x2f312f30; seed = 0 ^ (w + 0x9e3779b9 + (0 << 6) + (0 >> 2))
    assert sk.key_hash(b"0/1/") == 0x2F312F30 + 0x9E3779B9 == 0xCD68A8E9
    assert sk.key_hash(b"") == 0


def test_hash_of_two_words_by_hand():
    key = b"0/1/" + bytes([1, 2]) * 3            # Add, float16 x1, x2, y, all ND: 10 bytes
    w1 = 0x020102012F312F30                      # bytes 30 2f 31 2f 01 02 01 02, little-endian
    assert w1 == int.from_bytes(key[:8], "little")
    s1 = w1 + 0x9E3779B9                          # seed 0: nothing to shift
    assert s1 == 0x02010201CD68A8E9
    # word 2: the tail 01 02 zero-padded = 0x0201; s1 << 6 wraps at 64 bits
    shifted, right = 0x804080735A2A3A40, 0x00804080735A2A3A
    assert shifted == (s1 << 6) & (2**64 - 1) and right == s1 >> 2
    total = (0x0201 + 0x9E3779B9 + shifted + right) & (2**64 - 1)
    assert total == 0x80C0C0F46BBBE034
    assert sk.key_hash(key) == s1 ^ total == 0x82C1C2F5A6D348DD


def test_hash_matches_an_independent_uint64_fold():
    rng = np.random.default_rng(1)
    for n in (1, 7, 8, 9, 16, 23, 40):
        key = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        padded = key + b"\0" * (-n % 8)
        seed = np.uint64(0)
        with np.errstate(over="ignore"):
            for w in np.frombuffer(padded, "<u8"):
                seed ^= w + np.uint64(0x9E3779B9) + (seed << np.uint64(6)) + (seed >> np.uint64(2))
        assert sk.key_hash(key) == int(seed)


# --------------------------------------------------------------------------- keys of index entries


def _tensor(name, dtype, fmt="ND", shape=(-2,), param="required"):
    return {"name": name, "dtype": dtype, "format": fmt, "paramType": param, "shape": list(shape)}


def test_entry_keys_context_tensors_attributes():
    entry = {"implMode": "high_performance", "deterministic": "ignore",
             "inputs": [_tensor("x", "float16"), None, [_tensor("xs", "float32")] * 2],
             "outputs": [_tensor("y", "float16")],
             "attrs": [{"name": "alpha", "dtype": "float", "value": 2.0},
                       {"name": "mode", "dtype": "str", "value": None}]}
    other = dict(entry, attrs=[{"name": "alpha", "dtype": "float", "value": 3.0},
                               {"name": "mode", "dtype": "str", "value": None}])
    flags = sk.attrs_support_all([entry, other])
    assert flags == [False, True]            # alpha differs between binaries; mode is null ("all") in both
    keys = sk.entry_keys(entry, flags)
    body = bytes([1, 2]) + bytes([0, 2, FORMAT_END + 2]) + bytes([1, 2]) + b"/" + struct.pack("<f", 2.0)
    assert keys == [(b"1/1/" + body, True), (b"0/1/" + body, False)]      # "ignore": both flags
    assert sk.entry_keys(dict(entry, deterministic="false"), flags) == [(b"0/1/" + body, False)]


def test_support_all_rules():
    def e(*values):
        return {"attrs": [{"name": f"a{i}", "value": v} for i, v in enumerate(values)]}
    # same number everywhere: left out; a bool or string: always in; lists by length
    assert sk.attrs_support_all([e(1, True, "x", [1, 2]), e(1, True, "x", [3, 4])]) == [True, False, False, True]
    assert sk.attrs_support_all([e(1, None, "ALL", []), e(2, None, "ALL", [])]) == [False, True, True, True]


def test_rank_markers_only_when_ranks_differ():
    def e(shape):
        return {"inputs": [_tensor("x", "float32", shape=shape)]}
    assert sk.inputs_need_rank([e([8, 8]), e([8, 8, 8])]) == [True]
    assert sk.inputs_need_rank([e([-2]), e([8, 8, 8])]) == [False]
    assert sk.inputs_need_rank([e([8, 8]), e([4, 4])]) == [False]
    keys = sk.entry_keys({"implMode": "high_precision", "deterministic": "true", **e([8, 8, 8])}, [], [True])
    assert keys == [(b"1/2/" + bytes([0, 2, FORMAT_END + 3]), True)]


def test_static_key_text():
    key = sk.static_key("Add", False, "high_performance", [("float32", "ND", (200, 3)), ("float32", "ND", (200, 3))],
                        {"alpha": 1.0})
    assert key == "Add/d=0,p=1/0,2,(200,3)/0,2,(200,3)/alpha=1.0"
