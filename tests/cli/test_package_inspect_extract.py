"""The package / inspect / extract commands as a user runs them: output, errors, safety."""

from __future__ import annotations

import json
import os

import pytest

from conftest import run_cli
from offload.packager import OffloadImage, read_binary, write_binary
from packager_inputs import host_module_embedding, make_inputs

NV = "triple=nvptx64-nvidia-cuda"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("packager_cli_inputs"))


def one_line_error(r, code=1, prefix="mlir-offload: error: "):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def test_package_inspect_extract(inputs, tmp_path):
    out = tmp_path / "app.offload.bin"
    r = run_cli(
        "package",
        "-o",
        str(out),
        f"--image=file={inputs['dev.bc']},{NV},arch=sm_80,kind=cuda,foo=bar",
        f"--image=file={inputs['dev.cubin']},{NV},arch=sm_80,kind=cuda",
    )
    assert r.returncode == 0, r.stderr

    r = run_cli("inspect", str(out), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    first, second = report["images"]
    assert first["offload_kind"]["name"] == "cuda" and first["offload_kind"]["value"] == 2
    assert first["image_kind"] == {"name": "bitcode", "value": 2}
    assert first["triple"] == "nvptx64-nvidia-cuda" and first["arch"] == "sm_80"
    assert first["strings"]["foo"] == "bar"
    assert first["producer"].startswith("LLVM22.")
    assert second["image_kind"]["name"] == "cubin" and "producer" not in second
    assert second["size"] == len(inputs["dev.cubin"].read_bytes())

    text = run_cli("inspect", str(out))
    assert text.returncode == 0
    assert "offload kind  cuda (2;" in text.stdout and "image kind    cubin (3)" in text.stdout
    assert "string        foo=bar" in text.stdout and "producer      LLVM22." in text.stdout
    assert text.stdout == run_cli("inspect", str(out)).stdout  # deterministic

    r = run_cli("extract", str(out), "-o", str(tmp_path / "x"))
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "x")) == ["0-cuda-sm_80.bc", "1-cuda-sm_80.cubin"]
    assert (tmp_path / "x" / "1-cuda-sm_80.cubin").read_bytes() == inputs["dev.cubin"].read_bytes()


def test_package_is_deterministic(inputs, tmp_path):
    args = [f"--image=file={inputs['hip.bc']},triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip,z=1,a=2"]
    assert run_cli("package", "-o", str(tmp_path / "a"), *args).returncode == 0
    assert run_cli("package", "-o", str(tmp_path / "b"), *args).returncode == 0
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    assert read_binary((tmp_path / "a").read_bytes())[0].offload_kind == 4
    assert run_cli("package", "-o", str(tmp_path / "c"), "--target-clang", "19", *args).returncode == 0
    assert read_binary((tmp_path / "c").read_bytes())[0].offload_kind == 3


@pytest.mark.parametrize(
    "spec, message",
    [
        ("file=MISSING,triple=t,arch=a,kind=cuda", "no such file"),
        ("file=DEV,triple=t,arch=a,kind=sycl-ish", "unknown offload kind 'sycl-ish'"),
        ("file=DEV,arch=a,kind=cuda", "missing triple="),
        ("file=DEV,triple=t,kind=cuda", "missing arch="),
        ("file=DEV,triple=t,arch=a", "missing kind="),
        ("triple=t,arch=a,kind=cuda", "missing file="),
        ("file=TEXT,triple=t,arch=a,kind=cuda", "unrecognized image content"),
        ("file=TEXT,triple=t,arch=a,kind=cuda,image-kind=banana", "unknown image kind 'banana'"),
        ("file=DEV,file=DEV,triple=t,arch=a,kind=cuda", "'file' given twice"),
    ],
)
def test_package_errors_leave_no_output(inputs, tmp_path, spec, message):
    (tmp_path / "notes.txt").write_text("just some text\n")
    spec = (
        spec.replace("MISSING", str(tmp_path / "missing.bc"))
        .replace("DEV", str(inputs["dev.bc"]))
        .replace("TEXT", str(tmp_path / "notes.txt"))
    )
    out = tmp_path / "out.bin"
    line = one_line_error(run_cli("package", "-o", str(out), f"--image={spec}"))
    assert message in line
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]  # no temporary file left either


@pytest.mark.no_toolchain
def test_explicit_image_kind_packages_unknown_content(tmp_path):
    (tmp_path / "blob.dat").write_bytes(b"\x01\x02\x03")
    r = run_cli(
        "package",
        "-o",
        str(tmp_path / "o.bin"),
        f"--image=file={tmp_path / 'blob.dat'},{NV},arch=sm_80,kind=cuda,image-kind=object",
    )
    assert r.returncode == 0, r.stderr
    (image,) = read_binary((tmp_path / "o.bin").read_bytes())
    assert image.image_kind == 1 and "image-kind" not in image.strings and image.data == b"\x01\x02\x03"


def test_unwritable_output_and_bad_target_clang(inputs, tmp_path):
    spec = f"--image=file={inputs['dev.bc']},{NV},arch=sm_80,kind=cuda"
    assert "cannot write" in one_line_error(run_cli("package", "-o", str(tmp_path / "no" / "dir" / "o.bin"), spec))
    assert "no profile for target clang 7" in one_line_error(
        run_cli("package", "-o", str(tmp_path / "o.bin"), "--target-clang", "7", spec)
    )
    assert not (tmp_path / "o.bin").exists()


@pytest.mark.no_toolchain
def test_usage_errors_exit_2(tmp_path):
    one_line_error(run_cli("package", "-o", str(tmp_path / "o.bin")), code=2)
    one_line_error(run_cli("package", "--image=file=x"), code=2)
    one_line_error(run_cli("inspect"), code=2)
    one_line_error(run_cli("extract", str(tmp_path / "x.bin")), code=2)


@pytest.mark.no_toolchain
def test_inspect_and_extract_errors(tmp_path):
    assert "no such file" in one_line_error(run_cli("inspect", str(tmp_path / "missing.bin")))
    (tmp_path / "bad.bin").write_bytes(b"\x10\xff\x10\xad" + b"\xff" * 40)
    assert "version" in one_line_error(run_cli("inspect", str(tmp_path / "bad.bin")))
    (tmp_path / "plain.ll").write_text("define void @f() {\n  ret void\n}\n")
    assert "contains no offloading images" in one_line_error(
        run_cli("extract", str(tmp_path / "plain.ll"), "-o", str(tmp_path / "out"))
    )
    assert not (tmp_path / "out").exists()


HOSTILE_ARCHS = [
    "../../../etc/passwd",
    "/abs/path",
    "..",
    ".",
    "a/b\\c",
    "x" * 5000,
    "sm_80\nline",
    "\x1b[31mred",
    "..\\..\\win",
    "名前",
    "",
]


@pytest.mark.no_toolchain
def test_extract_never_escapes_dir(tmp_path):
    images = [
        OffloadImage(2, 2, 0, {"triple": "../../t", "arch": arch}, f"image {i}".encode())
        for i, arch in enumerate(HOSTILE_ARCHS)
    ]
    images.append(OffloadImage(9, 0xFFFF, 0, {"triple": "/", "arch": "/etc/x"}, b"odd kinds"))
    blob = tmp_path / "hostile.bin"
    blob.write_bytes(write_binary(images))
    out = tmp_path / "deep" / "out"
    r = run_cli("extract", str(blob), "-o", str(out))
    assert r.returncode == 0, r.stderr
    written = sorted(os.listdir(out), key=lambda n: int(n.split("-")[0]))
    assert len(written) == len(images)
    for index, name in enumerate(written):
        assert name.startswith(f"{index}-") and "/" not in name and "\\" not in name
        assert len(name) < 100 and name.isprintable()
        assert (out / name).read_bytes() == images[index].data
    assert written[-1] == f"{len(images) - 1}-unknown-_etc_x.bin"
    # nothing was written anywhere else
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "hostile.bin"]
    assert os.listdir(tmp_path / "deep") == ["out"]


def test_inspect_reads_bitcode_embedding(inputs, tmp_path):
    import llvmlite.binding as llvm

    blob = write_binary(
        [OffloadImage(2, 2, 0, {"triple": "nvptx64-nvidia-cuda", "arch": "sm_90"}, inputs["dev.bc"].read_bytes())]
    )
    module = host_module_embedding(blob)
    (tmp_path / "host.bc").write_bytes(llvm.parse_assembly(str(module)).as_bitcode())
    r = run_cli("inspect", str(tmp_path / "host.bc"), "--json")
    assert r.returncode == 0, r.stderr
    (image,) = json.loads(r.stdout)["images"]
    assert image["arch"] == "sm_90" and image["producer"].startswith("LLVM22.")
