"""Where the caches live and how their two tiers are opened: a local folder first (folder.py), then, when
one is set, a Redis server shared between machines (remote.py). Both the device image cache
(offload/device/image_cache.py) and the cache of whole compiles (compiles.py) keep their entries there;
docs/cache.md says how to set them up and whom they trust. The local folder is MLIR_OFFLOAD_CACHE_DIR,
else $XDG_CACHE_HOME/mlir-offload, else ~/.cache/mlir-offload."""

from __future__ import annotations

import os
from pathlib import Path

from offload.cache.environment import REMOTE_URL_ENVIRONMENT
from offload.trust import CACHE_MODE_ENVIRONMENT, team_mode

CACHE_ENVIRONMENT = "MLIR_OFFLOAD_CACHE_DIR"
FOLDER_MODE_ENVIRONMENT = CACHE_MODE_ENVIRONMENT  # "team": a folder shared by one group


def cache_root() -> Path | None:
    explicit = os.environ.get(CACHE_ENVIRONMENT)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "mlir-offload"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "mlir-offload" if home != "~" else None


def open_folder(create: bool = True, warn=None):
    """The local tier (an opened CacheFolder), or None: no folder, or one that cannot be trusted (then
    one warning line has said so)."""
    from offload.cache.folder import CacheFolder

    root = cache_root()
    if root is None:
        return None
    folder = CacheFolder(root, team=team_mode(), warn=warn)
    return folder if folder.open(create) else None


def remote_settings(options) -> tuple[str | None, str, int | None]:
    """(URL, mode, TTL) of the remote tier: the environment, else mlir-offload.toml (options); URL None when
    no server is set."""
    url = os.environ.get(REMOTE_URL_ENVIRONMENT) or options.remote_cache or None
    if url is None:
        return None, options.remote_cache_mode, None
    from offload.cache.remote import MODE_ENVIRONMENT, TTL_ENVIRONMENT, check_mode, check_ttl

    given_mode = os.environ.get(MODE_ENVIRONMENT)
    mode = check_mode(given_mode) if given_mode else options.remote_cache_mode
    given_ttl = os.environ.get(TTL_ENVIRONMENT)
    ttl = check_ttl(given_ttl) if given_ttl else (options.remote_cache_ttl or None)
    return url, mode, ttl


def remote_values(folder, remote, keys: list[str], prefix: str | None = None) -> list[bytes | None]:
    """The remote tier's values of `keys`, unless it failed a moment ago (the folder remembers it): a
    server that is down costs one timeout per REMOTE_DOWN_SECONDS, not one per compile."""
    down = folder.remote_down(remote.server_id) if folder is not None else None
    if down is not None:
        from offload.cache.folder import REMOTE_DOWN_SECONDS

        age, why = down
        remote.skip(f"failed {age:.0f} s ago ({why}): not asked again for {REMOTE_DOWN_SECONDS - age:.0f} s")
        return [None] * len(keys)
    values = remote.get_many(keys, prefix) if prefix else remote.get_many(keys)
    if folder is not None:
        remember_failure(folder, remote)
    return values


def remember_failure(folder, remote) -> None:
    if remote.failure is not None and remote.lasting:
        folder.mark_remote_down(remote.server_id, remote.failure)
