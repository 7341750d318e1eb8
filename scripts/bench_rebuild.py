#!/usr/bin/env python3
"""`make clean && make` of examples/hpc-make with an empty cache, with one that holds the unchanged
program's compiles and images, and on a second machine (a cold local cache) whose remote cache (a local
redis-server) holds them, against the final link alone; then the images of a 1000-kernel program fetched
from that Redis (one pipeline of bounded GETRANGEs and the checks of every entry) and its compile with
them against --no-cache; then what a server that is down costs each compile of a series (refused, or
accepting and never answering), once its failure is remembered. Times the `make` alone (wall and CPU of
make and everything it runs), medians of interleaved runs."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

from bench_device import generate, interleaved, measure, print_table  # noqa: E402

BUILD_OUTPUTS = ("*.o", "*.offload.bc", "*.offload.d", "*.ptx", "helpers.bc", "hpc-app")


def environment_as_installed() -> dict[str, str]:
    """This checkout's code, run as an installed package runs: with its bytecode cached (without it every
    process compiles mlir-offload's modules again, 0.15 s), and no remote cache setting of the caller's."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MLIR_OFFLOAD_REMOTE_CACHE") and k != "PYTHONDONTWRITEBYTECODE"
    }
    environment["PYTHONPATH"] = str(REPO)
    return environment


class RedisServer:
    """A throwaway redis-server on a free port (no persistence), stopped on exit."""

    def __init__(self, folder: Path):
        if shutil.which("redis-server") is None:
            sys.exit("redis-server not found (scripts/setup installs it)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    sys.exit("redis-server did not start")
                time.sleep(0.05)

    def url(self, database: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def rebuilds(tmp: Path, server: RedisServer, runs: int) -> None:
    folder = tmp / "hpc-make"
    shutil.copytree(REPO / "examples" / "hpc-make", folder, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS))
    cache, second = tmp / "cache", tmp / "second-machine-cache"
    make = ["make", "-C", str(folder), f"MLIR_OFFLOAD={sys.executable} -m offload"]
    base = environment_as_installed()
    local_only = {**base, "MLIR_OFFLOAD_CACHE_DIR": str(cache)}
    with_redis = {**base, "MLIR_OFFLOAD_CACHE_DIR": str(second), "MLIR_OFFLOAD_REMOTE_CACHE": server.url()}

    def rebuild(environment: dict, forget: Path | None):
        def run():
            subprocess.run([*make, "clean"], check=True, capture_output=True)
            if forget is not None:
                shutil.rmtree(forget, ignore_errors=True)
            return measure(make, environment)

        return run

    def link_alone():
        (folder / "hpc-app").unlink()
        return measure(make, local_only)

    def bundles_and_link(environment: dict, forget: Path | None):
        """The two MLIR bundles rebuilt, then the link: what mlir-offload adds to a build."""

        def run():
            for bundle in folder.glob("*.offload.*"):
                bundle.unlink()
            if forget is not None:
                shutil.rmtree(forget, ignore_errors=True)
            return measure(make, environment)

        return run

    rebuild(local_only, None)()  # the local cache now holds the program's compiles and images
    rebuild(with_redis, second)()  # and the Redis server too (written back by the first machine's misses)
    names = {
        "empty": "make clean && make, empty cache",
        "local": "make clean && make, local cache of the program",
        "remote": "make clean && make, 2nd machine: cold local, warm Redis",
        "link": "the final link alone (make after rm hpc-app)",
        "bundles empty": "2 bundles + link, empty cache",
        "bundles local": "2 bundles + link, local cache of the program",
        "bundles remote": "2 bundles + link, 2nd machine: cold local, warm Redis",
    }
    results = interleaved(
        {
            names["empty"]: rebuild(local_only, cache),
            names["local"]: rebuild(local_only, None),
            names["remote"]: rebuild(with_redis, second),
            names["link"]: link_alone,
            names["bundles empty"]: bundles_and_link(local_only, cache),
            names["bundles local"]: bundles_and_link(local_only, None),
            names["bundles remote"]: bundles_and_link(with_redis, second),
        },
        runs,
    )
    print("examples/hpc-make (2 MLIR bundles, sm_80, bitcode images; clang compiles main.cpp, scale.cu, helpers.cu)")
    print_table(results, runs)
    empty, local, remote, link = (results[names[k]] for k in ("empty", "local", "remote", "link"))
    print(
        f"  2nd machine (warm Redis) / local cache: wall {remote[0] / local[0]:.2f}, CPU {remote[2] / local[2]:.2f}; "
        f"/ empty cache: wall {remote[0] / empty[0]:.2f}, CPU {remote[2] / empty[2]:.2f}"
    )
    print(
        f"  what the remote tier costs the 2nd machine beyond the local cache: {remote[0] - local[0]:+.3f} s wall; "
        f"the link alone: {link[0]:.3f} s (the rest: clang for main.cpp, scale.cu and helpers.cu)"
    )
    b_empty, b_local, b_remote = (results[names[k]] for k in ("bundles empty", "bundles local", "bundles remote"))
    print(
        f"  2 bundles + link / link alone: 2nd machine (warm Redis) wall {b_remote[0] / link[0]:.2f}, CPU "
        f"{b_remote[2] / link[2]:.2f}; local cache wall {b_local[0] / link[0]:.2f}; empty cache wall "
        f"{b_empty[0] / link[0]:.2f}"
    )
    print(
        f"  each bundle beyond the link: 2nd machine (warm Redis) {(b_remote[0] - link[0]) / 2:.3f} s wall, "
        f"{(b_remote[2] - link[2]) / 2:.3f} s CPU; local cache {(b_local[0] - link[0]) / 2:.3f} s wall, "
        f"{(b_local[2] - link[2]) / 2:.3f} s CPU; empty cache {(b_empty[0] - link[0]) / 2:.3f} s wall"
    )


def many_kernels(tmp: Path, server: RedisServer, kernels: int, runs: int) -> None:
    from offload.cache.remote import KEY_PREFIX, RemoteCache
    from offload.device.image_cache import ImageCache
    from offload.formats.targets import parse_offload_arch

    source = tmp / "many.mlir"
    source.write_text(generate(kernels))
    url = server.url(1)
    base = environment_as_installed()
    command = [
        sys.executable,
        "-m",
        "offload",
        "device",
        str(source),
        "-o",
        str(tmp / "many.offload"),
        "--offload-arch",
        "sm_80,sm_90",
    ]
    first = {**base, "MLIR_OFFLOAD_CACHE_DIR": str(tmp / "first"), "MLIR_OFFLOAD_REMOTE_CACHE": url}
    measure(command, first)  # builds both images and writes them to Redis (`device`: no whole compiles)
    import redis

    # redis types a key as bytes or str (str with decode_responses, not set here)
    names = [k.decode() if isinstance(k, bytes) else k for k in redis.Redis.from_url(url).keys(KEY_PREFIX + "*")]
    keys = [name[len(KEY_PREFIX) :] for name in names]
    targets = parse_offload_arch("sm_80,sm_90")
    # Which target each key is for: the entry says (a lookup for the wrong target is a miss).
    probe = ImageCache(None, RemoteCache(url))
    matched = [(key, target) for key in keys for target in targets if probe.lookup([key], [target])[0] is not None]
    fetches, cpu = [], []
    for _ in range(max(runs, 5)):
        start, start_cpu = time.perf_counter(), time.process_time()
        images = ImageCache(None, RemoteCache(url)).lookup([k for k, _ in matched], [t for _, t in matched])
        fetches.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert all(image is not None for image in images)
    size = sum(len(image.bitcode) for image in images)
    fetches.sort()
    cpu.sort()
    print(f"\n{kernels}-kernel program, sm_80 + sm_90: {len(images)} images, {size / 2**20:.1f} MiB of bitcode")
    print(
        "  fetched from a local Redis (one pipeline of bounded GETRANGEs, every entry's checksum, key, target and "
        f"bitcode checked): median {fetches[len(fetches) // 2] * 1000:.0f} ms wall (min {fetches[0] * 1000:.0f} ms), "
        f"{cpu[len(cpu) // 2] * 1000:.0f} ms CPU in this process, of {len(fetches)} fetches"
    )

    second = tmp / "second"
    cold_with_redis = {**base, "MLIR_OFFLOAD_CACHE_DIR": str(second), "MLIR_OFFLOAD_REMOTE_CACHE": url}

    def with_redis():
        shutil.rmtree(second, ignore_errors=True)
        return measure(command, cold_with_redis)

    results = interleaved(
        {
            "device, 2nd machine: cold local, warm Redis": with_redis,
            "device --no-cache": lambda: measure(command + ["--no-cache"], base),
        },
        runs,
    )
    print_table(results, runs)
    remote, rebuilt = results["device, 2nd machine: cold local, warm Redis"], results["device --no-cache"]
    print(
        f"  warm Redis / --no-cache: wall {remote[0] / rebuilt[0]:.2f}, CPU {remote[2] / rebuilt[2]:.2f} "
        "(what remains: parsing and lowering the MLIR, the key's hashing)"
    )


class SilentServer:
    """A listening socket that accepts and never answers: a Redis server that hangs."""

    def __init__(self):
        import threading

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.socket.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


def server_down(tmp: Path, compiles: int, runs: int) -> None:
    """A series of compiles (each a miss: another -O level or program) with a server that is down, against
    the same series with no server: the first compile waits for the failure, the others skip the server."""
    source = REPO / "examples" / "saxpy.mlir"
    base = environment_as_installed()
    silent = SilentServer()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused_port = s.getsockname()[1]  # nothing listens on it once closed
    urls = {
        "no server": None,
        "refused": f"redis://127.0.0.1:{refused_port}/0",
        "never answers": f"redis://127.0.0.1:{silent.port}/0",
    }
    times: dict[str, list[list[float]]] = {name: [] for name in urls}
    try:
        for _ in range(runs):
            for name, url in urls.items():
                folder = tmp / "down" / name.replace(" ", "-")
                shutil.rmtree(folder, ignore_errors=True)
                environment = {**base, "MLIR_OFFLOAD_CACHE_DIR": str(folder)}
                if url:
                    environment["MLIR_OFFLOAD_REMOTE_CACHE"] = url
                series = []
                for i in range(compiles):
                    command = [
                        sys.executable,
                        "-m",
                        "offload",
                        "compile",
                        str(source),
                        "--offload-arch",
                        "sm_80",
                        f"-O{i % 4}",
                        "--symbol-prefix",
                        f"s{i}",
                        "-o",
                        str(tmp / "down.bc"),
                    ]
                    series.append(measure(command, environment)[0])
                times[name].append(series)
    finally:
        silent.close()

    def median(name: str, i: int) -> float:
        return sorted(series[i] for series in times[name])[runs // 2]

    print(f"\na server that is down: {compiles} compiles in a row (each a miss), one cache folder, median of {runs}")
    for name in ("refused", "never answers"):
        delays = [median(name, i) - median("no server", i) for i in range(compiles)]
        later = sum(delays[1:]) / max(1, len(delays) - 1)
        print(
            f"  {name:<14} delay of the 1st compile {delays[0]:+.3f} s, of each later one {later:+.3f} s "
            f"(its failure remembered; no server: {median('no server', 0):.3f} s a compile)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kernels", type=int, default=1000, help="kernels of the program fetched from Redis")
    parser.add_argument("--down-compiles", type=int, default=4, help="compiles in a row with a server that is down")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        try:
            rebuilds(Path(tmp), server, args.runs)
            many_kernels(Path(tmp), server, args.kernels, args.runs)
            server_down(Path(tmp), args.down_compiles, args.runs)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
