"""What one launch may ask of a GPU arch (data: offload/data/targets/launch-limits.toml): shared memory per
block, threads per block, block and grid sizes. The emulator's runtime refuses a launch past them as the
GPU runtime does (retarget.cpp hands them to it with the kernels; docs/emulator.md, "Launch limits")."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from offload.data import read_data
from offload.formats.toolkit_archs import arch_number

LIMITS_FILE = "targets/launch-limits.toml"
KIB = 1024


@dataclass(frozen=True)
class LaunchLimits:
    arch: str
    shared_per_block: int  # bytes of static + dynamic shared memory (LDS) per block
    shared_without_opt_in: int  # bytes of dynamic shared memory before CUDA's opt-in (0: none needed)
    threads_per_block: int
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    grid_items: int  # blocks x threads per grid dimension at most (0: no such limit)

    def pass_parameter(self) -> str:
        """retarget.cpp's `limits=ARCH:SHARED:NO-OPT-IN:THREADS:BX:BY:BZ:GX:GY:GZ:ITEMS` parameter (colons: a
        pass pipeline splits at commas)."""
        numbers = (
            self.shared_per_block,
            self.shared_without_opt_in,
            self.threads_per_block,
            *self.block,
            *self.grid,
            self.grid_items,
        )
        return "limits=" + ":".join([self.arch, *(str(n) for n in numbers)])


@lru_cache(maxsize=1)
def _table() -> dict:
    return tomllib.loads(read_data(LIMITS_FILE))


def _shared_kib(vendor: dict, arch: str) -> int:
    by_arch = vendor["shared_per_block_kib"]
    if arch in by_arch:
        return int(by_arch[arch])
    number = arch_number(arch)
    if number is not None:
        lower = [arch_number(name) for name in by_arch if name != "default"]
        below = [n for n in lower if n is not None and n <= number]
        if below:
            return int(by_arch[f"sm_{max(below)}"])
    return int(by_arch["default"])


def launch_limits(arch: str) -> LaunchLimits:
    """The limits of `arch` (sm_90a as sm_90; an AMD arch not listed: its vendor's default)."""
    vendor = _table()["cuda" if arch_number(arch) is not None else "hip"]
    base = f"sm_{arch_number(arch)}" if arch_number(arch) is not None else arch.split(":")[0]
    return LaunchLimits(
        arch=base,
        shared_per_block=_shared_kib(vendor, base) * KIB,
        shared_without_opt_in=int(vendor["shared_without_opt_in_kib"]) * KIB,
        threads_per_block=int(vendor["threads_per_block"]),
        block=tuple(int(n) for n in vendor["block"]),  # type: ignore[arg-type]
        grid=tuple(int(n) for n in vendor["grid"]),  # type: ignore[arg-type]
        grid_items=int(vendor["grid_items"]),
    )


__all__ = ["LaunchLimits", "launch_limits"]
