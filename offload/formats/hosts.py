"""One record per host triple a bundle can be built for: everything that differs between host CPUs
(LLVM triple, launch ABI, ELF machine, toolkit folder names) is data here, read by the build side (host
lowering, stubs, host object) and the target side (link, doctor, verify, ship) alike.

The launch ABI was read from clang 22's own host IR of one .cu for each triple
(tests/data/reference/clang22_host*.ll): cudaLaunchKernel's dim3 arguments are {x | y << 32, z} in
both, passed as (i64, i32) on x86-64 SysV and as one [2 x i64] (z zero-extended) on AAPCS64."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from offload.errors import Mention, OffloadError, Part


@dataclass(frozen=True)
class HostTriple:
    name: str  # canonical spelling, also the Debian multiarch name and clang's --target value
    llvm_triple: str  # what clang writes into host IR
    spellings: tuple[str, ...]  # accepted spellings beyond ARCH[-VENDOR]-linux[-gnu] with ARCH in machines
    machines: tuple[str, ...]  # `uname -m` / platform.machine() of a machine of this architecture
    elf_machine: int  # e_machine of its ELF files
    elf_relative_reloc: int  # the R_*_RELATIVE relocation type of a PIE's pointers
    dim3_params: tuple[str, ...]  # LLVM types a dim3 {x|y<<32, z} is passed as to cudaLaunchKernel
    cuda_target: str  # CUDA toolkit's targets/<cuda_target> folder for this host
    gnu_tool_prefix: str  # cross binutils/gcc prefix (aarch64-linux-gnu-gcc)


X86_64 = HostTriple(
    name="x86_64-linux-gnu",
    llvm_triple="x86_64-pc-linux-gnu",
    spellings=("x86-64",),
    machines=("x86_64", "amd64"),
    elf_machine=62,
    elf_relative_reloc=8,
    dim3_params=("i64", "i32"),
    cuda_target="x86_64-linux",
    gnu_tool_prefix="x86_64-linux-gnu-",
)

AARCH64 = HostTriple(
    name="aarch64-linux-gnu",
    llvm_triple="aarch64-unknown-linux-gnu",
    spellings=("sbsa-linux",),
    machines=("aarch64", "arm64"),
    elf_machine=183,
    elf_relative_reloc=1027,
    dim3_params=("[2 x i64]",),
    cuda_target="sbsa-linux",
    gnu_tool_prefix="aarch64-linux-gnu-",
)

HOSTS = {host.name: host for host in (X86_64, AARCH64)}


def supported() -> str:
    return ", ".join(HOSTS)


def host_triple(text: str) -> HostTriple:
    """The record of a --host-triple spelling (case-insensitive): ARCH, ARCH-linux[-gnu], ARCH-VENDOR-linux-gnu
    (ARCH: x86_64/amd64, aarch64/arm64), a record's spellings; an error listing the supported ones."""
    wanted = text.strip().lower()
    arch, *rest = wanted.split("-")
    linux_gnu = not rest or rest[-2:] == ["linux", "gnu"] or (rest[-1:] == ["linux"] and len(rest) <= 2)
    for host in HOSTS.values():
        if wanted in host.spellings or (arch in host.machines and linux_gnu and len(rest) <= 3):
            return host
    raise OffloadError(f"unsupported host triple '{text}' (supported: {supported()})")


def host_of_machine(machine: str) -> HostTriple | None:
    return next((h for h in HOSTS.values() if machine.lower() in h.machines), None)


def host_of_elf_machine(e_machine: int) -> HostTriple | None:
    return next((h for h in HOSTS.values() if h.elf_machine == e_machine), None)


def build_machine_host() -> HostTriple:
    """This machine's own host triple (the default of --host-triple)."""
    host = host_of_machine(platform.machine())
    if host is None:
        raise OffloadError(
            (
                f"this machine is {platform.machine()}, not a supported host (supported: {supported()}): pass ",
                Mention("host_triple"),
            )
        )
    return host


def host_refusal(
    bundle_host: str, link_host: HostTriple, linker: str, cross_fix: str
) -> tuple[str, tuple[Part, ...]] | None:
    """(problem, fix) when a bundle built for `bundle_host` would go into an executable for `link_host` (its
    host code is another CPU's); None when they agree. `cross_fix` says how to make the link target the
    bundle's host in the caller's terms (a clang flag, a make variable; {triple} is the bundle's host); the
    fix names compile's --host-triple as a Mention, for the front end to word."""
    if bundle_host == link_host.name:
        return None
    return (
        f"the bundle was built for {bundle_host} hosts but {linker} links for {link_host.name}",
        (
            f"{cross_fix.format(triple=bundle_host)} (with an {bundle_host} sysroot), or recompile with ",
            Mention("host_triple", link_host.name),
        ),
    )


def resolve_host(text: str | None) -> HostTriple:
    return build_machine_host() if text is None else host_triple(text)
