"""`mlir-offload compile`: an MLIR GPU program -> one host bundle clang links with --offload-new-driver.

Named stages, each from one representation to the next:
  load       .mlir -> Program                                   (offload.mlir.frontend)
  device     Program -> DeviceImage per gpu.module x target     (offload.device)
  codegen    DeviceImages -> + native code (cubin + PTX, AMDGPU object) where the plan packages it
             (the vendor's codegen hook, offload.device.native)
  package    DeviceImages -> OffloadImages                       (offload.packager)
  lower      Program -> host LLVM IR, launches as launch-code calls (offload.host.lower)
  annotate   host IR + stubs, runtime shims, entries, embedded object, bundle record (llvmlite)
  emit       bitcode, textual IR, or an ELF object for a clang older than our LLVM
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

from offload.errors import OffloadError
from offload.formats.hosts import HostTriple, resolve_host
from offload.formats.profiles import Profile, load_profile
from offload.formats.vendors import vendor_for
from offload.options import compile_option

EMIT_FORMATS = ("bc", "ll")


@dataclass(frozen=True)
class BundlePlan:
    """How the bundle is made for one target clang: bitcode where it can read ours, else native code."""

    profile: Profile
    offload_kind: str
    producer_llvm: str  # "22.1.0"
    host_format: str  # "bc" | "obj"
    device_image: str  # "bitcode" | "cubin" (portable.convert_device_images names)
    host: HostTriple  # the CPU the executable runs on
    ptx_only: tuple[str, ...] = ()  # CUDA archs given as compute_XX (offload.packager.bundle.BundleRecord)

    def keeps_ptx(self, arch: str) -> bool:
        """Whether the image of `arch` is a cubin with its PTX kept (--device-image=ptx, or compute_XX)."""
        return self.device_image == "ptx" or arch in self.ptx_only

    def image_kind(self, arch: str) -> str:
        """The device image of `arch`: compute_XX's is "ptx" whatever the other archs get."""
        return "ptx" if self.keeps_ptx(arch) else self.device_image


def producer_llvm_version() -> str:
    import llvmlite.binding as llvm

    return ".".join(str(part) for part in llvm.llvm_version_info)


def plan_bundle(
    targets,
    target_clang: int | str | None,
    device_image: str | None = None,
    host_format: str | None = None,
    host_triple: str | None = None,
    ptx_only: tuple[str, ...] = (),
) -> BundlePlan:
    """The profile, and whether the target clang can read our LLVM's bitcode (profile data decides the
    default formats; device_image/host_format are the user's --device-image/--host-format/--portable)."""
    from offload.driver.outputs import choose_formats

    host = resolve_host(host_triple)
    profile = load_profile(target_clang)
    kinds = sorted({t.offload_kind for t in targets})
    if len(kinds) != 1:
        raise OffloadError(
            (
                compile_option("offload_arch"),
                f" mixes offload kinds ({', '.join(kinds)}): the host code calls one runtime, compile one bundle "
                "per kind",
            )
        )
    producer = producer_llvm_version()
    device, host_format = choose_formats(profile, producer, device_image, host_format)
    return BundlePlan(profile, kinds[0], producer, host_format, device, host, ptx_only)


@dataclass(frozen=True)
class CompiledBundle:
    data: bytes  # the bundle: bitcode, textual IR, or ELF object
    ptx: dict[str, str]  # arch -> the PTX its cubin was assembled from (device_image "ptx"), else {}
    resources: tuple[str, ...] | None = ()  # --resource-usage: a line per kernel and arch (None: no ptxas ran)


def compile_bundle(settings) -> CompiledBundle:
    """The whole compile of an offload.driver.plan.CompilePlan: the bundle's bytes and, with device image
    "ptx", the PTX of each NVPTX image."""
    from offload.device import symbol_name
    from offload.mlir.frontend import load_program

    options, emit, plan = settings.options, settings.emit, settings.bundle
    if emit == "ll" and plan.host_format != "bc":
        raise OffloadError(
            f"-S writes LLVM {plan.producer_llvm} IR text, which clang {plan.profile.clang_major} "
            "cannot read; bundles for it are ELF objects: drop -S"
        )
    from offload.trace import stage

    if vendor_for(plan.offload_kind).toolkit_archs and not options.emulate:  # emulation needs no toolkit
        from offload.device.native import check_toolkit_archs

        for runs_ptxas in (False, True):  # ptxas runs here for native images: their archs are checked strictly
            archs = [t.arch for t in settings.targets if (plan.image_kind(t.arch) != "bitcode") == runs_ptxas]
            if archs:
                check_toolkit_archs(archs, runs_ptxas)
    from offload.driver.save_temps import save_temps_for

    temps = save_temps_for(options.save_temps, settings.input_path, settings.output)
    from offload.driver.emulation import check_device_source, check_emulatable

    with stage("load"):
        program = load_program(
            settings.input_path, options.pass_pipeline, check_device_source if options.emulate else None
        )
    if temps:
        temps.keep("input", str(program.module), "mlir")
    if options.emulate:
        check_emulatable(program)
    # The host lowering needs no device image: its child runs while the device step does (another CPU).
    host_lowering = start_lower(
        program,
        lambda module, kernel: symbol_name(module, kernel, options.rename),
        options.debug_info == "g",
        bool(options.sanitizers),
    )
    try:
        refuse_unavailable_libraries(program, plan.offload_kind)
        images, resources = _device_part(settings, program, temps, plan, options)
    except BaseException:
        host_lowering.cancel()
        raise
    with stage("lower"):
        lowered = host_lowering.result()
    if temps:
        temps.keep("host-lowered", lowered.llvm_ir, "ll")
    with stage("package"):
        # The record names the libraries the lowered host code calls (its mgpu* functions say which).
        libraries = libraries_used(lowered.runtime_functions, plan.offload_kind)
        record = make_record(
            plan,
            images,
            options.device_debug,
            libraries,
            options.sanitizers,
            options.sanitize_keep_going,
            lowered.sparse_tensor_runtime,
        )
        offload_images = package(images, plan, record)
    with stage("annotate"):
        host = annotate(lowered, images, offload_images, plan, record)
    if temps:
        temps.keep("host", str(host), "ll")
    ptx = {i.target.arch: i.native.ptx for i in images if plan.keeps_ptx(i.target.arch) and i.native and i.native.ptx}
    with stage(f"emit ({emit if plan.host_format == 'bc' else 'obj'})"):
        data = emit_bundle(host, plan, emit)
    return CompiledBundle(data, ptx, resources)


def _device_part(settings, program, temps, plan: BundlePlan, options):
    """The device images of every target: (images, resource lines)."""
    from offload.device import compile_device
    from offload.trace import stage

    with stage(f"device ({', '.join(t.arch for t in settings.targets)})"):
        # A bitcode image is LTO-linked and optimized again by the target clang: the pre-link pipeline.
        # Native images: codegen runs on each image built (a cache hit brings its native code along).
        with (
            temps.device_steps(options, program.path, settings.targets) if temps else nullcontext(options)
        ) as device_options:
            # One run per image kind (compute_XX beside sm_XX bitcode images: a cubin with its PTX), in the
            # targets' order.
            by_kind: dict[str, list] = {}
            for target in settings.targets:
                by_kind.setdefault(plan.image_kind(target.arch), []).append(target)
            made = {}
            for kind, targets in by_kind.items():
                native = codegen(kind, options, plan.profile, targets)
                for image in compile_device(
                    program,
                    targets,
                    device_options,
                    # The target's device link (bitcode images; cubins it makes here) runs the whole LTO pipeline.
                    lto_pre_link=kind == "bitcode" or bool(native and native.device_lto),
                    codegen=native,
                ):
                    made[image.target] = image
            images = [made[target] for target in settings.targets]
    if temps:
        keep_device_temps(temps, images)
    resources = resource_usage(images, options) if options.resource_usage else ()
    return images, resources


def resource_usage(images, options) -> tuple[str, ...] | None:
    """--resource-usage: per kernel and arch, what ptxas -v reports for the PTX of each CUDA image packaged
    as a cubin (ptxas runs here); for bitcode images ptxas runs at the target's link (link --resource-usage)."""
    from offload.device.native import ptxas_finder, run_ptxas
    from offload.toolchain.resource_usage import read_ptxas_verbose

    assembled = [image for image in images if image.native is not None and image.native.ptx]
    if not assembled:
        return None
    ptxas = ptxas_finder(flags=options.ptxas_debug_flags)
    lines = []
    for image in assembled:
        run = run_ptxas(image.native.ptx, image.target.arch, ptxas(), options.opt_level, ptxas.flags, verbose=True)
        lines += [kernel.line() for kernel in read_ptxas_verbose(run.report)]
    return tuple(lines)


def keep_device_temps(temps, images) -> None:
    """-save-temps: each arch's device bitcode, and its native code (cubin and PTX, AMDGPU object)."""
    from offload.packager import IMAGE_KIND_EXTENSION, ImageKind

    for image in images:
        temps.keep("device", image.bitcode, "bc", image.target.arch)
        if image.native is not None:
            extension = IMAGE_KIND_EXTENSION[ImageKind(image.native.image_kind)]
            temps.keep("native", image.native.data, extension, image.target.arch)
            if image.native.ptx:
                temps.keep("native", image.native.ptx, "ptx", image.target.arch)


def codegen(device_image: str, options, profile=None, targets=()):
    """The serialization's last hook (offload.device.native.Codegen), for images packaged as native code.
    CUDA cubins (not PTX, which keeps our PTX floor for the GPUs that JIT it; not -G, whose link compiles
    the device code at -O0) come from the target clang's device link where this machine has its tools
    (offload.device.device_lto): every target's, or none."""
    from offload.device.native import Codegen, ptxas_finder

    if device_image == "bitcode":
        return None
    ptxas = ptxas_finder(flags=options.ptxas_debug_flags)
    device_lto = {}
    cuda = [t for t in targets if vendor_for(t.offload_kind).ptx]
    wanted = device_image == "cubin" and profile is not None and not options.device_debug
    if wanted and cuda and len(cuda) == len(targets):
        from offload.device.device_lto import find_device_lto
        from offload.toolchain.tools import find_cuda

        toolkit = find_cuda(ptxas.cuda_path)
        found = {t.arch: find_device_lto(profile, t.arch, toolkit.root if toolkit else None) for t in cuda}
        device_lto = found if all(found.values()) else {}
    return Codegen(options.opt_level, ptxas, device_lto)


def libraries_used(runtime_functions, offload_kind: str) -> tuple[str, ...]:
    from offload.host.sparse_runtime import libraries_used as sparse_libraries

    return sparse_libraries(runtime_functions, offload_kind)


def refuse_unavailable_libraries(program, offload_kind: str) -> None:
    """The first sparse op whose library the target's runtime lacks (any on a runtime without a sparse
    library, 2:4 ops without cuSPARSELt): one located line, before the device step."""
    import mlir.ir as ir

    from offload.host.sparse_runtime import unavailable_op

    found = []

    def visit(op):
        why = unavailable_op(op.name, offload_kind)
        if why is not None:
            found.append((op, why))
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.SKIP if op.name == "gpu.module" else ir.WalkResult.ADVANCE

    program.module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found:
        from offload.mlir.frontend import location_of

        op, why = found[0]
        raise OffloadError(f"'{op.name}': {why}", location_of(op.location, program.path))


def make_record(
    plan: BundlePlan,
    images,
    device_debug: bool = False,
    libraries: tuple[str, ...] = (),
    sanitize: tuple[str, ...] = (),
    sanitize_keep_going: bool = False,
    sparse_tensor_runtime: str = "",
):
    from offload.packager.bundle import BundleRecord

    return BundleRecord(
        plan.profile.clang_major,
        plan.producer_llvm,
        plan.host_format,
        tuple(f"{i.target.offload_kind}:{i.target.arch}" for i in images),
        plan.host.name,
        plan.ptx_only,
        device_debug,
        libraries,
        sanitize,
        sanitize_keep_going,
        sparse_tensor_runtime,
    )


def package(images, plan: BundlePlan, record) -> list:
    """DeviceImages -> OffloadImages (offload kind value from the profile, the record in the strings; the
    native code where codegen made it, else the bitcode)."""
    from offload.packager import ImageKind, OffloadImage

    offload_images = []
    for image in images:
        strings = {"triple": image.target.triple, "arch": image.target.arch, **record.image_strings()}
        offload_images.append(
            OffloadImage(
                image_kind=image.native.image_kind if image.native else int(ImageKind.BITCODE),
                offload_kind=plan.profile.offload_kind_value(image.target.offload_kind),
                flags=0,
                strings=strings,
                data=image.native.data if image.native else image.bitcode,
            )
        )
    return offload_images


def start_lower(program, device_symbol, debug: bool = False, host_sites: bool = False):
    # Both lowerings (host, then device) fork from here and each would import mlir.dialects.llvm (15 ms
    # of CPU); this process imports it, and the host tables annotate reads, once for all three.
    import mlir.dialects.llvm  # noqa: F401

    from offload.host import async_runtime, entries, runner_utils, sparse_runtime  # noqa: F401
    from offload.host.lower import start_lower_host

    return start_lower_host(program, device_symbol, debug, host_sites)


def annotate(lowered, images, offload_images, plan: BundlePlan, record):
    """Host IR + stubs + runtime shims + entries + embedded OffloadBinary, as one llvmlite module."""
    import llvmlite.binding as llvm
    import llvmlite.ir as ir

    from offload.device.native import verified_module
    from offload.host import async_runtime, embed, entries, launch, runner_utils, runtime
    from offload.host.host_sites import SITE_FUNCTION
    from offload.host.lower import packing_name
    from offload.packager import write_binary

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    triple = plan.host.llvm_triple
    machine = llvm.Target.from_triple(triple).create_target_machine(reloc="pic")
    # Its own context: identified struct types (the offload entry's layout differs per target clang) must
    # not carry over from an earlier compile in the same process (the Python API).
    annotations = ir.Module("mlir_offload.host", context=ir.Context())
    annotations.triple = triple
    annotations.data_layout = str(machine.target_data)
    emitter = runtime.RuntimeEmitter(annotations, runtime.runtime_for(plan.offload_kind), plan.host, plan.profile)
    emitter.define_shims(lowered.runtime_functions)
    runner_utils.define_runner_utilities(emitter, lowered.runner_utilities)
    async_runtime.define_async_runtime(emitter, lowered.async_runtime)
    if lowered.host_sites:
        from offload.host.host_sites import define_site_function

        define_site_function(emitter, lowered.host_sites)

    # The packing functions the lowered host calls, numbered as it numbered them.
    for index, arg_types in enumerate(lowered.packings):
        if launch.packing_function(emitter, arg_types).name != packing_name(index):
            raise OffloadError(f"internal error: the host calls {packing_name(index)} with another argument list")
    symbols, stubs = [], []
    for kernel in device_kernels(images, lowered):
        launch_signature = lowered.launches.get(kernel)
        arg_types = launch_signature.arg_types if launch_signature else []
        stub, handle = launch.declare_stub(emitter, kernel, arg_types)
        stubs.append((stub, arg_types))
        if launch_signature is not None and launch_signature.cluster_launch is not None:
            launch.define_cluster_stub(emitter, kernel, arg_types, handle, launch_signature.cluster_launch)
        symbols.append(entries.OffloadSymbol(kernel, handle))
    for name, size, flags in device_globals(images):
        shadow = ir.GlobalVariable(annotations, ir.ArrayType(ir.IntType(8), size), f"__mlir_offload_shadow.{name}")
        shadow.linkage = "internal"
        shadow.initializer = ir.Constant(shadow.value_type, None)
        shadow.align = 8
        symbols.append(entries.OffloadSymbol(name, shadow, size, flags))
    kernel_entries = entries.add_entries(annotations, plan.profile, plan.offload_kind, symbols)
    for (stub, arg_types), entry in zip(stubs, kernel_entries[: len(stubs)], strict=True):  # kernels' come first
        launch.define_stub(emitter, stub, arg_types, entry)
    embed.embed_offload_binary(annotations, write_binary(offload_images))
    embed.add_record_metadata(annotations, record)

    from offload.device.llvmlite_backend import fresh_context

    # A context of its own: types named in an earlier compile of this process (offload.api) would
    # otherwise rename this one's (%struct.X.4), and the bundle would differ from the command's.
    context = fresh_context()

    def parse(text):
        return llvm.parse_assembly(text, context)

    host = verified_module(parse, lowered.llvm_ir, "internal error: cannot read the lowered host module")
    host.triple = triple
    host.data_layout = str(machine.target_data)
    host.link_in(verified_module(parse, str(annotations), "internal error: cannot read the host annotations"))
    # The shims and packing functions had to be external to resolve the host's declarations; nothing else may
    # call them.
    internal = (
        *lowered.runtime_functions,
        *lowered.runner_utilities,
        *lowered.async_runtime,
        *(packer.name for packer in emitter.packers.values()),
    )
    for name in (*internal, *([SITE_FUNCTION] if lowered.host_sites else [])):
        host.get_function(name).linkage = llvm.Linkage.internal
    if lowered.async_runtime:
        split_coroutines(host, machine)
    try:
        host.verify()
    except RuntimeError as e:
        why = " ".join(str(e).split())
        raise OffloadError(f"internal error: the annotated host module is invalid: {why}") from None
    return host


def split_coroutines(host, machine) -> None:
    """The async dialect's bodies are LLVM coroutines (llvm.coro.*), which only LLVM's coroutine passes
    turn into plain functions: run LLVM's -O0 pipeline, which holds them, so that any host format (an
    object made here, or bitcode for any clang) carries no coroutine intrinsic."""
    import llvmlite.binding as llvm

    builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=0))
    builder.getModulePassManager().run(host, builder)


def device_kernels(images, lowered) -> list[str]:
    """Every kernel of the device images (each image must hold the same ones); a launch of a kernel no
    image defines is an error (the executable would fail to find it)."""
    kernels: list[str] = []
    for image in images:
        for kernel in image.kernels:
            if kernel not in kernels:
                kernels.append(kernel)
    for image in images:
        missing = [k for k in kernels if k not in image.kernels]
        if missing:
            raise OffloadError(f"the {image.target.arch} image lacks kernel(s) {', '.join(missing)}")
    for kernel in lowered.launches:
        if kernel not in kernels:
            raise OffloadError(f"the host launches kernel '{kernel}', which no device image defines")
    return kernels


def device_globals(images) -> list[tuple[str, int, int]]:
    """(name, size in bytes, entry flags) of each device global, sizes read from an image built here, else
    in a forked child from a cached one (LLVM never parses cached bytes in this process)."""
    names = [g for g in images[0].globals] if images else []
    if not names:
        return []
    built = [image for image in images if not image.cached]
    if built:
        return _global_layout((built[0].bitcode, names))
    from offload.processes import call_forked

    return call_forked(
        _global_layout,
        (images[0].bitcode, names),
        f"reading the device globals of the cached {images[0].target.arch} image",
    )


def _global_layout(item: tuple[bytes, list[str]]) -> list[tuple[str, int, int]]:
    import llvmlite.binding as llvm

    from offload.device.llvmlite_backend import fresh_context

    bitcode, names = item
    module = llvm.parse_bitcode(bitcode, fresh_context())
    target_data = llvm.create_target_data(module.data_layout)
    found = []
    for name in names:
        var = module.get_global_variable(name)
        size = target_data.get_abi_size(var.global_value_type)
        # Entry flag 16 = constant: NVPTX and AMDGPU both keep constants in address space 4.
        constant_flag = 16 if "addrspace(4)" in str(var.type) else 0
        found.append((name, max(size, 1), constant_flag))
    return found


def emit_bundle(host, plan: BundlePlan, emit: str) -> bytes:
    if emit == "ll":
        return str(host).encode()
    bitcode = host.as_bitcode()
    if plan.host_format == "bc":
        return bitcode
    from offload.device.native import check_offloading_section, host_to_object

    obj = host_to_object(bitcode)
    check_offloading_section(obj)
    return obj
