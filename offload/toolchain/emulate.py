"""`link --emulate`: an executable that runs its kernels on the host CPU, without GPU, driver or toolkit.

The kernels are the bundle's own device bitcode image (the same lowering, device libraries and optimizer
as a real build), retargeted to the host by the LLVM pass offload/data/emulator/retarget.cpp (run by the
distribution's `opt` in a subprocess: the image's bytes never reach LLVM in this process) and compiled by
clang. The host part is the bundle's host code unchanged, linked by plain clang (no offload driver) with
the emulation runtime offload/data/emulator/runtime.c in place of libcudart/libamdhip64.

The pass plugin and the runtime object are built once per source and tool version, in the cache folder
(MLIR_OFFLOAD_EMULATOR_CACHE, else the emulator folder of MLIR_OFFLOAD_CACHE_DIR, else of
$XDG_CACHE_HOME/mlir-offload, else of ~/.cache/mlir-offload; see
offload/serialize/cache.py), written to a temporary name and renamed, so concurrent builds are safe."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from offload.errors import OffloadError
from offload.interrupts import removed_unless_kept, temporary_folder

PASS_NAME = "mlir-offload-emulate"
PLUGIN_SOURCE = "retarget.cpp"
RUNTIME_SOURCE = "runtime.c"
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


def find_emulation_tools(clang_path: str | None = None) -> EmulationTools:
    """clang, clang++, opt and llvm-config of LLVM 22, from one installation (Debian's llvm-22 folder)."""
    from offload.toolchain.tools import describe_clang

    clang = describe_clang(clang_path or f"clang-{EMULATED_LLVM}") or (None if clang_path else describe_clang("clang"))
    if clang is None or clang.major != EMULATED_LLVM:
        found = f"{clang.path} is clang {clang.version}" if clang else f"no clang-{EMULATED_LLVM} found"
        raise OffloadError(
            f"--emulate needs clang {EMULATED_LLVM} with opt and llvm-config beside it ({found}): "
            f"install clang-{EMULATED_LLVM} llvm-{EMULATED_LLVM} llvm-{EMULATED_LLVM}-dev"
        )
    folder = Path(os.path.realpath(clang.path)).parent
    missing = [name for name in ("clang++", "opt", "llvm-config") if not (folder / name).is_file()]
    if missing:
        raise OffloadError(
            f"--emulate needs {', '.join(missing)} beside {clang.path} (in {folder}): install "
            f"llvm-{EMULATED_LLVM} llvm-{EMULATED_LLVM}-dev"
        )
    if not Path(
        subprocess.run([str(folder / "llvm-config"), "--includedir"], capture_output=True, text=True).stdout.strip()
        or "/nonexistent",
        "llvm",
        "Plugins",
        "PassPlugin.h",
    ).is_file():
        raise OffloadError(
            f"--emulate builds an LLVM pass plugin and needs LLVM {EMULATED_LLVM}'s headers: "
            f"install llvm-{EMULATED_LLVM}-dev"
        )
    return EmulationTools(
        clang.path, str(folder / "clang++"), str(folder / "opt"), str(folder / "llvm-config"), clang.version
    )


def cache_folder() -> Path:
    """Where the built plugin and runtime live (a temporary folder when there is no home)."""
    if os.environ.get(EMULATOR_CACHE_ENVIRONMENT):
        return Path(os.environ[EMULATOR_CACHE_ENVIRONMENT])
    explicit = os.environ.get(CACHE_ENVIRONMENT)
    if explicit:
        root = Path(explicit)
    elif os.environ.get("XDG_CACHE_HOME", "").startswith("/"):
        root = Path(os.environ["XDG_CACHE_HOME"]) / "mlir-offload"
    elif os.path.expanduser("~") != "~":
        root = Path(os.path.expanduser("~")) / ".cache" / "mlir-offload"
    else:
        root = Path(tempfile.gettempdir()) / f"mlir-offload-{os.getuid()}"
    return root / "emulator"


def _source(name: str) -> bytes:
    return resources.files("offload.data").joinpath(f"emulator/{name}").read_bytes()


def _run(argv: list[str], what: str, scratch: str | None = None) -> subprocess.CompletedProcess:
    """Run a tool; its failure is one error with the line that says why. With `scratch`, the tool's own
    temporary files (clang's objects) go there, removed with it whatever happens."""
    environment = None if scratch is None else {**os.environ, "TMPDIR": scratch}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=environment)
    except OSError as e:
        raise OffloadError(f"--emulate: cannot run {argv[0]}: {e.strerror}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        # clang's "linker command failed" says only that ld failed; ld's own line before it says why
        # ("final link failed: No space left on device").
        causes = [line for line in lines if not any(words in line for words in CONSEQUENCES)] or lines
        detail = next(
            (line for line in causes if "error" in line or "failed" in line),
            causes[0] if causes else f"exit {done.returncode}",
        )
        raise OffloadError(f"--emulate: {what} failed: {detail}")
    return done


def _built(key_parts: list[bytes], name: str, build, dry_run: bool = False) -> str:
    """The cached file `name` for this key, built by build(temporary path) when missing (not with dry_run)."""
    key = hashlib.sha256(b"\0".join(key_parts)).hexdigest()[:32]
    folder = cache_folder() / key
    path = folder / name
    if path.is_file() or dry_run:
        return str(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OffloadError(f"--emulate: cannot create the cache folder {folder}: {e.strerror}") from None
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
    os.close(handle)
    try:
        build(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return str(path)


def pass_plugin(tools: EmulationTools, dry_run: bool = False) -> str:
    """retarget.cpp built as an opt plugin against this LLVM."""
    source = _source(PLUGIN_SOURCE)

    def build(output: str) -> None:
        flags = _run([tools.llvm_config, "--cxxflags"], "llvm-config").stdout.split()
        with temporary_folder("mlir-offload-emulate-") as scratch:
            source_path = os.path.join(scratch, PLUGIN_SOURCE)
            Path(source_path).write_bytes(source)
            _run(
                [tools.clangxx, "-shared", "-fPIC", "-O2", *flags, source_path, "-o", output],
                "building the emulation pass plugin",
                scratch,
            )

    return _built([source, tools.version.encode(), b"plugin"], "retarget.so", build, dry_run)


def runtime_object(tools: EmulationTools, llvm_triple: str, dry_run: bool = False) -> str:
    """runtime.c compiled for the host."""
    source = _source(RUNTIME_SOURCE)

    def build(output: str) -> None:
        with temporary_folder("mlir-offload-emulate-") as scratch:
            source_path = os.path.join(scratch, RUNTIME_SOURCE)
            Path(source_path).write_bytes(source)
            _run(
                [tools.clang, f"--target={llvm_triple}", "-std=c11", "-c", "-O2", "-fPIC", source_path, "-o", output],
                "compiling the emulation runtime",
                scratch,
            )

    return _built([source, tools.version.encode(), llvm_triple.encode(), b"runtime"], "runtime.o", build, dry_run)


@dataclass(frozen=True)
class EmulatedImage:
    bundle: str
    arch: str
    warp_size: int
    data: bytes
    prelude: tuple[str, ...] = ()  # PRELUDE_PASSES of its vendor


def emulated_images(bundles) -> list[EmulatedImage]:
    """One bitcode image per bundle: CUDA's lowest sm_XX, HIP's first gfx (all hold the same kernels)."""
    from offload.formats.targets import target_for
    from offload.packager import ImageKind

    chosen = []
    for bundle in bundles:
        bitcode = [image for image in bundle.images if image.image_kind == ImageKind.BITCODE]
        if not bitcode:
            raise OffloadError(
                f"{bundle.path} holds no device bitcode image (only native code): --emulate needs "
                "one; recompile with --device-image=bitcode (or compile --emulate)"
            )
        cuda = [image for image in bitcode if image.strings.get("arch", "").startswith("sm_")]
        if cuda:
            image = min(cuda, key=lambda i: _sm_number(i.strings["arch"]))
        else:
            image = bitcode[0]
        arch = image.strings.get("arch", "")
        try:
            target = target_for(arch)
        except OffloadError:
            raise OffloadError(f"{bundle.path}: device image for unknown architecture '{arch}'") from None
        chosen.append(
            EmulatedImage(bundle.path, arch, target.wavefront_size, image.data, PRELUDE_PASSES[target.offload_kind])
        )
    return chosen


def _sm_number(arch: str) -> int:
    digits = "".join(ch for ch in arch[3:] if ch.isdigit())
    return int(digits) if digits else 0


def retarget(
    tools: EmulationTools, plugin: str, image: EmulatedImage, llvm_triple: str, scratch: str, index: int
) -> str:
    """The image's kernels as a host object (opt runs the pass in a subprocess: a refusal is one line)."""
    device = os.path.join(scratch, f"device{index}.bc")
    host = os.path.join(scratch, f"kernels{index}.bc")
    obj = os.path.join(scratch, f"kernels{index}.o")
    try:
        Path(device).write_bytes(image.data)
    except OSError as e:
        raise OffloadError(f"--emulate: cannot write the {image.arch} image into {scratch}: {e.strerror}") from None
    passes = ",".join([*image.prelude, f"{PASS_NAME}<{llvm_triple};{image.warp_size}>"])
    argv = [tools.opt, f"-load-pass-plugin={plugin}", f"-passes={passes}", device, "-o", host]
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise OffloadError(f"--emulate: cannot run {tools.opt}: {e.strerror}") from None
    if done.returncode != 0:
        refusal = next(
            (line[len(REFUSAL_PREFIX) :] for line in done.stderr.splitlines() if line.startswith(REFUSAL_PREFIX)), None
        )
        if refusal:
            raise OffloadError(f"--emulate: {image.bundle} ({image.arch}): {refusal}")
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise OffloadError(
            f"--emulate: retargeting the {image.arch} image of {image.bundle} failed "
            f"(exit {done.returncode}): {lines[0] if lines else 'no message'}"
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
    bundles, inputs: list[str], output: str, clang: str | None, scratch: str, dry_run: bool = False
) -> list[str]:
    """The clang command linking `inputs` (bundles among them) with the retargeted kernels and the runtime
    (with dry_run: nothing built or retargeted, the kernel objects named as they would be)."""
    from offload.formats.hosts import host_refusal
    from offload.toolchain.link import host_optimization
    from offload.toolchain.tools import clang_target_host

    tools = find_emulation_tools(clang)
    link_host = clang_target_host(tools.clang, inputs)
    for bundle in bundles:
        refusal = host_refusal(bundle.record.host_triple, link_host, tools.clang, "link with --target={triple}")
        if refusal:
            raise OffloadError(f"{bundle.path}: {': '.join(refusal)}")
        if bundle.record.profile != EMULATED_LLVM:
            raise OffloadError(
                f"{bundle.path} was made for clang {bundle.record.profile}; --emulate links with "
                f"clang {EMULATED_LLVM} and reads its offload entries: recompile with "
                f"--target-clang {EMULATED_LLVM}"
            )
        if bundle.record.host_format == "obj" and bundle.path.endswith((".bc", ".ll")):
            raise OffloadError(f"'{bundle.path}' is an ELF object but named like bitcode: rename it to .o")
    images = emulated_images(bundles)
    plugin = pass_plugin(tools, dry_run)
    runtime = runtime_object(tools, link_host.llvm_triple, dry_run)
    if dry_run:
        objects = [os.path.join(scratch, f"kernels{index}.o") for index in range(len(images))]
    else:
        objects = [
            retarget(tools, plugin, image, link_host.llvm_triple, scratch, index) for index, image in enumerate(images)
        ]
    return [tools.clang, *inputs, *host_optimization(inputs), *objects, runtime, *SYSTEM_LIBRARIES, "-o", output]


def link_emulated(
    bundles, inputs: list[str], output: str, clang: str | None = None, dry_run: bool = False, verbose: bool = False
) -> None:
    """Link an emulating executable at `output` (a temporary name renamed over it when all succeeded)."""
    import shlex

    import click

    final = output
    temporary = os.path.join(os.path.dirname(output), f".{os.path.basename(output)}.{os.getpid()}.tmp")
    with temporary_folder("mlir-offload-emulate-") as scratch:
        command = plan_emulated_link(bundles, inputs, temporary, clang, scratch, dry_run)
        if dry_run or verbose:
            click.echo(" ".join(shlex.quote(part) for part in command[:-1] + [final]), err=not dry_run)
        if dry_run:
            return
        with removed_unless_kept(temporary):
            try:
                _run(command, f"linking {final}", scratch)
                os.replace(temporary, final)
            except OSError as e:
                raise OffloadError(f"cannot write '{final}': {e.strerror}") from None


def have_emulation_tools() -> bool:
    """Whether this machine can emulate (for tests and `run`'s choice of message)."""
    try:
        find_emulation_tools()
    except OffloadError:
        return False
    return True
