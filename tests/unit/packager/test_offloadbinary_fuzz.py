"""The reader on hostile input: only OffloadBinaryError escapes, memory stays within the input's
size, and it always terminates (hypothesis' deadline catches a hang)."""

from __future__ import annotations

import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offload.packager import OffloadBinaryError, OffloadImage, read_binary, write_binary, write_binary_v2

pytestmark = pytest.mark.no_toolchain

SEED_IMAGES = [
    OffloadImage(2, 2, 0, {"arch": "sm_80", "triple": "nvptx64-nvidia-cuda", "feature": "+ptx80"}, b"BC\xc0\xde" * 30),
    OffloadImage(3, 4, 0, {"arch": "gfx90a", "triple": "amdgcn-amd-amdhsa"}, bytes(range(200))),
]
V1 = write_binary(SEED_IMAGES)
V2 = write_binary_v2(SEED_IMAGES)


def read_within_limits(data: bytes) -> None:
    """Read; allow only our error; memory may not exceed a small multiple of the input."""
    tracemalloc.start()
    try:
        read_binary(data)
    except OffloadBinaryError as e:
        assert "\n" not in e.render()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak <= 8 * len(data) + 256 * 1024, f"peak {peak} bytes for {len(data)} bytes of input"


@st.composite
def mutated_blobs(draw):
    data = bytearray(draw(st.sampled_from([V1, V2, V1 + V2])))
    for _ in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(["byte", "u64", "truncate", "extend"]))
        if action == "byte" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        elif action == "u64" and len(data) >= 8:
            at = draw(st.integers(0, len(data) - 8))
            value = draw(st.sampled_from([0, 1, 7, 8, 31, 32, 40, len(data), len(data) + 1, 2**31, 2**63, 2**64 - 1]))
            data[at : at + 8] = value.to_bytes(8, "little")
        elif action == "truncate":
            del data[draw(st.integers(0, len(data))) :]
        else:
            data += draw(st.binary(max_size=64))
    return bytes(data)


@settings(max_examples=400, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_blobs())
def test_mutated_blobs(data):
    read_within_limits(data)


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=512))
def test_random_bytes_after_magic(data):
    read_within_limits(b"\x10\xff\x10\xad" + data)


def _header(version=1, size=None, entries_offset=32, count_or_size=40, extra=b""):
    return (
        struct.pack(
            "<4sIQQQ",
            b"\x10\xff\x10\xad",
            version,
            size if size is not None else 32 + 40 + len(extra),
            entries_offset,
            count_or_size,
        )
        + extra
    )


def _entry(string_offset=72, num_strings=0, image_offset=72, image_size=0):
    return struct.pack("<HHIQQQQ", 2, 2, 0, string_offset, num_strings, image_offset, image_size)


NASTY = {
    "empty": b"",
    "short header": b"\x10\xff\x10\xad\x01\x00",
    "bad magic": b"\x10\xff\x10\xae" + V1[4:],
    "version 0": V1[:4] + b"\0\0\0\0" + V1[8:],
    "version 99": V1[:4] + struct.pack("<I", 99) + V1[8:],
    "size too big": _header(size=2**64 - 1, extra=_entry()),
    "size below header": _header(size=8, extra=_entry()),
    "entry offset huge": _header(entries_offset=2**63, extra=_entry()),
    "entry past end": _header(entries_offset=64, extra=_entry()),
    "v2 entry count huge": _header(version=2, count_or_size=2**62, extra=_entry()),
    "v2 entry count overflows": _header(version=2, count_or_size=2**64 - 1, extra=_entry()),
    "image offset huge": _header(extra=_entry(image_offset=2**64 - 1, image_size=1)),
    "image size overflows": _header(extra=_entry(image_offset=8, image_size=2**64 - 8)),
    "image overlaps end": _header(extra=_entry(image_offset=60, image_size=40)),
    "string count huge": _header(extra=_entry(num_strings=2**60)),
    "string map past end": _header(extra=_entry(string_offset=2**64 - 16, num_strings=1)),
    "unterminated string": _header(
        extra=_entry(string_offset=72, num_strings=1) + struct.pack("<QQ", 88, 88) + b"keykeyke"
    ),
    "string offset past end": _header(extra=_entry(string_offset=72, num_strings=1) + struct.pack("<QQ", 2**40, 0)),
    "v2 value size huge": _header(
        version=2,
        count_or_size=1,
        extra=_entry(string_offset=72, num_strings=1) + struct.pack("<QQQ", 96, 96, 2**63) + b"k\0\0\0\0\0\0\0",
    ),
    "v3 compressed": struct.pack("<4sIQQQQ", b"\x10\xff\x10\xad", 3, 48, 40, 1, 4096) + b"\0" * 8,
    "trailing garbage": V1 + b"\x01",
    "second blob truncated": V1 + V1[:40],
    "self-overlapping entries": _header(entries_offset=0, extra=_entry()),
}


@pytest.mark.parametrize("name", sorted(NASTY))
def test_nasty_case_is_rejected_cleanly(name):
    with pytest.raises(OffloadBinaryError):
        read_binary(NASTY[name])
    read_within_limits(NASTY[name])


def test_every_truncation_of_a_real_blob():
    for end in range(len(V1)):
        read_within_limits(V1[:end])
    assert len(read_binary(V1)) == 2
