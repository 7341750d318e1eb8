"""The remote tier of the device image cache: a Redis server shared by the machines of a build farm, CI
runners or a cluster's login nodes (as ccache's and sccache's Redis back ends).

`redis://[USER:PASSWORD@]HOST[:PORT][/DB]` or `rediss://...` (TLS), from MLIR_OFFLOAD_REMOTE_CACHE or
`remote-cache` in mlir-offload.toml; the password from the URL, else MLIR_OFFLOAD_REMOTE_CACHE_PASSWORD,
else REDISCLI_AUTH (as redis-cli), and never printed: every message names the URL with its password
replaced by `***`. All the images of a compile are fetched in one round trip (a pipeline of GETRANGEs,
each reading at most MAX_VALUE_BYTES + 1 bytes: a huge value planted on the server is never downloaded
whole), the images it built written back in one pipeline (SET, with EX when a TTL is set), unless the
mode is read-only.

Values are entries (cache_entry.py): the caller takes one only when it records the key asked for and
its image checks out, so a value swapped between keys or garbled is a miss, never embedded. A server
that cannot be reached, is slow or fails answers nothing for the rest of the compile: one warning line,
timeouts of CONNECT_TIMEOUT and OPERATION_TIMEOUT (one deadline for a whole get or set), and the compile
goes on without it (root.py then remembers the failure for a while, so that the next compiles do not
wait too).

The `redis` package is an optional dependency (`pip install 'mlir-offload[redis]'`): its presence is
checked when a URL is set, and it is imported only when an image is asked of the server or written to it
(a compile whose images are all in the local folder never imports it)."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from offload.cache.environment import REMOTE_MODE_ENVIRONMENT as MODE_ENVIRONMENT
from offload.cache.environment import REMOTE_TTL_ENVIRONMENT as TTL_ENVIRONMENT
from offload.cache.environment import REMOTE_URL_ENVIRONMENT as URL_ENVIRONMENT
from offload.cache.folder import REMOTE_DOWN_SECONDS
from offload.errors import OffloadError

PASSWORD_ENVIRONMENTS = ("MLIR_OFFLOAD_REMOTE_CACHE_PASSWORD", "REDISCLI_AUTH")
MODES = ("read-write", "read-only")
SCHEMES = ("redis", "rediss")
CONNECT_TIMEOUT = 0.5  # seconds
OPERATION_TIMEOUT = 2.0  # a whole get_many or put_many, connecting and every reply included
# Each read's own limit lies past the whole operation's: a server that answers nothing is stopped by the
# operation's deadline, with the same message as one that drips its answer.
_READ_TIMEOUT = OPERATION_TIMEOUT + 1.0
_DEADLINE_POLL = 0.05  # seconds between shutting the connections and looking whether the work ended
KEY_PREFIX = "mlir-offload:image:"
# An image of a large program is megabytes: a value past this is neither read (a miss, of which at most
# this much is downloaded) nor written.
MAX_VALUE_BYTES = 64 << 20
# Within one process (a compile asks for the whole compile, then for the images; the Python API may
# compile many times), for REMOTE_DOWN_SECONDS as the cache folder's record: the servers warned about
# (id -> when), and those that failed (id -> (when, why)), not tried again even with no folder at hand.
_WARNED: dict[str, float] = {}
_FAILED: dict[str, tuple[float, str]] = {}


def _recent(when: float | None) -> bool:
    return when is not None and time.monotonic() - when < REMOTE_DOWN_SECONDS


def _failed_lately(server: str) -> str | None:
    when, why = _FAILED.get(server, (None, None))
    return why if _recent(when) else None


def redact(url: str) -> str:
    """`url` with its password (if any) replaced by ***: the only form of a URL any message shows."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<a malformed URL>"
    if password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}{port}", parts.path, parts.query, parts.fragment))


def check_url(url: str) -> None:
    """A one-line error for a URL that is not redis:// or rediss://."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise OffloadError(
            f"remote cache URL '{redact(url)}' is malformed: expected redis://HOST:PORT/DB or rediss://HOST:PORT/DB"
        ) from None
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise OffloadError(
            f"remote cache URL '{redact(url)}' is not redis://HOST:PORT/DB or rediss://HOST:PORT/DB (TLS)"
        )
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise OffloadError(f"remote cache URL '{redact(url)}': the database '{database}' is not a number")


def check_mode(mode: str | None, where: str = MODE_ENVIRONMENT) -> str:
    if mode is None or mode == "":
        return "read-write"
    if mode not in MODES:
        raise OffloadError(f"{where} '{mode}' is not one of {', '.join(MODES)}")
    return mode


def check_ttl(ttl: str | int | None, where: str = TTL_ENVIRONMENT) -> int | None:
    """Seconds an entry lives on the server (None or 0: until the server evicts it)."""
    if ttl is None or ttl == "":
        return None
    try:
        seconds = int(ttl)
    except (TypeError, ValueError):
        seconds = -1
    if isinstance(ttl, bool) or seconds < 0:
        raise OffloadError(f"{where} '{ttl}' is not a number of seconds (0: no expiry)")
    return seconds or None


def password_of(url: str) -> str | None:
    """The URL's password, else the environment's (MLIR_OFFLOAD_REMOTE_CACHE_PASSWORD, then REDISCLI_AUTH)."""
    return urlsplit(url).password or next(
        (os.environ[name] for name in PASSWORD_ENVIRONMENTS if os.environ.get(name)), None
    )


def server_id(url: str) -> str:
    """Names the server and its credentials without holding them (the folder's record of a failure)."""
    return hashlib.sha256(f"{url}\0{password_of(url) or ''}".encode()).hexdigest()


class RemoteCache:
    """One compile's connection to the remote tier: get_many once, put_many once. The client is made (and
    the `redis` package imported) on the first of them."""

    def __init__(self, url: str, mode: str = "read-write", ttl: int | None = None, warn=None):
        check_url(url)
        self.url = url
        self.shown = redact(url)
        self.mode = check_mode(mode)
        self.ttl = ttl
        self._warn = warn or _print_warning
        self.failure: str | None = None  # why the server failed this compile (then it is not asked again)
        self.lasting = False  # the next compiles would fail alike: worth remembering for a while (root.py)
        self._password = password_of(url)
        self._client: Any = None  # a redis.Redis, made on first use
        from importlib.util import find_spec

        if find_spec("redis") is None:  # a missing client is an error now, not only when an image misses
            raise self._missing_client()

    @property
    def server_id(self) -> str:
        return server_id(self.url)

    @property
    def writable(self) -> bool:
        return self.mode == "read-write" and self.failure is None

    def _missing_client(self) -> OffloadError:
        return OffloadError(
            f"the remote cache {self.shown} ({URL_ENVIRONMENT} or remote-cache) needs the Python "
            "package 'redis': pip install 'mlir-offload[redis]', or unset the remote cache"
        )

    def _connection(self):
        if self._client is not None:
            return self._client
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise self._missing_client() from None
        import inspect

        # No retries, no client-identification round trips (CLIENT SETINFO: driver_info=None from redis 7.1
        # on, lib_name/lib_version=None before): one compile, one pipeline to read, one to write.
        anonymous = (
            {"driver_info": None}
            if "driver_info" in inspect.signature(redis.Redis).parameters
            else {"lib_name": None, "lib_version": None}
        )
        # RESP2: no HELLO round trip (AUTH only with a password, SELECT only for a database other than 0).
        self._client = redis.Redis.from_url(
            self.url,
            password=self._password,
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=_READ_TIMEOUT,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
            health_check_interval=0,
            protocol=2,
            **anonymous,
        )
        return self._client

    def get_many(self, keys: list[str], prefix: str = KEY_PREFIX) -> list[bytes | None]:
        """The values stored under `keys`, in one round trip; None for a key with no value, a value that is
        not a string or one larger than MAX_VALUE_BYTES; all None when the server fails."""
        self.failure = self.failure or _failed_lately(self.server_id)
        if not keys or self.failure is not None:
            return [None] * len(keys)
        client = self._connection()

        def read() -> Any:
            pipeline = client.pipeline(transaction=False)
            for key in keys:
                pipeline.getrange(prefix + key, 0, MAX_VALUE_BYTES)  # inclusive: one byte past the bound
            return pipeline.execute(raise_on_error=False)

        try:
            values = _within_deadline(client, read)
        except Exception as e:  # noqa: BLE001 - any failure of the server or the connection: build without it
            self._fail("read from", e)
            return [None] * len(keys)
        if not isinstance(values, list) or len(values) != len(keys):
            return [None] * len(keys)
        # A key of another type answers an error (WRONGTYPE), a missing key an empty string: both misses.
        return [v if isinstance(v, bytes) and 0 < len(v) <= MAX_VALUE_BYTES else None for v in values]

    def put_many(self, entries: dict[str, bytes], prefix: str = KEY_PREFIX) -> int:
        """Store `entries` (key -> value) in one pipeline; the number written (0 when read-only or failed).
        A value larger than MAX_VALUE_BYTES is not written: no compile would read it."""
        entries = {key: value for key, value in entries.items() if len(value) <= MAX_VALUE_BYTES}
        self.failure = self.failure or _failed_lately(self.server_id)
        if not entries or not self.writable:
            return 0
        client = self._connection()

        def write() -> Any:
            pipeline = client.pipeline(transaction=False)
            for key, value in entries.items():
                pipeline.set(prefix + key, value, ex=self.ttl)
            return pipeline.execute()

        try:
            _within_deadline(client, write)
        except Exception as e:  # noqa: BLE001
            self._fail("write to", e)
            return 0
        return len(entries)

    def skip(self, reason: str) -> None:
        """Do not ask the server this compile (it failed a moment ago: `reason`), with one warning line."""
        self.failure = reason
        self._warn_once(f"the remote cache {self.shown} {reason}; building without it")

    def _warn_once(self, message: str) -> None:
        """A process warns once about a server (a compile asks it for whole compiles, then for images)."""
        if not _recent(_WARNED.get(self.server_id)):
            _WARNED[self.server_id] = time.monotonic()
            self._warn(message)

    def close(self) -> None:
        if self._client is None:
            return
        try:
            self._client.close()
        except Exception:  # noqa: BLE001 - closing a connection that failed
            pass

    def _fail(self, action: str, error: Exception) -> None:
        from redis.exceptions import ConnectionError, TimeoutError

        detail = " ".join(str(error).split()).rstrip(".") or type(error).__name__
        if self._password:
            detail = detail.replace(self._password, "***")
        self.failure = detail
        _FAILED[self.server_id] = (time.monotonic(), detail)
        # Refused, unreachable, slow: the next compiles would wait as long. An error the server answered
        # (a wrong password, a command the ACL denies) is remembered only when reading.
        self.lasting = action == "read from" or isinstance(error, (ConnectionError, TimeoutError, OSError))
        self._warn_once(f"cannot {action} the remote cache {self.shown}: {detail}; building without it")


def _within_deadline(client, operation) -> Any:
    """operation() with one deadline, OPERATION_TIMEOUT, for all of it: the per-read timeouts of the client
    would let a server that sends a byte now and then hold the compile for ever. The operation runs in a
    thread; at the deadline the client's connections are shut down under it, which ends its read at once,
    and a redis TimeoutError is raised (no thread outlives the call: the compile forks afterwards)."""
    from redis.exceptions import TimeoutError as DeadlinePassed

    outcome: list[tuple[bool, Any]] = []

    def work() -> None:
        try:
            outcome.append((True, operation()))
        except BaseException as e:  # noqa: BLE001 - handed over to the calling thread below
            outcome.append((False, e))

    worker = threading.Thread(target=work, name="mlir-offload-remote-cache", daemon=True)
    worker.start()
    worker.join(OPERATION_TIMEOUT)
    if worker.is_alive():
        while worker.is_alive():  # a connect still under way has no socket to shut yet: again until it ends
            client.connection_pool.disconnect(inuse_connections=True)
            worker.join(_DEADLINE_POLL)
        raise DeadlinePassed(f"Timeout: no whole answer within {OPERATION_TIMEOUT:g} s")
    succeeded, result = outcome[0]
    if not succeeded:
        raise result
    return result


def _print_warning(message: str) -> None:
    print(f"mlir-offload: warning: {message}", file=sys.stderr)
