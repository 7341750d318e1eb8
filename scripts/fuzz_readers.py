#!/usr/bin/env python3
"""Fuzz every reader of untrusted files with mutated real inputs (fixed seed): OffloadBinary, bundles
(bitcode and ELF), linked executables, CUDA fatbins and cubins, HIP offload bundles, shipped archives and
manifests. Only OffloadError may escape a reader; anything else is a crash, a native death of the child
running it too, and an input taking longer than --hang-seconds is a hang.

    python3 scripts/fuzz_readers.py [--iterations N] [--seed S] [--save DIR]

Prints the number of inputs, crashes, hangs and the children's peak memory; exits 1 on any crash or hang.
The inputs run in forked children (a batch each), so a native crash is caught and the run goes on after it.
"""

from __future__ import annotations

import os
import random
import struct
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "fuzz"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_harness  # noqa: E402

from offload.errors import OffloadError  # noqa: E402

INTERESTING = [
    0,
    1,
    7,
    8,
    16,
    0x30,
    0x40,
    0x7F,
    0x80,
    0xFF,
    0x7FFF,
    0xFFFF,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**40,
    2**62,
    2**63,
    2**64 - 1,
]


# ---- the readers ---------------------------------------------------------------------------------


def read_container(data: bytes, scratch: str) -> None:
    from offload.packager import read_offload_images

    read_offload_images(data, "input")


def read_bundle(data: bytes, scratch: str) -> None:
    from offload.packager.bundle import read_bundle_record
    from offload.toolchain.ship import inspect_bundle

    read_bundle_record(data, "input")
    inspect_bundle(data, "input")


def read_raw_offload_binary(data: bytes, scratch: str) -> None:
    from offload.packager import read_binary

    read_binary(data)


def read_linked_executable(data: bytes, scratch: str) -> None:
    from offload.toolchain.verify import check_executable

    path = os.path.join(scratch, "app")
    Path(path).write_bytes(data)
    check_executable(path)  # reads the ELF, its fatbin's images, entries and symbols


def read_fatbin(data: bytes, scratch: str) -> None:
    from offload.toolchain.executable import parse_cuda_fatbin

    for image in parse_cuda_fatbin(data):
        image.symbols()
        image.kernels()


def read_hip_bundle(data: bytes, scratch: str) -> None:
    from offload.toolchain.executable import parse_offload_bundle

    parse_offload_bundle(data)


def read_archive(data: bytes, scratch: str) -> None:
    from offload.toolchain.ship import read_manifest

    path = os.path.join(scratch, "input.tar.gz")
    Path(path).write_bytes(data)
    read_manifest(path)


def read_manifest_file(data: bytes, scratch: str) -> None:
    from offload.toolchain.ship import read_bundle_needs

    path = os.path.join(scratch, "manifest.json")
    Path(path).write_bytes(data)
    read_bundle_needs(path)


Reader = Callable[[bytes, str], None]  # (input bytes, scratch folder)


def seeds() -> list[tuple[str, bytes, Reader]]:
    """(name, bytes, reader) of every seed input."""
    from offload.formats.elf import read_elf

    files = {p.name: p.read_bytes() for p in sorted(SEEDS.iterdir())}
    exe = read_elf(files["saxpy.cuda.exe"], "seed")
    fatbin_section = exe.section(".nv_fatbin")
    assert fatbin_section is not None, "the seed executable has no .nv_fatbin"
    fatbin = exe.section_data(fatbin_section)
    hip_id = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
    host_id = b"host-x86_64-unknown-linux-gnu"
    body = b"\x7fELF" + bytes(60)
    header_size = 32 + 24 * 2 + len(hip_id) + len(host_id)
    hip_bundle = (
        b"__CLANG_OFFLOAD_BUNDLE__"
        + struct.pack("<Q", 2)
        + struct.pack("<QQQ", header_size, 0, len(host_id))
        + host_id
        + struct.pack("<QQQ", header_size, len(body), len(hip_id))
        + hip_id
        + body
    )
    return [
        ("offloadbinary", files["saxpy.offloadbinary"], read_raw_offload_binary),
        ("offloadbinary-container", files["saxpy.offloadbinary"], read_container),
        ("bundle-bitcode", files["saxpy.offload.bc"], read_bundle),
        ("bundle-bitcode-hip", files["saxpy.hip.bc"], read_container),
        ("bundle-elf", files["saxpy.portable.o"], read_bundle),
        ("executable", files["saxpy.cuda.exe"], read_linked_executable),
        ("fatbin", fatbin, read_fatbin),
        ("hip-offload-bundle", hip_bundle, read_hip_bundle),
        ("ship-archive", files["saxpy.ship.tar.gz"], read_archive),
        ("manifest", files["manifest.json"], read_manifest_file),
    ]


# ---- mutation ------------------------------------------------------------------------------------


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        action = rng.randrange(8)
        if action == 0 and out:  # random byte
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif action == 1 and out:  # bit flip
            at = rng.randrange(len(out))
            out[at] ^= 1 << rng.randrange(8)
        elif action in (2, 3) and len(out) >= 8:  # an interesting 16/32/64-bit value, often aligned
            width = rng.choice((2, 4, 8))
            at = rng.randrange(len(out) - width + 1)
            if rng.random() < 0.7:
                at -= at % width
            value = rng.choice(INTERESTING + [len(out), len(out) + 1, len(out) - 1]) % (1 << (8 * width))
            out[at : at + width] = value.to_bytes(width, "little")
        elif action == 4:  # truncate
            del out[rng.randrange(len(out) + 1) :]
        elif action == 5 and out:  # duplicate a slice
            start = rng.randrange(len(out))
            piece = out[start : start + rng.randint(1, 256)]
            at = rng.randrange(len(out) + 1)
            out[at:at] = piece
        elif action == 6 and out:  # delete a slice
            start = rng.randrange(len(out))
            del out[start : start + rng.randint(1, 64)]
        else:  # random tail
            out += bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    return bytes(out)


def case(seed: int, index: int, corpus):
    """The index-th input of the run: deterministic from (seed, index) alone."""
    rng = random.Random(seed * 1_000_003 + index)
    name, data, reader = corpus[index % len(corpus)]
    return name, mutate(data, rng), reader


# ---- running -------------------------------------------------------------------------------------


def try_one(one: tuple[str, bytes, Reader], scratch: str) -> str | None:
    """Only OffloadError, in one line, may escape a reader."""
    _, data, reader = one
    try:
        reader(data, scratch)
    except OffloadError as e:
        if "\n" in e.render():
            return f"multi-line error {e.render()!r}"
    return None


def fuzz(
    iterations: int,
    seed: int,
    hang_seconds: float = 2.0,
    batch: int = 2000,
    save: str | None = None,
    progress: bool = False,
) -> dict:
    corpus = seeds()
    # Each reader once here, so the children inherit its imports: the hang timer then measures reading only
    # (a first import under load took over 2 s and read as a hang).
    with tempfile.TemporaryDirectory(prefix="fuzz-readers-") as scratch:
        for one in corpus:
            try_one(one, scratch)
    fuzzer = fuzz_harness.Fuzzer(
        prefix="fuzz-readers-",
        corpus=corpus,
        case=case,
        try_one=try_one,
        label=lambda one: one[0],
        file_name=lambda index, one: f"{index}-{one[0]}.bin",
    )
    return fuzzer.fuzz(iterations, seed, hang_seconds, batch, save, progress)


def main(argv: list[str] | None = None) -> int:
    return fuzz_harness.main(argv, (__doc__ or "").splitlines()[0], 200000, 2.0, fuzz)


if __name__ == "__main__":
    sys.exit(main())
