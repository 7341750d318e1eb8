"""PTX for forward compatibility inside the executable: `compile --portable` writes <out>.<arch>.ptx,
and the target link (`mlir-offload link --ptx`, a shipped build.sh) adds each as a `kind=ptx` image to
the executable's .nv_fatbin beside the arch's cubin, through offload/data/scripts/fatbinary (clang 22: via
-Wl,--cuda-path; clang 19: via PATH). Checked in the fatbin itself, by `verify`, and by the fake CUDA
runtime that logs the entries of the fatbin it is handed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from ship_archive import run_make, scrubbed_env, unpack

SAXPY = REPO / "examples" / "saxpy.mlir"
WRAPPER = REPO / "offload" / "data" / "scripts" / "fatbinary"

# name -> (ship flags, clang on the target, archs)
SHIPS = {
    "ptx22": (["--offload-arch", "sm_80,sm_90", "--target-clang", "22", "--portable"], "clang-22", ["sm_80", "sm_90"]),
    "ptx19": (["--offload-arch", "sm_80", "--target-clang", "19", "--portable"], "clang-19", ["sm_80"]),
    "compute22": (["--offload-arch", "compute_80", "--target-clang", "22"], "clang-22", ["sm_80"]),
}


def _fatbin_images(exe: Path) -> list[tuple[str, str]]:
    """(kind, arch) of every image in the executable's .nv_fatbin, e.g. ("ptx", "compute_80")."""
    from offload.toolchain.executable import CUDA_FATBIN_SECTION, read_executable

    images = read_executable(str(exe)).device_sections[CUDA_FATBIN_SECTION]
    assert not any(i.compressed for i in images)  # PTX is stored uncompressed so that verify can read it
    return sorted((i.kind, i.arch) for i in images)


def _expected(archs: list[str]) -> list[tuple[str, str]]:
    return sorted([("elf", a) for a in archs] + [("ptx", "compute_" + a[3:]) for a in archs])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """name -> (unpacked folder, make result): each archive built by make in a scrubbed environment."""
    require_tool("ptxas")
    work = tmp_path_factory.mktemp("ship-ptx")
    out = {}
    for name, (flags, clang, _) in SHIPS.items():
        require_tool(clang, int(clang.split("-")[1]))
        archive = work / f"{name}.tar.gz"
        result = run_cli("ship", str(SAXPY), *flags, "-o", str(archive))
        assert result.returncode == 0, result.stderr
        # A build folder with a space: the PTX paths the wrapper gets are relative to it.
        top = unpack(archive, work / f"unpacked {name}")
        (work / f"env-{name}").mkdir()
        env = scrubbed_env(work / f"env-{name}")
        out[name] = (top, run_make(top, env, f"CLANG={clang}", "APP=saxpy"), env)
    return out


@pytest.mark.parametrize("name", ["ptx22", "ptx19"])
def test_shipped_executable_carries_cubin_and_ptx_per_arch(built, fake_cuda, name):
    top, made, env = built[name]
    archs = SHIPS[name][2]
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"PTX for {' '.join(archs)}" in made.stdout
    assert not Path(env["HOME"], "python-was-run").exists()
    assert sorted((top / "ptx").iterdir()) == [top / "ptx" / f"{name}.{a}.ptx" for a in archs]
    assert (top / "tools" / "bin" / "fatbinary").stat().st_mode & 0o111
    assert _fatbin_images(top / "saxpy") == _expected(archs)

    verified = run_cli("verify", str(top / "saxpy"))
    assert verified.returncode == 0, verified.stderr
    for arch in archs:
        assert f"PTX for compute_{arch[3:]}: forward compatibility to newer GPUs" in verified.stdout
    # 1 kernel x (cubin + PTX) per arch: the kernel was found in the PTX text too.
    assert f"{2 * len(archs)} symbol/image check(s) passed" in verified.stdout

    # The fake runtime is handed the fatbin at registration and logs its entries.
    run = fake_cuda.run(top / "saxpy")
    assert run.kernels_registered() == ["saxpy"]
    (fatbin,) = run.fatbins()
    logged = sorted((i["kind"], i["sm"], i["compressed"]) for i in fatbin["images"])
    assert logged == sorted([("elf", int(a[3:]), False) for a in archs] + [("ptx", int(a[3:]), False) for a in archs])


def test_shipped_build_sh_names_the_ptx(built):
    top, _, _ = built["ptx22"]
    script = (top / "build.sh").read_text()
    assert "PTX_IMAGES='sm_80=ptx/ptx22.sm_80.ptx\nsm_90=ptx/ptx22.sm_90.ptx'" in script
    assert "FATBINARY_LOOKUP='cuda_path'" in script
    assert "FATBINARY_LOOKUP='path'" in (built["ptx19"][0] / "build.sh").read_text()


# ---- mlir-offload link --ptx -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def portable_bundle(tmp_path_factory):
    require_tool("ptxas")
    work = tmp_path_factory.mktemp("link-ptx")
    bundle = work / "saxpy.o"
    result = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80,sm_90", "--target-clang", "22", "--portable", "-o", str(bundle)
    )
    assert result.returncode == 0, result.stderr
    return bundle


def test_link_ptx_adds_a_ptx_image_per_arch(portable_bundle, tmp_path):
    require_tool("clang-22", 22)
    app = tmp_path / "app"
    ptx = [f"{portable_bundle}.sm_80.ptx", f"{portable_bundle}.sm_90.ptx"]
    result = run_cli("link", str(portable_bundle), "--ptx", ptx[0], f"--ptx={ptx[1]}", "-o", str(app))
    assert result.returncode == 0, result.stderr
    assert _fatbin_images(app) == _expected(["sm_80", "sm_90"])
    verified = run_cli("verify", str(app))
    assert "PTX for compute_90: forward compatibility to newer GPUs" in verified.stdout


def test_link_ptx_for_one_arch_and_dry_run(portable_bundle, tmp_path):
    require_tool("clang-22", 22)
    app = tmp_path / "app"
    ptx = f"{portable_bundle}.sm_90.ptx"
    dry = run_cli("link", str(portable_bundle), "--ptx", ptx, "-o", str(app), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"MLIR_OFFLOAD_PTX=sm_90={ptx} " in dry.stdout
    assert f"-Wl,--cuda-path={WRAPPER.parent}" in dry.stdout and not app.exists()
    result = run_cli("link", str(portable_bundle), "--ptx", ptx, "-o", str(app))
    assert result.returncode == 0, result.stderr
    assert _fatbin_images(app) == sorted([("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "compute_90")])


def test_link_without_ptx_has_sass_only(portable_bundle, tmp_path):
    from offload.toolchain.ptx import PtxImage, missing_ptx

    require_tool("clang-22", 22)
    app = tmp_path / "app"
    assert run_cli("link", str(portable_bundle), "-o", str(app)).returncode == 0
    assert _fatbin_images(app) == [("elf", "sm_80"), ("elf", "sm_90")]
    assert "PTX for" not in run_cli("verify", str(app)).stdout
    # What link checks after linking with --ptx: the executable names the arch whose PTX is missing.
    assert missing_ptx(str(app), [PtxImage("sm_80", "x.ptx")]) == ["sm_80"]


def test_link_warns_when_other_inputs_carry_device_code(portable_bundle, tmp_path):
    require_tool("clang-22", 22)
    other = tmp_path / "other.o"
    assert (
        run_cli(
            "compile",
            str(SAXPY),
            "--offload-arch",
            "sm_80",
            "--target-clang",
            "22",
            "--host-format",
            "obj",
            "--device-image",
            "cubin",
            "-o",
            str(other),
        ).returncode
        == 0
    )
    plain = tmp_path / "plain.o"
    subprocess.run(
        [require_tool("clang-22", 22), "-c", "-x", "c", "-", "-o", str(plain)],
        input="int f(void){return 1;}",
        text=True,
        check=True,
    )
    result = run_cli(
        "link",
        str(portable_bundle),
        str(other),
        str(plain),
        "--ptx",
        f"{portable_bundle}.sm_80.ptx",
        "-o",
        str(tmp_path / "app"),
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"{other} carries device code too" in warnings[0]
    assert "covers only" in warnings[0] and "sm_80" in warnings[0]


def test_link_ptx_errors(portable_bundle, tmp_path):
    require_tool("clang-22", 22)
    app = tmp_path / "app"
    text80 = Path(f"{portable_bundle}.sm_80.ptx").read_text()
    cases = {
        "other-arch.ptx": (
            text80.replace(".target sm_80", ".target sm_75"),
            "PTX for sm_75, but " + str(portable_bundle) + " has sm_80, sm_90",
        ),
        "not-ptx.ptx": ("just text\n", "not PTX for an NVIDIA GPU (no '.target sm_XX' directive)"),
        "extern.ptx": (
            text80 + "\n.extern .func (.param .b32 r) helper_twice\n(\n.param .b32 a\n);\n",
            "the PTX calls helper_twice defined elsewhere",
        ),
    }
    for file_name, (text, message) in cases.items():
        path = tmp_path / file_name
        path.write_text(text)
        result = run_cli("link", str(portable_bundle), "--ptx", str(path), "-o", str(app))
        assert result.returncode == 1 and message in result.stderr, (file_name, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        assert not app.exists()
    twice = run_cli(
        "link",
        str(portable_bundle),
        "--ptx",
        f"{portable_bundle}.sm_80.ptx",
        "--ptx",
        f"{portable_bundle}.sm_80.ptx",
        "-o",
        str(app),
    )
    assert twice.returncode == 1 and "a second PTX file for sm_80" in twice.stderr
    missing = run_cli("link", str(portable_bundle), "--ptx", "-o", str(app))
    assert missing.returncode == 2 and "option '--ptx' requires a value" in missing.stderr
    assert not app.exists()


# ---- the wrapper alone ---------------------------------------------------------------------------


@pytest.fixture
def recording_fatbinary(tmp_path) -> tuple[Path, Path]:
    record = tmp_path / "args.txt"
    script = tmp_path / "real-fatbinary"
    script.write_text(f'#!/bin/sh\nfor a do printf "%s\\n" "$a"; done > {record}\n')
    script.chmod(0o755)
    return script, record


def _wrapper(
    args: list[str], ptx: str, real: Path, via_link: bool = False, ptx_only: str | None = None
) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "MLIR_OFFLOAD_PTX": ptx, "MLIR_OFFLOAD_FATBINARY": str(real)}
    if ptx_only is not None:
        env["MLIR_OFFLOAD_PTX_ONLY"] = ptx_only
    # offload/data/scripts/bin/fatbinary is the same script, for linker wrappers that look in <cuda-path>/bin.
    program = WRAPPER.parent / "bin" / "fatbinary" if via_link else WRAPPER
    return subprocess.run([str(program), *args], env=env, capture_output=True, text=True)


@pytest.mark.parametrize("via_link", [False, True])
def test_wrapper_adds_ptx_images(recording_fatbinary, tmp_path, via_link):
    real, record = recording_fatbinary
    a, b = tmp_path / "a b.sm_80.ptx", tmp_path / "c.sm_90.ptx"
    a.write_text(".target sm_80\n")
    b.write_text(".target sm_90\n")
    result = _wrapper(
        ["-64", "--create", "out.fatbin", "--image=profile=sm_80,file=k.img"], f"sm_80={a}\nsm_90={b}", real, via_link
    )
    assert result.returncode == 0, result.stderr
    assert record.read_text().splitlines() == [
        "-64",
        "--create",
        "out.fatbin",
        "--image3=kind=elf,sm=80,file=k.img",
        f"--image3=kind=ptx,sm=80,file={a}",
        f"--image3=kind=ptx,sm=90,file={b}",
        "--compress=false",
    ]


def test_wrapper_refuses_bad_ptx_entries(recording_fatbinary, tmp_path):
    real, record = recording_fatbinary
    for ptx, message in (
        ("compute_80=x.ptx", "is not sm_XX=FILE"),
        (f"sm_80={tmp_path}/missing.ptx", "is not readable"),
        ("sm_80=a,b.ptx", "has a comma"),
    ):
        result = _wrapper(["--create", "o"], ptx, real)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert not record.exists()
    itself = subprocess.run(
        [str(WRAPPER), "--create", "o"],
        env={"PATH": "/usr/bin:/bin", "MLIR_OFFLOAD_FATBINARY": str(WRAPPER.parent / "bin" / "fatbinary")},
        capture_output=True,
        text=True,
    )
    assert itself.returncode == 127 and itself.stderr.count("error") == 1 and "is not a real fatbinary" in itself.stderr
    assert os.path.samefile(WRAPPER, WRAPPER.parent / "bin" / "fatbinary")


@pytest.mark.parametrize("image", ["--image=profile=sm_80,file=k80.img", "--image3=kind=elf,sm=80,file=k80.img"])
def test_wrapper_drops_the_cubin_of_ptx_only_archs(recording_fatbinary, tmp_path, image):
    real, record = recording_fatbinary
    a = tmp_path / "a.sm_80.ptx"
    a.write_text(".target sm_80\n")
    result = _wrapper(
        ["--create", "out.fatbin", image, "--image3=kind=elf,sm=90,file=k90.img"], f"sm_80={a}", real, ptx_only="sm_80"
    )
    assert result.returncode == 0, result.stderr
    assert record.read_text().splitlines() == [
        "--create",
        "out.fatbin",
        "--image3=kind=elf,sm=90,file=k90.img",
        f"--image3=kind=ptx,sm=80,file={a}",
        "--compress=false",
    ]


def test_wrapper_refuses_ptx_only_without_its_ptx(recording_fatbinary, tmp_path):
    real, record = recording_fatbinary
    for ptx_only, message in (("sm_90", "MLIR_OFFLOAD_PTX has no PTX for it"), ("compute_80", "is not sm_XX")):
        result = _wrapper(["--create", "o", "--image3=kind=elf,sm=90,file=k.img"], "", real, ptx_only=ptx_only)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert not record.exists()


def test_compute_arch_links_ptx_only(tmp_path, fake_cuda):
    """--offload-arch compute_80 is nvcc's virtual arch: the bundle records it, link adds the PTX compile wrote
    beside it and the fatbinary wrapper drops the sm_80 cubin, so the driver JIT-compiles the PTX."""
    require_tool("ptxas")
    require_tool("clang-22", 22)
    bundle, app = tmp_path / "saxpy.offload.bc", tmp_path / "saxpy"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "compute_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    linked = run_cli("link", str(bundle), "-o", str(app))
    assert linked.returncode == 0, linked.stderr
    assert _fatbin_images(app) == [("ptx", "compute_80")]
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "PTX for compute_80" in verified.stdout and "1 symbol/image check(s) passed" in verified.stdout
    listing = run_cli("inspect", str(app))
    assert listing.returncode == 0, listing.stderr
    assert "compute_80" in listing.stdout and "sm_80" not in listing.stdout
    run = fake_cuda.run(app)
    assert run.kernels_registered() == ["saxpy"] and len(run.launches()) == 1
    (fatbin,) = run.fatbins()
    assert [(i["kind"], i["sm"]) for i in fatbin["images"]] == [("ptx", 80)]


def test_compute_arch_beside_a_real_arch_changes_only_what_it_must(tmp_path):
    """compute_80,sm_90: sm_90 keeps its bitcode image (device LTO at link, its SASS alone in the fatbin),
    compute_80 becomes PTX only; no compute_90 PTX nobody asked for, and inspect says compute_80."""
    require_tool("ptxas")
    require_tool("clang-22", 22)
    bundle, app = tmp_path / "saxpy.offload.bc", tmp_path / "saxpy"
    assert run_cli("compile", str(SAXPY), "--offload-arch", "compute_80,sm_90", "-o", str(bundle)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saxpy.offload.bc", "saxpy.offload.bc.sm_80.ptx"]
    listing = run_cli("inspect", str(bundle), "--json")
    images = {image["arch"]: image for image in json.loads(listing.stdout)["images"]}
    assert images["sm_90"]["image_kind"]["name"] == "bitcode" and "ships_as" not in images["sm_90"]
    assert images["sm_80"]["image_kind"]["name"] == "cubin" and images["sm_80"]["ships_as"] == "compute_80"
    assert "ships as      compute_80" in run_cli("inspect", str(bundle)).stdout
    dry = run_cli("link", str(bundle), "-o", str(app), "--dry-run")
    assert "MLIR_OFFLOAD_PTX_ONLY=sm_80 " in dry.stdout, dry.stdout + dry.stderr
    assert run_cli("link", str(bundle), "-o", str(app)).returncode == 0
    assert _fatbin_images(app) == [("elf", "sm_90"), ("ptx", "compute_80")]
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stderr
    assert ".nv_fatbin: 2 device image(s) for compute_80, sm_90" in verified.stdout


@pytest.mark.parametrize(
    "flags, message",
    [
        (
            ["--device-image=bitcode"],
            "compute_80 is PTX only, which --device-image=bitcode leaves out: drop --device-image",
        ),
        (["--device-image=cubin"], "compute_80 is PTX only, which --device-image=cubin leaves out"),
        (["--emulate"], "--emulate runs the bitcode image of an sm_XX arch; compute_80 is PTX only"),
    ],
)
def test_compute_arch_with_a_format_without_ptx_is_refused(tmp_path, flags, message):
    """Never a bundle whose PTX was dropped silently (verify then showed sm_80 alone)."""
    bundle = tmp_path / "saxpy.offload.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "compute_80", *flags, "-o", str(bundle))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"mlir-offload: error: {message}"), line
    assert not bundle.exists() and list(tmp_path.iterdir()) == []


def test_shipped_compute_arch_builds_ptx_only(built, fake_cuda):
    top, made, _ = built["compute22"]
    assert made.returncode == 0, made.stdout + made.stderr
    assert "PTX_ONLY='sm_80'" in (top / "build.sh").read_text()
    assert _fatbin_images(top / "saxpy") == [("ptx", "compute_80")]
    assert run_cli("verify", str(top / "saxpy")).returncode == 0
    run = fake_cuda.run(top / "saxpy")
    assert run.kernels_registered() == ["saxpy"] and len(run.launches()) == 1
