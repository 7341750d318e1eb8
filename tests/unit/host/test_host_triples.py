"""--host-triple: spellings and refusals, the launch ABI against clang 22's own host IR for each triple,
device images that do not depend on the host, and the host triple in the bundle record."""

from __future__ import annotations

import platform

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"
COMPAT_HEADERS = REPO / "examples" / "hpc-make" / "compat"
TRIPLES = ("x86_64-linux-gnu", "aarch64-linux-gnu")
# One extern "C" kernel launched with <<<>>>: clang's stub shows how it passes dim3 to cudaLaunchKernel.
LAUNCH_CU = 'extern "C" __global__ void k(int n, float a, float *x) { if (threadIdx.x < n) x[threadIdx.x] *= a; }\n'


@pytest.mark.no_toolchain
@pytest.mark.parametrize(
    "spelling, name",
    [
        ("aarch64", "aarch64-linux-gnu"),
        ("arm64", "aarch64-linux-gnu"),
        ("AArch64-Unknown-Linux-GNU", "aarch64-linux-gnu"),
        ("sbsa-linux", "aarch64-linux-gnu"),
        ("x86_64", "x86_64-linux-gnu"),
        ("amd64", "x86_64-linux-gnu"),
        ("x86_64-pc-linux-gnu", "x86_64-linux-gnu"),
        ("x86_64-linux-gnu", "x86_64-linux-gnu"),
        ("arm64-unknown-linux-gnu", "aarch64-linux-gnu"),
        ("aarch64-linux", "aarch64-linux-gnu"),
    ],
)
def test_host_triple_spellings_normalise(spelling, name):
    from offload.formats.hosts import host_triple

    assert host_triple(spelling).name == name


@pytest.mark.no_toolchain
def test_default_is_this_machine_and_others_are_refused_with_the_list():
    from offload.errors import OffloadError
    from offload.formats.hosts import build_machine_host, host_triple

    assert platform.machine() in build_machine_host().machines
    with pytest.raises(
        OffloadError,
        match=r"unsupported host triple 'riscv64-linux-gnu' \(supported: "
        r"x86_64-linux-gnu, aarch64-linux-gnu\)",
    ):
        host_triple("riscv64-linux-gnu")
    for other in ("aarch64-apple-darwin", "x86_64-linux-musl", "x86_64-pc-windows-msvc", "arm-linux-gnueabihf"):
        with pytest.raises(OffloadError, match="supported: x86_64-linux-gnu, aarch64-linux-gnu"):
            host_triple(other)


def test_compile_refuses_an_unsupported_triple_before_any_work(tmp_path):
    out = tmp_path / "x.offload.bc"
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80", "--host-triple", "powerpc64le-linux-gnu", "-o", str(out)
    )
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.strip() == (
        "mlir-offload: error: unsupported host triple 'powerpc64le-linux-gnu' "
        "(supported: x86_64-linux-gnu, aarch64-linux-gnu)"
    )


def test_host_triple_from_mlir_offload_toml(tmp_path):
    from offload.packager.bundle import read_bundle_record

    (tmp_path / "mlir-offload.toml").write_text('host-triple = "arm64"\n')
    source = tmp_path / "saxpy.mlir"
    source.write_text(SAXPY.read_text())
    out = tmp_path / "saxpy.offload.bc"
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(out))
    assert done.returncode == 0, done.stderr
    record, _ = read_bundle_record(out.read_bytes(), str(out))
    assert record.host_triple == "aarch64-linux-gnu"
    (tmp_path / "mlir-offload.toml").write_text('host-triple = "mips"\n')
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(out))
    assert done.returncode == 1 and "supported host triple (x86_64-linux-gnu, aarch64-linux-gnu)" in done.stderr


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """saxpy for sm_80 and sm_90 as textual IR and as bitcode, for each host triple; each build makes its
    own device images (--no-cache), so images equal across hosts are equal because they are built so."""
    tmp = tmp_path_factory.mktemp("hosts")
    out = {}
    for triple in TRIPLES:
        for suffix, extra in (("ll", ["-S"]), ("bc", [])):
            path = tmp / f"saxpy.{triple}.{suffix}"
            done = run_cli(
                "compile",
                str(SAXPY),
                "--offload-arch",
                "sm_80,sm_90",
                "--host-triple",
                triple,
                "--no-cache",
                *extra,
                "-o",
                str(path),
            )
            assert done.returncode == 0, done.stderr
            out[triple, suffix] = path
    return out


def clang_host_ir(tmp_path, triple: str):
    """clang 22's host IR of LAUNCH_CU for `triple` (llvmlite module)."""
    import llvmlite.binding as llvm

    clang = require_tool("clang-22", 22)
    require_tool("ptxas")
    source, out = tmp_path / "k.cu", tmp_path / f"k.{triple}.ll"
    source.write_text(LAUNCH_CU)
    import subprocess

    done = subprocess.run(
        [
            clang,
            "-S",
            "-emit-llvm",
            f"--target={triple}",
            "-x",
            "cuda",
            "--cuda-host-only",
            "-fgpu-rdc",
            "--offload-new-driver",
            "--cuda-path=/usr/local/cuda",
            f"-I{COMPAT_HEADERS}",
            "-Wno-unknown-cuda-version",
            "-O1",
            str(source),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # A context of its own: named structs parsed into the global one would rename other tests' types.
    return llvm.parse_assembly(out.read_text(), context=llvm.create_context())


@pytest.mark.parametrize("triple", TRIPLES)
def test_launch_abi_and_data_layout_are_clangs(bundles, tmp_path, triple):
    import llvmlite.binding as llvm

    clang = clang_host_ir(tmp_path, triple)
    ours = llvm.parse_assembly(bundles[triple, "ll"].read_text(), context=llvm.create_context())
    assert ours.data_layout == clang.data_layout
    assert ours.triple.split("-")[0] == clang.triple.split("-")[0] == triple.split("-")[0]
    launch_type = lambda module: str(module.get_function("cudaLaunchKernel").global_value_type)  # noqa: E731
    assert launch_type(ours) == launch_type(clang)
    expected = {
        "x86_64-linux-gnu": "i32 (ptr, i64, i32, i64, i32, ptr, i64, ptr)",
        "aarch64-linux-gnu": "i32 (ptr, [2 x i64], [2 x i64], ptr, i64, ptr)",
    }[triple]
    assert launch_type(ours) == expected


def test_device_images_do_not_depend_on_the_host(bundles):
    from offload.packager.bundle import read_bundle_record

    read = {t: read_bundle_record(bundles[t, "bc"].read_bytes(), t) for t in TRIPLES}
    (x86_record, x86_images), (arm_record, arm_images) = read[TRIPLES[0]], read[TRIPLES[1]]
    assert (x86_record.host_triple, arm_record.host_triple) == TRIPLES
    assert [i.strings["arch"] for i in x86_images] == [i.strings["arch"] for i in arm_images] == ["sm_80", "sm_90"]
    assert [i.data for i in x86_images] == [i.data for i in arm_images]
    assert [i.image_kind for i in x86_images] == [i.image_kind for i in arm_images]


def test_config_flags_for_an_aarch64_host_cross_link(tmp_path):
    """host-triple in mlir-offload.toml: --cflags/--ldflags target that CPU and its CUDA library folder."""
    require_tool("ptxas")
    if platform.machine() in ("aarch64", "arm64"):
        pytest.skip("aarch64 is this machine's own host: no cross --target")
    (tmp_path / "mlir-offload.toml").write_text('host-triple = "aarch64-linux-gnu"\ncuda-path = "/usr/local/cuda"\n')
    done = run_cli("config", "--ldflags", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    assert words[0] == "--target=aarch64-linux-gnu" and "-L/usr/local/cuda/targets/sbsa-linux/lib" in words
    assert not any(w.endswith("/lib64") for w in words)
