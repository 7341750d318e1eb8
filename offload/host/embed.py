"""Embedding the OffloadBinary in the host module as clang's -fembed-offload-object does, with the bundle
record (offload.packager.bundle) as a named metadata node for people reading the IR."""

from __future__ import annotations

from offload.errors import OffloadError
from offload.packager.bundle import EMBEDDED_OBJECT, OFFLOADING_SECTION, RECORD_METADATA, BundleRecord


def embed_offload_binary(module, blob: bytes) -> object:
    """`@llvm.embedded.object = private constant [N x i8] ..., section ".llvm.offloading", align 8, !exclude`,
    kept by `@llvm.compiler.used` and listed in `!llvm.embedded.objects`."""
    import llvmlite.ir as ir

    if len(blob) % 8:
        raise OffloadError("internal error: an OffloadBinary must be a multiple of 8 bytes")
    data = ir.Constant(ir.ArrayType(ir.IntType(8), len(blob)), bytearray(blob))
    embedded = ir.GlobalVariable(module, data.type, EMBEDDED_OBJECT)
    embedded.linkage = "private"
    embedded.global_constant = True
    embedded.initializer = data
    embedded.section = OFFLOADING_SECTION
    embedded.align = 8
    embedded.set_metadata("exclude", module.add_metadata([]))
    used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), 1), "llvm.compiler.used")
    used.linkage = "appending"
    used.section = "llvm.metadata"
    used.initializer = ir.Constant(used.value_type, [embedded])
    module.add_named_metadata("llvm.embedded.objects", module.add_metadata([embedded, OFFLOADING_SECTION]))
    return embedded


def add_record_metadata(module, record: BundleRecord) -> None:
    node = module.add_named_metadata(RECORD_METADATA)
    for key, value in (
        ("profile", str(record.profile)),
        ("producer", f"LLVM {record.producer_llvm}"),
        ("host", record.host_format),
        ("targets", ",".join(record.targets)),
        ("host-triple", record.host_triple),
    ):
        node.add(module.add_metadata([key, value]))
