"""One toolchain search order (offload/toolchain/tools.py): the CUDA toolkit doctor and link use, the
libdevice the device step links, and the shipped build.sh's search follow the same list."""

from __future__ import annotations

import pytest

from offload.device.libraries import find_libdevice
from offload.formats.profiles import load_profile
from offload.packager.bundle import BundleRecord
from offload.toolchain import tools as toolchain
from offload.toolchain.ship import BundleFacts, render_build_sh, target_link_words

pytestmark = pytest.mark.no_toolchain


@pytest.fixture
def two_toolkits(tmp_path, monkeypatch):
    roots = {}
    for name in ("from_cuda_path", "from_cuda_home"):
        root = tmp_path / name
        (root / "bin").mkdir(parents=True)
        (root / "nvvm" / "libdevice").mkdir(parents=True)
        (root / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"BC\xc0\xde")
        roots[name] = root
    for variable in toolchain.CUDA_ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("CUDA_HOME", str(roots["from_cuda_home"]))
    monkeypatch.setenv("CUDA_PATH", str(roots["from_cuda_path"]))
    return roots, monkeypatch


def cuda_root(cuda_path: str | None = None) -> str:
    found = toolchain.find_cuda(cuda_path)
    assert found is not None
    return found.root


def test_cuda_toolkit_and_libdevice_follow_one_order(two_toolkits):
    roots, monkeypatch = two_toolkits
    first = roots["from_cuda_path"]
    assert cuda_root() == str(first)
    assert find_libdevice(None) == str(first / "nvvm" / "libdevice" / "libdevice.10.bc")
    monkeypatch.delenv("CUDA_PATH")
    second = roots["from_cuda_home"]
    assert cuda_root() == str(second)
    assert find_libdevice(None) == str(second / "nvvm" / "libdevice" / "libdevice.10.bc")
    # An explicit toolkit is the only candidate.
    assert toolchain.cuda_roots(str(first)) == [str(first)]
    assert cuda_root(str(first)) == str(first)


def test_shipped_build_sh_searches_in_the_same_order():
    record = BundleRecord(22, "22.1.8", "obj", ("cuda:sm_80",))
    facts = BundleFacts(
        record,
        None,
        ["k"],
        [
            {
                "offload_kind": "cuda",
                "triple": "nvptx64-nvidia-cuda",
                "arch": "sm_80",
                "image_kind": "cubin",
                "producer": None,
            }
        ],
    )
    profile = load_profile(22)
    script = render_build_sh("app", "app.offload.o", facts, profile, target_link_words(profile, "cuda", "b.o"), False)
    (line,) = [line for line in script.splitlines() if line.strip().startswith("for dir in") and "cuda" in line]
    words = line.split()[3:-1]
    expected = [f'"${{{v}:-}}"' for v in toolchain.CUDA_ENVIRONMENT[1:]] + list(toolchain.STANDARD_CUDA_ROOTS)
    assert [w.rstrip(";") for w in words] == expected
    assert toolchain.CUDA_ENVIRONMENT[0] == "CUDA_PATH"  # build.sh's own variable, checked first
