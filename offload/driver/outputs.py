"""What `compile` writes for a build elsewhere: the image formats (`--portable`, `--device-image`,
`--host-format`; the profile decides only the default format), the dependency file (`-MD -MF FILE`) and
the PTX files that travel beside a bundle. The options themselves are offload/options/compile.py's.

PTX (`--device-image=ptx`, the default of `--portable` for CUDA) is written as `<out>.<arch>.ptx` beside
the bundle: clang-nvlink-wrapper rejects PTX images inside a bundle, so the target link adds them to the
executable's fatbin instead (`mlir-offload link --ptx FILE`, or a shipped archive's build.sh, through
offload/data/scripts/fatbinary): newer GPUs JIT-compile that PTX.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.errors import OffloadError, Part
from offload.formats.hosts import resolve_host
from offload.options import CompileOptions, compile_option


def requested_formats(options: CompileOptions) -> tuple[str | None, str | None]:
    """(device image, host format) the user asked for; None where the profile decides.
    --portable means ptx (cubin + PTX beside) and obj; the finer options win over it."""
    device_image, host_format = options.device_image, options.host_format
    if options.portable:
        device_image = device_image or "ptx"
        host_format = host_format or "obj"
    return device_image, host_format


def reads_bitcode_of(profile, producer_llvm: str) -> bool:
    """Whether the target clang (its profile) reads LLVM `producer_llvm` ("22.1.0") bitcode: bitcode is
    only backward compatible."""
    return profile.reads_bitcode_of(int(producer_llvm.split(".")[0]))


def choose_formats(profile, producer_llvm: str, device_image: str | None, host_format: str | None) -> tuple[str, str]:
    """The formats of a bundle for the target clang's profile: what the user asked, else bitcode where
    that clang reads our LLVM's bitcode and native code where it does not. Bitcode asked for a clang
    that cannot read it is refused (the link would fail on the target)."""
    readable = reads_bitcode_of(profile, producer_llvm)
    device = device_image or ("bitcode" if readable else "cubin")
    host = host_format or ("bc" if readable else "obj")
    if not readable and (device == "bitcode" or host == "bc"):
        asked: tuple[Part, ...] = (
            *((compile_option("device_image", "bitcode", joined=True),) if device == "bitcode" else ()),
            *((" and ",) if device == "bitcode" and host == "bc" else ()),
            *((compile_option("host_format", "bc", joined=True),) if host == "bc" else ()),
        )
        raise OffloadError(
            (
                *asked,
                f": clang {profile.clang_major} cannot read LLVM {producer_llvm} bitcode (it reads "
                f"up to LLVM {profile.bitcode_reads_llvm_up_to}); use ",
                compile_option("device_image", "cubin", joined=True),
                " ",
                compile_option("host_format", "obj", joined=True),
                " (or ",
                compile_option("portable", True),
                ")",
            )
        )
    return device, host


@dataclass(frozen=True)
class BuildSettings:
    """What compile writes, from its options: the formats asked for and the dependency file."""

    device_image: str | None  # None: the profile decides
    host_format: str | None
    host_triple: str  # offload.formats.hosts name
    dependency_file: str | None  # None: no -MD
    config_file: str | None  # the mlir-offload.toml in effect
    dependency_targets: tuple[str, ...] = ()  # -MT; empty: the output
    dependency_phony: bool = False  # -MP


# An output named so is an ELF object whatever the target clang reads (clang picks a link input's kind by it).
OBJECT_SUFFIX = ".o"


def asked_formats(options: CompileOptions, output: str | None, textual: bool) -> tuple[str | None, str | None]:
    """(device image, host format) of a compile to `output` (None: named after the input), as the options
    and the output's name ask (`-c -o app.o` means an object to clang and nvcc users); None where the
    target clang's profile decides."""
    device_image, host_format = requested_formats(options)
    if textual and host_format == "obj":
        raise OffloadError(
            (
                "-S writes LLVM IR text, but ",
                compile_option("host_format", "obj", joined=True),
                " (or ",
                compile_option("portable", True),
                ") asks for an ELF object: drop one of them",
            )
        )
    if output is not None and output.endswith(OBJECT_SUFFIX) and not textual and host_format is None:
        host_format = "obj"
    return device_image, host_format


def build_settings(
    options: CompileOptions, output: str, config_file: str | None, formats: tuple[str | None, str | None]
) -> BuildSettings:
    """What a compile to `output` writes: `formats` (asked_formats, or the plan's) and the side files."""
    device_image, host_format = formats
    dependency_file = None
    if options.dependency_file_wanted or options.user_dependency_file_wanted:
        dependency_file = options.dependency_file or os.path.splitext(output)[0] + ".d"
    host_triple = resolve_host(options.host_triple).name  # an unsupported one fails before any work
    return BuildSettings(
        device_image,
        host_format,
        host_triple,
        dependency_file,
        config_file,
        options.dependency_targets,
        options.dependency_phony,
    )


def ptx_path(output: str, arch: str) -> str:
    return f"{output}.{arch}.ptx"


def side_outputs(
    settings: BuildSettings, input_path: str, output: str, options: CompileOptions, ptx: dict[str, str]
) -> dict[str, bytes]:
    """path -> bytes of the files written beside the bundle: the PTX files (arch -> text), the dependency file."""
    files = {ptx_path(output, arch): text.encode("utf-8") for arch, text in sorted(ptx.items())}
    if settings.dependency_file:
        rule = make_rule(
            settings.dependency_targets or (output,),
            compile_inputs(settings, input_path, options),
            settings.dependency_phony,
        )
        files[settings.dependency_file] = rule.encode()
    return files


def compile_inputs(settings: BuildSettings, input_path: str, options: CompileOptions) -> list[str]:
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
