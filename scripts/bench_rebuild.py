#!/usr/bin/env python3
"""`make clean && make` of examples/hpc-make with an empty device image cache against one that holds the
images of the unchanged program: what a rebuild costs once the cache holds what can be cached.
Times the `make` alone (wall and CPU of make and everything it runs), medians of interleaved runs."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_device import interleaved, measure, print_table  # noqa: E402

BUILD_OUTPUTS = ("*.o", "*.offload.bc", "*.offload.d", "*.ptx", "helpers.bc", "hpc-app")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "hpc-make"
        shutil.copytree(REPO / "examples" / "hpc-make", folder, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS))
        cache = Path(tmp) / "cache"
        make = ["make", "-C", str(folder), f"MLIR_OFFLOAD={sys.executable} -m offload"]
        environment = {**os.environ, "MLIR_OFFLOAD_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}

        def rebuild(keep_cache: bool):
            def run():
                subprocess.run([*make, "clean"], check=True, capture_output=True)
                if not keep_cache:
                    shutil.rmtree(cache, ignore_errors=True)
                return measure(make, environment)
            return run

        rebuild(True)()  # the cache now holds the program's images
        results = interleaved({"make clean && make, empty cache": rebuild(False),
                               "make clean && make, cache of the unchanged program": rebuild(True)}, args.runs)
        print_table(results, args.runs)
        cold, warm = results["make clean && make, empty cache"], results["make clean && make, cache of the unchanged program"]
        print(f"  rebuild with the cache / without: wall {warm[0] / cold[0]:.2f}, CPU {warm[2] / cold[2]:.2f} "
              "(what remains: clang for main.cpp, scale.cu and helpers.cu, MLIR parsing and lowering, host code, "
              "the final link with its device LTO and ptxas)")


if __name__ == "__main__":
    main()
