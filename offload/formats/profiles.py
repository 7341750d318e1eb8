"""Target-clang profiles: the per-release differences (kind values, entry layout, sections) as data."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from offload.data import data_path, read_data
from offload.errors import Mention, OffloadError

DEFAULT_TARGET_CLANG = 22

# Why a clang cannot link a bundle (link_refusals): the one compatibility rule's answers.
NO_PROFILE = "no-profile"  # mlir-offload has no profile for that clang, so nothing says what it registers
OTHER_ENTRIES = "entries"  # its linker wrapper registers another entry layout or kind values: no kernel would run
UNREADABLE_BITCODE = "bitcode"  # it cannot read the bundle's LLVM bitcode


@dataclass(frozen=True)
class Profile:
    clang_major: int
    llvm_major: int
    status: str  # "verified" (linked with a real clang) or "source" (read from LLVM's release sources)
    evidence: str
    offload_kind: dict[str, int]
    entries: dict
    bitcode_reads_llvm_up_to: int
    cuda: dict = field(default_factory=dict)
    link: dict = field(default_factory=dict)  # the linking clang's options (device_jobs_option)

    def reads_bitcode_of(self, llvm_major: int) -> bool:
        """Whether this clang reads bitcode written by LLVM `llvm_major` (bitcode is only backward compatible)."""
        return llvm_major <= self.bitcode_reads_llvm_up_to

    def registers_entries_of(self, bundle: Profile) -> bool:
        """Whether this clang's linker wrapper registers the offload entries of a bundle made for `bundle`
        (same entry layout and kind values: clang 21 and 22 share theirs)."""
        return self.entries == bundle.entries and self.offload_kind == bundle.offload_kind

    def offload_kind_value(self, kind: str) -> int:
        try:
            return self.offload_kind[kind]
        except KeyError:
            known = ", ".join(sorted(self.offload_kind))
            raise OffloadError(f"unknown offload kind '{kind}' (expected one of: {known})") from None


def _profile_files() -> dict[int, str]:
    found = {}
    for name in os.listdir(data_path("profiles")):
        if name.startswith("clang") and name.endswith(".toml"):
            found[int(name[len("clang") : -len(".toml")])] = read_data(f"profiles/{name}", encoding="utf-8")
    return found


@cache
def _all_profiles() -> dict[int, Profile]:
    profiles = {}
    for major, text in _profile_files().items():
        data = tomllib.loads(text)
        profiles[major] = Profile(
            clang_major=data["clang_major"],
            llvm_major=data["llvm_major"],
            status=data["status"],
            evidence=data["evidence"],
            offload_kind=dict(data["offload_kind"]),
            entries=dict(data["entries"]),
            bitcode_reads_llvm_up_to=data["bitcode"]["reads_llvm_up_to"],
            cuda=dict(data.get("cuda", {})),
            link=dict(data.get("link", {})),
        )
    return profiles


def available_profiles() -> list[int]:
    return sorted(_all_profiles())


def load_profile(clang_major: int | str | None = None) -> Profile:
    major = DEFAULT_TARGET_CLANG if clang_major is None else clang_major
    try:
        major = int(major)
    except (TypeError, ValueError):
        raise OffloadError((Mention("target_clang"), f" expects a clang major version, got '{clang_major}'")) from None
    profiles = _all_profiles()
    if major not in profiles:
        known = ", ".join(str(m) for m in sorted(profiles))
        raise OffloadError(
            f"no profile for target clang {major} (profiles exist for clang {known}; "
            f"see offload/data/profiles/ for what a profile records)"
        )
    return profiles[major]


def link_refusals(bundle_profile: int, bitcode_llvm: int | None, clang_major: int) -> tuple[str, ...]:
    """Why clang `clang_major` cannot link a bundle made for clang `bundle_profile` whose bitcode parts were
    written by LLVM `bitcode_llvm` (None: no bitcode, a portable bundle); empty when it links it correctly.
    The one bundle-compatibility rule: link, doctor and the shipped build.sh (link_table) all ask it."""
    profiles = _all_profiles()
    if clang_major not in profiles:
        return (NO_PROFILE,)
    clang, bundle = profiles[clang_major], load_profile(bundle_profile)
    refusals = []
    if not clang.registers_entries_of(bundle):
        refusals.append(OTHER_ENTRIES)
    if bitcode_llvm is not None and not clang.reads_bitcode_of(bitcode_llvm):
        refusals.append(UNREADABLE_BITCODE)
    return tuple(refusals)


def clangs_registering(bundle_profile: int) -> list[int]:
    """The clangs whose linker wrapper registers the entries of a bundle made for `bundle_profile`."""
    bundle = load_profile(bundle_profile)
    return [major for major in available_profiles() if load_profile(major).registers_entries_of(bundle)]


def link_table(bundle_profile: int, bitcode_llvm: int | None) -> list[tuple[int, tuple[str, ...], Profile]]:
    """(clang major, link_refusals, that clang's profile) for every clang with a profile: the rule as data,
    for a target that cannot run Python (the shipped build.sh)."""
    return [
        (major, link_refusals(bundle_profile, bitcode_llvm, major), load_profile(major))
        for major in available_profiles()
    ]


def offload_kind_label(value: int) -> tuple[str, list[int]]:
    """The kind's name and the target clangs (profiles) that give it this value: HIP is 3 up to
    LLVM 20 and 4 from 21, so the value alone does not say which clang it is for."""
    names: dict[str, list[int]] = {}
    for major in available_profiles():
        for kind, kind_value in load_profile(major).offload_kind.items():
            if kind_value == value:
                names.setdefault(kind, []).append(major)
    if not names:
        return ("none" if value == 0 else "unknown"), []
    name = "/".join(sorted(names))
    return name, sorted({m for majors in names.values() for m in majors})
