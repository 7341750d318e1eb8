"""A compile's settings, resolved once into a frozen plan: command-line flags > mlir-offload.toml (read
once, offload/config.py) > the defaults of offload/config.py's KEYS (the one table of defaults); what
those leave open, the target clang's profile decides (offload/compiler/stages.py plan_bundle). The compile
stages take the plan; no command-line framework is involved past this point."""

from __future__ import annotations

from dataclasses import dataclass

from offload.errors import OffloadError

# The device settings (DeviceOptions fields), each a key of offload/config.py's KEYS.
DEVICE_SETTINGS = ("opt_level", "prec_sqrt", "prec_div", "ftz", "fast_math", "link_bitcode", "libdevice",
                   "rocm_device_lib_path", "rename", "cache", "remote_cache", "remote_cache_mode",
                   "remote_cache_ttl")


@dataclass(frozen=True)
class CompilePlan:
    input_path: str
    output: str
    emit: str  # "bc" | "ll" (-S)
    target_clang: int  # the profile's clang major
    targets: tuple  # offload.formats.targets.Target
    device: object  # offload.serialize.DeviceOptions
    build: object  # offload.compiler.options.BuildSettings
    bundle: object  # offload.compiler.stages.BundlePlan: the formats, decided once
    debug: str | None = None  # "g" (host and device debug info), "lineinfo" (device line tables), None
    pass_pipeline: str | None = None  # the user's MLIR passes before our lowering (mlir-opt syntax)


def device_plan(flags: dict, config) -> tuple[list, object]:
    """The device settings of a command (None = not given), the project file `config` (or None) filling
    what the flags did not give -> (list[Target], DeviceOptions)."""
    from offload.serialize import DeviceOptions, parse_offload_arch
    from offload.config import default_of, fill_unset

    given = fill_unset({name: flags.get(name) for name in ("offload_arch", *DEVICE_SETTINGS)}, None, config)
    arch = given.pop("offload_arch")
    if isinstance(arch, (list, tuple)):
        arch = ",".join(arch) if arch else None
    if not arch:
        raise OffloadError("no offload target: pass --offload-arch, e.g. --offload-arch sm_80,gfx90a")
    prefix = flags.get("symbol_prefix")
    if prefix is not None:  # --symbol-prefix NAME spells --rename=prefix:NAME
        if flags.get("rename") not in (None, f"prefix:{prefix}"):
            raise OffloadError("--symbol-prefix NAME is --rename=prefix:NAME: pass one of them")
        given["rename"] = f"prefix:{prefix}"
    settings = {}
    for name in DEVICE_SETTINGS:
        value = given.get(name)
        if name == "link_bitcode":
            value = list(value) if value else None
        default = default_of(name)
        settings[name] = (list(default) if isinstance(default, tuple) else default) if value is None else value
    settings["opt_level"] = int(settings["opt_level"])
    return parse_offload_arch(arch), DeviceOptions(**settings)


def default_output(input_path: str, textual: bool, bundle) -> str:
    """<input stem>.offload.bc, .offload.ll with -S, or <input stem>.o when the bundle is an ELF object."""
    import os

    stem = os.path.splitext(os.path.basename(input_path))[0] or "out"
    if textual:
        return f"{stem}.offload.ll"
    return f"{stem}.o" if bundle.host_format == "obj" else f"{stem}.offload.bc"


def compile_plan(input_path: str, output: str | None, textual: bool, target_clang, flags: dict) -> CompilePlan:
    """Flags (a command's parameters, None = not given) + the input's mlir-offload.toml -> the plan.
    `output` None: named after the input (default_output), in the current folder, as clang does."""
    from offload.compiler.options import build_settings
    from offload.compiler.stages import plan_bundle
    from offload.config import project_config
    from offload.formats.profiles import load_profile

    config = project_config(input_path)
    given_clang, given = target_clang, dict(flags)
    flags = dict(flags)
    build = build_settings(input_path, output or "-", target_clang, textual, flags, config)
    target_clang = load_profile(build.target_clang).clang_major  # unknown: fails before any work
    targets, device = device_plan(flags, config)
    from offload.formats.targets import ptx_only_archs

    arch = flags.get("offload_arch")
    ptx_only = ptx_only_archs(",".join(arch) if isinstance(arch, (list, tuple)) else arch)
    if build.device_image is None and ptx_only:
        from dataclasses import replace

        build = replace(build, device_image="ptx")  # compute_XX: PTX beside the bundle for link --ptx-beside
    if build.device_image != "ptx":
        ptx_only = ()  # no PTX is written: the cubin or bitcode image is all the executable can get
    debug = "g" if flags.get("debug") else "lineinfo" if flags.get("line_info") else None
    if debug:
        from dataclasses import replace

        device = replace(device, debug_info=debug)
    bundle = plan_bundle(targets, target_clang, build.device_image, build.host_format, build.host_triple, ptx_only)
    if output is None:  # the same file read once: the settings again, for the dependency file's name
        output = default_output(input_path, textual, bundle)
        from dataclasses import replace

        build = replace(build, dependency_file=build_settings(input_path, output, given_clang, textual, given,
                                                              config).dependency_file)
    return CompilePlan(input_path, output, "ll" if textual else "bc", target_clang, tuple(targets), device, build,
                       bundle, debug, flags.get("pass_pipeline"))
