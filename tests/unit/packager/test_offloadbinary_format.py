"""OffloadBinary format properties: write/read round trips (v1 and v2), string table, content
detection, bitcode producer, containers."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offload.driver.textual_ir import read_offload_images  # the target side's reader, textual IR included
from offload.errors import OffloadError
from offload.packager import (
    ImageKind,
    OffloadBinaryError,
    OffloadImage,
    detect_image_kind,
    read_binary,
    write_binary,
    write_binary_v2,
)
from offload.packager.bitcode_ident import bitcode_producer
from offload.packager.llvm_order import dense_map_order
from offload.packager.strtab import build_string_table
from packager_inputs import host_module_embedding

text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"), max_size=40)
images_strategy = st.lists(
    st.builds(
        OffloadImage,
        image_kind=st.integers(0, 6),
        offload_kind=st.integers(0, 0xFFFF),
        flags=st.integers(0, 0xFFFFFFFF),
        strings=st.dictionaries(text, text, max_size=6),
        data=st.binary(max_size=300),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(images_strategy)
@pytest.mark.no_toolchain
def test_v1_round_trip(images):
    blob = write_binary(images)
    assert len(blob) % 8 == 0
    back = read_binary(blob)
    assert back == images
    assert [list(i.strings.items()) for i in back] == [list(i.strings.items()) for i in images]  # order too
    assert write_binary(back) == blob


@settings(max_examples=100, deadline=None)
@given(images_strategy)
@pytest.mark.no_toolchain
def test_v2_round_trip(images):
    blob = write_binary_v2(images)
    assert struct.unpack_from("<I", blob, 4)[0] == 2
    assert read_binary(blob) == images


@pytest.mark.no_toolchain
def test_v1_blobs_and_v2_blob_concatenate():
    a = OffloadImage(2, 2, 0, {"triple": "t", "arch": "sm_80"}, b"abc")
    b = OffloadImage(3, 4, 1, {"triple": "u", "arch": "gfx90a"}, b"defgh")
    assert read_binary(write_binary([a]) + write_binary_v2([b, a]) + write_binary([b])) == [a, b, a, b]


@pytest.mark.no_toolchain
def test_v1_layout_matches_llvm_header():
    blob = write_binary([OffloadImage(2, 2, 0, {"arch": "sm_80", "triple": "nvptx64-nvidia-cuda"}, b"x" * 5)])
    magic, version, size, entry_offset, entry_size = struct.unpack_from("<4sIQQQ", blob)
    assert (magic, version, size, entry_offset, entry_size) == (b"\x10\xff\x10\xad", 1, len(blob), 32, 40)
    kind, offload, flags, string_offset, count, image_offset, image_size = struct.unpack_from("<HHIQQQQ", blob, 32)
    assert (kind, offload, flags, string_offset, count, image_size) == (2, 2, 0, 72, 2, 5)
    assert image_offset % 8 == 0 and blob[image_offset : image_offset + 5] == b"xxxxx"


@pytest.mark.no_toolchain
def test_string_table_is_llvm_elf_order_with_tail_merging():
    table, offsets = build_string_table([b"arch", b"sm_80", b"triple", b"nvptx64-nvidia-cuda", b"m_80", b""])
    assert table == b"\0arch\0triple\0nvptx64-nvidia-cuda\0sm_80\0"
    assert offsets[b"m_80"] == offsets[b"sm_80"] + 1 and offsets[b""] == 0


@pytest.mark.no_toolchain
def test_dense_map_order_of_the_standard_keys():
    # What llvm-offload-binary stores for file/triple/arch/kind (verified on the tools).
    order = dense_map_order([b"file", b"triple", b"arch", b"kind"])
    assert order.index(b"arch") < order.index(b"triple")
    assert sorted(order) == sorted([b"file", b"triple", b"arch", b"kind"])
    assert dense_map_order([b"a", b"a"]) == [b"a"]


@pytest.mark.no_toolchain
def test_writer_rejects_unrepresentable_fields():
    with pytest.raises(OffloadBinaryError, match="NUL"):
        write_binary([OffloadImage(2, 2, 0, {"arch": "a\0b"}, b"")])
    with pytest.raises(OffloadBinaryError, match="16 bits"):
        write_binary([OffloadImage(2, 70000, 0, {}, b"")])
    with pytest.raises(OffloadBinaryError):
        write_binary([])


PTX = b"//\n// Generated\n//\n\n.version 7.0\n.target sm_80\n.address_size 64\n"


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"BC\xc0\xde" + b"\0" * 16, ImageKind.BITCODE),
        (b"\xde\xc0\x17\x0b" + b"\0" * 16, ImageKind.BITCODE),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 11 + (190).to_bytes(2, "little") + b"\0" * 8, ImageKind.CUBIN),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 11 + (62).to_bytes(2, "little") + b"\0" * 8, ImageKind.OBJECT),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 11 + (224).to_bytes(2, "little") + b"\0" * 8, ImageKind.OBJECT),
        (b"\x50\xed\x55\xba" + b"\0" * 16, ImageKind.FATBINARY),
        (b"\x03\x02\x23\x07" + b"\0" * 16, ImageKind.SPIRV),
        (PTX, ImageKind.PTX),
        (b"/* block\n comment */ .version 8.0\n.target sm_90a\n", ImageKind.PTX),
    ],
)
@pytest.mark.no_toolchain
def test_detect_image_kind(data, kind):
    assert detect_image_kind(data) == kind


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"hello world\n",
        b".target sm_80\n.version 7.0\n",
        b"\x00" * 64,
        b"\x10\xff\x10\xad" + b"\0" * 40,
        b"\x7fELF",
    ],
)
@pytest.mark.no_toolchain
def test_detect_image_kind_rejects_unknown_content(data):
    with pytest.raises(OffloadError):
        detect_image_kind(data)


def test_bitcode_producer_of_both_llvm_versions(tmp_path):
    import subprocess

    import llvmlite.binding as llvm

    from conftest import require_tool

    producer = bitcode_producer(llvm.parse_assembly("define void @f() { ret void }").as_bitcode())
    assert producer and producer.startswith("LLVM22.")
    clang19 = require_tool("clang-19", 19)
    (tmp_path / "e.c").write_text("int x;\n")
    subprocess.run([clang19, "-c", "-emit-llvm", "e.c", "-o", "e.bc"], cwd=tmp_path, check=True)
    producer = bitcode_producer((tmp_path / "e.bc").read_bytes())
    assert producer and producer.startswith("LLVM19.")
    assert bitcode_producer(b"BC\xc0\xde\xff\xff") is None
    assert bitcode_producer(b"not bitcode") is None


def _module_embedding(blob: bytes, with_function: bool = True):
    return host_module_embedding(blob, with_function)


@pytest.mark.no_toolchain
def test_containers_ir_bitcode_and_plain_modules():
    import llvmlite.binding as llvm

    images = [OffloadImage(2, 2, 0, {"triple": "nvptx64-nvidia-cuda", "arch": "sm_80"}, b"BC\xc0\xde1234")]
    blob = write_binary(images)
    text = str(_module_embedding(blob)).encode()
    assert read_offload_images(text, "host.ll") == images
    assert read_offload_images(llvm.parse_assembly(text.decode()).as_bitcode(), "host.bc") == images
    assert read_offload_images(blob, "raw.bin") == images
    assert read_offload_images(b"define void @f() {\n ret void\n}\n", "plain.ll") == []


@pytest.mark.no_toolchain
def test_container_errors_are_one_line_with_location():
    with pytest.raises(OffloadError) as e:
        read_offload_images(b"define void @f( {\n", "bad.ll")
    assert e.value.render() == "bad.ll:2:1: error: expected type"
    with pytest.raises(OffloadError, match="not an offload binary"):
        read_offload_images(b"\x00\x01\x02garbage", "junk.bin")


@pytest.mark.no_toolchain
def test_bitcode_globals_read_without_llvm():
    """The target side's bitstream reader finds what llvmlite finds: names, sections, byte initializers."""
    import llvmlite.binding as llvm
    from llvmlite import ir

    from offload.packager.bitcode_ident import bitcode_globals

    module = ir.Module("m")
    module.triple = "x86_64-unknown-linux-gnu"
    blob = write_binary(
        [OffloadImage(2, 2, 0, {"triple": "nvptx64-nvidia-cuda", "arch": "sm_80"}, bytes(range(256)) * 9)]
    )
    for name, data, section in (
        ("llvm.embedded.object", blob, ".llvm.offloading"),
        ("text", b"hi\0", ""),
        ("zeros", bytes(5), "other"),
    ):
        array = ir.ArrayType(ir.IntType(8), len(data))
        variable = ir.GlobalVariable(module, array, name)
        variable.initializer = ir.Constant(array, bytearray(data))
        if section:
            variable.section = section
    counter = ir.GlobalVariable(module, ir.IntType(32), "counter")
    counter.initializer = ir.Constant(ir.IntType(32), 7)
    ir.Function(module, ir.FunctionType(ir.VoidType(), []), "f")
    bitcode = llvm.parse_assembly(str(module)).as_bitcode()
    globals_found = bitcode_globals(bitcode)
    assert globals_found is not None
    found = {g.name: (g.section, g.initializer) for g in globals_found}
    # All zeros is LLVM's null constant, which carries no bytes (and is no OffloadBinary).
    assert found == {
        "llvm.embedded.object": (".llvm.offloading", blob),
        "text": ("", b"hi\0"),
        "zeros": ("other", None),
        "counter": ("", None),
    }
    assert read_offload_images(bitcode, "m.bc") == read_binary(blob)
    # Every truncation is refused (None) or read in bounds, never an exception.
    for end in range(0, len(bitcode), 7):
        result = bitcode_globals(bitcode[:end])
        assert result is None or isinstance(result, list)
