"""The device step: every gpu.module of a program, for every target, becomes one LLVM bitcode image
(clang's RDC model: all gpu.modules of the program in ONE image per target):

    lower (MLIR, in a forked child; lowering.py) -> the LLVM stages of each target (skeleton.py, by
    LLVM's tools or llvmlite) -> images, through the device image cache (image_cache.py)

What differs between NVVM and ROCDL comes from the TargetKind record in kinds.py."""

from __future__ import annotations

import threading

from offload.device.images import DeviceImage
from offload.device.kinds import KINDS
from offload.device.lowering import LoweringMode, lower_to_llvm_ir
from offload.device.optimizer import find_optimizer
from offload.device.skeleton import SerializeJob, serialize_image
from offload.errors import OffloadError
from offload.formats.targets import Target, check_ptx_feature
from offload.formats.vendors import vendor_for
from offload.mlir.frontend import Program
from offload.options import CompileOptions, compile_option
from offload.processes import ForkedCall, map_forked, map_threads, worker_count


def compile_device(
    program: Program,
    targets: list[Target],
    options: CompileOptions,
    *,
    jobs: int | None = None,
    lto_pre_link: bool = False,
    codegen=None,
) -> list[DeviceImage]:
    """Every gpu.module of `program`, for every target: one LLVM bitcode image per target. The MLIR
    lowering runs in a forked child (once per distinct pipeline); the LLVM stages of the targets run side
    by side, up to `jobs` at once (default: one per CPU): LLVM's tools as processes where the machine has
    them, else llvmlite in forked children, each in its own LLVM context. So an image is the same whichever
    other targets were asked for and however many jobs ran.
    lto_pre_link: the images stay bitcode the target clang LTO-links (optimizer.py says why it matters).
    codegen: gives each image built its native code (offload.device.native.Codegen), as the skeleton's last
    step, where the image was built; what that code depends on joins the image's cache key, so that a cache
    hit brings its native code along."""
    _check_options(options, targets)
    program.require_gpu_modules()
    pipelines = [KINDS[target.offload_kind].lowering_pipeline(target) for target in targets]
    distinct = list(dict.fromkeys(pipelines))  # sm_80 and sm_90 share one NVVM lowering
    modes = {
        p: LoweringMode(KINDS[t.offload_kind], t.triple, t.wavefront_size, t.arch)
        for p, t in zip(pipelines, targets, strict=True)
    }
    # In a child: MLIR crashing on some input (e.g. translating an NVVM op it cannot) is one error line.
    lowering = ForkedCall(
        lambda names: [lower_to_llvm_ir(program, p, options, modes[p]) for p in names],
        distinct,
        "lowering the device code crashed",
    )
    # While the child lowers: which LLVM runs the LLVM stages.
    optimizer = _llvm_tools_ready(tuple(dict.fromkeys(t.triple for t in targets)))
    cache = _open_cache(options)  # also while the child lowers (the folder's checks)
    if cache and codegen:
        for target in targets:
            codegen.key(target)  # ptxas --version, while the child lowers
    if optimizer.in_process and jobs is None and options.opt_level == 0:
        jobs = 1  # without the optimizer a target's LLVM stages cost less than forking a child
    # A thread loading LLVM must not be running when a child is forked.
    preload = _preload_llvm() if optimizer.in_process and worker_count(len(targets), jobs) > 1 else None
    lowered_by_pipeline = dict(zip(distinct, lowering.result(), strict=True))
    work = [
        SerializeJob(lowered_by_pipeline[pipeline], target, options, program.path, optimizer, lto_pre_link, codegen)
        for pipeline, target in zip(pipelines, targets, strict=True)
    ]
    keys = [_cache_key(job, codegen) for job in work] if cache else [None] * len(work)
    cached: list[DeviceImage | None] = (
        cache.lookup(keys, targets, native=codegen is not None) if cache else [None] * len(work)
    )
    missing = [i for i, image in enumerate(cached) if image is None]
    # The target's device link run here (device_lto.py) is processes of its own (opt, llc, ptxas): no llvmlite.
    in_process_codegen = codegen is not None and not codegen.device_lto
    if preload is None and in_process_codegen and missing:
        # Native code needs llvmlite in each image's child (codegen.py emits in a child even with one job):
        # loaded once, here, not by every child.
        preload = _preload_llvm()
    if preload is not None:
        preload.join()  # no other thread may run when the children are forked
    if optimizer.in_process or in_process_codegen:
        # LLVM parses the files the user names (--link-bitcode, --libdevice, --rocm-device-lib-path): never in
        # this process, whatever they hold. Native code is emitted in a process of its own (codegen.py says
        # why), so the images' skeletons, codegen included, run in children even when LLVM's tools do the rest.
        built = map_forked(
            serialize_image,
            [work[i] for i in missing],
            [targets[i].arch for i in missing],
            jobs,
            isolate=bool(options.link_bitcode or options.libdevice or options.rocm_device_lib_path),
        )
    else:
        built = map_threads(serialize_image, [work[i] for i in missing], jobs)
    built_by_index = dict(zip(missing, built, strict=True))
    if cache:
        cache.store({keys[i]: built_by_index[i] for i in missing})
    return [image if image is not None else built_by_index[i] for i, image in enumerate(cached)]


def _llvm_tools_ready(triples: tuple[str, ...]):
    """find_optimizer, and llvmlite.ir imported (the module flags module needs it, 40 ms) while the child lowers."""
    optimizer = find_optimizer(triples)
    if not optimizer.in_process:
        import llvmlite.ir  # noqa: F401
    return optimizer


def _open_cache(options: CompileOptions):
    if not options.cache or options.device_stage_folder:  # a stage dump needs the stages to run
        return None
    from offload.device.image_cache import open_cache

    return open_cache(options)


def _cache_key(job: SerializeJob, codegen=None) -> str:
    from offload.device.image_cache import image_key, with_codegen

    kind = KINDS[job.target.offload_kind]
    try:  # every library the image may link: the plan as if the code called into them
        libraries = list(kind.plan_libraries(job.target, job.options, True).files)
    except OffloadError:
        libraries = []  # none found: serialization reports it if the code needs one
    key = image_key(job, [*job.options.link_bitcode, *libraries])
    return with_codegen(key, codegen.key(job.target)) if codegen else key


def _preload_llvm() -> threading.Thread:
    """Load and initialize llvmlite's LLVM in this process while MLIR lowers (the library load waits
    on the disk and the dynamic linker, not on the GIL): forked children inherit it instead of each
    loading the 180 MB library again."""

    def load():
        try:
            import llvmlite.binding as llvm

            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
        except Exception:  # noqa: BLE001 - the children load it again and report what fails
            pass

    thread = threading.Thread(target=load, name="llvmlite-preload", daemon=True)
    thread.start()
    return thread


def _check_options(options: CompileOptions, targets: list[Target]) -> None:
    if not targets:
        raise OffloadError(("no offload target: pass ", compile_option("offload_arch"), ", e.g. sm_80 or gfx90a"))
    for target in targets:
        if target.offload_kind not in KINDS:
            raise OffloadError(f"unknown offload kind '{target.offload_kind}' (valid: cuda, hip)")
        if vendor_for(target.offload_kind).ptx:
            check_ptx_feature(target)
