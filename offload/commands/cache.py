"""Command `cache`: where the device image cache is, its size and hit/miss counts; clear it or zero its
counts (as `ccache -s`, `-C`, `-z` and `sccache --show-stats`). The remote tier is named, never contacted."""

from __future__ import annotations

import os

import click

from offload.errors import OffloadError, warn_when_done


@click.command("cache")
@click.option(
    "-C",
    "--clear",
    "clear",
    is_flag=True,
    help=(
        "Remove every image of the local cache folder and the toolchain facts (the counts stay; the remote "
        "cache is shared and left alone)."
    ),
)
@click.option("-z", "--zero-stats", "zero_stats", is_flag=True, help="Set the hit and miss counts to zero.")
def cache_command(clear: bool, zero_stats: bool) -> None:
    """Show the device image cache: its folder, size, hits and misses, and the remote cache (if set).

    The folder is MLIR_OFFLOAD_CACHE_DIR, else $XDG_CACHE_HOME/mlir-offload, else ~/.cache/mlir-offload;
    the remote cache MLIR_OFFLOAD_REMOTE_CACHE, else remote-cache in the mlir-offload.toml of the current
    folder (docs/cache.md)."""
    from offload.cache.folder import COMPILE_SUFFIX
    from offload.cache.root import cache_root, open_folder, team_mode

    root = cache_root()
    if root is None:
        raise OffloadError("no device image cache folder: set MLIR_OFFLOAD_CACHE_DIR (HOME is not set)")
    folder = open_folder(create=False)
    exists = os.path.isdir(root)
    if exists and folder is None:  # not trusted: open_folder printed why
        raise OffloadError(f"the device image cache '{root}' is not used (see the warning above)")
    if folder is not None and clear:
        click.echo(f"cleared {folder.clear()} images from {root}")
    if folder is not None and zero_stats:
        folder.zero_stats()
        click.echo("hit and miss counts set to zero")
    entries = list(folder.entries()) if folder else []
    stats = folder.stats() if folder else {}
    size = sum(size for _, _, size, _ in entries)
    compiles = sum(name.endswith(COMPILE_SUFFIX) for _, name, _, _ in entries)
    bound = folder.max_bytes if folder else None
    mode = "team: its group may write" if team_mode() else "private"
    local_hits, remote_hits = stats.get("local_hits", 0), stats.get("remote_hits", 0)
    compile_hits, compile_remote_hits = stats.get("compile_hits", 0), stats.get("compile_remote_hits", 0)
    rows = [
        ("cache folder", f"{root} ({mode})" if exists else f"{root} (not created yet)"),
        (
            "size",
            f"{_size(size)} in {len(entries) - compiles} images"
            + (f" and {compiles} whole compiles" if compiles else "")
            + (f" (bound {_size(bound)})" if bound else ""),
        ),
        ("hits", f"{local_hits + remote_hits} (local {local_hits}, remote {remote_hits})"),
        ("misses", str(stats.get("misses", 0))),
    ]
    if compile_hits or compile_remote_hits:
        rows.append(
            (
                "whole compiles",
                f"{compile_hits + compile_remote_hits} taken from the cache (local "
                f"{compile_hits}, remote {compile_remote_hits})",
            )
        )
    if stats.get("remote_writes"):
        rows.append(("remote writes", str(stats["remote_writes"])))
    rows.append(("remote cache", _remote(folder)))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name.ljust(width)}  {value}")
    if folder is not None:
        folder.close()


def _remote(folder) -> str:
    """The server (its password hidden), its mode, and whether a compile found it failing a moment ago."""
    from offload.cache.folder import REMOTE_DOWN_SECONDS
    from offload.cache.remote import MODE_ENVIRONMENT, URL_ENVIRONMENT, redact, server_id
    from offload.config import project_config
    from offload.fsutil import current_folder
    from offload.options import DEFAULTS

    here = current_folder()
    if here is None:
        warn_when_done(
            "mlir-offload: warning: the current folder is gone or unreadable: no mlir-offload.toml was looked for"
        )
    config = project_config(here) if here is not None else None
    url = os.environ.get(URL_ENVIRONMENT) or (config.values.get("remote-cache") if config else None)
    if not url:
        return f"none (set {URL_ENVIRONMENT}=redis://HOST:PORT/DB or remote-cache in mlir-offload.toml)"
    mode = (
        os.environ.get(MODE_ENVIRONMENT)
        or (config.values.get("remote-cache-mode") if config else None)
        or DEFAULTS["remote_cache_mode"]
    )
    down = folder.remote_down(server_id(url)) if folder is not None else None
    if down is None:
        return f"{redact(url)} ({mode})"
    age, why = down
    return f"{redact(url)} ({mode}; failed {age:.0f} s ago: {why}; not asked for {REMOTE_DOWN_SECONDS - age:.0f} s)"


def _size(count: float) -> str:
    if count < 1024:
        return f"{int(count)} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        count /= 1024
        if count < 1024 or unit == "GiB":
            break
    return f"{count:.1f} {unit}"


COMMAND = cache_command
