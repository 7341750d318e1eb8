"""`link --emulate`: an executable that runs its kernels on the host CPU, without GPU, driver or toolkit.

The kernels are the bundle's own device bitcode image (the same lowering, device libraries and optimizer
as a real build), retargeted to the host by the LLVM pass offload/data/emulator/retarget.cpp (run by the
distribution's `opt` in a subprocess: the image's bytes never reach LLVM in this process) and compiled by
clang. The host part is the bundle's host code unchanged, linked by plain clang (no offload driver) with
the emulation runtime offload/data/emulator/runtime.c in place of libcudart/libamdhip64; the pass and the
runtime agree through offload/data/emulator/emu_abi.h, the list of the runtime's entry points. CUDA C++
and HIP objects of clang's offload driver bring their device bitcode too (offload/toolchain/
emulate_objects.py): the images of one vendor are joined by llvm-link before retargeting, as the GPU's
device link joins them.

The pass plugin and the runtime object are built once per source and tool version, in the cache folder
(MLIR_OFFLOAD_EMULATOR_CACHE, else the emulator folder of MLIR_OFFLOAD_CACHE_DIR, else of
$XDG_CACHE_HOME/mlir-offload, else of ~/.cache/mlir-offload), under the device image cache's trust rule
(build_cache.py): an entry is taken only when no one else can have put it there and its bytes match the
digest recorded with them, and a link loads and links a private copy of what it checked."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from offload.data import read_data_bytes
from offload.errors import OffloadError, Part, warn_when_done
from offload.formats.launch_limits import launch_limits
from offload.formats.sanitizers import SANITIZERS, sanitizer_mask
from offload.fsutil import check_outputs
from offload.interrupts import removed_unless_kept, temporary_folder
from offload.options.compile import compile_option
from offload.options.link import DEFAULT_LINK, LinkOptions, link_option
from offload.toolchain.build_cache import BuildCache
from offload.toolchain.emulate_objects import EMULATE, device_objects
from offload.trust import team_mode

PASS_NAME = "mlir-offload-emulate"
PLUGIN_SOURCE = "retarget.cpp"
RUNTIME_SOURCE = "runtime.c"
# Emulated libraries, by the -l name a bundle's record gives: linked only into executables that call them.
LIBRARY_SOURCES = {"cusparse": "sparse.c", "hipsparse": "sparse.c", "cusparseLt": "sparselt.c"}
SANITIZER_SOURCE = "sanitizer.c"  # included by runtime.c in the sanitizer variant (EMU_SANITIZE defined)
ABI_HEADER = "emu_abi.h"  # the runtime's entry points and shared constants: included by retarget.cpp and runtime.c
# included by runtime.c
RUNTIME_HEADERS = (ABI_HEADER, "hopper.h", "cluster.h", "sparse_mma.h", "wgmma.h", "device_printf.h", "device_math.h")
EMULATED_LLVM = 22  # the LLVM whose C++ API retarget.cpp is written against (opt, llvm-config, clang)
REFUSAL_STATUS = 3  # retarget.cpp's exit status for "... is not emulated"
REFUSAL_PREFIX = "mlir-offload-emulate: "
CACHE_ENVIRONMENT = "MLIR_OFFLOAD_CACHE_DIR"
EMULATOR_CACHE_ENVIRONMENT = "MLIR_OFFLOAD_EMULATOR_CACHE"  # this folder for the emulator's builds alone
SYSTEM_LIBRARIES = ("-lpthread", "-lm")
KERNEL_OPTIMIZATION = "-O2"
# LLVM passes run on an image before the retargeting pass, by vendor: AMD's buffer fat pointers (ptr
# addrspace(7), from amdgpu.fat_raw_buffer_cast) become the raw buffer intrinsics the pass emulates.
# Lines of a failed tool that say only that a step failed, never why.
CONSEQUENCES = ("linker command failed", "use -v to see invocation")
PRELUDE_PASSES = {"cuda": (), "hip": ("amdgpu-lower-buffer-fat-pointers",)}


@dataclass(frozen=True)
class EmulationTools:
    clang: str
    clangxx: str
    opt: str
    llvm_config: str
    version: str  # "22.1.8"

    @property
    def c_compiler(self) -> str:
        """clang beside clang++: `clang` may be a clang++ (CMake's link passes CMAKE_CXX_COMPILER)."""
        return os.path.join(os.path.dirname(self.clangxx), "clang")

    @property
    def llvm_link(self) -> str:
        """llvm-link beside opt: joins the device images of one vendor, as the GPU's device link does."""
        return os.path.join(os.path.dirname(self.opt), "llvm-link")

    @property
    def llvm_nm(self) -> str:
        return os.path.join(os.path.dirname(self.opt), "llvm-nm")


def find_emulation_tools(clang_path: str | None = None) -> EmulationTools:
    """clang, clang++, opt and llvm-config of LLVM 22, from one installation (Debian's llvm-22 folder)."""
    from offload.toolchain.tools import describe_clang, tool_output

    clang = describe_clang(clang_path or f"clang-{EMULATED_LLVM}") or (None if clang_path else describe_clang("clang"))
    if clang is None or clang.major != EMULATED_LLVM:
        found = f"{clang.path} is clang {clang.version}" if clang else f"no clang-{EMULATED_LLVM} found"
        raise OffloadError(
            (
                EMULATE,
                f" needs clang {EMULATED_LLVM} with opt and llvm-config beside it ({found}): "
                f"install clang-{EMULATED_LLVM} llvm-{EMULATED_LLVM} llvm-{EMULATED_LLVM}-dev",
            )
        )
    folder = Path(os.path.realpath(clang.path)).parent
    missing = [
        name for name in ("clang++", "opt", "llvm-config", "llvm-link", "llvm-nm") if not (folder / name).is_file()
    ]
    if missing:
        raise OffloadError(
            (
                EMULATE,
                f" needs {', '.join(missing)} beside {clang.path} (in {folder}): install "
                f"llvm-{EMULATED_LLVM} llvm-{EMULATED_LLVM}-dev",
            )
        )
    if not Path(
        tool_output([str(folder / "llvm-config"), "--includedir"]).strip() or "/nonexistent",
        "llvm",
        "Plugins",
        "PassPlugin.h",
    ).is_file():
        raise OffloadError(
            (
                EMULATE,
                f" builds an LLVM pass plugin and needs LLVM {EMULATED_LLVM}'s headers: "
                f"install llvm-{EMULATED_LLVM}-dev",
            )
        )
    return EmulationTools(
        clang.path, str(folder / "clang++"), str(folder / "opt"), str(folder / "llvm-config"), clang.version
    )


def cache_places() -> tuple[Path, str]:
    """(the cache folder, the folder of the emulator's builds in it: "" when it is the folder itself, as
    with MLIR_OFFLOAD_EMULATOR_CACHE). The cache folder's owner and mode are checked as the device image
    cache's (offload/trust.py); a temporary folder stands in for a missing home."""
    if os.environ.get(EMULATOR_CACHE_ENVIRONMENT):
        return Path(os.environ[EMULATOR_CACHE_ENVIRONMENT]), ""
    explicit = os.environ.get(CACHE_ENVIRONMENT)
    if explicit:
        root = Path(explicit)
    elif os.environ.get("XDG_CACHE_HOME", "").startswith("/"):
        root = Path(os.environ["XDG_CACHE_HOME"]) / "mlir-offload"
    elif os.path.expanduser("~") != "~":
        root = Path(os.path.expanduser("~")) / ".cache" / "mlir-offload"
    else:
        root = Path(tempfile.gettempdir()) / f"mlir-offload-{os.getuid()}"
    return root, "emulator"


def cache_folder() -> Path:
    """Where the built plugin and runtime live."""
    root, builds = cache_places()
    return root / builds if builds else root


def _source(name: str) -> bytes:
    return read_data_bytes(f"emulator/{name}")


def _run(argv: list[str], what: str, scratch: str | None = None) -> subprocess.CompletedProcess:
    """Run a tool; its failure is one error with the line that says why. With `scratch`, the tool's own
    temporary files (clang's objects) go there, removed with it whatever happens."""
    environment = None if scratch is None else {**os.environ, "TMPDIR": scratch}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=environment)
    except OSError as e:
        raise OffloadError((EMULATE, f": cannot run {argv[0]}: {e.strerror}")) from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        # clang's "linker command failed" says only that ld failed; ld's own line before it says why
        # ("final link failed: No space left on device").
        causes = [line for line in lines if not any(words in line for words in CONSEQUENCES)] or lines
        detail = next(
            (line for line in causes if "error" in line or "failed" in line),
            causes[0] if causes else f"exit {done.returncode}",
        )
        raise OffloadError((EMULATE, f": {what} failed: {detail}"))
    return done


def _built(key_parts: list[bytes], name: str, build, scratch: str, dry_run: bool = False) -> str:
    """A private copy, in `scratch`, of the file `name` built for this key: taken from the cache when an
    entry there is trusted and matches the digest recorded with it, else built by build(path) into
    `scratch` (and stored, unless the cache cannot be trusted: then one warning line says why). With
    dry_run, nothing is built: the cached file's name."""
    key = hashlib.sha256(b"\0".join(key_parts)).hexdigest()[:32]
    if dry_run:
        return str(cache_folder() / key / name)
    private = os.path.join(scratch, name)
    cache = BuildCache(*cache_places(), team_mode())
    data, problem = cache.take(key, name)
    if data is not None:
        Path(private).write_bytes(data)  # what opt loads and clang links is exactly what was checked
        cache.close()
        return private
    if problem:
        warn_when_done(
            f"mlir-offload: warning: the emulator's build cache '{cache.folder}' {problem}: not used, its "
            f"builds made privately for this link; set {EMULATOR_CACHE_ENVIRONMENT} to a folder of your own "
            "(mode 700) (docs/cache.md)"
        )
    announce_build(cache.folder)
    build(private)
    if problem is None or cache.replaceable:
        stored = cache.store(key, name, Path(private).read_bytes())
        if stored is not None:
            warn_when_done(
                f"mlir-offload: warning: cannot store {name} in the emulator's build cache '{cache.folder}': "
                f"{stored}; it is built again by the next emulating link"
            )
    cache.close()
    return private


_announced: list[bool] = []  # this process said it once already


def announce_build(folder: Path) -> None:
    """One line on a terminal before the first build (it takes seconds to half a minute, once per machine
    and LLVM); never in pipes or logs."""
    if _announced or sys.stderr is None or not sys.stderr.isatty():
        return
    _announced.append(True)
    print(
        f"mlir-offload: note: building the emulator for this machine's LLVM (once; kept in {folder})",
        file=sys.stderr,
        flush=True,
    )


def pass_plugin(tools: EmulationTools, scratch: str, dry_run: bool = False) -> str:
    """retarget.cpp (with emu_abi.h) built as an opt plugin against this LLVM."""
    source = _source(PLUGIN_SOURCE)
    header = _source(ABI_HEADER)

    def build(output: str) -> None:
        flags = _run([tools.llvm_config, "--cxxflags"], "llvm-config").stdout.split()
        with temporary_folder("mlir-offload-emulate-") as sources:
            source_path = os.path.join(sources, PLUGIN_SOURCE)
            Path(source_path).write_bytes(source)
            Path(sources, ABI_HEADER).write_bytes(header)
            _run(
                [tools.clangxx, "-shared", "-fPIC", "-O2", *flags, source_path, "-o", output],
                "building the emulation pass plugin",
                sources,
            )

    return _built([source, header, tools.version.encode(), b"plugin"], "retarget.so", build, scratch, dry_run)


@dataclass(frozen=True)
class Sanitize:
    """--sanitize: the checks (offload.formats.sanitizers names; none: plain emulation) and --sanitize-keep-going."""

    checks: tuple[str, ...] = ()
    keep_going: bool = False

    def defines(self) -> list[str]:
        """The sanitizer variant of the runtime: sanitizer.c's EMU_SANITIZE mask and keep-going."""
        if not self.checks:
            return []
        # The runtime is linked into an executable: its thread-locals need no __tls_get_addr per access.
        return [
            f"-DEMU_SANITIZE={sanitizer_mask(self.checks)}",
            f"-DEMU_SANITIZE_KEEP_GOING={int(self.keep_going)}",
            "-ftls-model=initial-exec",
        ]


def sanitize_of(bundles, checks: tuple[str, ...] = (), keep_going: bool = False) -> Sanitize:
    """link's --sanitize with what the bundles' records ask for (compile --sanitize)."""
    wanted = set(checks).union(*(bundle.record.sanitize for bundle in bundles))
    keep_going = keep_going or any(bundle.record.sanitize_keep_going for bundle in bundles)
    return Sanitize(tuple(name for name in SANITIZERS if name in wanted), keep_going and bool(wanted))


def runtime_object(
    tools: EmulationTools,
    llvm_triple: str,
    scratch: str,
    dry_run: bool = False,
    name: str = RUNTIME_SOURCE,
    sanitize: Sanitize = Sanitize(),
) -> str:
    """runtime.c (its sanitizer variant, with sanitizer.c, when `sanitize` has checks), or another emulator
    source (LIBRARY_SOURCES), compiled for the host."""
    sources = {name: _source(name)}
    if name == RUNTIME_SOURCE:
        sources.update((header, _source(header)) for header in RUNTIME_HEADERS)
    defines = sanitize.defines() if name == RUNTIME_SOURCE else []
    if defines:
        sources[SANITIZER_SOURCE] = _source(SANITIZER_SOURCE)
    stem = name.rsplit(".", 1)[0]

    def build(output: str) -> None:
        with temporary_folder("mlir-offload-emulate-") as folder:
            for file_name, data in sources.items():
                Path(folder, file_name).write_bytes(data)
            _run(
                [tools.c_compiler, f"--target={llvm_triple}", "-std=c11", "-c", "-O2", "-fPIC", *defines]
                + [os.path.join(folder, name), "-o", output],
                f"compiling the emulation runtime ({name})",
                folder,
            )

    key = [*sources.values(), tools.version.encode(), llvm_triple.encode(), stem.encode(), *map(str.encode, defines)]
    return _built(key, f"{stem}.o", build, scratch, dry_run)


def library_objects(bundles, tools: EmulationTools, llvm_triple: str, scratch: str, dry_run: bool = False) -> list[str]:
    """The emulated libraries the bundles' records name, compiled for the host."""
    from offload.toolchain.link import bundle_libraries

    sources = []
    for library in bundle_libraries(bundles):
        source = LIBRARY_SOURCES.get(library)
        if source is None:
            raise OffloadError((EMULATE, f": the bundle calls lib{library}, which the emulator does not provide"))
        sources.append(source)
    return [runtime_object(tools, llvm_triple, scratch, dry_run, source) for source in dict.fromkeys(sources)]


@dataclass(frozen=True)
class EmulatedImage:
    bundle: str
    arch: str
    warp_size: int
    data: bytes
    prelude: tuple[str, ...] = ()  # PRELUDE_PASSES of its vendor
    exports_kernels_only: bool = True  # a bundle's image (the device stage internalizes the rest); not an object's


def emulated_images(bundles, objects=()) -> list[EmulatedImage]:
    """One bitcode image per bundle and per CUDA/HIP object (emulate_objects.DeviceObject): CUDA's lowest
    sm_XX, HIP's first gfx (all hold the same kernels)."""
    from offload.packager import ImageKind

    chosen = []
    for bundle in bundles:
        bitcode = [image for image in bundle.images if image.image_kind == ImageKind.BITCODE]
        if not bitcode:
            raise OffloadError(
                (
                    f"{bundle.path} holds no device bitcode image (only native code): ",
                    EMULATE,
                    " needs one; recompile with ",
                    compile_option("device_image", "bitcode", joined=True),
                    " (or compile ",
                    EMULATE,
                    ")",
                )
            )
        chosen.append(_emulated_image(bundle.path, bitcode))
    for device_object in objects:
        chosen.append(
            replace(_emulated_image(device_object.path, list(device_object.images)), exports_kernels_only=False)
        )
    return chosen


def _emulated_image(name: str, bitcode: list) -> EmulatedImage:
    from offload.formats.targets import target_for

    cuda = [image for image in bitcode if image.strings.get("arch", "").startswith("sm_")]
    if cuda:
        image = min(cuda, key=lambda i: _sm_number(i.strings["arch"]))
    else:
        image = bitcode[0]
    arch = image.strings.get("arch", "")
    try:
        target = target_for(arch)
    except OffloadError:
        raise OffloadError(f"{name}: device image for unknown architecture '{arch}'") from None
    return EmulatedImage(name, arch, target.wavefront_size, image.data, PRELUDE_PASSES[target.offload_kind])


# retarget.cpp's pass run on each image before llvm-link joins them (drops module flags that would clash).
JOIN_PASS = "mlir-offload-emulate-join"
# llvm-link's message for a symbol two modules define.
MULTIPLY_DEFINED = "symbol multiply defined"


def image_groups(images: list[EmulatedImage]) -> list[list[EmulatedImage]]:
    """The images one module can hold: the same vendor (its prelude) and warp size, in link order."""
    groups: dict[tuple, list[EmulatedImage]] = {}
    for image in images:
        groups.setdefault((image.prelude, image.warp_size), []).append(image)
    return list(groups.values())


def linked_images(tools: EmulationTools, plugin: str, images: list[EmulatedImage], scratch: str) -> list[EmulatedImage]:
    """The images of one vendor and warp size joined by llvm-link into one module, as the GPU's device link
    joins them (-fgpu-rdc): a kernel may call a device function of another image. One image stays as is."""
    joined = []
    for number, group in enumerate(image_groups(images)):
        if len(group) == 1:
            joined.append(group[0])
            continue
        paths = []
        for index, image in enumerate(group):
            paths.append(os.path.join(scratch, f"part{number}.{index}.bc"))
            Path(paths[-1] + ".in").write_bytes(image.data)
            _run(
                [tools.opt, f"-load-pass-plugin={plugin}", f"-passes={JOIN_PASS}", paths[-1] + ".in", "-o", paths[-1]],
                f"preparing the device code of {image.bundle}",
            )
        output = os.path.join(scratch, f"joined{number}.bc")
        try:
            done = subprocess.run([tools.llvm_link, *paths, "-o", output], capture_output=True, text=True)
        except OSError as e:
            raise OffloadError((EMULATE, f": cannot run {tools.llvm_link}: {e.strerror}")) from None
        names = [image.bundle for image in group]
        if done.returncode != 0:
            raise OffloadError((EMULATE, ": ", *_device_link_failure(tools, done.stderr, paths, group)))
        joined.append(
            EmulatedImage(
                ", ".join(names), group[0].arch, group[0].warp_size, Path(output).read_bytes(), group[0].prelude, False
            )
        )
    return joined


def _device_link_failure(
    tools: EmulationTools, stderr: str, paths: list[str], group: list[EmulatedImage]
) -> tuple[Part, ...]:
    """What llvm-link's failure means for the user: a symbol two inputs define, named with both (and the
    fix for a kernel, as the GPU link says it), else its first line with the image files renamed."""
    from offload.toolchain.link_messages import STUB_PREFIX, LinkReport, failure_parts

    lines = [line for line in stderr.splitlines() if line.strip()]
    symbol = next((line.split("'")[1] for line in lines if MULTIPLY_DEFINED in line and line.count("'") >= 2), None)
    if symbol is None:
        text = lines[0] if lines else "no message"
        for path, image in zip(paths, group, strict=True):
            text = text.replace(path, image.bundle)
        return (f"joining the device code failed: {text}",)
    definers = [image for path, image in zip(paths, group, strict=True) if symbol in _defined_symbols(tools, path)]
    kernel = all(image.exports_kernels_only for image in definers)
    report = LinkReport(duplicates={(STUB_PREFIX + symbol if kernel else symbol): [i.bundle for i in definers]})
    return failure_parts(report)


def _defined_symbols(tools: EmulationTools, path: str) -> set[str]:
    done = subprocess.run(
        [tools.llvm_nm, "--defined-only", "--extern-only", "--format=just-symbols", path],
        capture_output=True,
        text=True,
    )
    return set(done.stdout.split())


def _sm_number(arch: str) -> int:
    digits = "".join(ch for ch in arch[3:] if ch.isdigit())
    return int(digits) if digits else 0


def retarget(
    tools: EmulationTools,
    plugin: str,
    image: EmulatedImage,
    llvm_triple: str,
    scratch: str,
    index: int,
    sanitize: bool = False,
) -> str:
    """The image's kernels as a host object (opt runs the pass in a subprocess: a refusal is one line)."""
    device = os.path.join(scratch, f"device{index}.bc")
    host = os.path.join(scratch, f"kernels{index}.bc")
    obj = os.path.join(scratch, f"kernels{index}.o")
    try:
        Path(device).write_bytes(image.data)
    except OSError as e:
        raise OffloadError((EMULATE, f": cannot write the {image.arch} image into {scratch}: {e.strerror}")) from None
    limits = launch_limits(image.arch).pass_parameter()
    parameters = [llvm_triple, str(image.warp_size), limits, *(["sanitize"] if sanitize else [])]
    passes = ",".join([*image.prelude, f"{PASS_NAME}<{';'.join(parameters)}>"])
    argv = [tools.opt, f"-load-pass-plugin={plugin}", f"-passes={passes}", device, "-o", host]
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise OffloadError((EMULATE, f": cannot run {tools.opt}: {e.strerror}")) from None
    if done.returncode != 0:
        refusal = next(
            (line[len(REFUSAL_PREFIX) :] for line in done.stderr.splitlines() if line.startswith(REFUSAL_PREFIX)), None
        )
        if refusal:
            raise OffloadError((EMULATE, f": {image.bundle} ({image.arch}): {refusal}"))
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise OffloadError(
            (
                EMULATE,
                f": retargeting the {image.arch} image of {image.bundle} failed "
                f"(exit {done.returncode}): {lines[0] if lines else 'no message'}",
            )
        )
    _run(
        [
            tools.clang,
            f"--target={llvm_triple}",
            "-c",
            KERNEL_OPTIMIZATION,
            "-fPIC",
            "-Wno-override-module",
            host,
            "-o",
            obj,
        ],
        f"compiling the {image.arch} kernels for the host",
        scratch,
    )
    return obj


def plan_emulated_link(
    bundles,
    inputs: list[str],
    output: str,
    clang: str | None,
    scratch: str,
    dry_run: bool = False,
    sanitize: Sanitize = Sanitize(),
) -> list[str]:
    """The clang command linking `inputs` (bundles among them) with the retargeted kernels and the runtime
    (with dry_run: nothing built or retargeted, the kernel objects named as they would be; `sanitize`: the
    instrumented kernels and the sanitizer variant of the runtime)."""
    from offload.formats.hosts import host_refusal
    from offload.toolchain.link import host_optimization
    from offload.toolchain.tools import clang_target_host

    tools = find_emulation_tools(clang)
    link_host = clang_target_host(tools.clang, inputs)
    for bundle in bundles:
        refusal = host_refusal(bundle.record.host_triple, link_host, tools.clang, "link with --target={triple}")
        if refusal:
            raise OffloadError((f"{bundle.path}: {refusal[0]}: ", *refusal[1]))
        if bundle.record.profile != EMULATED_LLVM:
            raise OffloadError(
                (
                    f"{bundle.path} was made for clang {bundle.record.profile}; ",
                    link_option("emulate", True),
                    f" links with clang {EMULATED_LLVM} and reads its offload entries: recompile with ",
                    compile_option("target_clang", str(EMULATED_LLVM)),
                )
            )
        if bundle.record.host_format == "obj" and bundle.path.endswith((".bc", ".ll")):
            raise OffloadError(f"'{bundle.path}' is an ELF object but named like bitcode: rename it to .o")
    from offload.formats.clang_arguments import input_files
    from offload.toolchain.cxx_inputs import CXX_DRIVER_MODE, cxx_inputs

    files = [item for item in input_files(inputs) if os.path.isfile(item)]
    images = emulated_images(bundles, device_objects(files, {bundle.path for bundle in bundles}))
    plugin = pass_plugin(tools, scratch, dry_run)
    runtime = runtime_object(tools, link_host.llvm_triple, scratch, dry_run, sanitize=sanitize)
    libraries = library_objects(bundles, tools, link_host.llvm_triple, scratch, dry_run)
    if dry_run:
        objects = [os.path.join(scratch, f"kernels{index}.o") for index in range(len(image_groups(images)))]
    else:
        objects = [
            retarget(tools, plugin, image, link_host.llvm_triple, scratch, index, bool(sanitize.checks))
            for index, image in enumerate(linked_images(tools, plugin, images, scratch))
        ]
    # As nvcc links with g++: C++ objects bring the C++ runtime (offload/toolchain/cxx_inputs.py).
    driver = [CXX_DRIVER_MODE] if cxx_inputs(files, inputs) else []
    return [
        tools.clang,
        *driver,
        *inputs,
        *host_optimization(inputs),
        *objects,
        *libraries,
        runtime,
        *SYSTEM_LIBRARIES,
        "-o",
        output,
    ]


def link_emulated(
    bundles, inputs: list[str], output: str, options: LinkOptions = DEFAULT_LINK, shown: dict[str, str] | None = None
) -> None:
    """Link an emulating executable at `output` (a temporary name renamed over it when all succeeded).
    `options`: the link's (offload/options/link.py: its clang, sanitize, dry_run, verbose; the bundles'
    records add their sanitize); `shown`: the name a message gives an input (run's temporary bundle is the
    user's program)."""
    sanitize = sanitize_of(bundles, options.sanitizers, options.sanitize_keep_going)
    clang, dry_run, verbose = options.clang, options.dry_run, options.verbose
    import shlex

    from offload.formats.sparse_tensor_runtime import refuse_unlinked

    refuse_unlinked(bundles, inputs, shown)

    import click

    check_outputs([output], [item for item in inputs if not item.startswith("-")])  # never over an input
    final = output
    temporary = os.path.join(os.path.dirname(output), f".{os.path.basename(output)}.{os.getpid()}.tmp")
    with temporary_folder("mlir-offload-emulate-") as scratch:
        command = plan_emulated_link(bundles, inputs, temporary, clang, scratch, dry_run, sanitize)
        if dry_run or verbose:
            click.echo(" ".join(shlex.quote(part) for part in command[:-1] + [final]), err=not dry_run)
        if dry_run:
            return
        with removed_unless_kept(temporary):
            try:
                _run_link(command, inputs, temporary, final, scratch, shown or {}, verbose)
                os.replace(temporary, final)
            except OSError as e:
                raise OffloadError(f"cannot write '{final}': {e.strerror}") from None


def _run_link(
    command: list[str], inputs: list[str], temporary: str, final: str, scratch: str, shown: dict, verbose: bool
) -> None:
    """Run the host link; a failure is one line naming its cause, as the GPU link's (link_messages), in the
    user's names: never a temporary file."""
    import click

    from offload.toolchain.link_messages import failure_parts, read_report, warnings

    env = dict(os.environ, TMPDIR=scratch)  # clang's temporary objects: named after their inputs, then renamed
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", env=env)
    except OSError as e:
        raise OffloadError((EMULATE, f": cannot run {command[0]}: {e.strerror}")) from None
    text = (done.stderr or "") + "\n" + (done.stdout or "")
    text = text.replace(temporary, final)
    if verbose and done.stderr:
        click.echo(done.stderr.rstrip(), err=True)
    if done.returncode == 0:
        if not verbose:
            for line in warnings(done.stderr or ""):
                click.echo(line, err=True)
        return
    report = read_report(text, [shown.get(item, item) for item in inputs])
    parts = failure_parts(report) or ("no cause printed: rerun with -v",)
    raise OffloadError((EMULATE, f": linking {final} failed: ", *(_shown(part, shown, scratch) for part in parts)))


def _shown(part: Part, shown: dict, scratch: str) -> Part:
    """A part of a link's message with each file named as the user named it, never the scratch folder."""
    if not isinstance(part, str):
        return part
    for real, name in shown.items():
        part = part.replace(real, name)
    return part.replace(scratch + "/", "")


def have_emulation_tools() -> bool:
    """Whether this machine can emulate (for tests and `run`'s choice of message)."""
    try:
        find_emulation_tools()
    except OffloadError:
        return False
    return True
