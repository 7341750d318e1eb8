"""The bundle record: what a bundle is (target clang profile, producer LLVM, host format, targets),
written by `compile` and read back by link, inspect, verify, ship and doctor.

It travels in two places: string keys of every OffloadBinary image (machine-readable from a bitcode or
ELF bundle alike, through offload.packager.read_offload_images) and a named metadata node
`!mlir_offload.bundle` for people reading the IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from offload.errors import OffloadError
from offload.formats.sanitizers import SANITIZERS
from offload.packager.containers import read_offload_images

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
    # offload.formats.hosts name; bundles from before the key existed were all x86-64.
    host_triple: str = "x86_64-linux-gnu"
    # CUDA archs spelled compute_XX: the executable gets their PTX only (link drops their cubin).
    ptx_only: tuple[str, ...] = ()
    # compile -G: the device link must keep the debug information and not optimize (link adds the options).
    device_debug: bool = False
    # Libraries the host code calls beyond the vendor runtime (-l names: "cusparse"); link adds them.
    libraries: tuple[str, ...] = ()
    # compile --emulate --sanitize[=LIST] (offload.formats.sanitizers): what `link --emulate` checks.
    sanitize: tuple[str, ...] = ()
    sanitize_keep_going: bool = False
    # The first function of MLIR's sparse tensor runtime the host calls ('' for none): link refuses the
    # bundle unless it names the user's libmlir_c_runner_utils (offload.formats.sparse_tensor_runtime).
    sparse_tensor_runtime: str = ""

    @property
    def producer_llvm_major(self) -> int:
        return int(self.producer_llvm.split(".")[0])

    def image_strings(self) -> dict[str, str]:
        """Extra OffloadBinary string keys (after "triple" and "arch")."""
        return {
            RECORD_PREFIX + "profile": str(self.profile),
            RECORD_PREFIX + "producer": f"LLVM {self.producer_llvm}",
            RECORD_PREFIX + "host": self.host_format,
            RECORD_PREFIX + "host-triple": self.host_triple,
            **({RECORD_PREFIX + "ptx-only": ",".join(self.ptx_only)} if self.ptx_only else {}),
            **({RECORD_PREFIX + "device-debug": "1"} if self.device_debug else {}),
            **({RECORD_PREFIX + "libraries": ",".join(self.libraries)} if self.libraries else {}),
            **({RECORD_PREFIX + "sanitize": ",".join(self.sanitize)} if self.sanitize else {}),
            **({RECORD_PREFIX + "sanitize-keep-going": "1"} if self.sanitize_keep_going else {}),
            **(
                {RECORD_PREFIX + "sparse-tensor-runtime": self.sparse_tensor_runtime}
                if self.sparse_tensor_runtime
                else {}
            ),
        }

    def manifest_fields(self) -> dict:
        """The record as a shipped manifest.json carries it (read back by from_manifest; its targets are
        the manifest's "targets" objects, which say more per image)."""
        return {
            "entry_profile": self.profile,
            "producer_llvm_version": self.producer_llvm,
            "host_format": self.host_format,
            "host_triple": self.host_triple,
            **({"libraries": list(self.libraries)} if self.libraries else {}),
            **({"sparse_tensor_runtime": self.sparse_tensor_runtime} if self.sparse_tensor_runtime else {}),
        }

    @classmethod
    def from_manifest(cls, manifest: dict) -> BundleRecord:
        """The record of a manifest already checked to have the fields' types (manifests from before
        "producer_llvm_version" carry the bitcode's LLVM major only; before "host_triple", x86-64)."""
        producer = manifest.get("producer_llvm_version") or str(manifest.get("producer_llvm") or 0)
        targets = tuple(f"{t['offload_kind']}:{t['arch']}" for t in manifest["targets"])
        return cls(
            manifest["entry_profile"],
            producer,
            manifest["host_format"],
            targets,
            manifest.get("host_triple", cls.host_triple),
            libraries=tuple(manifest.get("libraries", ())),
            sparse_tensor_runtime=manifest.get("sparse_tensor_runtime", ""),
        )


def read_bundle_record(data: bytes, name: str, read_images=None):
    """(BundleRecord, images) of a bundle file; an error naming what is missing otherwise. `read_images`:
    a reader of more containers than the target side's (the build side's, for textual IR)."""
    images = (read_images or read_offload_images)(data, name)
    if not images:
        raise OffloadError(f"'{name}' has no {OFFLOADING_SECTION} images: it is not an mlir-offload bundle")
    first = images[0].strings
    key = RECORD_PREFIX + "profile"
    if key not in first:
        raise OffloadError(
            f"'{name}' holds offload images without an mlir-offload record ({key}): it was not "
            "made by `mlir-offload compile`"
        )
    producer = (first.get(RECORD_PREFIX + "producer", "LLVM 0").split() or [""])[-1]
    if not is_version_number(first[key]) or not all(is_version_number(part) for part in producer.split(".")):
        raise OffloadError(
            f"'{name}': its mlir-offload record says profile {first[key]!r}, producer "
            f"{first.get(RECORD_PREFIX + 'producer')!r}, which are not version numbers"
        )
    targets = tuple(f"{_kind_name(image)}:{image.strings.get('arch', '?')}" for image in images)
    record = BundleRecord(
        int(first[key]),
        producer,
        first.get(RECORD_PREFIX + "host", "bc"),
        targets,
        first.get(RECORD_PREFIX + "host-triple", BundleRecord.host_triple),
        tuple(filter(None, first.get(RECORD_PREFIX + "ptx-only", "").split(","))),
        first.get(RECORD_PREFIX + "device-debug") == "1",
        _library_names(first.get(RECORD_PREFIX + "libraries", ""), name),
        tuple(check for check in SANITIZERS if check in first.get(RECORD_PREFIX + "sanitize", "").split(",")),
        first.get(RECORD_PREFIX + "sanitize-keep-going") == "1",
        _function_name(first.get(RECORD_PREFIX + "sparse-tensor-runtime", ""), name),
    )
    return record, images


def is_function_name(text: str) -> bool:
    """A C function name as a record may give one (it is shown in messages and shell scripts): ASCII
    letters, digits and '_' only."""
    return all(c.isascii() and (c.isalnum() or c == "_") for c in text)


def _function_name(text: str, name: str) -> str:
    """A C function name the record gives, checked (is_function_name)."""
    if text and not is_function_name(text):
        raise OffloadError(f"'{name}': its mlir-offload record names the function {text!r}, which is not a C name")
    return text


def _library_names(text: str, name: str) -> tuple[str, ...]:
    """The record's -l names: letters, digits, '_', '+', '.', '-' (no leading '-'): each becomes one word of
    the link command line, never an option."""
    names = tuple(filter(None, text.split(",")))
    for library in names:
        if not is_library_name(library):
            raise OffloadError(
                f"'{name}': its mlir-offload record names the library {library!r}, which is not a library name"
            )
    return names


def is_library_name(text: str) -> bool:
    """A -l name as a record may give one: ASCII letters, digits and _ + . - (no leading '-')."""
    return bool(text) and text.isascii() and not text.startswith("-") and all(c.isalnum() or c in "_+.-" for c in text)


def is_version_number(text: str) -> bool:
    """ASCII digits only (str.isdigit accepts '²', which int() refuses), at most 9 of them."""
    return text.isascii() and text.isdigit() and len(text) <= 9


def _kind_name(image) -> str:
    triple = image.strings.get("triple", "")
    from offload.formats.vendors import vendor_of_triple

    vendor = vendor_of_triple(triple)
    return vendor.offload_kind if vendor else triple
