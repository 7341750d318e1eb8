"""Whom mlir-offload trusts with what it reads from places others may write (docs/cache.md, "Whom the
cache trusts"). One rule for the device image cache, the emulator's builds and a project's
mlir-offload.toml: a folder or file is taken only from the user (in team mode also from the cache
folder's group; a project file also from root and from an explicitly trusted group or path), and only
when no one else can change it. The callers open every name without following links and judge the
`fstat` of what they opened, so that what is checked is what is read."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

from offload.errors import OffloadError

CACHE_MODE_ENVIRONMENT = "MLIR_OFFLOAD_CACHE_MODE"  # "team": a cache folder shared by one group
CACHE_MODES = ("private", "team")
# mlir-offload.toml files applied whatever their owner (as git's safe.directory): os.pathsep-separated
# folders or files, `group=NAME` (a group's files; NAME or a number), or `*` (every file).
TRUSTED_CONFIG_ENVIRONMENT = "MLIR_OFFLOAD_TRUSTED_CONFIG"


def team_mode() -> bool:
    mode = os.environ.get(CACHE_MODE_ENVIRONMENT) or "private"
    if mode not in CACHE_MODES:
        raise OffloadError(f"{CACHE_MODE_ENVIRONMENT} '{mode}' is not one of {', '.join(CACHE_MODES)}")
    return mode == "team"


def folder_problem(status: os.stat_result, team: bool) -> str | None:
    """Why a cache folder cannot be used (others than its owner, or in team mode its group, can write
    into it), or None."""
    mode = stat.S_IMODE(status.st_mode)
    if mode & stat.S_IWOTH:
        return f"can be written by every user (mode {mode:o})"
    if team:
        if status.st_uid != os.geteuid() and status.st_gid not in user_groups():
            return f"belongs to user {status.st_uid} and group {status.st_gid}, neither yours"
        return None
    if status.st_uid != os.geteuid():
        return f"belongs to another user (uid {status.st_uid})"
    if mode & stat.S_IWGRP and not private_group(status.st_gid):
        return f"can be written by its group (mode {mode:o}) and {CACHE_MODE_ENVIRONMENT} is not team"
    return None


def trusted_entry(status: os.stat_result, team: bool, group: int | None) -> bool:
    """An entry or folder inside a cache folder that no one but the user (team mode: the cache folder's
    group `group`) made or can change."""
    mode = stat.S_IMODE(status.st_mode)
    if mode & stat.S_IWOTH:
        return False
    if status.st_uid == os.geteuid():
        return team or not mode & stat.S_IWGRP or private_group(status.st_gid)
    return team and status.st_gid == group


def config_problem(status: os.stat_result, path: Path) -> str | None:
    """Why a project's mlir-offload.toml is not applied (another user's, or writable by others), or None.
    Root's files count as the user's (root can change the user's own anyway); an entry of
    MLIR_OFFLOAD_TRUSTED_CONFIG naming the file, its folder, its group or `*` trusts it whatever it is."""
    entries = [entry for entry in os.environ.get(TRUSTED_CONFIG_ENVIRONMENT, "").split(os.pathsep) if entry]
    if "*" in entries or _named(path, entries):
        return None
    trusted_groups = {gid for entry in entries if entry.startswith("group=") for gid in _group_id(entry[6:])}
    mode = stat.S_IMODE(status.st_mode)
    if mode & stat.S_IWOTH:
        return f"can be written by every user (mode {mode:o})"
    if status.st_gid in trusted_groups:
        return None
    if status.st_uid not in (os.geteuid(), 0):
        return f"belongs to another user ({_user_name(status.st_uid)})"
    if mode & stat.S_IWGRP and not private_group(status.st_gid):
        return f"can be written by its group ({_group_name(status.st_gid)}, mode {mode:o})"
    return None


def _named(path: Path, entries: list[str]) -> bool:
    real = os.path.realpath(path)
    for entry in entries:
        if not os.path.isabs(entry):
            continue
        named = os.path.realpath(entry)
        if named in (real, os.path.dirname(real)):
            return True
    return False


def _group_id(name: str) -> list[int]:
    if name.isdigit():
        return [int(name)]
    try:
        return [grp.getgrnam(name).gr_gid]
    except KeyError:
        return []


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name}, uid {uid}"
    except KeyError:
        return f"uid {uid}"


def _group_name(gid: int) -> str:
    try:
        return f"group {grp.getgrgid(gid).gr_name}"
    except KeyError:
        return f"gid {gid}"


def user_groups() -> set[int]:
    return {os.getegid(), *os.getgroups()}


def private_group(gid: int) -> bool:
    """The user's own group, with no other member (Debian's user private groups under umask 002)."""
    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(os.geteuid())
    except KeyError:
        return False
    return gid == user.pw_gid and group.gr_name == user.pw_name and not group.gr_mem
