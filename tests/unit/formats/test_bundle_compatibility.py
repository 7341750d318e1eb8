"""One bundle-compatibility rule (offload/formats/profiles.py link_refusals), asked by `link`, by `doctor
--bundle` and, rendered as data, by the shipped build.sh: for every (bundle profile x target clang) pair,
portable and bitcode, the three accept or refuse alike. A bundle made for clang 21 links with clang 22
(same entry layout, no bitcode), which doctor and build.sh once refused."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from offload.formats.profiles import available_profiles, link_refusals, load_profile
from offload.packager.bundle import BundleRecord
from offload.toolchain.doctor import BundleNeeds, Clang, CudaToolkit, Rocm, bundle_findings
from offload.toolchain.link import compatibility_problem
from offload.toolchain.ship import BundleFacts, render_build_sh, target_link_words

pytestmark = pytest.mark.no_toolchain

PRODUCER = "22.1.8"  # the LLVM of this mlir-offload
UNKNOWN = max(available_profiles()) + 1  # a clang without a profile
FORMS = ("portable", "bitcode")


def fake_clang(major: int, machine: dict | None = None) -> Clang:
    path = str(machine["clangs"][major]) if machine else f"/opt/llvm-{major}/bin/clang"
    return Clang(
        path=path,
        version=f"{major}.1.8",
        major=major,
        linker_wrapper=f"/opt/llvm-{major}/bin/clang-linker-wrapper",
        packager=None,
        lld=None,
    )


def link_accepts(profile: int, form: str, clang: int) -> bool:
    host = "bc" if form == "bitcode" else "obj"
    record = BundleRecord(profile, PRODUCER, host, ("cuda:sm_80",))
    return compatibility_problem(record, [], fake_clang(clang)) is None


def doctor_accepts(profile: int, form: str, clang: int, machine: dict) -> bool:
    record = BundleRecord(profile, PRODUCER, "bc" if form == "bitcode" else "obj", ("cuda:sm_80",))
    needs = BundleNeeds(
        name="app", record=record, producer_llvm=22, device_image="bitcode" if form == "bitcode" else "cubin"
    )
    cuda = CudaToolkit("/opt/cuda", "12.8.0", "ptxas", "fatbinary", "nvlink", "libcudart.so")
    findings = bundle_findings(needs, fake_clang(clang, machine), cuda, Rocm(None, None, None), wrapper_shipped=True)
    return not [f for f in findings if f.blocking]


@pytest.fixture(scope="module")
def target_machine(tmp_path_factory) -> dict:
    """Fake clangs of every major (a script printing its version, a linker wrapper beside it) and a CUDA
    folder with the files build.sh looks for: enough for `sh build.sh check`."""
    root = tmp_path_factory.mktemp("target")
    clangs = {}
    for major in [*available_profiles(), UNKNOWN]:
        bindir = root / f"llvm-{major}" / "bin"
        bindir.mkdir(parents=True)
        clang = bindir / "clang"
        clang.write_text(
            f'#!/bin/sh\n[ "$1" = -dumpmachine ] && {{ echo x86_64-pc-linux-gnu; exit 0; }}\n'
            f"echo 'Debian clang version {major}.1.8 (fake)'\n"
        )
        (bindir / "clang-linker-wrapper").write_text("#!/bin/sh\nexit 0\n")
        for tool in (clang, bindir / "clang-linker-wrapper"):
            tool.chmod(0o755)
        clangs[major] = clang
    cuda = root / "cuda"
    (cuda / "bin").mkdir(parents=True)
    (cuda / "lib64").mkdir()
    for tool in ("ptxas", "nvlink", "fatbinary"):
        (cuda / "bin" / tool).write_text("#!/bin/sh\nexit 0\n")
        (cuda / "bin" / tool).chmod(0o755)
    (cuda / "lib64" / "libcudart.so").write_bytes(b"")
    return {"clangs": clangs, "cuda": cuda, "root": root}


def build_sh_accepts(profile: int, form: str, clang: int, machine: dict) -> bool:
    bitcode = form == "bitcode"
    bundle = "app.offload.bc" if bitcode else "app.offload.o"
    record = BundleRecord(profile, PRODUCER, "bc" if bitcode else "obj", ("cuda:sm_80",))
    facts = BundleFacts(
        record,
        f"LLVM{PRODUCER}" if bitcode else None,
        ["k"],
        [
            {
                "offload_kind": "cuda",
                "triple": "nvptx64-nvidia-cuda",
                "arch": "sm_80",
                "image_kind": "bitcode" if bitcode else "cubin",
                "producer": f"LLVM{PRODUCER}" if bitcode else None,
            }
        ],
    )
    p = load_profile(profile)
    script = render_build_sh("app", bundle, facts, p, target_link_words(p, "cuda", bundle), False)
    top = machine["root"] / f"ship-{profile}-{form}-{clang}"
    top.mkdir()
    (top / bundle).write_bytes(b"bundle bytes")
    (top / "build.sh").write_text(script)
    (top / "SHA256SUMS").write_text(
        f"{hashlib.sha256(b'bundle bytes').hexdigest()}  {bundle}\n"  # as ship lists them
        f"{hashlib.sha256(script.encode()).hexdigest()}  build.sh\n"
    )
    done = subprocess.run(
        ["sh", "build.sh", "check"],
        cwd=top,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "CLANG": str(machine["clangs"][clang]), "CUDA_PATH": str(machine["cuda"])},
    )
    if done.returncode == 0:
        assert "app: ready to link" in done.stdout
    else:
        assert "error:" in done.stderr and "nothing was built" in done.stderr, done.stderr
    return done.returncode == 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("profile", available_profiles())
def test_link_doctor_and_build_sh_agree_for_every_clang(profile, form, target_machine):
    for clang in [*available_profiles(), UNKNOWN]:
        expected = link_refusals(profile, 22 if form == "bitcode" else None, clang) == ()
        verdicts = {
            "link": link_accepts(profile, form, clang),
            "doctor": doctor_accepts(profile, form, clang, target_machine),
            "build.sh": build_sh_accepts(profile, form, clang, target_machine),
        }
        assert verdicts == dict.fromkeys(verdicts, expected), (profile, form, clang)


def test_the_rule_itself():
    # clang 21 and 22 share the v1 layout and kind values: either links the other's portable bundle.
    assert link_refusals(21, None, 22) == () and link_refusals(22, None, 21) == ()
    # LLVM 22 bitcode: clang 22 reads it, clang 21 does not.
    assert link_refusals(21, 22, 22) == () and link_refusals(22, 22, 21) == ("bitcode",)
    # clang 19's legacy layout and HIP kind 3 differ from 21/22's both ways.
    assert link_refusals(19, None, 22) == ("entries",) and link_refusals(22, None, 19) == ("entries",)
    assert link_refusals(22, 22, 19) == ("entries", "bitcode")
    assert link_refusals(22, None, UNKNOWN) == ("no-profile",)


def test_verify_names_the_clangs_the_rule_accepts():
    from offload.formats.profiles import clangs_registering

    # verify's "entries for clang ..." names exactly the clangs link accepts for a portable bundle.
    for profile in available_profiles():
        assert clangs_registering(profile) == [c for c in available_profiles() if link_accepts(profile, "portable", c)]
    assert clangs_registering(21) == [21, 22] and clangs_registering(19) == [19]
