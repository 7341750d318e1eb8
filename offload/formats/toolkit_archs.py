"""Which CUDA archs a CUDA toolkit builds, by its major version (data: offload/data/cuda/toolkit-archs.toml),
so an arch the toolkit in use cannot build is refused in one line before ptxas or nvlink fail on it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from offload.data import read_data

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ARCHS_FILE = "cuda/toolkit-archs.toml"
ARCH_PREFIXES = ("sm_", "compute_")


@dataclass(frozen=True)
class ArchRange:
    oldest: int
    newest: int

    def text(self) -> str:
        return f"sm_{self.oldest} to sm_{self.newest}"


@lru_cache(maxsize=1)
def toolkit_arch_ranges() -> dict[int, ArchRange]:
    data = tomllib.loads(read_data(ARCHS_FILE))
    return {int(major): ArchRange(int(row["oldest"]), int(row["newest"])) for major, row in data.items()}


def arch_number(arch: str) -> int | None:
    """sm_90a -> 90, compute_100f -> 100; None for a name of another form."""
    for prefix in ARCH_PREFIXES:
        if arch.startswith(prefix):
            digits = arch[len(prefix) :].rstrip("abf")
            return int(digits) if digits.isdigit() else None
    return None


def unbuildable_arch(arch: str, toolkit_version: str) -> str | None:
    """Why the CUDA toolkit of `toolkit_version` ("13.0.88") cannot build `arch`, in words naming the
    arch, the version and its range; None when it can or when the version or arch is not known here."""
    major = toolkit_version.split(".")[0]
    supported = toolkit_arch_ranges().get(int(major)) if major.isdigit() else None
    number = arch_number(arch)
    if supported is None or number is None or supported.oldest <= number <= supported.newest:
        return None
    return f"{arch} is not built by CUDA {toolkit_version}, which builds {supported.text()}"


__all__ = ["ArchRange", "arch_number", "toolkit_arch_ranges", "unbuildable_arch"]
