"""`mlir-offload link`: find the target clang and the vendor toolkit, check that the bundle fits that clang,
and run `clang --offload-new-driver BUNDLE ... -l<runtime> -o APP`.

A bundle whose offload entries follow another clang's layout links without error into an executable that
registers no kernel (docs/targets-and-shipping.md), and LLVM bitcode newer than the clang cannot be read:
both are refused here with the reason and the fix. The data that decides is the profiles' (offload/data/profiles/)."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from offload.data import data_path
from offload.errors import FLAG, OffloadError, Part, worded
from offload.formats import profiles
from offload.formats.profiles import load_profile
from offload.formats.vendors import CUDA, VENDORS, runtime_link_flags, runtime_named, vendor_of_triple
from offload.fsutil import check_outputs, read_input, stream_of, write_stream
from offload.interrupts import removed_unless_kept, temporary_folder
from offload.options.compile import compile_option
from offload.options.link import DEFAULT_LINK, LinkOptions, link_option
from offload.options.link import FLAGS as LINK_FLAGS
from offload.packager import ImageKind
from offload.packager.bundle import BundleRecord, read_bundle_record
from offload.toolchain.cuda_device_link import cuda_device_link_speed
from offload.toolchain.ptx import (
    PTX_ENVIRONMENT,
    PTX_ONLY_ENVIRONMENT,
    REAL_FATBINARY_ENVIRONMENT,
    PtxImage,
    inputs_with_device_code,
    ptx_environment,
)
from offload.toolchain.tools import (
    Clang,
    clang_target_host,
    find_cuda,
    find_rocm,
    find_target_clang,
    runtime_library_dirs,
)

# The host part's optimization when the link names none, as nvcc optimizes host code by default; a -O of
# the user's (-O0 to debug) replaces it. build.sh (offload/toolchain/ship.py) renders the same rule.
HOST_OPTIMIZATION = "-O2"
OPTIMIZATION_OPTION = "-O"  # any word starting so is the user's own optimization level


def host_optimization(words) -> list[str]:
    """[HOST_OPTIMIZATION] unless the link's `words` name an optimization level of their own."""
    return [] if any(word.startswith(OPTIMIZATION_OPTION) for word in words) else [HOST_OPTIMIZATION]


def device_link_jobs(profile, bundles, words) -> list[str]:
    """The linking clang's jobs option (its profile's link.device_jobs_option) for one thread per device
    image, at most one per CPU: the linker wrapper then links the archs side by side. None where the clang
    has no such option, for one image, or where the link's own option `words` name the option already."""
    option = profile.link.get("device_jobs_option")
    if not option or any(word.startswith(option.rstrip("=")) for word in words):
        return []
    jobs = min(len({target for bundle in bundles for target in bundle.record.targets}), os.cpu_count() or 1)
    return [f"{option}{jobs}"] if jobs > 1 else []


# What the device compile of a -G link gets (clang's own -g -O0 CUDA/HIP compile passes the same).
DEVICE_DEBUG_ARGUMENTS = ("-g", "-O0")
# clang-nvlink-wrapper's warning for -g even with -O0 given (it then runs ptxas -O0 -g, as asked).
OPTIMIZED_DEBUGGING_WARNING = "Optimized debugging not supported"


def device_debug_options(profile, bundles) -> list[str]:
    """compile -G (or link -G): the linker wrapper's device compile of each bitcode image's triple keeps
    the debug information and does not optimize (ptxas -g). Native images were assembled at compile."""
    return device_debug_words(
        profile,
        {
            image.strings.get("triple", "")
            for bundle in bundles
            for image in bundle.images
            if image.image_kind == int(ImageKind.BITCODE)
        },
    )


def device_debug_words(profile, bitcode_triples) -> list[str]:
    """device_debug_options of the bitcode images' triples (`ship` renders them into build.sh)."""
    triples = sorted(bitcode_triples)
    option = profile.link.get("device_compiler_option")
    if triples and not option:
        raise OffloadError(
            (
                f"clang {profile.clang_major}'s linker wrapper takes no device compile options, so ",
                link_option("device_debug", True),
                " cannot reach the device link of bitcode images: compile with ",
                compile_option("device_debug", True),
                " ",
                compile_option("device_image", "cubin", joined=True),
            )
        )
    return [f"-Wl,{option}{triple}={argument}" for triple in triples if triple for argument in DEVICE_DEBUG_ARGUMENTS]


@dataclass
class LinkPlan:
    clang: Clang
    command: list[str]
    env_path_prepend: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # for the fatbinary wrapper (PTX images)
    ptx: list[PtxImage] = field(default_factory=list)  # checked in the executable
    ptxas_verbose: bool = False  # the user asked -Xcuda-ptxas -v: show ptxas's lines
    resource_usage: bool = False  # --resource-usage: one summary line per kernel and arch
    device_debug: bool = False  # -G: the device link gets -g -O0

    def printable(self) -> str:
        prefix = f"PATH={shlex.quote(os.pathsep.join(self.env_path_prepend))}:$PATH " if self.env_path_prepend else ""
        prefix += "".join(f"{name}={shlex.quote(value)} " for name, value in sorted(self.env.items()))
        return prefix + " ".join(shlex.quote(part) for part in self.command)


def compatibility_problem(record, images, clang) -> tuple[Part, ...] | None:
    """Why `clang` cannot link this bundle correctly (reason and fix: a message's parts), or None."""
    bundle_profile = profiles.load_profile(record.profile)
    layout = bundle_profile.entries.get("layout", "?")
    has_bitcode = record.host_format == "bc" or any(i.image_kind == ImageKind.BITCODE for i in images)
    refusals = profiles.link_refusals(record.profile, record.producer_llvm_major if has_bitcode else None, clang.major)
    if profiles.NO_PROFILE in refusals:
        known = ", ".join(map(str, profiles.available_profiles()))
        return (
            f"{clang.path} is clang {clang.version}, for which mlir-offload has no profile (profiles: {known}); "
            f"the bundle was made for clang {record.profile} ({layout} entries): pass ",
            link_option("clang", f"clang-{record.profile}"),
        )
    clang_profile = profiles.load_profile(clang.major)
    if profiles.OTHER_ENTRIES in refusals:
        return (
            f"bundle was made for clang {record.profile} ({layout} entries) but {clang.path} is clang "
            f"{clang.version} ({clang_profile.entries.get('layout', '?')} entries), which would link an "
            "executable that registers no kernel: recompile with ",
            compile_option("target_clang", str(clang.major)),
            " or pass ",
            link_option("clang", f"clang-{record.profile}"),
        )
    if profiles.UNREADABLE_BITCODE in refusals:
        return (
            f"the bundle holds LLVM {record.producer_llvm} bitcode, which clang {clang.version} cannot read "
            f"(it reads up to LLVM {clang_profile.bitcode_reads_llvm_up_to}): recompile with ",
            compile_option("target_clang", str(clang.major)),
            " (host object + native device images)",
        )
    return None


@dataclass(frozen=True)
class LinkBundle:
    path: str
    record: BundleRecord
    images: list


def find_bundles(arguments: list[str], read_images=None) -> list[LinkBundle]:
    """The mlir-offload bundles among a link's arguments (files with an mlir-offload record); other
    files (objects, archives, a clang -fgpu-rdc object) and flags are clang's. Without any bundle, the
    first file argument's reading error (through `read_images`, see read_bundle_record) says why it is
    not one."""
    from offload.formats.clang_arguments import input_files

    inputs = input_files(arguments)
    files = [a for a in inputs if os.path.isfile(a)]
    bundles = []
    for path in files:
        try:
            record, images = read_bundle_record(read_input(path), path)
        except OffloadError:
            continue  # not a bundle: clang judges it
        bundles.append(LinkBundle(path, record, images))
    if not bundles:
        first = next(iter(inputs), None)
        if first is None:
            raise OffloadError("no bundle among the link's inputs")
        read_bundle_record(read_input(first), first, read_images)  # raises: why it is not a bundle
        raise OffloadError(f"no mlir-offload bundle among the link's inputs ({' '.join(files)})")
    return bundles


def ptx_files_beside(bundle: str, images) -> list[str]:
    """The PTX files `compile --device-image=ptx` (or --portable) wrote beside `bundle` for its CUDA
    cubin images (`<bundle>.<arch>.ptx`) and that are not older than it (compile writes them after the
    bundle; an older one belongs to an earlier compile)."""
    import click

    archs = sorted(
        {
            image.strings.get("arch", "")
            for image in images
            if image.image_kind == ImageKind.CUBIN and vendor_of_triple(image.strings.get("triple", "")) is CUDA
        }
    )
    found = []
    for arch in archs:
        path = f"{bundle}.{arch}.ptx"
        if not os.path.isfile(path):
            continue
        if os.path.getmtime(path) < os.path.getmtime(bundle):
            click.echo(
                f"mlir-offload: warning: {path} is older than {bundle}, so an earlier compile wrote it: "
                "not added (recompile the bundle, or delete the file)",
                err=True,
            )
            continue
        found.append(path)
    return found


def plan_link(bundles, inputs: list[str], output: str, options: LinkOptions = DEFAULT_LINK) -> LinkPlan:
    """`bundles`: one bundle path (linked first, before `inputs`), or the LinkBundles of find_bundles(inputs),
    where `inputs` holds every link argument in the user's order; `options`: the link's (offload/options/link.py).
    ptx_beside adds each bundle's ptx_files_beside (what the Makefile and CMake rules ask for) unless ptx
    files are given; cudart none where `inputs` name the runtime library; a bundle compiled with -G asks
    for device_debug itself; serial_device_link: no --offload-jobs, LTO partitions or ptxas --split-compile."""
    from offload.formats.clang_arguments import own_options
    from offload.formats.hosts import host_refusal
    from offload.toolchain.doctor import fatbinary_wrapper_needed

    if isinstance(bundles, str):
        record, images = read_bundle_record(read_input(bundles), bundles)
        inputs = [bundles, *inputs]
        bundles = [LinkBundle(bundles, record, images)]
    from offload.formats.sparse_tensor_runtime import refuse_unlinked

    refuse_unlinked(bundles, inputs)
    first = bundles[0]
    for other in bundles[1:]:
        if other.record.profile != first.record.profile:
            raise OffloadError(
                (
                    f"{first.path} was made for clang {first.record.profile} but {other.path} for clang "
                    f"{other.record.profile}: one executable takes one entry layout, recompile them with the same ",
                    compile_option("target_clang"),
                )
            )
    clang = find_target_clang(options.clang, first.record.profile)
    link_host = clang_target_host(clang.path, inputs)
    for bundle in bundles:
        refusal = host_refusal(bundle.record.host_triple, link_host, clang.path, "link with --target={triple}")
        problem = compatibility_problem(bundle.record, bundle.images, clang) or (
            refusal and (refusal[0], ": ", *refusal[1])
        )
        if problem:
            raise OffloadError(problem if len(bundles) == 1 else (f"{bundle.path}: ", *problem))
    if clang.linker_wrapper is None:
        raise OffloadError(f"no clang-linker-wrapper beside {clang.path}: install clang-tools-{clang.major}")
    kinds = sorted({target.split(":", 1)[0] for bundle in bundles for target in bundle.record.targets})
    command = [clang.path, "--offload-new-driver"]
    for bundle in bundles:
        if bundle.record.host_format == "obj" and bundle.path.endswith((".bc", ".ll")):
            # clang picks the input language from the suffix: an ELF object named .bc must be read as an object.
            raise OffloadError(
                f"'{bundle.path}' is an ELF object (made for clang {bundle.record.profile}) but named "
                "like bitcode, so clang would misread it: rename it to .o"
            )
    inputs, ptxas_verbose = _ptxas_options_for_link(inputs)
    inputs = _bitcode_read_as_ir(inputs, bundles)
    from offload.formats.clang_arguments import input_files
    from offload.toolchain.cxx_inputs import CXX_DRIVER_MODE, cxx_inputs

    if cxx_inputs([i for i in input_files(inputs) if os.path.isfile(i)], inputs):
        command.append(CXX_DRIVER_MODE)  # as nvcc links with g++: the C++ runtime comes with C++ objects
    command += inputs
    command += host_optimization(own_options(inputs))  # clang compiles the bundle's host bitcode at the link's level
    if (ptxas_verbose or options.resource_usage) and CUDA.offload_kind in kinds:
        # The linker wrapper's nvlink wrapper runs ptxas (bitcode images) and nvlink with -v; the device
        # links run one after another, so that each arch's report lines stay together.
        command += [f"-Xoffload-linker-{CUDA.triple}", "-v"]
    elif not options.serial_device_link:
        command += device_link_jobs(load_profile(clang.major), bundles, own_options(inputs))
    device_debug = options.device_debug or any(bundle.record.device_debug for bundle in bundles)
    if device_debug:
        command += device_debug_options(load_profile(clang.major), bundles)
    path_prepend: list[str] = []
    env: dict[str, str] = {}
    ptx_images = []
    ptx: Sequence[str] = options.ptx
    if (options.ptx_beside or any(b.record.ptx_only for b in bundles)) and not ptx:  # compute_XX: its PTX is its code
        ptx = _one_ptx_source(bundles)
    if ptx:
        from offload.toolchain.ptx import check_ptx_files

        cuda_archs = sorted({t.split(":", 1)[1] for b in bundles for t in b.record.targets if t.startswith("cuda:")})
        ptx_images = check_ptx_files(list(ptx), cuda_archs, " ".join(b.path for b in bundles))
    for kind in kinds:
        spec = VENDORS.get(kind)
        if spec is None:
            raise OffloadError(f"the bundle targets offload kind '{kind}', which link does not know")
        root = None
        toolkit_on_path = False
        if spec.fatbinary:  # CUDA: its toolkit's fatbinary, PTX and arch ranges
            cuda = find_cuda(options.cuda_path)
            if cuda is None and options.cuda_path:
                raise OffloadError((link_option("cuda_path", options.cuda_path), ": no CUDA toolkit there (no bin/)"))
            if cuda is None:
                raise OffloadError(
                    (
                        "no CUDA toolkit found (ptxas, nvlink, fatbinary, libcudart): install it or pass ",
                        link_option("cuda_path", "DIR"),
                    )
                )
            root = cuda.root
            _refuse_unbuildable_archs(bundles, cuda)
            speed = cuda_device_link_speed(
                load_profile(clang.major), bundles, inputs, cuda, device_debug or options.serial_device_link
            )
            command += speed.arguments
            env.update(speed.env)
            path_prepend += speed.path_prepend
            if fatbinary_wrapper_needed(load_profile(clang.major), cuda):
                # clang 19/21 call fatbinary --image=..., which CUDA 13 rejects (docs/targets-and-shipping.md).
                # clang 21 forwards --cuda-path to its linker wrapper, which then runs <cuda>/bin/fatbinary before
                # PATH's: the toolkit goes on PATH behind the rewriting script instead of --cuda-path.
                path_prepend.append(data_path("scripts"))
                path_prepend.append(os.path.join(root, "bin"))
                toolkit_on_path = True
            if ptx_images:
                ptx_env, extra = _ptx_through_fatbinary_wrapper(
                    load_profile(clang.major),
                    cuda,
                    ptx_images,
                    path_prepend,
                    _ptx_only_archs(bundles, inputs, ptx_images),
                )
                env.update(ptx_env)
                command += extra
        else:
            rocm = find_rocm(options.rocm_path)
            root = rocm.root
        library_dirs = (
            [
                os.path.join(root, sub)
                for sub in runtime_library_dirs(spec, link_host)
                if os.path.isdir(os.path.join(root, sub))
            ][:1]
            if root
            else []
        )
        mode = "none" if runtime_named(spec, inputs) else options.cudart
        if mode not in dict(spec.runtime_variants):  # a mode of another vendor (--cudart=static for HIP)
            modes = ", ".join(dict(spec.runtime_variants))
            runtime = link_option(LINK_FLAGS["--cudart"], mode, joined=True)  # the option, named by its flag
            raise OffloadError((runtime, f" is not one of {modes} for {kind}"))
        used = bundle_libraries(bundles)
        command += runtime_link_flags(spec, None if toolkit_on_path else root, library_dirs, mode, used)
    command += ["-o", output]
    return LinkPlan(clang, command, path_prepend, env, ptx_images, ptxas_verbose, options.resource_usage, device_debug)


def bundle_libraries(bundles) -> tuple[str, ...]:
    """The libraries the bundles' records name (cusparse, ...), each once, in the bundles' order."""
    return tuple(dict.fromkeys(library for bundle in bundles for library in bundle.record.libraries))


# The suffixes from which clang reads a file as LLVM IR; any other input is handed to the host linker.
IR_SUFFIXES = (".bc", ".ll")


def _bitcode_read_as_ir(inputs: list[str], bundles) -> list[str]:
    """`inputs` with each bitcode bundle that is named otherwise (app.bundle, app.offload) given as
    `-x ir BUNDLE`, followed by `-x none` where more inputs come: clang picks the language from the suffix."""
    from offload.formats.clang_arguments import parse

    renamed = {b.path for b in bundles if b.record.host_format == "bc" and not b.path.endswith(IR_SUFFIXES)}
    arguments = parse(inputs)
    words: list[str] = []
    for index, argument in enumerate(arguments):
        if argument.is_input and argument.words[-1] in renamed:
            words += ["-x", "ir", *argument.words]
            if any(later.is_input for later in arguments[index + 1 :]):
                words += ["-x", "none"]
        else:
            words += argument.words
    return words


def _refuse_unbuildable_archs(bundles, cuda) -> None:
    """The bundles' CUDA archs that this toolkit's ptxas and nvlink cannot build: refused before clang runs."""
    from offload.formats.toolkit_archs import unbuildable_arch

    for bundle in bundles:
        for target in bundle.record.targets:
            kind, _, arch = target.partition(":")
            why = unbuildable_arch(arch, cuda.version) if kind == CUDA.offload_kind else None
            if why:
                raise OffloadError(
                    (
                        f"{bundle.path}: {why} (the toolkit at {cuda.root}): recompile for an arch "
                        "in that range, or link with a CUDA toolkit that builds it (",
                        link_option("cuda_path", "DIR"),
                        ")",
                    )
                )


def _ptxas_options_for_link(inputs: list[str]) -> tuple[list[str], bool]:
    """`inputs` without their -Xcuda-ptxas options, and whether one was -v. clang drops -Xcuda-ptxas at a
    link; its linker wrapper runs ptxas with options of its own and forwards only verbosity (-v)."""
    import click

    from offload.formats.clang_arguments import parse

    kept: list[str] = []
    verbose = False
    for argument in parse(inputs):
        if argument.option == "-Xcuda-ptxas" and argument.value is not None:
            if argument.value == "-v":
                verbose = True
            else:
                click.echo(
                    f"mlir-offload: warning: -Xcuda-ptxas {argument.value} does not reach ptxas at link "
                    "(clang's linker wrapper runs ptxas with its own options, and -v only): compile "
                    "with --device-image=cubin to run ptxas there",
                    err=True,
                )
            continue
        kept += argument.words
    return kept, verbose


def _one_ptx_source(bundles: list[LinkBundle]) -> list[str]:
    """The PTX files beside the bundles, where one bundle alone has PTX for an arch: the driver JIT-compiles
    one PTX image per arch, so several bundles' PTX for one arch (each with only its own kernels) cannot
    stand in for their linked cubin; those archs get none, with a warning."""
    import click

    by_arch: dict[str, list[str]] = {}
    for bundle in bundles:
        for path in ptx_files_beside(bundle.path, bundle.images):
            by_arch.setdefault(path.rsplit(".", 2)[-2], []).append(path)
    chosen = []
    for arch, paths in sorted(by_arch.items()):
        if len(paths) == 1:
            chosen += paths
        else:
            click.echo(
                f"mlir-offload: warning: {', '.join(paths)}: PTX of several bundles for {arch} not added "
                f"(a GPU newer than {arch} JIT-compiles one PTX image, which would lack the other bundles' "
                f"kernels): the executable runs only where its {arch} cubin does",
                err=True,
            )
    return chosen


def _ptx_only_archs(bundles: list[LinkBundle], inputs: list[str], ptx_images) -> list[str]:
    """The archs whose linked cubin the fatbinary wrapper drops, leaving their PTX alone (nvcc's compute_XX):
    those every bundle for the arch records as PTX only, whose PTX is added, when no other input carries
    device code (the PTX holds the bundles' kernels only; the cubin stays otherwise)."""
    added = {image.arch for image in ptx_images}
    archs = []
    for arch in sorted({a for b in bundles for a in b.record.ptx_only} & added):
        holders = [b for b in bundles if f"cuda:{arch}" in b.record.targets]
        if all(arch in b.record.ptx_only for b in holders):
            archs.append(arch)
    paths = {b.path for b in bundles}
    if archs and inputs_with_device_code([i for i in inputs if i not in paths]):
        return []
    return archs


def _ptx_through_fatbinary_wrapper(
    profile, cuda, ptx_images, path_prepend: list[str], ptx_only: Sequence[str] = ()
) -> tuple[dict, list[str]]:
    """Environment and clang flags that make the linker wrapper's fatbinary step run
    offload/data/scripts/fatbinary, which adds the PTX images (kind=ptx) beside the linked cubins and drops
    the cubins of the `ptx_only` archs."""
    if cuda.fatbinary is None:
        raise OffloadError(f"CUDA at {cuda.root} has no bin/fatbinary: PTX images cannot be added")
    scripts = data_path("scripts")
    extra = []
    if profile.cuda.get("fatbinary_lookup") == "cuda_path":
        # This linker wrapper runs <--cuda-path>/bin/fatbinary; scripts/bin/fatbinary is the wrapper.
        extra.append(f"-Wl,--cuda-path={scripts}")
    elif scripts not in path_prepend:
        path_prepend.insert(0, scripts)
    env = {PTX_ENVIRONMENT: ptx_environment(ptx_images), REAL_FATBINARY_ENVIRONMENT: cuda.fatbinary}
    if ptx_only:
        env[PTX_ONLY_ENVIRONMENT] = " ".join(ptx_only)
    return env, extra


def link_bundle(bundles, inputs: list[str], output: str, options: LinkOptions = DEFAULT_LINK) -> None:
    """`bundles`, `inputs` and `options` as plan_link takes them; options.dry_run prints the command
    instead, options.verbose prints it and clang's messages."""
    import click

    # Before clang runs: not over an input (clang would overwrite the bundle or an object), a device or a folder.
    check_outputs([output], [item for item in inputs if not item.startswith("-")])
    plan = plan_link(bundles, inputs, output, options)
    dry_run, verbose = options.dry_run, options.verbose
    if plan.ptx:
        from offload.toolchain.ptx import inputs_with_device_code

        if isinstance(bundles, str):
            owners = [bundles]
        else:  # the bundles whose PTX was added: <bundle>.<arch>.ptx
            owners = [
                b.path
                for b in bundles
                if any(image.path.startswith(os.path.abspath(b.path) + ".") for image in plan.ptx)
            ]
        archs = ", ".join(image.arch for image in plan.ptx)
        for other in inputs_with_device_code([i for i in inputs if i not in owners]):
            click.echo(
                f"mlir-offload: warning: {other} carries device code too, but the added PTX "
                f"covers only {' and '.join(owners) or 'its bundle'}'s kernels: on a GPU newer than {archs} "
                f"the driver JIT-compiles that PTX and {other}'s kernels fail to launch",
                err=True,
            )
    if dry_run or verbose:
        click.echo(plan.printable(), err=not dry_run)
    if dry_run:
        return
    env = dict(os.environ, **plan.env)
    if plan.env_path_prepend:
        env["PATH"] = os.pathsep.join(plan.env_path_prepend + [env.get("PATH", "")])
    final = output
    assert plan.command[-2:] == ["-o", final]
    stream = stream_of(final)
    # clang and its linker wrapper get a private temporary folder (TMPDIR), removed success or failure:
    # a failed link leaves none of their device objects behind. clang writes a temporary name beside the
    # output, renamed over it only when the link and its checks succeed: a failed link leaves the previous
    # executable in place. An output naming standard output is linked in the private folder, then copied.
    with temporary_folder("mlir-offload-link-") as private:
        env["TMPDIR"] = private
        if stream is None:
            output = os.path.join(os.path.dirname(final), f".{os.path.basename(final)}.{os.getpid()}.tmp")
        else:
            output = os.path.join(private, "executable")
        with removed_unless_kept(output):
            try:
                _run_link(plan, env, inputs, output, verbose, final)
                if stream is None:
                    os.replace(output, final)
                else:
                    with open(output, "rb") as linked:
                        write_stream(stream, linked.read())
            except OSError as e:
                raise OffloadError(f"cannot write '{final}': {e.strerror}") from None
            finally:
                _keep_clang_temps(inputs, output, final)


def _keep_clang_temps(inputs: list[str], output: str, final: str) -> None:
    """-save-temps: clang's files are named after the executable, not after link's temporary output."""
    from offload.toolchain.link_temps import name_temps_after, wants_temps

    if wants_temps(inputs):
        name_temps_after(output, final)


def _run_link(plan, env: dict, inputs: list[str], output: str, verbose: bool, final: str) -> None:
    """Run the planned clang command with `output` as its -o, then check the PTX it must hold. Messages
    name the user's `final` output, never the temporary `output`."""
    import click

    try:
        done = subprocess.run([*plan.command[:-1], output], env=env, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise OffloadError(f"cannot run {plan.command[0]}: {e.strerror}") from None
    stderr = (done.stderr or "").replace(output, final).replace(env["TMPDIR"] + "/", "")
    stdout = (done.stdout or "").replace(output, final).replace(env["TMPDIR"] + "/", "")
    if verbose and stderr:
        click.echo(stderr.rstrip(), err=True)
    if done.returncode != 0:
        from offload.toolchain.link_messages import failure_parts, read_report

        report = read_report(stderr + "\n" + stdout, inputs)
        parts = failure_parts(report) or ("no cause printed: rerun with -v",)
        summary = worded(parts, FLAG)
        if not verbose:  # the lines that add a fact; none the summary quotes or restates is repeated
            for line in report.causes[:20]:
                if line not in summary and line not in report.restated:
                    click.echo(line, err=True)
        raise OffloadError((f"clang {plan.clang.version} failed to link (exit {done.returncode}): ", *parts))
    if not verbose:
        from offload.toolchain.link_messages import warnings

        for line in warnings(stderr):
            if not (plan.device_debug and OPTIMIZED_DEBUGGING_WARNING in line):  # it does run -O0, as asked
                click.echo(line, err=True)
        if plan.ptxas_verbose:
            from offload.toolchain.resource_usage import ptxas_verbose_lines

            for line in ptxas_verbose_lines(done.stderr or ""):
                click.echo(line, err=True)
    if plan.resource_usage:
        from offload.toolchain.resource_usage import read_ptxas_verbose

        kernels = read_ptxas_verbose(done.stderr or "")
        for kernel in kernels:
            click.echo(kernel.line())
        if not kernels:
            click.echo(
                "mlir-offload: warning: --resource-usage: no kernel figures in the link's output (ptxas and "
                "nvlink report CUDA kernels only)",
                err=True,
            )
    if plan.ptx:
        from offload.toolchain.ptx import missing_ptx

        missing = missing_ptx(output, plan.ptx)
        if missing:
            raise OffloadError(
                f"the linked executable has no PTX for {', '.join(missing)}: "
                f"clang {plan.clang.version}'s linker wrapper did not run mlir-offload's fatbinary "
                "wrapper (nothing was written)"
            )


__all__ = [
    "LinkBundle",
    "LinkPlan",
    "compatibility_problem",
    "find_bundles",
    "link_bundle",
    "plan_link",
    "ptx_files_beside",
]
