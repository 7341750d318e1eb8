"""`__tgt_offload_entry` records for kernels and device globals, laid out from the target clang's profile.

The profile (offload/data/profiles/clangNN.toml, [entries]) lists the struct's fields as `name:type`, its
size, alignment, section per offload kind and the section of the name strings. This module knows what
each field NAME means, never which clang it is for: a new clang is a new profile, not new code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from offload.errors import OffloadError

if TYPE_CHECKING:  # this module imports llvmlite.ir inside the functions that build IR
    import llvmlite.ir

ENTRY_STRUCT_NAME = "struct.__tgt_offload_entry"
ENTRY_PREFIX = ".offloading.entry."
FIELD_SIZES = {"i16": 2, "i32": 4, "i64": 8, "ptr": 8}


@dataclass(frozen=True)
class OffloadSymbol:
    """One thing the target's registration code registers: a kernel (size 0) or a device global."""

    name: str  # the device symbol name
    address: llvmlite.ir.Value  # the kernel handle, or the host shadow of a global
    size: int = 0  # 0 for a kernel; the global's size in bytes otherwise
    flags: int = 0  # globals: low 3 bits kind (0 global, 1 managed, 2 surface, 3 texture), 8 extern, 16 constant


def entry_symbol(name: str) -> str:
    """The offload entry global of a device symbol (clang's name: the host code refers to it by this name)."""
    return f"{ENTRY_PREFIX}{name}"


def parse_fields(profile) -> list[tuple[str, str]]:
    fields = []
    for spec in profile.entries["fields"]:
        name, _, type_name = spec.partition(":")
        if type_name not in FIELD_SIZES:
            raise OffloadError(
                f"profile for clang {profile.clang_major}: entry field '{spec}' has an unknown "
                f"type (known: {', '.join(FIELD_SIZES)})"
            )
        fields.append((name, type_name))
    return fields


def natural_size(fields: list[tuple[str, str]]) -> int:
    """Size of the struct with every field at its natural alignment (LP64: x86-64 SysV and AAPCS64 agree)."""
    offset, largest = 0, 1
    for _name, type_name in fields:
        size = FIELD_SIZES[type_name]
        offset = (offset + size - 1) // size * size + size
        largest = max(largest, size)
    return (offset + largest - 1) // largest * largest


def entry_struct(module, profile):
    """The identified struct type of the profile's entry layout (checked against its recorded size)."""
    import llvmlite.ir as ir

    fields = parse_fields(profile)
    size = natural_size(fields)
    if size != profile.entries["struct_size"]:
        raise OffloadError(
            f"profile for clang {profile.clang_major}: entry fields add up to {size} bytes, "
            f"the profile says {profile.entries['struct_size']}"
        )
    struct = module.context.get_identified_type(ENTRY_STRUCT_NAME)
    if struct.is_opaque:
        struct.set_body(*[_ir_type(ir, t) for _n, t in fields])
    return struct


def add_entries(module, profile, offload_kind: str, symbols: list[OffloadSymbol]) -> list:
    """One weak constant entry per symbol in the profile's section for `offload_kind`; returns them."""
    import llvmlite.ir as ir

    fields = parse_fields(profile)
    struct = entry_struct(module, profile)
    sections = profile.entries["section"]
    if offload_kind not in sections:
        raise OffloadError(
            f"profile for clang {profile.clang_major} has no entry section for offload kind '{offload_kind}'"
        )
    kind_value = profile.offload_kind_value(offload_kind)
    entries = []
    for symbol in symbols:
        name_bytes = bytearray(symbol.name.encode() + b"\0")
        name_var = ir.GlobalVariable(
            module, ir.ArrayType(ir.IntType(8), len(name_bytes)), f".offloading.entry_name.{symbol.name}"
        )
        name_var.linkage = "internal"
        name_var.unnamed_addr = True
        name_var.global_constant = True
        name_var.initializer = ir.Constant(name_var.value_type, name_bytes)
        name_var.align = 1
        if profile.entries.get("name_section"):
            name_var.section = profile.entries["name_section"]
        values = {
            "reserved": 0,
            "version": profile.entries.get("version", 0),
            "kind": kind_value,
            "flags": symbol.flags,
            "address": symbol.address,
            "name": name_var,
            "size": symbol.size,
            "data": 0,
            "aux_address": None,
        }
        constants = []
        for field_name, type_name in fields:
            if field_name not in values:
                raise OffloadError(
                    f"profile for clang {profile.clang_major}: entry field '{field_name}' has no known meaning"
                )
            value = values[field_name]
            if type_name == "ptr":
                constants.append(value if value is not None else ir.Constant(ir.PointerType(), None))
            else:
                constants.append(ir.Constant(_ir_type(ir, type_name), value))
        entry = ir.GlobalVariable(module, struct, entry_symbol(symbol.name))
        entry.linkage = "weak"
        entry.global_constant = True
        entry.initializer = ir.Constant(struct, constants)
        entry.section = sections[offload_kind]
        entry.align = profile.entries["align"]
        entries.append(entry)
    return entries


def load_field(builder, module, profile, entry, field_name: str):
    """The pointer field `field_name` ("address": the kernel handle, "name": the device symbol's name) of the
    entry `entry` points to, loaded with `builder`."""
    import llvmlite.ir as ir

    names = [name for name, _type in parse_fields(profile)]
    if field_name not in names:
        raise OffloadError(
            f"profile for clang {profile.clang_major}: entries have no '{field_name}' field, where launches read it"
        )
    i32 = ir.IntType(32)
    field = builder.gep(
        entry,
        [ir.Constant(i32, 0), ir.Constant(i32, names.index(field_name))],
        inbounds=True,
        source_etype=entry_struct(module, profile),
    )
    return builder.load(field, typ=ir.PointerType(), name=field_name)


def _ir_type(ir, type_name: str):
    return ir.PointerType() if type_name == "ptr" else ir.IntType(FIELD_SIZES[type_name] * 8)
