"""What `mlir-offload verify APP` checks: that a linked executable really carries and registers its device
code (the command, offload/commands/verify.py, words the report).

What it checks (each failure names what is missing):
- a device code section is present (.nv_fatbin for CUDA, .hip_fatbin for HIP);
- the executable's registration code walks an entries range (__start_/__stop_ of the entries section
  of some target-clang profile) and that range is not empty;
- no offload entries sit in a section the registration code does not walk (a bundle made for another
  clang: such executables link and silently register nothing);
- every entry's offload kind is one the registration code handles, and its device section exists;
- every registered kernel (and device global) is a symbol of every image (arch) of the fatbinary that holds
  it: a section holds one fatbinary per registering unit (the linker wrapper's, each nvcc object's), all read;
- the executable is for a host CPU mlir-offload supports (with --host-triple: for that one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from offload.errors import OffloadError
from offload.formats.elf import ElfError as ExecutableError
from offload.formats.hosts import host_of_elf_machine, host_triple, supported
from offload.formats.profiles import clangs_registering, load_profile
from offload.formats.vendors import VENDORS, library_of_function
from offload.toolchain.executable import read_executable

DEVICE_SECTION = {kind: vendor.device_section for kind, vendor in VENDORS.items()}
REGISTER_FATBIN = {kind: vendor.register_function for kind, vendor in VENDORS.items()}


@dataclass
class VerifyReport:
    path: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _entry_offload_kind(entry, section) -> str | None:
    """ "cuda" / "hip" for an entry, from its kind field (clang >= 20 layout) or its section (legacy)."""
    profile = load_profile(section.profile_major)
    if entry.kind is None:
        return next((k for k, s in profile.entries["section"].items() if s == section.name), None)
    return next((k for k, v in profile.offload_kind.items() if v == entry.kind and k in DEVICE_SECTION), None)


def _library_calls(elf) -> dict[str, int]:
    """lib name -> how many of its functions the executable imports (undefined dynamic symbols)."""
    counts: dict[str, int] = {}
    for symbol in elf.dynamic_symbols:
        library = library_of_function(symbol.name) if symbol.section_index == 0 else None
        if library is not None:
            counts[library] = counts.get(library, 0) + 1
    return counts


def check_sparse_tensor_runtime(path: str, elf, report: VerifyReport) -> None:
    """An executable importing MLIR's sparse tensor runtime (offload.formats.sparse_tensor_runtime) must load
    a libmlir_c_runner_utils that defines each function it imports; the copy is looked for where the loader
    would (RPATH, LD_LIBRARY_PATH, RUNPATH, with $ORIGIN; the system's folders)."""
    import os

    from offload.formats.elf import DT_NEEDED, DT_RPATH, DT_RUNPATH, read_elf
    from offload.formats.sparse_tensor_runtime import LIBRARY, use_of

    imported = sorted(
        {symbol.name for symbol in elf.dynamic_symbols if symbol.section_index == 0 and use_of(symbol.name)}
    )
    if not imported:
        return
    needed = [name for name in elf.dynamic_strings(DT_NEEDED) if name.startswith(f"lib{LIBRARY}.")]
    if not needed:
        report.problems.append(
            f"{path} calls MLIR's sparse tensor runtime ({imported[0]}) but loads no lib{LIBRARY}: "
            f"link it with the library (-l{LIBRARY} or its file)"
        )
        return
    origin = os.path.dirname(os.path.abspath(path))

    def folders(tag: int) -> list[str]:
        values = elf.dynamic_strings(tag)
        return [f.replace("${ORIGIN}", origin).replace("$ORIGIN", origin) for v in values for f in v.split(":") if f]

    # The loader's order: RPATH (ignored when there is a RUNPATH), LD_LIBRARY_PATH, RUNPATH, the system's.
    runpath = folders(DT_RUNPATH)
    searched = [] if runpath else folders(DT_RPATH)
    searched += [folder for folder in os.environ.get("LD_LIBRARY_PATH", "").split(":") if folder]
    searched += runpath
    searched += list(SYSTEM_LIBRARY_FOLDERS)
    location = next(
        (os.path.join(folder, needed[0]) for folder in searched if os.path.isfile(os.path.join(folder, needed[0]))),
        None,
    )
    if location is None:
        report.notes.append(
            f"calls MLIR's sparse tensor runtime: {len(imported)} function(s) from {needed[0]}, which is not "
            f"found here (RPATH, LD_LIBRARY_PATH, RUNPATH, system folders): not checked"
        )
        return
    try:
        with open(location, "rb") as file:
            library = read_elf(file.read(), location)
    except (OSError, ExecutableError) as e:
        report.problems.append(f"{path}: cannot read {location}, its lib{LIBRARY}: {getattr(e, 'strerror', e)}")
        return
    defined = {symbol.name for symbol in library.dynamic_symbols if symbol.section_index != 0}
    missing = [name for name in imported if name not in defined]
    if missing:
        report.problems.append(
            f"{path}: {location} does not define {', '.join(missing[:3])}"
            f"{f' (and {len(missing) - 3} more)' if len(missing) > 3 else ''} of MLIR's sparse tensor runtime: "
            "link the libmlir_c_runner_utils of the MLIR that compiled the program"
        )
        return
    report.notes.append(f"calls MLIR's sparse tensor runtime: {len(imported)} function(s), all in {location}")


# Where the dynamic loader looks after RUNPATH and LD_LIBRARY_PATH (glibc's default folders).
SYSTEM_LIBRARY_FOLDERS = (
    "/lib",
    "/usr/lib",
    "/lib64",
    "/usr/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
)


def _without_kernels(exe) -> bool:
    """Whether every device image holds no kernel and no global (a program of host operations only, whose
    empty image registers nothing): only readable images count, so a compressed one never makes it so."""
    images = [image for images in exe.device_sections.values() for image in images]
    if not images or any(image.compressed for image in images):
        return False
    if any(e.entries for e in exe.entry_sections):
        return False
    # Names starting with '.' are the toolchain's own (ptxas's .nv.reservedSmem.offset0), never the program's.
    return all(
        image.kind != "ptx" and not image.kernels() and not [n for n in image.symbols() if not n.startswith(".")]
        for image in images
    )


def _image_has_symbol(image, name: str, is_kernel: bool) -> bool:
    if image.kind == "ptx":
        # A PTX image declares kernels as `.entry name(` and globals as `.global ... name`.
        words = image.data.decode("utf-8", errors="replace").replace("(", " ( ").replace("[", " [ ").split()
        if is_kernel:
            return any(w == ".entry" and i + 1 < len(words) and words[i + 1] == name for i, w in enumerate(words))
        return name in words
    return name in (image.kernels() if is_kernel else image.symbols())


def images_to_check(images: list, name: str, is_kernel: bool) -> list:
    """The images that must hold a registered symbol: every image of each fatbinary that has it in some
    image (a section holds one fatbinary per registering unit: the linker wrapper's, each nvcc object's,
    and only the registering one holds the symbol); when none has it, every image (each reports it missing)."""
    containers: dict[int, list] = {}
    for image in images:
        containers.setdefault(image.container, []).append(image)
    holding = [
        members
        for members in containers.values()
        if any(not i.compressed and _image_has_symbol(i, name, is_kernel) for i in members)
    ]
    unreadable = [members for members in containers.values() if any(i.compressed for i in members)]
    chosen = holding or unreadable or list(containers.values())
    return [image for members in chosen for image in members]


def container_notes(images: list, registered: set[str], report: VerifyReport) -> list[str]:
    """One line per fatbinary when the section holds several (objects of nvcc beside the bundles): its
    images, their kernels, and whether the offload entries register them or the object's own code does.
    Every image of every fatbinary is read here: a damaged one is an error."""
    containers: dict[int, list] = {}
    for image in images:
        containers.setdefault(image.container, []).append(image)
    if len(containers) == 1:
        return []  # the image line says it all
    lines = []
    for number, members in enumerate(containers.values(), 1):
        try:
            kernels = sorted({name for image in members for name in image.kernels()})
        except ExecutableError as e:
            report.problems.append(f"{report.path}: fatbinary {number}: {e.message}")
            continue
        archs = ", ".join(image.arch + (" (compressed)" if image.compressed else "") for image in members)
        whose = (
            "registered by the offload entries"
            if registered & set(kernels)
            else "registered by its own object's code (nvcc's or another compiler's)"
        )
        shown = ", ".join(kernels) if kernels else "none"
        lines.append(f"fatbinary {number}: {archs}; kernels: {shown}; {whose}")
    return lines


def check_host(path: str, elf, expected: str | None, report: VerifyReport) -> None:
    """The host CPU of the executable (its ELF machine), against --host-triple when given."""
    found = host_of_elf_machine(elf.machine)
    if found is None:
        report.problems.append(
            f"{path}: ELF machine {elf.machine} is not a host CPU mlir-offload builds bundles "
            f"for (supported: {supported()})"
        )
        return
    if expected is not None and host_triple(expected) is not found:
        wanted = host_triple(expected).name
        report.problems.append(
            f"{path} is an executable for {found.name} hosts, not {wanted}: compile the "
            f"bundle with --host-triple {wanted} and link with --target={wanted}"
        )
        return
    report.notes.append(f"host: {found.name}")


def check_executable(path: str, host: str | None = None) -> VerifyReport:
    """What verify finds in the executable at `path`: its problems (none: it is fine) and notes."""
    report = VerifyReport(path)
    try:
        exe = read_executable(path)
    except ExecutableError as e:
        raise OffloadError(e.message) from None

    check_host(path, exe.elf, host, report)
    if not exe.device_sections:
        report.problems.append(
            f"{path}: no device code section (.nv_fatbin for CUDA, .hip_fatbin for HIP): was it linked "
            f"without --offload-new-driver?"
        )
    if not exe.entry_sections:
        report.problems.append(f"{path}: no offload entries section: it registers no kernel")

    walked = [s for s in exe.entry_sections if s.registered is not False]
    walked_names = ", ".join(s.name for s in walked if s.registered) or "none"
    called = _library_calls(exe.elf)
    for library in sorted(called):
        report.notes.append(f"calls lib{library}: {called[library]} function(s)")
    check_sparse_tensor_runtime(path, exe.elf, report)
    host_only = _without_kernels(exe)
    if host_only:
        report.notes.append("no kernels: the program's GPU work is host operations (library calls, copies)")
    for section in exe.entry_sections:
        if section.registered is True and section.range_bytes == 0 and not host_only:
            report.problems.append(
                f"{path}: the registration range __start_{section.name}..__stop_{section.name} is empty: "
                f"no kernel or variable is registered"
            )
        if section.registered is False and section.entries:
            why = (
                "it has no registration code (linked without --offload-new-driver?)"
                if walked_names == "none"
                else f"its registration code walks {walked_names} (entries for clang "
                f"{' or '.join(map(str, clangs_registering(section.profile_major)))}, linked by another clang)"
            )
            report.problems.append(
                f"{path}: {len(section.entries)} offload entries in section {section.name} are never registered: {why}"
            )
    if any(s.registered is None for s in exe.entry_sections):
        report.notes.append("symbol table stripped: which entries section is registered was not checked")

    registered = {entry.name for section in walked for entry in section.entries}
    symbols_checked = 0  # (registered symbol, device image) pairs found
    for section in walked:
        for entry in section.entries:
            kind = _entry_offload_kind(entry, section)
            what = "kernel" if entry.is_kernel else "variable"
            if kind is None:
                report.problems.append(
                    f"{path}: {what} '{entry.name}' in {section.name} has offload kind {entry.kind}, which "
                    f"clang {section.profile_major}'s registration code does not handle"
                )
                continue
            images = exe.device_sections.get(DEVICE_SECTION[kind])
            if images is None:
                if exe.device_sections:
                    report.problems.append(
                        f"{path}: {kind} {what} '{entry.name}' is registered but there is no "
                        f"{DEVICE_SECTION[kind]} section"
                    )
                continue
            if not images:
                report.problems.append(f"{path}: {DEVICE_SECTION[kind]} holds no device image")
                continue
            for image in images_to_check(images, entry.name, entry.is_kernel):
                if image.compressed:
                    report.notes.append(f"{image.arch}: compressed image, symbols not checked")
                    continue
                if not _image_has_symbol(image, entry.name, entry.is_kernel):
                    report.problems.append(
                        f"{path}: {what} '{entry.name}' is registered but missing from the {image.arch} "
                        f"device image in {DEVICE_SECTION[kind]}"
                    )
                else:
                    symbols_checked += 1

    symbols = {s.name for s in exe.elf.symbols} | {s.name for s in exe.elf.dynamic_symbols}
    for kind, section_name in DEVICE_SECTION.items():
        if section_name in exe.device_sections and symbols and REGISTER_FATBIN[kind] not in symbols:
            report.problems.append(
                f"{path}: {section_name} is present but nothing calls {REGISTER_FATBIN[kind]}: the device "
                f"code is never registered"
            )

    containers = {name: container_notes(images, registered, report) for name, images in exe.device_sections.items()}
    if report.ok:
        for section_name, images in exe.device_sections.items():
            archs = ", ".join(sorted({i.arch for i in images}))
            for line in reversed(containers[section_name]):
                report.notes.insert(0, line)
            report.notes.insert(0, f"{section_name}: {len(images)} device image(s) for {archs}")
            for image in sorted((i for i in images if i.kind == "ptx"), key=lambda i: i.arch, reverse=True):
                # The driver JIT-compiles it on GPUs that none of the SASS images fits.
                report.notes.insert(
                    1,
                    f"PTX for {image.arch}{' (compressed)' if image.compressed else ''}: "
                    f"forward compatibility to newer GPUs",
                )
        for section in walked:
            names = ", ".join(e.name for e in section.entries)
            report.notes.insert(
                0, f"{section.name} (clang {section.profile_major} layout): {len(section.entries)} entries: {names}"
            )
        report.notes.insert(0, f"{symbols_checked} symbol/image check(s) passed")
    return report
