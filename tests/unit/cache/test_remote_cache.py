"""The remote tier of the device image cache against a real redis-server on a free port: two machines
(two local cache folders) sharing images, tampered values, a server that stops or stalls, read-only
mode, a TTL, a password that no output shows, TLS, and the client package missing."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from cache_compiles import SAXPY, TIMEOUT, clean_environment, compile_saxpy
from conftest import REPO
from offload.cache.remote import KEY_PREFIX, URL_ENVIRONMENT, redact
from offload.cache.root import CACHE_ENVIRONMENT

PASSWORD = "s3cret-pass"


def _require(condition: bool, message: str) -> None:
    """In CI a missing part is a failure (scripts/setup and the test extra install them); elsewhere a skip."""
    if not condition:
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path, *arguments: str, tls: dict | None = None):
        _require(shutil.which("redis-server") is not None, "redis-server not found (scripts/setup installs it)")
        try:
            import redis  # noqa: F401
        except ImportError:
            _require(False, "the redis package is missing (pip install -e '.[test]')")
        self.port = _free_port()
        self.folder = folder
        command = ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)]
        if tls:
            command += [
                "--port",
                "0",
                "--tls-port",
                str(self.port),
                "--tls-cert-file",
                tls["cert"],
                "--tls-key-file",
                tls["key"],
                "--tls-ca-cert-file",
                tls["ca"],
                "--tls-auth-clients",
                "no",
            ]
        else:
            command += ["--port", str(self.port)]
        self.process = subprocess.Popen([*command, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError as error:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("redis-server did not start") from error
                time.sleep(0.05)
        self.password: str | None = None

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, password=self.password)

    def url(self, password: str | None = None) -> str:
        return f"redis://{':' + password + '@' if password else ''}127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def server(tmp_path):
    running = RedisServer(tmp_path)
    yield running
    running.stop()


def warnings_of(done) -> list[str]:
    return [line for line in done.stderr.splitlines() if "warning:" in line]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("reference") / "saxpy.bc"
    compile_saxpy(None, out)
    return out.read_bytes()


def test_two_machines_share_images(tmp_path, server, reference):
    first = compile_saxpy(tmp_path / "machine1", tmp_path / "a.bc", url=server.url())
    assert "cache: miss sm_80" in first.stderr and not warnings_of(first)
    assert server.client().dbsize() == 1
    second = compile_saxpy(tmp_path / "machine2", tmp_path / "b.bc", url=server.url())
    assert "cache: remote hit sm_80" in second.stderr and "cache: miss" not in second.stderr
    assert (tmp_path / "a.bc").read_bytes() == (tmp_path / "b.bc").read_bytes() == reference
    third = compile_saxpy(tmp_path / "machine2", tmp_path / "c.bc", url=server.url())  # kept locally
    assert "cache: hit sm_80" in third.stderr
    assert (tmp_path / "c.bc").read_bytes() == reference


def _tamper_swapped(client, key: bytes, tmp_path: Path, server) -> None:
    compile_saxpy(tmp_path / "other", tmp_path / "o1.bc", "-O1", url=server.url())
    [other] = [k for k in client.keys(KEY_PREFIX + "*") if k != key]
    client.set(key, client.get(other))  # valid bitcode for the same target, another program's


@pytest.mark.parametrize("tamper", ["swapped", "garbage", "truncated", "empty"])
def test_tampered_values_are_misses(tmp_path, server, reference, tamper):
    compile_saxpy(tmp_path / "machine1", tmp_path / "a.bc", url=server.url())
    client = server.client()
    [key] = client.keys(KEY_PREFIX + "*")
    value = client.get(key)
    if tamper == "swapped":
        _tamper_swapped(client, key, tmp_path, server)
    elif tamper == "garbage":
        client.set(key, os.urandom(len(value)))
    elif tamper == "truncated":
        client.set(key, value[: len(value) // 2])
    else:
        client.set(key, b"")
    done = compile_saxpy(tmp_path / "machine2", tmp_path / "b.bc", url=server.url())
    assert "cache: miss sm_80" in done.stderr and "remote hit" not in done.stderr
    assert (tmp_path / "b.bc").read_bytes() == reference
    assert client.get(key) == value  # the miss wrote the real image back


def test_server_gone_is_one_warning_and_the_same_output(tmp_path, server, reference):
    url = server.url()
    compile_saxpy(tmp_path / "machine1", tmp_path / "a.bc", url=url)
    server.stop()
    done = compile_saxpy(tmp_path / "machine2", tmp_path / "b.bc", url=url)
    assert len(warnings_of(done)) == 1 and "cannot read from the remote cache" in warnings_of(done)[0]
    assert (tmp_path / "b.bc").read_bytes() == reference


def test_server_stopped_in_the_middle_of_a_compile(tmp_path, server, reference, monkeypatch, capsys):
    """The images fetched (a miss), then the server dies while the image is built: the write-back fails
    with one warning, and the image is the same."""
    from offload.device import pipeline
    from offload.device.pipeline import compile_device
    from offload.formats.targets import parse_offload_arch
    from offload.mlir.frontend import load_program
    from offload.options import CompileOptions

    real = pipeline.serialize_image  # either backend

    def stopping(job):
        server.stop()
        return real(job)

    monkeypatch.setattr(pipeline, "serialize_image", stopping)
    monkeypatch.setenv(URL_ENVIRONMENT, server.url())
    monkeypatch.setenv(CACHE_ENVIRONMENT, str(tmp_path / "machine"))
    capsys.readouterr()
    [image] = compile_device(load_program(SAXPY), parse_offload_arch("sm_80"), CompileOptions(), jobs=1)
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "cannot write to the remote cache" in err
    monkeypatch.delenv(URL_ENVIRONMENT)
    [without] = compile_device(
        load_program(SAXPY), parse_offload_arch("sm_80"), replace(CompileOptions(), cache=False), jobs=1
    )
    assert image.bitcode == without.bitcode


def test_slow_server_times_out_with_one_warning(tmp_path, server, reference):
    server.client().execute_command("CLIENT", "PAUSE", "8000", "ALL")  # answers nothing for 8 s
    done = compile_saxpy(tmp_path / "machine", tmp_path / "b.bc", url=server.url())
    assert len(warnings_of(done)) == 1 and "Timeout" in warnings_of(done)[0]
    assert (tmp_path / "b.bc").read_bytes() == reference


def test_read_only_mode_never_writes(tmp_path, server, reference):
    read_only = {"MLIR_OFFLOAD_REMOTE_CACHE_MODE": "read-only"}
    done = compile_saxpy(tmp_path / "developer", tmp_path / "a.bc", url=server.url(), env=read_only)
    assert "cache: miss sm_80" in done.stderr and server.client().dbsize() == 0
    compile_saxpy(tmp_path / "ci", tmp_path / "b.bc", url=server.url())  # CI writes
    done = compile_saxpy(tmp_path / "developer2", tmp_path / "c.bc", url=server.url(), env=read_only)
    assert "cache: remote hit sm_80" in done.stderr
    assert (tmp_path / "c.bc").read_bytes() == reference
    project = tmp_path / "project"  # the same from mlir-offload.toml
    project.mkdir()
    shutil.copy(SAXPY, project / "saxpy.mlir")
    (project / "mlir-offload.toml").write_text(f'remote-cache = "{server.url()}"\nremote-cache-mode = "read-only"\n')
    server.client().flushall()
    environment = clean_environment()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "offload",
            "compile",
            str(project / "saxpy.mlir"),
            "--offload-arch",
            "sm_80",
            "-o",
            str(tmp_path / "d.bc"),
            "-v",
        ],
        capture_output=True,
        text=True,
        env={**environment, CACHE_ENVIRONMENT: str(tmp_path / "toml")},
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "cache: miss sm_80" in done.stderr and server.client().dbsize() == 0


def test_ttl_option(tmp_path, server):
    compile_saxpy(
        tmp_path / "machine", tmp_path / "a.bc", url=server.url(), env={"MLIR_OFFLOAD_REMOTE_CACHE_TTL": "600"}
    )
    client = server.client()
    [key] = client.keys(KEY_PREFIX + "*")
    assert 0 < client.ttl(key) <= 600


def test_password_is_used_and_never_shown(tmp_path, reference):
    running = RedisServer(tmp_path, "--requirepass", PASSWORD)
    running.password = PASSWORD
    try:
        done = compile_saxpy(tmp_path / "m1", tmp_path / "a.bc", url=running.url(PASSWORD))
        assert not warnings_of(done) and running.client().dbsize() == 1
        done = compile_saxpy(
            tmp_path / "m2", tmp_path / "b.bc", url=running.url(), env={"MLIR_OFFLOAD_REMOTE_CACHE_PASSWORD": PASSWORD}
        )  # from the environment
        assert "cache: remote hit sm_80" in done.stderr
        done = compile_saxpy(tmp_path / "m3", tmp_path / "c.bc", url=running.url(), env={"REDISCLI_AUTH": PASSWORD})
        assert "cache: remote hit sm_80" in done.stderr
        wrong = "wrong-" + PASSWORD
        done = compile_saxpy(tmp_path / "m4", tmp_path / "d.bc", url=running.url(wrong))
        assert len(warnings_of(done)) == 1 and wrong not in done.stderr and "***" in done.stderr
        assert (tmp_path / "d.bc").read_bytes() == reference
        environment = {**clean_environment(), URL_ENVIRONMENT: running.url(PASSWORD)}
        shown = subprocess.run(
            [sys.executable, "-m", "offload", "cache"], env=environment, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert shown.returncode == 0 and PASSWORD not in shown.stdout + shown.stderr and "***" in shown.stdout
        project = tmp_path / "project"
        project.mkdir()
        (project / "mlir-offload.toml").write_text(f'remote-cache = "{running.url(PASSWORD)}"\n')
        shown = subprocess.run(
            [sys.executable, "-m", "offload", "config", "show", str(project)],
            env=clean_environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert shown.returncode == 0 and PASSWORD not in shown.stdout and "***" in shown.stdout
        (project / "mlir-offload.toml").write_text(f'remote-cache = "http://u:{PASSWORD}@host/"\n')
        shown = subprocess.run(
            [sys.executable, "-m", "offload", "config", "show", str(project)],
            env=clean_environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert shown.returncode == 1 and PASSWORD not in shown.stderr and "remote-cache" in shown.stderr
    finally:
        running.stop()
    assert redact("rediss://user:pw@[::1]:6380/2") == "rediss://user:***@[::1]:6380/2"


def test_missing_client_is_one_error_line(tmp_path):
    shadow = tmp_path / "shadow" / "redis"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no redis here')\n")
    environment = {
        **clean_environment(),
        URL_ENVIRONMENT: "redis://127.0.0.1:1/0",
        CACHE_ENVIRONMENT: str(tmp_path / "c"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "offload", "compile", SAXPY, "--offload-arch", "sm_80", "-o", str(tmp_path / "a.bc")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1 and not (tmp_path / "a.bc").exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'mlir-offload[redis]'" in lines[0], done.stderr


def test_a_url_that_is_not_redis_is_one_error_line(tmp_path):
    done = compile_saxpy(tmp_path / "c", tmp_path / "a.bc", url="http://user:pw@127.0.0.1:1/", check=False)
    assert done.returncode == 1 and "pw" not in done.stderr and "redis://HOST:PORT/DB" in done.stderr


def test_tls(tmp_path, reference):
    openssl = shutil.which("openssl")
    _require(openssl is not None, "openssl not found")
    assert openssl is not None
    key, cert = tmp_path / "server.key", tmp_path / "server.crt"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    running = RedisServer(tmp_path, tls={"cert": str(cert), "key": str(key), "ca": str(cert)})
    try:
        url = f"rediss://localhost:{running.port}/0"
        trust = {"SSL_CERT_FILE": str(cert)}  # the server's self-signed certificate is the one CA trusted
        compile_saxpy(tmp_path / "m1", tmp_path / "a.bc", url=url, env=trust)
        done = compile_saxpy(tmp_path / "m2", tmp_path / "b.bc", url=url, env=trust)
        assert "cache: remote hit sm_80" in done.stderr and not warnings_of(done)
        assert (tmp_path / "b.bc").read_bytes() == reference
        done = compile_saxpy(tmp_path / "m3", tmp_path / "c.bc", url=url)  # certificate not trusted: one warning
        assert len(warnings_of(done)) == 1 and (tmp_path / "c.bc").read_bytes() == reference
    finally:
        running.stop()


def test_redis_client_is_imported_only_when_the_server_is_asked(tmp_path, server):
    def imported(url: str | None, *flags: str) -> set[str]:
        environment = clean_environment()
        environment[CACHE_ENVIRONMENT] = str(tmp_path / "cache")
        if url:
            environment[URL_ENVIRONMENT] = url
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "offload",
                "compile",
                SAXPY,
                "--offload-arch",
                "sm_80",
                "-o",
                str(tmp_path / "a.bc"),
                *flags,
            ],
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        if "-v" in flags:
            assert "cache: hit sm_80" in done.stderr, done.stderr
        return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}

    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
    without = imported(None)  # no server set: neither the tier's code nor the client
    assert "offload.cache.remote" not in without and "redis" not in without
    shutil.rmtree(tmp_path / "cache")
    assert {"offload.cache.remote", "redis"} <= imported(server.url())  # a miss asks the server
    every_image_local = imported(server.url(), "-v")  # -v: the images, all in the local folder: not asked
    assert "offload.cache.remote" in every_image_local and "redis" not in every_image_local
    whole_compile_local = imported(server.url())  # the whole compile in the local folder: not asked
    assert "redis" not in whole_compile_local and "mlir.ir" not in whole_compile_local


def _peak_rss_kib(command: list[str], environment: dict) -> tuple[int, str]:
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)  # the peak of the compile and of the children it waited for
    assert process.stderr is not None  # stderr=PIPE
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert os.waitstatus_to_exitcode(status) == 0, stderr
    return usage.ru_maxrss, stderr


def test_huge_value_is_not_downloaded_whole(tmp_path, server, reference):
    """A value of 512 MiB (Redis's largest string) under the image's key: a miss, of which at most
    MAX_VALUE_BYTES + 1 bytes are read, never the whole value; the miss writes the real image back."""
    from offload.cache.remote import MAX_VALUE_BYTES

    compile_saxpy(tmp_path / "machine1", tmp_path / "a.bc", url=server.url())
    client = server.client()
    [key] = client.keys(KEY_PREFIX + "*")
    value = client.get(key)
    huge = 512 << 20
    client.setrange(key, huge - 1, b"x")  # the real entry, then zeros up to 512 MiB
    assert client.strlen(key) == huge > 4 * MAX_VALUE_BYTES
    command = [sys.executable, "-m", "offload", "compile", SAXPY, "--offload-arch", "sm_80", "-v", "-o"]
    environment = clean_environment()
    alone, _ = _peak_rss_kib([*command, str(tmp_path / "b.bc"), "--no-cache"], environment)
    with_huge, stderr = _peak_rss_kib(
        [*command, str(tmp_path / "c.bc")],
        {**environment, CACHE_ENVIRONMENT: str(tmp_path / "machine2"), URL_ENVIRONMENT: server.url()},
    )
    assert "cache: miss sm_80" in stderr and "warning:" not in stderr, stderr
    assert (tmp_path / "c.bc").read_bytes() == reference
    # Reading the whole value would take more than 512 MiB; the bounded read takes 64 MiB (twice, parsed).
    assert with_huge - alone < (huge // 2) >> 10, (with_huge, alone)
    assert client.get(key) == value


class SilentServer:
    """A listening socket that accepts connections and never answers (a server that hangs), counting them."""

    def __init__(self):
        import threading

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.socket.close()  # also ends the accepting thread
        for connection in self.accepted:
            connection.close()


@pytest.mark.parametrize("failure", ["connection refused", "never answers"])
def test_failed_server_is_remembered_for_the_next_compiles(tmp_path, reference, failure):
    silent = SilentServer() if failure == "never answers" else None
    port = silent.port if silent else _free_port()  # nothing listens on a port just freed
    url = f"redis://127.0.0.1:{port}/0"
    try:
        first = compile_saxpy(tmp_path / "machine", tmp_path / "a.bc", url=url)
        [warning] = warnings_of(first)
        assert "cannot read from the remote cache" in warning
        assert ("Timeout" in warning) if silent else ("refused" in warning), warning
        assert (tmp_path / "machine" / "remote-down.json").is_file()
        environment = {**clean_environment(), URL_ENVIRONMENT: url, CACHE_ENVIRONMENT: str(tmp_path / "machine")}
        shown = subprocess.run(
            [sys.executable, "-m", "offload", "cache"], env=environment, capture_output=True, text=True, timeout=TIMEOUT
        ).stdout
        assert "(read-write; failed " in shown and "not asked for" in shown, shown
        second = compile_saxpy(tmp_path / "machine", tmp_path / "b.bc", "-O1", url=url)  # a local miss: would ask
        [warning] = warnings_of(second)
        assert "not asked again for" in warning and "cache: miss sm_80" in second.stderr
        if silent:
            assert len(silent.accepted) == 1  # the second compile did not connect
        other = compile_saxpy(tmp_path / "machine", tmp_path / "c.bc", "-O2", url=f"redis://127.0.0.1:{port}/1")
        assert "cannot read from the remote cache" in warnings_of(other)[0]  # another server: asked
        cleared = subprocess.run(
            [sys.executable, "-m", "offload", "cache", "--clear"],
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        ).stdout
        assert "; failed " not in cleared and not (tmp_path / "machine" / "remote-down.json").exists()
    finally:
        if silent:
            silent.close()
    assert (tmp_path / "a.bc").read_bytes() == reference


def test_server_that_never_answers_costs_one_timeout_without_a_folder(tmp_path, reference):
    """No cache folder to remember the failure in (one others can write is refused): the compile asks
    for the whole compile, times out, and does not ask again for its images."""
    folder = tmp_path / "open-to-all"
    folder.mkdir()
    folder.chmod(0o777)
    silent = SilentServer()
    try:
        done = compile_saxpy(folder, tmp_path / "a.bc", url=f"redis://127.0.0.1:{silent.port}/0")
    finally:
        silent.close()
    remote = [line for line in warnings_of(done) if "remote cache" in line]
    assert len(remote) == 1 and "Timeout" in remote[0], done.stderr
    assert len(silent.accepted) == 1
    assert (tmp_path / "a.bc").read_bytes() == reference


def test_remote_down_record_is_bounded(tmp_path, monkeypatch):
    from offload.cache import folder as cache_folder
    from offload.cache.folder import REMOTE_DOWN_NAME, REMOTE_DOWN_SECONDS, CacheFolder

    folder = CacheFolder(tmp_path / "cache")
    assert folder.open()
    folder.mark_remote_down("server-a", "Error 111\nconnecting")
    down = folder.remote_down("server-a")
    assert down is not None
    age, why = down
    assert 0 <= age < 5 and why == "Error 111 connecting"
    assert folder.remote_down("server-b") is None
    now = cache_folder.time.time()
    monkeypatch.setattr(cache_folder.time, "time", lambda: now + REMOTE_DOWN_SECONDS + 1)
    assert folder.remote_down("server-a") is None  # expired
    monkeypatch.setattr(cache_folder.time, "time", lambda: now - 3600)
    assert folder.remote_down("server-a") is None  # from the future: never lasts longer
    monkeypatch.undo()
    record = tmp_path / "cache" / REMOTE_DOWN_NAME
    record.chmod(0o666)  # another user could have written it
    assert folder.remote_down("server-a") is None
    record.unlink()
    record.symlink_to(tmp_path / "elsewhere.json")
    assert folder.remote_down("server-a") is None
    folder.close()


class CountingProxy:
    """Relays connections to a server, counting connections and round trips: a round trip begins when the
    client sends after it has had an answer (or first)."""

    def __init__(self, port: int):
        import threading

        self.port_upstream = port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.round_trips = 0
        self.threads: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._relay, args=(client,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _relay(self, client: socket.socket) -> None:
        import select

        upstream = socket.create_connection(("127.0.0.1", self.port_upstream))
        answered = True
        try:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 30)
                if not ready:
                    return
                for side in ready:
                    data = side.recv(1 << 16)
                    if not data:
                        return
                    if side is client:
                        if answered:
                            self.round_trips += 1
                            answered = False
                        upstream.sendall(data)
                    else:
                        answered = True
                        client.sendall(data)
        finally:
            client.close()
            upstream.close()

    def close(self) -> None:
        self.listener.close()
        for thread in self.threads:
            thread.join(timeout=30)


def test_all_images_of_a_compile_in_one_round_trip(tmp_path, server):
    """A compile for two targets on a machine whose folder is cold (-v: the images, not the whole compile):
    one connection, one round trip (no HELLO, CLIENT SETINFO, AUTH, or SELECT for database 0), both images
    remote hits."""
    url = server.url()
    command = [sys.executable, "-m", "offload", "compile", SAXPY, "--offload-arch", "sm_80,sm_90", "-v", "-o"]
    environment = {**clean_environment(), URL_ENVIRONMENT: url, CACHE_ENVIRONMENT: str(tmp_path / "machine1")}
    done = subprocess.run(
        [*command, str(tmp_path / "a.bc")], env=environment, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0 and server.client().dbsize() == 2, done.stderr
    proxy = CountingProxy(server.port)
    try:
        environment.update(
            {URL_ENVIRONMENT: f"redis://127.0.0.1:{proxy.port}/0", CACHE_ENVIRONMENT: str(tmp_path / "machine2")}
        )
        done = subprocess.run(
            [*command, str(tmp_path / "b.bc")], env=environment, capture_output=True, text=True, timeout=TIMEOUT
        )
    finally:
        proxy.close()
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("cache: remote hit") == 2, done.stderr
    assert (proxy.connections, proxy.round_trips) == (1, 1)
    assert (tmp_path / "a.bc").read_bytes() == (tmp_path / "b.bc").read_bytes()


def test_a_process_remembers_a_failed_server_for_a_while(monkeypatch):
    """In one process (the Python API compiling again and again), a server that failed is not tried or
    warned about again for REMOTE_DOWN_SECONDS; then it is."""
    from offload.cache import remote as remote_cache
    from offload.cache.folder import REMOTE_DOWN_SECONDS
    from offload.cache.remote import RemoteCache

    url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens
    warnings: list[str] = []
    first = RemoteCache(url, warn=warnings.append)
    assert first.get_many(["k"]) == [None] and first.failure and len(warnings) == 1
    second = RemoteCache(url, warn=warnings.append)
    monkeypatch.setattr(RemoteCache, "_connection", lambda self: pytest.fail("asked a server that just failed"))
    assert second.get_many(["k"]) == [None] and second.put_many({"k": b"v"}) == 0 and len(warnings) == 1
    monkeypatch.undo()
    now = remote_cache.time.monotonic()
    monkeypatch.setattr(remote_cache.time, "monotonic", lambda: now + REMOTE_DOWN_SECONDS + 1)
    third = RemoteCache(url, warn=warnings.append)
    assert third.get_many(["k"]) == [None] and len(warnings) == 2 and "refused" in warnings[1]


class DrippingServer:
    """A loopback server that speaks just enough Redis to start an answer and then sends one more byte
    of it every 1.5 s, for ever: under each read's timeout, so only a deadline for the whole operation
    ends the wait. `drips` says when it starts: at the first GETRANGE ("read"), or at the first SET,
    GETRANGEs being answered as misses before ("write")."""

    INTERVAL = 1.5

    def __init__(self, drips: str):
        import threading

        self.drips = drips
        self.stopped = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.dripped = 0
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            while not self.stopped.is_set():
                request = connection.recv(1 << 16)
                if not request:
                    return
                if self.drips == "write" and b"SET" not in request:
                    connection.sendall(b"$0\r\n\r\n" * request.count(b"GETRANGE"))  # misses
                    continue
                connection.sendall(b"$1048576\r\n" if self.drips == "read" else b"+")
                while not self.stopped.wait(self.INTERVAL):
                    connection.sendall(b"x" if self.drips == "read" else b"O")
                    self.dripped += 1
        except OSError:
            return  # the client shut the connection: what a deadline does

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()
        for connection in self.connections:
            connection.close()


@pytest.mark.parametrize("drips", ["read", "write"])
def test_a_server_dripping_its_answer_holds_no_compile(tmp_path, reference, drips):
    # The 2 s limit was per read: a byte every 1.5 s held the get (or the set) for ever. Now the whole
    # operation has one deadline, then one warning, and the compile goes on (without the fix this test
    # hangs until TIMEOUT).
    dripping = DrippingServer(drips)
    try:
        done = compile_saxpy(tmp_path / "machine", tmp_path / "a.bc", url=f"redis://127.0.0.1:{dripping.port}/0")
    finally:
        dripping.close()
    action = "read from" if drips == "read" else "write to"
    [warning] = warnings_of(done)
    assert f"cannot {action} the remote cache redis://127.0.0.1:{dripping.port}/0: Timeout" in warning, warning
    assert "cache: miss sm_80" in done.stderr
    assert (tmp_path / "a.bc").read_bytes() == reference
