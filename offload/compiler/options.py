"""Options of `compile` that serve a build elsewhere: the image formats (`--portable`,
`--device-image`, `--host-format`), the dependency file (`-MD -MF FILE`) and the PTX files that travel
beside a bundle; each also settable in mlir-offload.toml (flags win; the profile decides only the
default format).

PTX (`--device-image=ptx`, the default of `--portable` for CUDA) is written as `<out>.<arch>.ptx` beside
the bundle: clang-nvlink-wrapper rejects PTX images inside a bundle, so the target link adds them to the
executable's fatbin instead (`mlir-offload link --ptx FILE`, or a shipped archive's build.sh, through
offload/data/scripts/fatbinary): newer GPUs JIT-compile that PTX.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import click

from offload.errors import OffloadError
from offload.compiler.native import DEVICE_IMAGE_FORMATS, HOST_FORMATS

OPTION_NAMES = ("portable", "device_image", "host_format", "host_triple", "dependency_file_wanted", "dependency_file",
                "user_dependency_file_wanted", "dependency_targets", "dependency_phony")


def build_options(command):
    """Decorator adding --portable, --device-image, --host-format, -MD and -MF to a click command."""
    options = [
        click.option("--portable/--no-portable", "portable", default=None,
                     help="Version-proof bundle: cubin images (+ PTX beside the bundle, for link --ptx) and an ELF host object, "
                          "linkable by any clang of the entry profile whatever its LLVM version."),
        click.option("--device-image", "device_image", type=click.Choice(DEVICE_IMAGE_FORMATS), default=None,
                     help="bitcode (device LTO on the target; default where the target clang reads our bitcode), "
                          "cubin (ptxas here), ptx (cubin + <out>.<arch>.ptx beside). HIP: cubin/ptx mean a "
                          "native AMDGPU code object."),
        click.option("--host-format", "host_format", type=click.Choice(HOST_FORMATS), default=None,
                     help="Host part as LLVM bitcode (bc) or as an ELF object (obj)."),
        click.option("--host-triple", "host_triple", default=None, metavar="TRIPLE",
                     help="CPU of the machine the executable runs on: x86_64-linux-gnu or aarch64-linux-gnu "
                          "(Grace Hopper); default: this machine's."),
        click.option("-MD", "dependency_file_wanted", is_flag=True, default=False,
                     help="Write a make-style dependency file (input, linked bitcode libraries, mlir-offload.toml)."),
        click.option("-MMD", "user_dependency_file_wanted", is_flag=True, default=False,
                     help="As -MD (as in clang; mlir-offload lists no system files either way)."),
        click.option("-MF", "dependency_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                     help="Name of the -MD dependency file (default: the output with suffix .d)."),
        click.option("-MT", "dependency_targets", multiple=True, metavar="TARGET",
                     help="Target of the dependency rule instead of the output (repeatable)."),
        click.option("-MP", "dependency_phony", is_flag=True, default=False,
                     help="Add an empty rule for each prerequisite but the input, so make does not stop "
                          "when one is removed."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def requested_formats(portable: bool | None, device_image: str | None,
                      host_format: str | None) -> tuple[str | None, str | None]:
    """(device image, host format) the user asked for; None where the profile decides.
    --portable means ptx (cubin + PTX beside) and obj; the finer flags win over it."""
    if portable:
        device_image = device_image or "ptx"
        host_format = host_format or "obj"
    if device_image is not None and device_image not in DEVICE_IMAGE_FORMATS:
        raise OffloadError(f"device-image must be one of {', '.join(DEVICE_IMAGE_FORMATS)}, got '{device_image}'")
    if host_format is not None and host_format not in HOST_FORMATS:
        raise OffloadError(f"host-format must be one of {', '.join(HOST_FORMATS)}, got '{host_format}'")
    return device_image, host_format


def reads_bitcode_of(profile, producer_llvm: str) -> bool:
    """Whether the target clang (its profile) reads LLVM `producer_llvm` ("22.1.0") bitcode: bitcode is
    only backward compatible."""
    return profile.reads_bitcode_of(int(producer_llvm.split(".")[0]))


def choose_formats(profile, producer_llvm: str, device_image: str | None,
                   host_format: str | None) -> tuple[str, str]:
    """The formats of a bundle for the target clang's profile: what the user asked, else bitcode where
    that clang reads our LLVM's bitcode and native code where it does not. Bitcode asked for a clang
    that cannot read it is refused (the link would fail on the target)."""
    readable = reads_bitcode_of(profile, producer_llvm)
    device = device_image or ("bitcode" if readable else "cubin")
    host = host_format or ("bc" if readable else "obj")
    if not readable and (device == "bitcode" or host == "bc"):
        asked = ("--device-image=bitcode" if device == "bitcode" else "") + \
                (" and " if device == "bitcode" and host == "bc" else "") + ("--host-format=bc" if host == "bc" else "")
        raise OffloadError(f"{asked}: clang {profile.clang_major} cannot read LLVM {producer_llvm} bitcode (it reads "
                           f"up to LLVM {profile.bitcode_reads_llvm_up_to}); use --device-image=cubin "
                           f"--host-format=obj (or --portable)")
    return device, host


@dataclass(frozen=True)
class BuildSettings:
    """compile's build-facing settings after merging flags > mlir-offload.toml > defaults."""

    target_clang: int | str | None
    device_image: str | None  # None: the profile decides
    host_format: str | None
    host_triple: str  # offload.formats.hosts name
    dependency_file: str | None  # None: no -MD
    config_file: str | None  # the mlir-offload.toml in effect
    dependency_targets: tuple = ()  # -MT; empty: the output
    dependency_phony: bool = False  # -MP


def build_settings(input_path: str, output: str, target_clang, textual: bool, kwargs: dict,
                   config) -> BuildSettings:
    """Take this module's options out of `kwargs` (a command's parameters) and fill what the flags did
    not give (and --target-clang) from `config` (the input's mlir-offload.toml, or None)."""
    from offload.config import fill_unset

    own = {name: kwargs.pop(name, None) for name in OPTION_NAMES}
    own["target_clang"] = target_clang
    merged = fill_unset(own, input_path, config)
    device_image, host_format = requested_formats(merged["portable"], merged["device_image"], merged["host_format"])
    if textual and host_format == "obj":
        raise OffloadError("-S writes LLVM IR text, but --host-format=obj (or --portable) asks for an ELF object: "
                           "drop one of them")
    dependency_file = None
    if own["dependency_file_wanted"] or own["user_dependency_file_wanted"]:
        dependency_file = own["dependency_file"] or os.path.splitext(output)[0] + ".d"
    from offload.formats.hosts import resolve_host

    host_triple = resolve_host(merged["host_triple"]).name  # an unsupported one fails before any work
    return BuildSettings(merged["target_clang"], device_image, host_format, host_triple, dependency_file,
                         str(config.path) if config else None, tuple(own["dependency_targets"] or ()),
                         bool(own["dependency_phony"]))


def ptx_path(output: str, arch: str) -> str:
    return f"{output}.{arch}.ptx"


def side_outputs(settings: BuildSettings, input_path: str, output: str, options,
                 ptx: dict[str, str]) -> dict[str, bytes]:
    """path -> bytes of the files written beside the bundle: the PTX files (arch -> text), the dependency file."""
    files = {ptx_path(output, arch): text.encode("utf-8") for arch, text in sorted(ptx.items())}
    if settings.dependency_file:
        rule = make_rule(settings.dependency_targets or (output,), compile_inputs(settings, input_path, options),
                         settings.dependency_phony)
        files[settings.dependency_file] = rule.encode()
    return files


def compile_inputs(settings: BuildSettings, input_path: str, options) -> list[str]:
    """Every file a compile reads: the program, linked bitcode, libdevice, the config file."""
    inputs = [input_path, *options.link_bitcode]
    if options.libdevice:
        inputs.append(options.libdevice)
    if settings.config_file:
        inputs.append(settings.config_file)
    return inputs


def make_rule(targets, prerequisites: list[str], phony: bool = True) -> str:
    """`target...: prereq...`, with `phony` (-MP) an empty rule per prerequisite but the first, so that
    make does not stop when a library or the config file is later removed from the build."""
    unique = list(dict.fromkeys(prerequisites))
    text = " ".join(make_escape(t) for t in ([targets] if isinstance(targets, str) else targets))
    text += ": " + " \\\n  ".join(make_escape(p) for p in unique) + "\n"
    for p in unique[1:] if phony else ():
        text += f"\n{make_escape(p)}:\n"
    return text


def make_escape(path: str) -> str:
    """A path as one make word (spaces, '#', '$' and ':' quoted as GNU make and CMake's depfile reader do)."""
    if "\n" in path:
        raise OffloadError(f"cannot write a dependency on a path with a newline: {path!r}")
    return path.replace("$", "$$").replace("#", "\\#").replace(" ", "\\ ").replace(":", "\\:")
