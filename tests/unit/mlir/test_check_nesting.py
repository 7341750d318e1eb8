"""check_nesting reads strings, comments, `->` and line ends exactly as a byte-by-byte scan does (the
reference below, its former implementation): the same texts refused, at the same line and column."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from offload.errors import OffloadError
from offload.mlir import frontend

pytestmark = pytest.mark.no_toolchain

LIMIT = 3  # a small limit: most random texts cross it somewhere, many do not


def reference_error(data: bytes, limit: int) -> tuple[int, int] | None:
    """(line, column) of the bracket that goes deeper than `limit`, scanning byte by byte; None if none."""
    depth, line, column_start, index, size = 0, 1, 0, 0, len(data)
    while index < size:
        byte = data[index]
        if byte == 0x0A:
            line, column_start = line + 1, index + 1
        elif byte == 0x22:
            index += 1
            while index < size and data[index] not in (0x22, 0x0A):
                index += 2 if data[index] == 0x5C else 1
        elif byte == 0x2F and data[index + 1 : index + 2] == b"/":
            end = data.find(b"\n", index)
            index = size if end < 0 else end
            continue
        elif byte in b"([{<":
            depth += 1
            if depth > limit:
                return line, index - column_start + 1
        elif byte in b")]}>" and not (byte == 0x3E and index and data[index - 1] == 0x2D):
            depth = max(depth - 1, 0)
        index += 1
    return None


def checked_error(data: bytes) -> tuple[int | None, int | None] | None:
    try:
        with patch.object(frontend, "MAX_NESTING", LIMIT):
            frontend.check_nesting(data, "p.mlir")
    except OffloadError as e:
        assert e.location is not None and e.location.file == "p.mlir"
        return e.location.line, e.location.col
    return None


@given(
    st.lists(
        st.sampled_from([b'"', b"\\", b"\n", b"/", b"-", b">", b"<", b"(", b")", b"[", b"]", b"{", b"}", b"a"]),
        max_size=80,
    )
)
def test_same_verdict_and_place_as_a_byte_scan(pieces):
    data = b"".join(pieces)
    assert checked_error(data) == reference_error(data, LIMIT)


@pytest.mark.parametrize(
    "text, place",
    [
        (b"((((", (1, 4)),
        (b"(\n((\n((((", (3, 1)),
        (b'"((((" ((((', (1, 11)),  # a string's brackets do not count
        (b'"((((\n((((', (1, 10)),  # an unterminated string ends with its line, taking the line end along
        (b'"\\\n((((" ((((', (1, 13)),  # an escaped newline is the string's too
        (b"// ((((\n((((", (2, 4)),
        (b"(->(->(->(", (1, 10)),  # the '>' of '->' closes nothing
        (b"(((>(((", (1, 6)),
        (b'"a\\', None),
        (b"(((", None),
    ],
)
def test_strings_comments_arrows(text, place):
    assert checked_error(text) == place == reference_error(text, LIMIT)
