"""Embedding the OffloadBinary in the host module as clang's -fembed-offload-object does, and the bundle
record (target clang profile, producer LLVM, targets) that `link`, `inspect` and `verify` read back.

The record travels in two places: string keys of every OffloadBinary image (machine-readable from a
bitcode or ELF bundle alike, through offload.packager.read_offload_images) and a named metadata node
`!mlir_offload.bundle` for people reading the IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from offload.errors import OffloadError

EMBEDDED_OBJECT = "llvm.embedded.object"
OFFLOADING_SECTION = ".llvm.offloading"
RECORD_PREFIX = "mlir-offload."
RECORD_METADATA = "mlir_offload.bundle"


@dataclass(frozen=True)
class BundleRecord:
    profile: int  # target clang major whose entry layout the bundle uses
    producer_llvm: str  # "22.1.0": the LLVM that wrote the bitcode in the bundle
    host_format: str  # "bc" (bitcode) | "obj" (ELF object)
    targets: tuple[str, ...]  # "cuda:sm_80", ...

    @property
    def producer_llvm_major(self) -> int:
        return int(self.producer_llvm.split(".")[0])

    def image_strings(self) -> dict[str, str]:
        """Extra OffloadBinary string keys (after "triple" and "arch")."""
        return {
            RECORD_PREFIX + "profile": str(self.profile),
            RECORD_PREFIX + "producer": f"LLVM {self.producer_llvm}",
            RECORD_PREFIX + "host": self.host_format,
        }


def read_bundle_record(data: bytes, name: str):
    """(BundleRecord, images) of a bundle file; an error naming what is missing otherwise."""
    from offload.packager import read_offload_images

    images = read_offload_images(data, name)
    if not images:
        raise OffloadError(f"'{name}' has no {OFFLOADING_SECTION} images: it is not an mlir-offload bundle")
    first = images[0].strings
    key = RECORD_PREFIX + "profile"
    if key not in first:
        raise OffloadError(f"'{name}' holds offload images without an mlir-offload record ({key}): it was not "
                           "made by `mlir-offload compile`")
    producer = first.get(RECORD_PREFIX + "producer", "LLVM 0").split()[-1]
    targets = tuple(f"{_kind_name(image)}:{image.strings.get('arch', '?')}" for image in images)
    record = BundleRecord(int(first[key]), producer, first.get(RECORD_PREFIX + "host", "bc"), targets)
    return record, images


def _kind_name(image) -> str:
    triple = image.strings.get("triple", "")
    return "hip" if triple.startswith("amdgcn") else "cuda" if triple.startswith("nvptx") else triple


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
    for key, value in (("profile", str(record.profile)), ("producer", f"LLVM {record.producer_llvm}"),
                       ("host", record.host_format), ("targets", ",".join(record.targets))):
        node.add(module.add_metadata([key, value]))
