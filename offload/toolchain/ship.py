"""`mlir-offload ship`: a bundle plus what a target machine needs to link it with clang and make alone.

The archive (deterministic tar.gz, one top folder named after the app):
  manifest.json   producer LLVM version, entry profile, targets, flags, sha256 of every payload file
  SHA256SUMS      coreutils format, every other file of the archive (checked on the target)
  Makefile        POSIX make front end: CLANG=, CUDA_PATH=/ROCM_PATH=, LDFLAGS=/LDLIBS=, APP=
  build.sh        POSIX sh: checks files and clang, links to APP.tmp, verifies it, renames it to APP
  <app>.offload.bc | <app>.offload.o
  ptx/<app>.<arch>.ptx (ptx mode: build.sh adds each to the executable's fatbin as kind=ptx, so that a
                       GPU newer than the listed archs JIT-compiles it)
  tools/bin/fatbinary  the fatbinary wrapper (offload/data/scripts/fatbinary) when the link needs it: for
                       the PTX images, and for clang <= 19/21 whose --image= option CUDA 13 rejects
  tools/ptxas/bin/ptxas  the ptxas wrapper (offload/data/ptxas/bin/ptxas) for CUDA bitcode: ptxas on threads
                       of its own in the device link, as `mlir-offload link` runs it
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shlex
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from offload import __version__
from offload.data import read_data, read_data_bytes
from offload.errors import OffloadError
from offload.formats.hosts import X86_64, host_triple
from offload.formats.profiles import Profile, available_profiles, link_table, load_profile
from offload.formats.sparse_tensor_runtime import LIBRARY as SPARSE_TENSOR_LIBRARY
from offload.formats.sparse_tensor_runtime import shipped_refusal
from offload.formats.vendors import VENDORS, runtime_link_flags, vendor_for
from offload.fsutil import read_input
from offload.packager import ImageKind, image_kind_name
from offload.packager.bitcode_ident import bitcode_globals, bitcode_producer
from offload.packager.bundle import (
    BundleRecord,
    is_function_name,
    is_library_name,
    is_version_number,
    read_bundle_record,
)
from offload.packager.detect import is_bitcode
from offload.toolchain import tools as toolchain
from offload.toolchain.cuda_device_link import DEVICE_LINKER_OPTION, PTXAS_THREADS, cuda_bitcode_bytes, partitions_of
from offload.toolchain.cxx_inputs import CXX_DRIVER_MODE, CXX_RUNTIME_PREFIXES, CXX_RUNTIME_WORDS, CXX_SOURCE_SUFFIXES
from offload.toolchain.link import HOST_OPTIMIZATION, OPTIMIZATION_OPTION, device_debug_words
from offload.toolchain.ptx import ptx_external_functions, ptx_target_arch

MANIFEST_FORMAT = "mlir-offload-ship/1"
# An app name becomes a make target, a file name and shell words on the target: nothing to expand or split.
APP_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-")
# Names the archive's own files and the Makefile's targets take (build.sh refuses them too).
RESERVED_APP_NAMES = frozenset(
    {"all", "check", "clean", "FORCE", "build.sh", "Makefile", "SHA256SUMS", "manifest.json", "ptx", "tools"}
)


def check_app_name(name: str, source: str) -> str:
    """`name` when it is a safe app name ([A-Za-z0-9._+-], no leading '-' or '.'), else an error naming
    where it came from (`source`: "--app", or the archive name)."""
    if (
        not name
        or name[0] in "-."
        or not set(name) <= APP_NAME_CHARACTERS
        or len(name) > 200
        or name in RESERVED_APP_NAMES
    ):
        raise OffloadError(
            f"app name {json.dumps(name)} (from {source}) is not a safe name: use letters, digits "
            "and . _ + - only, not starting with '-' or '.' (pass --app NAME)"
        )
    return name


# Placeholders for values the target decides; rendered as shell variables in build.sh.
CLANG, CUDA_PATH, ROCM_PATH, OUTPUT = "\0CLANG\0", "\0CUDA_PATH\0", "\0ROCM_PATH\0", "\0OUTPUT\0"
FATBINARY_WRAPPER = "tools/bin/fatbinary"
PTXAS_WRAPPER = "tools/ptxas/bin/ptxas"  # build.sh passes the nvlink wrapper --cuda-path=<archive>/tools/ptxas


@dataclass
class BundleFacts:
    """What a bundle is (its record) and what ship measured of it: host producer, entries and images."""

    record: BundleRecord  # read once by read_bundle_record, checked against the entry sections
    host_producer: str | None  # "LLVM22.1.0" for bitcode
    entries: list[str]
    images: list[dict] = field(default_factory=list)  # offload_kind, triple, arch, image_kind, producer
    cuda_bitcode_bytes: dict[str, int] = field(default_factory=dict)  # arch -> bytes (the device link's partitions)

    @property
    def host_format(self) -> str:  # "bc" | "obj"
        return self.record.host_format

    @property
    def entry_profile(self) -> int:
        return self.record.profile

    @property
    def host_triple(self) -> str:  # offload.formats.hosts name
        return self.record.host_triple

    @property
    def offload_kinds(self) -> list[str]:
        return sorted({i["offload_kind"] for i in self.images})

    @property
    def device_image(self) -> str:
        kinds = {i["image_kind"] for i in self.images}
        return "bitcode" if "bitcode" in kinds else "cubin" if "cubin" in kinds else ",".join(sorted(kinds))

    @property
    def bitcode_llvm(self) -> int | None:
        """Newest LLVM major among the bitcode parts (None when nothing is bitcode)."""
        producers = [self.host_producer] if self.host_format == "bc" else []
        producers += [i["producer"] for i in self.images if i["image_kind"] == "bitcode"]
        majors = [_llvm_major(p) for p in producers if p]
        return max(majors) if majors else None


def _llvm_major(producer: str) -> int:
    digits = producer.removeprefix("LLVM").strip().split(".")[0]
    return int(digits) if is_version_number(digits) else 0


def inspect_bundle(data: bytes, name: str) -> BundleFacts:
    """Read host format, bitcode producer, entry layout (= profile) and images of a bundle."""
    from offload.toolchain.executable import entry_section_layouts, read_elf, read_entry_sections

    prefix = ".offloading.entry."
    if is_bitcode(data):
        host_format, producer = "bc", bitcode_producer(data)
        found = bitcode_globals(data)
        if found is None:
            raise OffloadError(f"{name}: cannot read bitcode: malformed or unsupported bitstream")
        layouts = entry_section_layouts()
        entry_globals = [v for v in found if v.section in layouts and v.name.startswith(prefix)]
        majors = {layouts[v.section][0] for v in entry_globals}
        entries = sorted(v.name[len(prefix) :] for v in entry_globals)
    elif data[:4] == b"\x7fELF":
        host_format, producer = "obj", None
        elf = read_elf(data, name)
        sections = [s for s in read_entry_sections(elf) if s.entries]
        majors = {s.profile_major for s in sections}
        # In an object file the entries' name pointers are relocations; the entry symbols carry the names.
        entries = sorted(sym.name[len(prefix) :] for sym in elf.symbols if sym.name.startswith(prefix))
        if len(entries) != sum(len(s.entries) for s in sections):
            entries = sorted(e.name for s in sections for e in s.entries)
    else:
        raise OffloadError(f"{name}: not a bundle (expected LLVM bitcode or an ELF object from mlir-offload compile)")
    if len(majors) > 1:
        raise OffloadError(f"{name}: offload entries of several clang layouts: not a bundle that clang can register")
    record, offload_images = read_bundle_record(data, name)
    if record.host_format != host_format:
        actual = "LLVM bitcode" if host_format == "bc" else "an ELF object"
        raise OffloadError(
            f"{name}: its record says host format '{record.host_format}' but the file is "
            f"{actual}: the bundle was altered after compile"
        )
    record = replace(record, host_triple=host_triple(record.host_triple).name)
    # No entries: a program of host operations only (library calls), whose record alone names the clang.
    profile = _recorded_profile(record, majors.pop() if majors else record.profile, name)
    kind_names = {v: k for k, v in profile.offload_kind.items()}
    images = []
    for image in offload_images:
        kind = kind_names.get(image.offload_kind)
        if kind not in VENDORS:
            raise OffloadError(
                f"{name}: image for {image.strings.get('arch')} has offload kind "
                f"{image.offload_kind}, which clang {profile.clang_major} does not link"
            )
        images.append(
            {
                "offload_kind": kind,
                "triple": image.strings.get("triple", ""),
                "arch": image.strings.get("arch", ""),
                "image_kind": {ImageKind.BITCODE: "bitcode", ImageKind.CUBIN: "cubin", ImageKind.OBJECT: "object"}.get(
                    image.image_kind, image_kind_name(image.image_kind)
                ),
                "producer": bitcode_producer(image.data) if image.image_kind == ImageKind.BITCODE else None,
            }
        )
    return BundleFacts(record, producer, entries, images, cuda_bitcode_bytes(offload_images))


def _recorded_profile(record: BundleRecord, entry_major: int, name: str) -> Profile:
    """The profile the bundle's record names, once its entry sections are checked to have that profile's
    layout (clang 21 and 22 share one layout: only the record tells them apart)."""
    if record.profile not in available_profiles():
        raise OffloadError(
            f"{name}: its record says it was made for clang {record.profile}, which this "
            f"mlir-offload has no profile for (it knows {', '.join(map(str, available_profiles()))})"
        )
    profile = load_profile(record.profile)
    if profile.entries != load_profile(entry_major).entries:
        raise OffloadError(
            f"{name}: its record says clang {record.profile} but its offload entries have the "
            f"layout of clang {entry_major}: the bundle was altered after compile"
        )
    return profile


# ---- the target's link line ----------------------------------------------------------------------


def target_link_words(
    profile: Profile, offload_kind: str, bundle: str | list[str], host=None, libraries: tuple[str, ...] = ()
) -> list[str]:
    """The clang command line `mlir-offload link` uses (the vendor record's library and flags), with the
    target's clang, toolkit path and output left as placeholders. The runtime library is looked for in
    the toolkit's folder for the bundle's host (offload.formats.hosts record; default x86-64), then in
    the plain one (on the target machine the two are one folder)."""
    vendor = vendor_for(offload_kind)
    root = {"CUDA_PATH": CUDA_PATH, "ROCM_PATH": ROCM_PATH}[vendor.toolkit_variable]
    host = host or X86_64
    folders = toolchain.host_library_folders(vendor, host)
    return [
        CLANG,
        "--offload-new-driver",
        *([bundle] if isinstance(bundle, str) else bundle),
        *runtime_link_flags(
            vendor,
            root,
            [f"{root}/{folder}" for folder in (*folders, vendor.library_dirs[0])],
            libraries_used=libraries,
        ),
        "-o",
        OUTPUT,
    ]


def _sh_word(word: str) -> str:
    """One shell word; placeholders become double-quoted variable expansions."""
    names = {CLANG: "CLANG", CUDA_PATH: "CUDA_PATH", ROCM_PATH: "ROCM_PATH", OUTPUT: "APP.tmp"}
    parts, rest = [], word
    while rest:
        at = min((rest.find(p), p) for p in names if p in rest) if any(p in rest for p in names) else None
        if at is None:
            parts.append(shlex.quote(rest))
            break
        index, placeholder = at
        if index:
            parts.append(shlex.quote(rest[:index]))
        variable = names[placeholder]
        parts.append('"$APP.tmp"' if variable == "APP.tmp" else f'"${variable}"')
        rest = rest[index + len(placeholder) :]
    return "".join(parts)


# ---- generated files -----------------------------------------------------------------------------


def render_build_sh(
    app: str,
    bundle: str,
    facts: BundleFacts,
    profile: Profile,
    link_words: list[str],
    needs_fatbinary_wrapper: bool,
    ptx_files: dict[str, str] | None = None,
    files: Sequence[str] = (),
    speed: DeviceLinkRule | None = None,
) -> str:
    """build.sh; `ptx_files` maps arch -> archive path of its PTX (relative: the link runs in the
    archive's folder, whatever characters the folder's path has)."""
    kind = facts.offload_kinds[0]
    entry_section = profile.entries["section"][kind]
    # The fatbinary wrapper, for a clang that looks for fatbinary in <--cuda-path>/bin (set by find_cuda).
    words = [_sh_word(w) for w in link_words]
    # Where `mlir-offload link` puts --driver-mode=g++: right after --offload-new-driver (set by find_cxx_inputs).
    words.insert(2, '${CXX_DRIVER_MODE:+"$CXX_DRIVER_MODE"}')
    link = (
        " ".join(words)
        + ' ${WRAPPER_CUDA_PATH:+"-Wl,--cuda-path=$WRAPPER_CUDA_PATH"} $HOST_OPTIMIZATION $LDFLAGS $LDLIBS'
    )
    link += (
        ' ${JOBS_WORD:+"$JOBS_WORD"}'
        ' ${PARTITIONS_WORD:+"$DEVICE_LINKER"} ${PARTITIONS_WORD:+"$PARTITIONS_WORD"}'
        ' ${PTXAS_CUDA_PATH:+"$DEVICE_LINKER"} ${PTXAS_CUDA_PATH:+"--cuda-path=$PTXAS_CUDA_PATH"}'
    )
    speed = speed or DeviceLinkRule()
    bitcode_llvm = facts.bitcode_llvm or ""
    runtime_refusal = (
        shipped_refusal(facts.record.sparse_tensor_runtime) if facts.record.sparse_tensor_runtime else ("", "")
    )
    template = read_data("ship/build.sh.in", "utf-8")
    values = {
        "@TOOL@": f"mlir-offload {__version__}",
        "@APP@": app,
        "@BUNDLE@": bundle,
        "@PROFILE@": str(profile.clang_major),
        "@BITCODE_LLVM@": str(bitcode_llvm),
        "@OFFLOAD_KIND@": kind,
        "@DEVICE_SECTION@": vendor_for(kind).device_section,
        "@ENTRY_SECTION@": entry_section,
        "@ENTRY_SIZE@": str(profile.entries["struct_size"]),
        "@ENTRIES@": str(len(facts.entries)),
        "@FATBINARY_WRAPPER@": "1" if needs_fatbinary_wrapper else "",
        "@PTX_IMAGES@": shlex.quote("\n".join(f"{arch}={path}" for arch, path in sorted((ptx_files or {}).items()))),
        # compute_XX archs (the bundle record) with their PTX shipped: the wrapper leaves out their cubin.
        "@PTX_ONLY@": " ".join(sorted(set(facts.record.ptx_only) & set(ptx_files or {}))),
        "@FATBINARY_LOOKUP@": str(profile.cuda.get("fatbinary_lookup", "path")),
        "@CLANGS@": shlex.quote(
            "\n".join(
                f"{major} {','.join(refusals) or '-'} "
                f"{'1' if clang.cuda.get('fatbinary_needs_image3_wrapper') else '-'} "
                f"{clang.cuda.get('fatbinary_lookup', 'path')} "
                f"{clang.link.get('device_jobs_option') or '-'} "
                f"{clang.cuda.get('device_link_partitions_option') or '-'} "
                f"{clang.cuda.get('ptxas_lookup') or '-'}"
                for major, refusals, clang in link_table(profile.clang_major, facts.bitcode_llvm)
            )
        ),
        # The variables that name a toolkit besides the script's own CUDA_PATH / ROCM_PATH.
        "@CUDA_ROOTS@": toolchain.shell_search_words(toolchain.CUDA_ENVIRONMENT[1:], toolchain.STANDARD_CUDA_ROOTS),
        "@ROCM_ROOTS@": toolchain.shell_search_words(
            toolchain.ROCM_ENVIRONMENT[1:], (*toolchain.STANDARD_ROCM_ROOTS, "/usr")
        ),
        "@CLANG_CANDIDATES@": " ".join(_sh_word(c) for c in toolchain.clang_candidates(profile.clang_major)),
        "@FILES@": shlex.quote("\n".join(sorted(files))),
        "@LINK@": link,
        "@DEVICE_IMAGES@": str(speed.device_images),
        "@LTO_PARTITIONS@": str(speed.partitions) if speed.partitions > 1 else "",
        "@PTXAS_THREADS@": str(speed.ptxas_threads or ""),
        "@DEVICE_LINKER@": DEVICE_LINKER_OPTION,
        "@PTXAS_WRAPPER_ROOT@": os.path.dirname(os.path.dirname(PTXAS_WRAPPER)),
        "@HOST_TRIPLE@": facts.host_triple,
        # link's rule (offload/toolchain/link.py): this level unless LDFLAGS has a word starting with the option.
        "@HOST_OPTIMIZATION@": HOST_OPTIMIZATION,
        "@OPTIMIZATION_OPTION@": OPTIMIZATION_OPTION,
        # link's C++ rule (offload/toolchain/cxx_inputs.py), as case patterns and an awk list of prefixes.
        "@CXX_DRIVER_MODE@": CXX_DRIVER_MODE,
        "@CXX_RUNTIME_WORDS@": "|".join(f"{shlex.quote(word)}*" for word in CXX_RUNTIME_WORDS),
        "@CXX_SOURCE_SUFFIXES@": "|".join(f"*{shlex.quote(suffix)}" for suffix in CXX_SOURCE_SUFFIXES),
        "@CXX_RUNTIME_PREFIXES@": " ".join(CXX_RUNTIME_PREFIXES),
        # The first word of `clang -dumpmachine` for a clang linking for that host (a case pattern).
        "@HOST_ARCHS@": "|".join(host_triple(facts.host_triple).machines),
        # MLIR's sparse tensor runtime the host calls (the bundle record): build.sh links only a LDLIBS naming it.
        "@SPARSE_TENSOR_RUNTIME@": facts.record.sparse_tensor_runtime,
        "@SPARSE_TENSOR_LIBRARY@": SPARSE_TENSOR_LIBRARY,
        "@SPARSE_TENSOR_RUNTIME_PROBLEM@": shlex.quote(runtime_refusal[0]),
        "@SPARSE_TENSOR_RUNTIME_FIX@": shlex.quote(runtime_refusal[1]),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def render_makefile(app: str, bundle: str, record: BundleRecord | None = None) -> str:
    """The Makefile; `record`'s sparse tensor runtime (if any) is said in its head, with how to give it."""
    template = read_data("ship/Makefile.in", "utf-8")
    function = record.sparse_tensor_runtime if record else ""
    needs = (
        f"# The program calls MLIR's sparse tensor runtime ({function}), which the archive does not hold:\n"
        f"# name your lib{SPARSE_TENSOR_LIBRARY} in LDLIBS, else build.sh refuses:\n"
        f"#   make LDLIBS='-L/path/to/its/folder -l{SPARSE_TENSOR_LIBRARY} -Wl,-rpath,/path/to/its/folder'\n"
        if function
        else ""
    )
    values = {
        "@TOOL@": f"mlir-offload {__version__}",
        "@APP@": app,
        "@BUNDLE@": bundle,
        "@SPARSE_TENSOR_RUNTIME@\n": needs,
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def fatbinary_wrapper() -> bytes:
    return read_data_bytes("scripts/fatbinary")


def ptxas_wrapper() -> bytes:
    return read_data_bytes("ptxas/bin/ptxas")


@dataclass(frozen=True)
class DeviceLinkRule:
    """What build.sh renders of `mlir-offload link`'s parallel device link (offload/toolchain/link.py and
    cuda_device_link.py): the counts come from the bundles; which clang takes which option is the CLANGS data."""

    device_images: int = 1  # the jobs option's count, at most one per CPU of the target (same bytes)
    partitions: int = 1  # LTO code generation partitions of each CUDA arch
    ptxas_threads: int = 0  # ptxas --split-compile=N through the shipped ptxas wrapper; 0: the toolkit's ptxas


def device_link_rule(facts: BundleFacts, profile: Profile) -> DeviceLinkRule:
    """The rule for `facts`; ptxas threads only where a clang that can link the bundle finds the wrapper."""
    images = len(set(facts.record.targets))
    if facts.record.device_debug or not facts.cuda_bitcode_bytes:  # -G: ptxas -O0 -g as asked, one partition
        return DeviceLinkRule(images)
    wrapper_found = any(
        clang.cuda.get("ptxas_lookup") == "cuda_path"
        for _, refusals, clang in link_table(profile.clang_major, facts.bitcode_llvm)
        if not refusals
    )
    return DeviceLinkRule(images, partitions_of(facts.cuda_bitcode_bytes), PTXAS_THREADS if wrapper_found else 0)


# ---- the archive ---------------------------------------------------------------------------------


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_archive(
    app: str,
    bundle_data: bytes,
    bundle_name: str,
    flags: list[str],
    ptx: dict[str, str] | None = None,
    more: Sequence[tuple[str, bytes]] = (),
) -> bytes:
    """All files of the shipped archive, as deterministic tar.gz bytes. `more`: (name, bytes) of further
    bundles of the same app, linked into the one executable with the first."""
    check_app_name(app, "the app")
    facts = inspect_bundle(bundle_data, bundle_name)
    if more:
        facts = _joined_facts([(bundle_name, facts), *((name, inspect_bundle(data, name)) for name, data in more)])
    if len(facts.offload_kinds) != 1:
        raise OffloadError(f"{bundle_name}: mixes CUDA and HIP images; ship one runtime per archive")
    profile = load_profile(facts.entry_profile)
    kind = facts.offload_kinds[0]
    if facts.bitcode_llvm and not profile.reads_bitcode_of(facts.bitcode_llvm):
        raise OffloadError(
            f"{bundle_name}: holds LLVM {facts.bitcode_llvm} bitcode, which clang "
            f"{profile.clang_major} cannot read: ship with --portable (cubin images, ELF host object)"
        )
    ptx_files = check_shipped_ptx(ptx or {}, facts, bundle_name, app)
    # The wrapper goes in when any clang that can link the bundle calls `fatbinary --image=`.
    needs_wrapper = vendor_for(kind).fatbinary and any(
        clang.cuda.get("fatbinary_needs_image3_wrapper")
        for _, refusals, clang in link_table(profile.clang_major, facts.bitcode_llvm)
        if not refusals
    )
    payload: dict[str, bytes] = {bundle_name: bundle_data, **dict(more)}
    bundle_names = [bundle_name, *(name for name, _ in more)]
    for arch, text in sorted((ptx or {}).items()):
        payload[ptx_files[arch]] = text.encode("utf-8")
    if needs_wrapper or ptx_files:
        payload[FATBINARY_WRAPPER] = fatbinary_wrapper()
    speed = device_link_rule(facts, profile)
    if speed.ptxas_threads:
        payload[PTXAS_WRAPPER] = ptxas_wrapper()
    link_words = target_link_words(profile, kind, bundle_names, host_triple(facts.host_triple), facts.record.libraries)
    if facts.record.device_debug:  # link's -G rule: the device link of each bitcode triple gets -g -O0
        bitcode_triples = {image["triple"] for image in facts.images if image["image_kind"] == "bitcode"}
        link_words[-2:-2] = device_debug_words(profile, bitcode_triples)
    manifest = {
        "format": MANIFEST_FORMAT,
        "tool": f"mlir-offload {__version__}",
        "app": app,
        "bundle": bundle_name,
        **({"bundles": bundle_names} if more else {}),
        **facts.record.manifest_fields(),
        "device_image": "ptx" if ptx else facts.device_image,
        "producer_llvm": facts.bitcode_llvm,
        "producer": facts.host_producer,
        "entries": facts.entries,
        "targets": facts.images,
        "flags": flags,
        "files": {name: sha256(data) for name, data in sorted(payload.items())},
    }
    files = dict(payload)
    files["manifest.json"] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")
    files["Makefile"] = render_makefile(app, " ".join(bundle_names), facts.record).encode("utf-8")
    files["build.sh"] = render_build_sh(
        app,
        " ".join(bundle_names),
        facts,
        profile,
        link_words,
        needs_wrapper,
        ptx_files,
        [*files, "build.sh"],
        speed,
    ).encode("utf-8")
    files["SHA256SUMS"] = "".join(f"{sha256(data)}  {name}\n" for name, data in sorted(files.items())).encode()
    return deterministic_tar_gz(app, files, executable={"build.sh", FATBINARY_WRAPPER, PTXAS_WRAPPER})


def _joined_facts(named: list[tuple[str, BundleFacts]]) -> BundleFacts:
    """The facts of several bundles linked into one app: they must agree on what one link takes (entry
    layout, host format and CPU, runtime), and no kernel may come from two of them."""
    first_name, first = named[0]
    seen = {entry: first_name for entry in first.entries}
    for name, facts in named[1:]:
        for what, ours, theirs in (
            ("clang", first.entry_profile, facts.entry_profile),
            ("host format", first.host_format, facts.host_format),
            ("host CPU", first.host_triple, facts.host_triple),
            ("runtime", first.offload_kinds, facts.offload_kinds),
        ):
            if ours != theirs:
                raise OffloadError(
                    f"{first_name} and {name} differ in {what} ({ours} vs {theirs}): one executable "
                    "links bundles made alike; recompile them with the same flags"
                )
        for entry in facts.entries:
            if entry in seen:
                raise OffloadError(
                    f"kernel or global '{entry}' is defined by both {seen[entry]} and {name}: "
                    "recompile one with --symbol-prefix NAME"
                )
            seen[entry] = name
    targets = tuple(dict.fromkeys(t for _, facts in named for t in facts.record.targets))
    device_debug = any(facts.record.device_debug for _, facts in named)  # -G in one: the link is -G (link's rule)
    libraries = tuple(dict.fromkeys(library for _, facts in named for library in facts.record.libraries))
    # The first bundle's function that calls MLIR's sparse tensor runtime: what build.sh's refusal names.
    runtime = next((f.record.sparse_tensor_runtime for _, f in named if f.record.sparse_tensor_runtime), "")
    return BundleFacts(
        replace(
            first.record,
            targets=targets,
            device_debug=device_debug,
            libraries=libraries,
            sparse_tensor_runtime=runtime,
        ),
        max((f.host_producer for _, f in named if f.host_producer), default=None, key=_llvm_major),
        sorted(seen),
        [image for _, facts in named for image in facts.images],
        {
            arch: sum(facts.cuda_bitcode_bytes.get(arch, 0) for _, facts in named)
            for arch in sorted({arch for _, facts in named for arch in facts.cuda_bitcode_bytes})
        },
    )


def check_shipped_ptx(ptx: dict[str, str], facts: BundleFacts, bundle_name: str, app: str) -> dict[str, str]:
    """arch -> archive path of each PTX text, after checking that it is for one of the bundle's CUDA
    archs and self-contained (what `link --ptx` checks too: build.sh cannot stop to ask)."""
    cuda_archs = {i["arch"] for i in facts.images if vendor_for(i["offload_kind"]).ptx}
    files = {}
    for arch, text in sorted(ptx.items()):
        name = f"ptx/{app}.{arch}.ptx"
        declared = ptx_target_arch(text, name)
        if declared != arch or arch not in cuda_archs:
            raise OffloadError(
                f"{name}: PTX for {declared}, but {bundle_name} has {', '.join(sorted(cuda_archs)) or 'no CUDA image'}"
            )
        external = ptx_external_functions(text)
        if external:
            raise OffloadError(
                f"{name}: the PTX calls {', '.join(external[:3])} defined elsewhere, so a GPU newer "
                f"than {arch} could not JIT-compile it alone: link that device code into the bundle "
                f"(--link-bitcode) or ship with --device-image=cubin"
            )
        files[arch] = name
    return files


def deterministic_tar_gz(top: str, files: dict[str, bytes], executable: set[str]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        folders = sorted({folder for n in files for folder in _ancestors(n)})
        for folder in [""] + folders:
            info = tarfile.TarInfo(f"{top}/{folder}".rstrip("/"))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            _fixed(info)
            tar.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode = len(files[name]), 0o755 if name in executable else 0o644
            _fixed(info)
            tar.addfile(info, io.BytesIO(files[name]))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def _ancestors(name: str) -> list[str]:
    """The folders above an archive path, each one its own member (tools, tools/ptxas, tools/ptxas/bin)."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _fixed(info: tarfile.TarInfo) -> None:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"


# ---- reading a shipped archive back (doctor --bundle) --------------------------------------------

MAX_MANIFEST_BYTES = 1 << 20


def read_manifest(path: str) -> dict:
    """manifest.json of a .tar.gz archive, an unpacked folder, or the manifest file itself, checked to be
    a manifest of this format (every field read later has its type)."""
    from offload.formats.ustar import read_member

    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    if path.endswith(".json"):
        data = read_input(path)
    else:
        member = read_member(
            path, lambda name: name.count("/") == 1 and name.endswith("/manifest.json"), MAX_MANIFEST_BYTES
        )
        if member is None:
            raise OffloadError(f"{path}: no manifest.json: not an archive made by mlir-offload ship")
        data = member
    if len(data) > MAX_MANIFEST_BYTES:
        raise OffloadError(f"{path}: manifest.json of {len(data)} bytes is not one mlir-offload ship writes")
    try:
        manifest = json.loads(data)
    except RecursionError:
        raise OffloadError(f"{path}: manifest.json nests too deeply") from None
    except ValueError as e:  # UnicodeDecodeError included
        raise OffloadError(f"{path}: manifest.json is not valid JSON ({e})") from None
    _check_manifest(manifest, path)
    return manifest


# The fields read from a manifest and their types (a list of targets holds objects of TARGET_FIELDS).
MANIFEST_FIELDS = {
    "format": str,
    "app": str,
    "entry_profile": int,
    "host_format": str,
    "device_image": str,
    "targets": list,
    "files": dict,
}
TARGET_FIELDS = {"offload_kind": str, "arch": str}


def _manifest_host(manifest: dict, path: str) -> str:
    """The manifest's host triple (archives from before the field were all x86-64), normalised."""
    recorded = manifest.get("host_triple", BundleRecord.host_triple)
    if not isinstance(recorded, str):
        raise OffloadError(
            f"{path}: manifest.json host_triple is not a string: not a manifest written by mlir-offload ship"
        )
    try:
        return host_triple(recorded).name
    except OffloadError as e:
        raise OffloadError(f"{path}: {e.message}") from None


def _check_manifest(manifest, path: str) -> None:
    def wrong(what: str) -> OffloadError:
        return OffloadError(f"{path}: manifest.json {what}: not a manifest written by mlir-offload ship")

    if not isinstance(manifest, dict):
        raise wrong(f"is a JSON {type(manifest).__name__}, not an object")
    if manifest.get("format") != MANIFEST_FORMAT:
        shown = json.dumps(manifest.get("format"))[:80]
        raise OffloadError(f"{path}: manifest format {shown} is not {MANIFEST_FORMAT}")
    for key, kind in MANIFEST_FIELDS.items():
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise wrong(f"field '{key}' is missing or not a {kind.__name__}")
    if not isinstance(manifest.get("producer_llvm") or 0, int):
        raise wrong("field 'producer_llvm' is not a number")
    if not isinstance(manifest.get("producer_llvm_version", ""), str):
        raise wrong("field 'producer_llvm_version' is not a string")
    if not manifest["targets"]:
        raise wrong("lists no targets")
    libraries = manifest.get("libraries", [])
    if not isinstance(libraries, list) or not all(
        isinstance(name, str) and is_library_name(name) for name in libraries
    ):
        raise wrong("field 'libraries' is not a list of library names")
    function = manifest.get("sparse_tensor_runtime", "")
    if not isinstance(function, str) or not is_function_name(function):
        raise wrong("field 'sparse_tensor_runtime' is not a function name")
    for target in manifest["targets"]:
        if not isinstance(target, dict) or not all(isinstance(target.get(k), t) for k, t in TARGET_FIELDS.items()):
            raise wrong("has a target without a string offload_kind and arch")


GZIP_MAGIC = b"\x1f\x8b"


def read_bundle_needs(path: str):
    """(BundleNeeds, whether the archive ships the fatbinary wrapper) of a shipped manifest, or of a bundle
    (`.offload.bc`, `.offload.o`: what `mlir-offload link` links, which brings the wrapper itself)."""
    from offload.toolchain.doctor import BundleNeeds

    if os.path.isfile(path) and not path.endswith(".json"):
        with open(path, "rb") as file:
            magic = file.read(4)
        if is_bitcode(magic) or magic == b"\x7fELF":
            facts = inspect_bundle(read_input(path), path)
            needs = BundleNeeds(path, facts.record, facts.bitcode_llvm or 0, facts.device_image, shipped=False)
            return needs, True
        if magic[:2] != GZIP_MAGIC:
            raise OffloadError(
                f"{path}: neither a bundle (.offload.bc, .offload.o from mlir-offload compile) nor a shipped "
                "archive (.tar.gz from mlir-offload ship)"
            )

    manifest = read_manifest(path)
    record = BundleRecord.from_manifest(dict(manifest, host_triple=_manifest_host(manifest, path)))
    needs = BundleNeeds(manifest["app"], record, manifest.get("producer_llvm") or 0, manifest["device_image"])
    return needs, FATBINARY_WRAPPER in manifest.get("files", {})
