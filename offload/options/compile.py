"""Every setting of a compile, declared once: the fields of `CompileOptions` below.

How to add an option: add ONE field to `CompileOptions`, e.g.

    keep_going: bool = option(False, "--keep-going/--no-keep-going", "Build the other targets when one fails.",
                              commands=COMPILE, toml=True)

and read `options.keep_going` where it is used. From that one entry come:
  - the click option of every command in `commands` (`command_options("compile")` decorates a command;
    a bool with one declaration is a flag, "--x/--no-x" a switch; multiple values for tuple kinds);
  - the mlir-offload.toml key (`toml=True`: the field name with '-', e.g. `keep-going`; its value is
    checked by `kind`: an unknown key or a bad value is one error naming the file:line:col and key);
    `config show` prints it, and takes it as a flag too;
  - the Python API keyword (`api=True`: offload/api.py's compile_* take it, checked by `kind`);
  - the device-image cache key (`cache_key=True`: the option changes what an image holds; library
    options are not: the cache key holds the libraries' bytes);
  - `secret=True`: the value may hold a password; `config show` and error messages never print it;
  - the typed, frozen record itself, which `resolve()` fills by one cascade: flag (or API keyword) >
    mlir-offload.toml > the default written here. Nothing below offload/commands and offload/api.py
    reads raw flags or the file: the record is passed down.
`kind` says how a value is spelled and checked (offload/options/spec.py). Link's options are the same
kind of table (offload/options/link.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import click

from offload.errors import Mention, OffloadError
from offload.formats.profiles import DEFAULT_TARGET_CLANG
from offload.formats.sanitizers import sanitizer_list
from offload.options.spec import (
    ARCHS,
    CLANG_MAJOR,
    FILE,
    HOST_TRIPLE,
    PATH,
    PATHS,
    REDIS_URL,
    SANITIZE_LIST,
    SECONDS,
    SWITCH,
    TEXT,
    WORDS,
    Choice,
    Level,
    OptionalValue,
    Spec,
    TomlValues,
    cascade,
    check_fields,
    defaults_of,
    mention,
    option,
    specs_of,
    spell_flags,
    toml_key,
)
from offload.options.spec import (
    given_flags as given_table_flags,
)
from offload.options.spec import (
    given_keywords as given_table_keywords,
)

COMPILE = ("compile",)
COMPILE_DEVICE = ("compile", "device")
# The image formats compile can write (offload/serialize/native.py makes the native ones).
DEVICE_IMAGE_FORMATS = ("bitcode", "cubin", "ptx")
HOST_FORMATS = ("bc", "obj")
RENAME_SCHEMES = ("module-prefix", "prefix:NAME")
PREFIX_SCHEME = "prefix:"


# ---- the table --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompileOptions:
    """The settings of a compile (and of `device`, `config`): the one table of options, their defaults
    and spellings (see the module docstring), and the frozen record the stages read."""

    offload_arch: str | None = option(
        None,
        "--offload-arch",
        "Targets of one vendor, e.g. sm_80,sm_90 or gfx90a; also 80, 90a (CMake, Spack) "
        "and compute_80 (PTX beside the bundle, JIT-compiled by the driver) (repeatable).",
        kind=ARCHS,
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        metavar="ARCH[,ARCH...]",
    )
    opt_level: int = option(
        3,
        ("-O", "--opt-level"),
        "Device optimization level (-O0..-O3, default 3).",
        kind=Level(0, 3),
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
        metavar="[0-3]",
    )
    prec_sqrt: bool = option(
        True,
        "--prec-sqrt/--no-prec-sqrt",
        "IEEE-rounded f32 square root (default) or approximate.",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
    )
    prec_div: bool = option(
        True,
        "--prec-div/--no-prec-div",
        "IEEE-rounded f32 division (default) or approximate.",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
    )
    ftz: bool = option(
        False,
        "--ftz/--no-ftz",
        "Flush f32 denormals to zero.",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
    )
    fast_math: bool = option(
        False,
        "--fast-math/--no-fast-math",
        "Approximate sqrt/div, flush denormals, finite math only (as nvcc --use_fast_math).",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
    )
    link_bitcode: tuple[str, ...] = option(
        (),
        "--link-bitcode",
        "Link this device bitcode library into every image of its triple (repeatable).",
        kind=PATHS,
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
    )
    libdevice: str | None = option(
        None,
        "--libdevice",
        "libdevice.10.bc (default: $CUDA_HOME, the standard toolkit, the nvidia-nvvm wheel).",
        kind=PATH,
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
    )
    rocm_device_lib_path: str | None = option(
        None,
        "--rocm-device-lib-path",
        "Folder with ocml.bc/ockl.bc/oclc_*.bc (default: $ROCM_PATH, /opt/rocm, system).",
        kind=PATH,
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
    )
    target_clang: int = option(
        DEFAULT_TARGET_CLANG,
        "--target-clang",
        "Major version of the clang that links the bundle (default 22): offload entry layout, kind values, and "
        "whether it reads our bitcode (offload/data/profiles/clangN.toml).",
        kind=CLANG_MAJOR,
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        metavar="N",
    )
    host_triple: str | None = option(
        None,
        "--host-triple",
        "CPU of the machine the executable runs on: x86_64-linux-gnu or aarch64-linux-gnu "
        "(Grace Hopper); default: this machine's.",
        kind=HOST_TRIPLE,
        commands=COMPILE,
        toml=True,
        api=True,
        metavar="TRIPLE",
    )
    portable: bool = option(
        False,
        "--portable/--no-portable",
        "Version-proof bundle: cubin images (+ PTX beside the bundle, for link --ptx) and an ELF host object, "
        "linkable by any clang of the entry profile whatever its LLVM version.",
        commands=COMPILE,
        toml=True,
        api=True,
    )
    # Unset format options: the target clang's profile decides (bitcode where it reads ours, else native).
    device_image: str | None = option(
        None,
        "--device-image",
        "bitcode (device LTO on the target; default where the target clang reads our "
        "bitcode), cubin (the target's device link run here: link runs no LTO and no ptxas), ptx (cubin + "
        "<out>.<arch>.ptx beside). HIP: cubin/ptx mean a native AMDGPU code object.",
        kind=Choice(*DEVICE_IMAGE_FORMATS),
        commands=COMPILE,
        toml=True,
        api=True,
    )
    host_format: str | None = option(
        None,
        "--host-format",
        "Host part as LLVM bitcode (bc) or as an ELF object (obj).",
        kind=Choice(*HOST_FORMATS),
        commands=COMPILE,
        toml=True,
        api=True,
    )
    cache: bool = option(
        True,
        "--cache/--no-cache",
        "Reuse device images of an unchanged program from the cache (default) "
        "or rebuild them (MLIR_OFFLOAD_CACHE_DIR, else ~/.cache/mlir-offload).",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
    )
    # The shared tier of the image cache (docs/cache.md); MLIR_OFFLOAD_REMOTE_CACHE* in the environment win.
    remote_cache: str | None = option(
        None,
        "--remote-cache",
        "redis://HOST:PORT/DB or rediss:// (TLS) server sharing device images between machines.",
        kind=REDIS_URL,
        toml=True,
        secret=True,
    )
    remote_cache_mode: str = option(
        "read-write",
        "--remote-cache-mode",
        "read-only: take images from the remote cache, never write to it.",
        kind=Choice("read-write", "read-only"),
        toml=True,
    )
    remote_cache_ttl: int | None = option(
        None,
        "--remote-cache-ttl",
        "Seconds an image lives in the remote cache (default: no expiry).",
        kind=SECONDS,
        toml=True,
    )
    gpu_rdc: bool = option(
        False,
        "-fgpu-rdc/-fno-gpu-rdc",
        "Relocatable device code (as clang's -fgpu-rdc, nvcc's -rdc=true): device "
        "functions the program declares may be defined by other device code of the link (CUDA objects "
        "compiled with -fgpu-rdc), not only by --link-bitcode libraries.",
        commands=COMPILE_DEVICE,
        toml=True,
        api=True,
        cache_key=True,
    )
    # ---- command-line only: what a compile writes besides the bundle ----
    resource_usage: bool = option(
        False,
        "--resource-usage",
        "Print registers, spills, stack and shared memory per kernel and arch (as "
        "nvcc's), from ptxas -v, where compile runs ptxas (--device-image=cubin|ptx, --portable); for bitcode "
        "images pass it to link.",
        commands=COMPILE,
        toml=True,  # link's too: one key, the whole project (offload/options/link.py)
    )
    save_temps: str | None = option(
        None,
        "-save-temps",
        "Keep every stage's file, named <stem>.<N>-<stage>[.<arch>].<ext> so they sort in "
        "stage order: in the current folder (-save-temps, -save-temps=cwd) or beside the output (=obj).",
        kind=OptionalValue("cwd", "cwd", "obj"),
        commands=COMPILE,
        metavar="[=cwd|obj]",
    )
    time_trace: str | None = option(
        None,
        "-ftime-trace",
        "Write a Chrome trace (JSON: chrome://tracing, Perfetto) of the compile's stages to "
        "FILE (-ftime-trace=FILE), or alone beside the output as <output stem>.json (as clang).",
        kind=OptionalValue(""),
        commands=COMPILE,
        metavar="[=FILE]",
    )
    # ---- command-line and API only ----
    rename: str | None = option(
        None,
        "--rename",
        "module-prefix: every gpu.module's exported symbol becomes <module>_<symbol>, so two "
        "gpu.modules may define the same name; prefix:NAME: every exported device symbol becomes NAME_<symbol> "
        "(host launches follow), so separately compiled bundles never collide.",
        kind=TEXT,
        commands=COMPILE_DEVICE,
        api=True,
        cache_key=True,
        metavar="module-prefix|prefix:NAME",
    )
    symbol_prefix: str | None = option(
        None,
        "--symbol-prefix",
        "Same as --rename=prefix:NAME.",
        kind=TEXT,
        commands=COMPILE_DEVICE,
        api=True,
        metavar="NAME",
    )
    debug: bool = option(
        False,
        "-g/-g0",
        "Debug information from the MLIR locations, in the host code and the device code.",
        commands=COMPILE,
        api=True,
        cache_key=True,
    )
    device_debug: bool = option(
        False,
        ("-G", "--device-debug"),
        "Device debug information (as nvcc -G): the device code at -O0 with "
        "full debug information from the MLIR locations, ptxas -g; a bitcode bundle asks its link for the same.",
        commands=COMPILE,
        toml=True,  # link's too: one key, the whole project (offload/options/link.py)
        api=True,
        cache_key=True,
    )
    line_info: bool = option(
        False,
        "-lineinfo",
        "Device line information only (as nvcc -lineinfo: Nsight and cuda-gdb map to the .mlir).",
        commands=COMPILE,
        api=True,
        cache_key=True,
    )
    pass_pipeline: str | None = option(
        None,
        "--pass-pipeline",
        "MLIR passes to run on the input before mlir-offload's own lowering, in mlir-opt "
        "syntax, e.g. 'builtin.module(convert-linalg-to-loops)'.",
        kind=TEXT,
        commands=COMPILE,
        api=True,
        metavar="PIPELINE",
    )
    emulate: bool = option(
        False,
        "--emulate",
        "For `link --emulate` (kernels run on the CPU, docs/emulator.md): bitcode device "
        "images, and device code the emulator cannot run (inline assembly, Hopper TMA/mbarrier/wgmma/clusters) "
        "refused here.",
        commands=COMPILE,
        toml=True,  # link's too: one key, the whole project (offload/options/link.py)
        api=True,
    )
    sanitize: str | tuple[str, ...] | None = option(
        None,
        "--sanitize",
        "With --emulate: check every device memory access, barrier and allocation as the program runs "
        "(memcheck, racecheck, initcheck, synccheck, leakcheck: a comma-separated LIST, or all; default all "
        "but leakcheck; "
        "docs/emulator.md); the device code keeps line information, so reports name the .mlir line.",
        kind=SANITIZE_LIST,
        commands=COMPILE,
        toml=True,
        api=True,
        cache_key=True,
        metavar="[=LIST]",
    )
    sanitize_keep_going: bool = option(
        False,
        "--sanitize-keep-going",
        "With --sanitize: report each distinct error once (at most 100) and go on; exit status 1 at the end.",
        commands=COMPILE,
        toml=True,
        api=True,
    )
    dependency_file_wanted: bool = option(
        False,
        "-MD",
        "Write a make-style dependency file (input, linked bitcode libraries, mlir-offload.toml).",
        commands=COMPILE,
    )
    user_dependency_file_wanted: bool = option(
        False, "-MMD", "As -MD (as in clang; mlir-offload lists no system files either way).", commands=COMPILE
    )
    dependency_file: str | None = option(
        None,
        "-MF",
        "Name of the -MD dependency file (default: the output with suffix .d).",
        kind=FILE,
        commands=COMPILE,
        metavar="FILE",
    )
    dependency_targets: tuple[str, ...] = option(
        (),
        "-MT",
        "Target of the dependency rule instead of the output (repeatable).",
        kind=WORDS,
        commands=COMPILE,
        metavar="TARGET",
    )
    dependency_phony: bool = option(
        False,
        "-MP",
        "Add an empty rule for each prerequisite but the input, so make does not stop when one is removed.",
        commands=COMPILE,
    )
    # ---- set from Python (no flag, no key) ----
    device_stage_folder: str | None = option(
        None,
        (),
        "Folder receiving each device stage's output for each target (offload/serialize/skeleton.py "
        "dump_stage: <program stem>.<arch>.<stage>.bc or .ll); the device image cache is skipped.",
        kind=TEXT,
        api=True,
    )

    def __post_init__(self) -> None:
        check_fields(self)
        if self.rename is not None:
            check_rename(self.rename)
        if self.device_debug:  # as nvcc -G: device optimization off whatever -O says (ptxas -g needs -O0)
            object.__setattr__(self, "opt_level", 0)

    @property
    def debug_info(self) -> str | None:
        """ "g" (host and device debug info, -g), "lineinfo" (device line tables), or None."""
        return "g" if self.debug else "lineinfo" if self.line_info else None

    @property
    def device_debug_info(self) -> str | None:
        """The device code's debug information: "g" (-G: full), "lineinfo" (-g, -lineinfo, --sanitize: its
        reports name the line), or None."""
        return "g" if self.device_debug else "lineinfo" if self.debug_info or self.sanitizers else None

    @property
    def sanitizers(self) -> tuple[str, ...]:
        """--sanitize's checks, in offload.formats.sanitizers order (none without the option)."""
        return sanitizer_list(self.sanitize) if self.sanitize else ()

    @property
    def ptxas_debug_flags(self) -> tuple[str, ...]:
        """ptxas's flags for that debug information (-lineinfo keeps the PTX's .loc lines in the cubin)."""
        return {"g": ("-g",), "lineinfo": ("-lineinfo",), None: ()}[self.device_debug_info]

    def cache_key(self) -> dict[str, Any]:
        """The values that change what a device image holds (the device-image cache key's part)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["spec"].cache_key}


def check_rename(rename: str) -> None:
    if rename == "module-prefix":
        return
    if rename.startswith(PREFIX_SCHEME):
        prefix = rename[len(PREFIX_SCHEME) :]
        if not prefix.isidentifier() or not prefix.isascii():
            raise OffloadError(f"symbol prefix '{prefix}' is not a C identifier (letters, digits, '_')")
        return
    raise OffloadError(
        ("unknown ", compile_option("rename"), f" scheme '{rename}' (valid: {', '.join(RENAME_SCHEMES)})")
    )


SPECS: dict[str, Spec] = specs_of(CompileOptions)
spell_flags(SPECS)
DEFAULTS: dict[str, Any] = defaults_of(CompileOptions)
DEFAULT_OPT_LEVEL: int = DEFAULTS["opt_level"]  # for device code made outside a compile (ship, tests)
# mlir-offload.toml key -> field name
TOML_KEYS: dict[str, str] = {toml_key(name): name for name, spec in SPECS.items() if spec.toml}
API_KEYWORDS: tuple[str, ...] = tuple(name for name, spec in SPECS.items() if spec.api)


def compile_option(name: str, value: str | bool | None = None, joined: bool = False) -> Mention:
    """Compile's option `name` as an error message names it: each front end words it (offload.errors.Mention)."""
    return mention(SPECS, name, value, joined)


# ---- click ------------------------------------------------------------------------------------------


def command_options(command: str, tables: tuple[Mapping[str, Spec], ...] = (SPECS,)) -> Callable:
    """Decorator adding the options of `tables` (compile's, and link's for `config show`) that `command`
    ("compile", "device", "config show") takes to a click command, each defaulting to None or () ("not
    given": the cascade fills it); an option of two tables (a shared TOML key) is added once."""
    chosen = {
        name: spec
        for table in reversed(tables)
        for name, spec in table.items()
        if command in spec.commands or (command == "config show" and spec.toml)
    }

    def decorate(function: Callable) -> Callable:
        for name, spec in reversed(chosen.items()):
            settings: dict[str, Any] = {"default": None, "help": spec.help, **spec.kind.click()}
            if spec.kind.repeatable:
                settings.update(multiple=True, default=())
            elif spec.kind is SWITCH and not any("/" in flag for flag in spec.flags):
                settings["is_flag"] = True
            if spec.metavar:
                settings["metavar"] = spec.metavar
            function = click.option(*spec.flags, name, **settings)(function)
        return function

    return decorate


class ClangStyleCommand(click.Command):
    """A click command whose `-flag[=VALUE]` options (kinds with a `bare` value) are read as clang reads
    them: `-save-temps in.mlir` keeps in.mlir as the input, where click would take it as the value."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from offload.foreign_options import translate

        bare = {flag: spec.kind.bare for spec in SPECS.values() if spec.kind.bare is not None for flag in spec.flags}
        # nvcc's and clang's spellings first (-arch=sm_80, -Xptxas -v, -DNAME refused with the way to go).
        own = {
            name: not (param.is_flag or param.count) and name not in bare
            for param in self.params
            if isinstance(param, click.Option)
            for name in (*param.opts, *param.secondary_opts)
        }
        words = translate(list(args), own, self.name or "")
        try:
            return super().parse_args(ctx, [f"{arg}={bare[arg]}" if arg in bare else arg for arg in words])
        except click.NoSuchOption as e:
            # click reads -fPIC as -f -P -I -C: the error names the word as written.
            written = next((word for word in words if word.startswith(e.option_name)), e.option_name)
            raise click.UsageError(f"unknown option '{written}'", ctx) from None
        except click.UsageError as e:
            if e.message.startswith("Got unexpected extra argument"):
                raise click.UsageError(
                    f"{self.name} takes one program ({e.message.split('(')[-1].rstrip(')')} is "
                    "another): compile each into its bundle, then link the bundles together "
                    "(mlir-offload link a.offload.bc b.offload.bc -o app)",
                    ctx,
                ) from None
            raise


def given_flags(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Compile's options a command was given (click parameters; None or () = not given), typed.
    Parameters that are no option (the input, -o) are ignored."""
    given = given_table_flags(SPECS, parameters)
    if given.get("rename") is not None:  # a flag's bad value is a usage error (exit 2)
        try:
            check_rename(given["rename"])
        except OffloadError as e:
            raise click.UsageError(e.message) from None
    return given


def given_keywords(keywords: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """The API keywords of compile_* given (None = not given), checked by their kinds."""
    return given_table_keywords(SPECS, keywords, caller)


# ---- the cascade: flag (or API keyword) > mlir-offload.toml > default ------------------------------


@dataclass(frozen=True)
class Resolved:
    options: CompileOptions
    origins: dict[str, str]  # field name -> "flag", "<file>:<line>" or "default"
    config_file: str | None  # the mlir-offload.toml in effect


def resolve(given: Mapping[str, Any], config: TomlValues | None) -> Resolved:
    """The one cascade. `given`: typed values from given_flags or given_keywords; `config`: the
    input's mlir-offload.toml (offload.config.project_config), read once, or None."""
    values, origins = cascade(SPECS, DEFAULTS, given, config)
    prefix = values["symbol_prefix"]
    if prefix is not None:  # --symbol-prefix NAME spells --rename=prefix:NAME
        if values["rename"] not in (None, f"prefix:{prefix}"):
            raise OffloadError(
                (
                    compile_option("symbol_prefix", "NAME"),
                    " is ",
                    compile_option("rename", "prefix:NAME", joined=True),
                    ": pass one of them",
                )
            )
        values["rename"] = f"prefix:{prefix}"
    return Resolved(CompileOptions(**values), origins, str(config.path) if config else None)
