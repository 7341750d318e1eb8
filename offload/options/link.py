"""Every option of a link, declared once: the fields of `LinkOptions` below, a table of the same kind as
compile's (offload/options/spec.py). From one entry come the `mlir-offload link` flag, the mlir-offload.toml
key (the field name with '-': `ptx-beside`), the keyword of offload.api.link (the field name: `ptx_beside`)
and the one default; `resolve_link` fills the frozen record by the one cascade (flag or keyword >
mlir-offload.toml > default), and the link (offload/toolchain/link.py plan_link, emulate.py link_emulated)
takes the record. `dry_run` and `verbose` are the command line's alone (what it prints)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from offload.errors import Mention, OffloadError
from offload.formats.sanitizers import sanitizer_list
from offload.formats.vendors import runtime_modes
from offload.options.spec import (
    PATH,
    PATHS,
    SANITIZE_LIST,
    SWITCH,
    TEXT,
    Choice,
    Kind,
    Spec,
    TomlValues,
    cascade,
    check_fields,
    defaults_of,
    from_file,
    mention,
    option,
    specs_of,
    spell_flags,
    toml_key,
)

LINK = ("link",)
CUDART_MODES = runtime_modes()  # nvcc's --cudart names, from the vendor records
# The options of a GPU executable's device part: an emulated link has none.
GPU_ONLY = ("ptx", "ptx_beside", "cuda_path", "rocm_path", "resource_usage", "device_debug", "serial_device_link")


@dataclass(frozen=True)
class LinkOptions:
    """The settings of a link: its one table of options, their defaults and spellings, and the frozen
    record plan_link and link_emulated read."""

    clang: str | None = option(
        None,
        "--clang",
        "the clang to link with (default: clang-N of the bundles' profile N, then clang)",
        kind=TEXT,
        commands=LINK,
        toml=True,
        api=True,
        metavar="PATH",
    )
    cuda_path: str | None = option(
        None,
        "--cuda-path",
        "CUDA toolkit (default: found)",
        kind=PATH,
        commands=LINK,
        toml=True,
        api=True,
        metavar="DIR",
    )
    rocm_path: str | None = option(
        None, "--rocm-path", "ROCm (default: found)", kind=PATH, commands=LINK, toml=True, api=True, metavar="DIR"
    )
    ptx: tuple[str, ...] = option(
        (),
        "--ptx",
        "add this PTX (from `compile --portable`: BUNDLE.<arch>.ptx) to the executable's fatbin beside the "
        "arch's cubin, so newer GPUs JIT-compile it (repeat per arch; CUDA)",
        kind=PATHS,
        commands=LINK,
        toml=True,
        api=True,
        metavar="FILE",
    )
    ptx_beside: bool = option(
        False,
        "--ptx-beside",
        "add the PTX files compile wrote beside each bundle (BUNDLE.<arch>.ptx, where they exist and are not "
        "older than it; none for an arch several bundles have PTX for)",
        commands=LINK,
        toml=True,
        api=True,
    )
    cudart: str = option(
        "shared",
        "--cudart",
        "the runtime library as nvcc's --cudart: shared (default, libcudart.so), static (libcudart_static.a + "
        "-ldl -lpthread -lrt), none; an explicit -lcudart_static (or -lcudart) on the command line is used as "
        "given, without a second runtime",
        kind=Choice(*CUDART_MODES),
        commands=LINK,
        toml=True,
        api=True,
        metavar="MODE",
    )
    emulate: bool = option(
        False,
        "--emulate",
        "an executable that runs the kernels on this CPU (no GPU, driver or toolkit): the bundle's device "
        "bitcode retargeted to the host, its host code linked with mlir-offload's emulation runtime instead of "
        "libcudart/libamdhip64 (docs/emulator.md); CUDA/HIP objects of clang (-fgpu-rdc --offload-new-driver "
        "-foffload-lto) join with their device bitcode",
        commands=LINK,
        toml=True,
        api=True,
    )
    sanitize: str | tuple[str, ...] | None = option(
        None,
        "--sanitize",
        "with --emulate: check every device memory access, barrier and allocation while the program runs "
        "(memcheck, racecheck, initcheck, synccheck, leakcheck, or all; default all but leakcheck; "
        "docs/emulator.md); a bundle compiled with --sanitize asks for it itself",
        kind=SANITIZE_LIST,
        commands=LINK,
        toml=True,
        api=True,
        metavar="[=LIST]",
    )
    sanitize_keep_going: bool = option(
        False,
        "--sanitize-keep-going",
        "report each distinct error once and go on (exit status 1 at the end)",
        commands=LINK,
        toml=True,
        api=True,
    )
    device_debug: bool = option(
        False,
        ("-G", "--device-debug"),
        "device debug information (as nvcc -G): the device link keeps it and does not optimize (ptxas -g); a "
        "bundle compiled with -G asks for it itself",
        commands=LINK,
        toml=True,
        api=True,
    )
    resource_usage: bool = option(
        False,
        "--resource-usage",
        "print registers, spills, stack and shared memory per kernel and arch (as nvcc's; from ptxas -v, which "
        "runs at link for bitcode bundles)",
        commands=LINK,
        toml=True,
        api=True,
    )
    serial_device_link: bool = option(
        False,
        "--serial-device-link",
        "the device link on one thread: no archs side by side, LTO partitions or ptxas --split-compile (CUDA). "
        "The same kernel code in less CPU time (200 kernels: about 0.2 to 0.3 s of 2.3 to 2.5 s), more wall "
        "time on idle cores: for `make -j` on a busy machine",
        commands=LINK,
        toml=True,
        api=True,
    )
    # ---- command line only: what the command prints ----
    dry_run: bool = option(
        False,
        ("--dry-run", "-###", "--dryrun"),
        "print the clang command instead of running it (nothing is built)",
        commands=LINK,
    )
    verbose: bool = option(
        False, "-v", "print the clang command (and clang's messages) while running it", commands=LINK
    )

    def __post_init__(self) -> None:
        check_fields(self)
        if (self.sanitize or self.sanitize_keep_going) and not self.emulate:
            raise OffloadError(
                (link_option("sanitize"), " runs its checks in the CPU emulator: add ", link_option("emulate", True))
            )
        if self.emulate:
            for name in GPU_ONLY:
                if getattr(self, name):
                    raise OffloadError(
                        (link_option(name), " is for a GPU executable, not with ", link_option("emulate", True))
                    )

    @property
    def sanitizers(self) -> tuple[str, ...]:
        """--sanitize's checks, in offload.formats.sanitizers order (none without the option)."""
        return sanitizer_list(self.sanitize) if self.sanitize else ()


DEFAULT_LINK = LinkOptions()  # every option at its default
SPECS: dict[str, Spec] = specs_of(LinkOptions)
spell_flags(SPECS)
DEFAULTS: dict[str, Any] = defaults_of(LinkOptions)
TOML_KEYS: dict[str, str] = {toml_key(name): name for name, spec in SPECS.items() if spec.toml}
API_KEYWORDS: tuple[str, ...] = tuple(name for name, spec in SPECS.items() if spec.api)
# Every spelling of every flag (-G, --device-debug, -###, ...) -> its option.
FLAGS: dict[str, str] = {
    flag: name for name, spec in SPECS.items() for declaration in spec.flags for flag in declaration.split("/")
}


def link_option(name: str, value: str | bool | None = None, joined: bool = False) -> Mention:
    """Link's option `name` as an error message names it: each front end words it (offload.errors.Mention)."""
    return mention(SPECS, name, value, joined)


def takes_value(kind: Kind) -> bool:
    """Whether the flag of an option of this kind takes a value (`--cudart MODE`; `--sanitize[=LIST]` only joined)."""
    return kind is not SWITCH and kind.bare is None


@dataclass(frozen=True)
class ResolvedLink:
    options: LinkOptions
    origins: dict[str, str]  # field name -> "flag", "<file>:<line>" or "default"


def resolve_link(given: Mapping[str, Any], config: TomlValues | None) -> ResolvedLink:
    """The one cascade of a link: `given` (typed values of flags or API keywords) > `config` (the
    mlir-offload.toml in effect, read once, or None) > the defaults. A refusal of the record (an option
    that does not combine with another) names its options, worded by the caller (offload.errors.Mention)."""
    values, origins = cascade(SPECS, DEFAULTS, given, config)
    try:
        return ResolvedLink(LinkOptions(**values), origins)
    except OffloadError as error:
        raise from_file(error, origins) from None
