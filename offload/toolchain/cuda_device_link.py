"""Parallelism inside the CUDA device link of one arch, which clang's --offload-jobs leaves serial (it runs
the archs side by side): clang-nvlink-wrapper's LTO, code generation, ptxas and nvlink.

- LTO code generation in partitions (--plugin-opt=lto-partitions=N: one thread and one ptxas run each). LLVM's
  SplitModule keeps every kernel with the internal functions it calls, so a kernel's code does not change
  (scripts/bench_e2e.py: the same .text in all 1000 kernels).
- Each ptxas run on threads of its own (--split-compile=N), through the wrapper offload/data/ptxas/bin/ptxas
  that the nvlink wrapper finds in <its --cuda-path>/bin.

Both counts come from the bundles, never from the machine: the executable is the same bytes everywhere, and
threads a machine lacks only take turns. Which clangs take the options is profile data ([cuda])."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

from offload.cache.facts import remembered
from offload.data import data_path
from offload.formats.vendors import CUDA

# One partition per this much device bitcode of an arch (1000 bench kernels: 164 KB), at most MAX_PARTITIONS.
BITCODE_BYTES_PER_PARTITION = 16 * 1024
MAX_PARTITIONS = 8
PTXAS_THREADS = 4  # ptxas --split-compile=N; 0 would mean one per CPU, which would make the code machine-bound
PTXAS_ENVIRONMENT = "MLIR_OFFLOAD_PTXAS"  # the real ptxas, run by the wrapper
PTXAS_OPTIONS_ENVIRONMENT = "MLIR_OFFLOAD_PTXAS_OPTIONS"
DEVICE_LINKER_OPTION = f"-Xoffload-linker-{CUDA.triple}"  # clang's driver: the next word goes to the nvlink wrapper
SAVE_TEMPS_OPTIONS = ("-save-temps", "--save-temps")  # the nvlink wrapper then names every partition's PTX alike


@dataclass(frozen=True)
class DeviceLinkSpeed:
    arguments: list[str] = field(default_factory=list)  # for the clang command
    env: dict[str, str] = field(default_factory=dict)
    path_prepend: list[str] = field(default_factory=list)  # nvlink, which the wrapper's folder does not hold


def partitions_for(bitcode_bytes: int) -> int:
    return max(1, min(MAX_PARTITIONS, bitcode_bytes // BITCODE_BYTES_PER_PARTITION))


def cuda_bitcode_bytes(images) -> dict[str, int]:
    """arch -> bytes of CUDA device bitcode among offload images (packager records); `link` and `ship` (whose
    build.sh renders the same rule) count alike."""
    from offload.packager import ImageKind

    sizes: dict[str, int] = {}
    for image in images:
        if image.image_kind == int(ImageKind.BITCODE) and image.strings.get("triple") == CUDA.triple:
            arch = image.strings.get("arch", "")
            sizes[arch] = sizes.get(arch, 0) + len(image.data)
    return sizes


def partitions_of(sizes: dict[str, int]) -> int:
    """One count for every arch's device link: the largest arch's."""
    return partitions_for(max(sizes.values(), default=0))


def cuda_device_link_speed(profile, bundles, words: list[str], cuda, serial: bool = False) -> DeviceLinkSpeed:
    """The clang arguments, environment and PATH entries that run the CUDA device link of `bundles` (LinkBundles)
    in parallel, for a clang whose `profile` says its nvlink wrapper takes them. Nothing where `serial` (a -G link:
    ptxas -O0 -g, as asked; link --serial-device-link: the threads' own work costs CPU that a busy machine lacks),
    with -save-temps, or where the link's own `words` already pass the nvlink wrapper the option."""
    if serial or any(word.split("=", 1)[0] in SAVE_TEMPS_OPTIONS for word in words):
        return DeviceLinkSpeed()
    given = [words[i + 1] for i, word in enumerate(words[:-1]) if word == DEVICE_LINKER_OPTION]
    sizes = cuda_bitcode_bytes(image for bundle in bundles for image in bundle.images)
    arguments: list[str] = []
    env: dict[str, str] = {}
    path_prepend: list[str] = []
    option = profile.cuda.get("device_link_partitions_option")
    partitions = partitions_of(sizes)
    if option and partitions > 1 and not any(g.startswith(option.rstrip("=0123456789")) for g in given):
        arguments += [DEVICE_LINKER_OPTION, f"{option}{partitions}"]
    if (
        sizes
        and profile.cuda.get("ptxas_lookup") == "cuda_path"
        and not any(g.startswith("--cuda-path") for g in given)
        and cuda.ptxas
        and cuda.nvlink
        and ptxas_splits(cuda.ptxas)
    ):
        wrapper_root = data_path("ptxas")
        arguments += [DEVICE_LINKER_OPTION, f"--cuda-path={wrapper_root}"]
        env = {PTXAS_ENVIRONMENT: cuda.ptxas, PTXAS_OPTIONS_ENVIRONMENT: f"--split-compile={PTXAS_THREADS}"}
        path_prepend = [os.path.dirname(cuda.nvlink)]
    return DeviceLinkSpeed(arguments, env, path_prepend)


def ptxas_splits(ptxas: str) -> bool:
    """Whether this ptxas takes --split-compile (its --help lists it; remembered: offload.cache.facts)."""
    return remembered("ptxas split-compile", [ptxas], lambda: _ask_splits(ptxas), _is_flag) or False


def _ask_splits(ptxas: str) -> bool | None:
    try:
        done = subprocess.run([ptxas, "--help"], capture_output=True, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode == 0 and "--split-compile" in done.stdout


def _is_flag(answer: object) -> bool:
    return isinstance(answer, bool)
