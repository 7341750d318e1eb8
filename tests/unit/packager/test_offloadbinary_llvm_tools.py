"""Byte identity with LLVM's own packagers (llvm-offload-binary 22, clang-offload-packager 19), our
reader on their output, and llvm-objdump reading an object that embeds our blob."""

from __future__ import annotations

import random
import subprocess

import pytest

from conftest import require_tool, run_cli
from offload.packager import ImageKind, read_binary, read_offload_images, write_binary
from packager_inputs import host_module_embedding, make_inputs

NV = "triple=nvptx64-nvidia-cuda"
AMD = "triple=amdgcn-amd-amdhsa"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("packager_inputs"))


@pytest.fixture(scope="module")
def tools():
    return {22: require_tool("llvm-offload-binary-22", 22), 19: require_tool("clang-offload-packager-19", 19)}


def tool_and_ours(tools, tmp_path, llvm_major: int, images: list[str]) -> tuple[bytes, bytes]:
    theirs, ours = tmp_path / f"theirs{llvm_major}.bin", tmp_path / f"ours{llvm_major}.bin"
    subprocess.run(
        [tools[llvm_major], "-o", str(theirs), *[f"--image={i}" for i in images]], check=True, capture_output=True
    )
    r = run_cli("package", "-o", str(ours), "--target-clang", str(llvm_major), *[f"--image={i}" for i in images])
    assert r.returncode == 0, r.stderr
    return theirs.read_bytes(), ours.read_bytes()


CASES = {
    "one bitcode image": lambda f: [f"file={f['dev.bc']},{NV},arch=sm_80,kind=cuda"],
    "two archs": lambda f: [
        f"file={f['dev.bc']},{NV},arch=sm_80,kind=cuda",
        f"file={f['dev.bc']},{NV},arch=sm_90,kind=cuda",
    ],
    "extra keys": lambda f: [
        f"file={f['dev.bc']},{NV},arch=sm_80,kind=cuda,feature=+ptx80,foo=bar,x=sm_80,empty=,producer=mlir-offload"
    ],
    "cubin made with ptxas": lambda f: [f"file={f['dev.cubin']},{NV},arch=sm_80,kind=cuda"],
    "PTX": lambda f: [f"file={f['dev.s']},{NV},arch=sm_80,kind=cuda"],
    "HIP image": lambda f: [f"file={f['hip.bc']},{AMD},arch=gfx90a,kind=hip"],
    "openmp": lambda f: [f"file={f['dev.bc']},{NV},arch=sm_80,kind=openmp"],
    "mixed": lambda f: [
        f"file={f['dev.cubin']},{NV},arch=sm_80,kind=cuda,a=1",
        f"file={f['hip.bc']},{AMD},arch=gfx90a:xnack+,kind=hip",
        f"file={f['dev.bc']},{NV},arch=sm_90,kind=cuda,b=2,c=3",
    ],
}


@pytest.mark.parametrize("llvm_major", [22, 19])
@pytest.mark.parametrize("case", sorted(CASES))
def test_byte_identical_to_llvm_tool(tools, inputs, tmp_path, case, llvm_major):
    theirs, ours = tool_and_ours(tools, tmp_path, llvm_major, CASES[case](inputs))
    assert ours == theirs
    # and our reader reads theirs
    images = read_binary(theirs)
    assert len(images) == len(CASES[case](inputs))
    assert write_binary(images) == theirs


def test_hip_kind_follows_each_tool(tools, inputs, tmp_path):
    spec = [f"file={inputs['hip.bc']},{AMD},arch=gfx90a,kind=hip"]
    for llvm_major, hip in ((19, 3), (22, 4)):
        theirs, ours = tool_and_ours(tools, tmp_path, llvm_major, spec)
        assert read_binary(ours)[0].offload_kind == hip == read_binary(theirs)[0].offload_kind


def test_image_kinds_read_back(tools, inputs, tmp_path):
    _, ours = tool_and_ours(tools, tmp_path, 22, CASES["mixed"](inputs))
    images = read_binary(ours)
    assert [i.image_kind for i in images] == [ImageKind.CUBIN, ImageKind.BITCODE, ImageKind.BITCODE]
    assert [i.arch for i in images] == ["sm_80", "gfx90a:xnack+", "sm_90"]
    assert images[0].data == inputs["dev.cubin"].read_bytes()
    assert dict(sorted(images[2].strings.items())) == {
        "arch": "sm_90",
        "b": "2",
        "c": "3",
        "triple": "nvptx64-nvidia-cuda",
    }


def test_random_extra_keys_in_llvm_order(tools, inputs, tmp_path):
    """Key order is llvm::DenseMap's; random keys of every hash length class, and enough keys to grow."""
    rng = random.Random(20240611)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-+."
    for count in (5, 60):
        keys: list[str] = []
        while len(keys) < count:
            key = "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 200])))
            if key not in keys and key not in ("file", "kind", "triple", "arch", "image-kind"):
                keys.append(key)
        spec = f"file={inputs['dev.bc']},{NV},arch=sm_80,kind=cuda," + ",".join(f"{k}=v{i}" for i, k in enumerate(keys))
        for llvm_major in (22, 19):
            theirs, ours = tool_and_ours(tools, tmp_path, llvm_major, [spec])
            assert ours == theirs, f"{count} keys, LLVM {llvm_major}"


def test_llvm_objdump_reads_an_object_embedding_our_blob(inputs, tmp_path):
    import llvmlite.binding as llvm

    objdump = require_tool("llvm-objdump-22", 22)
    blob_path = tmp_path / "ours.bin"
    r = run_cli(
        "package",
        "-o",
        str(blob_path),
        f"--image=file={inputs['dev.cubin']},{NV},arch=sm_80,kind=cuda",
        f"--image=file={inputs['hip.bc']},{AMD},arch=gfx90a,kind=hip",
    )
    assert r.returncode == 0, r.stderr
    blob = blob_path.read_bytes()
    module = host_module_embedding(blob)
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    machine = llvm.Target.from_triple(module.triple).create_target_machine()
    obj = tmp_path / "host.o"
    obj.write_bytes(machine.emit_object(llvm.parse_assembly(str(module))))

    out = subprocess.run([objdump, "--offloading", str(obj)], capture_output=True, text=True, check=True).stdout
    blocks = out.split("OFFLOADING IMAGE")[1:]
    assert len(blocks) == 2
    assert "kind            cubin" in blocks[0] and "arch            sm_80" in blocks[0]
    assert "producer        cuda" in blocks[0] and "nvptx64-nvidia-cuda" in blocks[0]
    assert "kind            llvm ir" in blocks[1] and "arch            gfx90a" in blocks[1]
    assert "producer        hip" in blocks[1] and "amdgcn-amd-amdhsa" in blocks[1]
    # and our container reader finds the same images in that object
    assert read_offload_images(obj.read_bytes(), str(obj)) == read_binary(blob)
