"""MLIR's runner utilities (mlir_runner_utils, mlir_c_runner_utils, mlir_float16_utils), emitted into the
bundle when the host calls them, so the target needs no MLIR.

The text printed is upstream's byte for byte: its C++ streams print a float or double as printf's %g, an
int8_t as a character, an index as unsigned, a complex as (re,im); memrefs are printed by the same
recursion as upstream's MemRefDataPrinter (brackets, ", ", newlines between rows, rank - dim + 1 spaces of
indentation). Everything goes through libc printf on stdout; a memref ends with a flush as std::endl does.

Descriptors are read through the module's data layout: a ranked descriptor is {ptr allocated, ptr aligned,
i64 offset, i64 sizes[rank], i64 strides[rank]}, an unranked one {i64 rank, ptr ranked descriptor}.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "__mlir_offload_ru."


@dataclass(frozen=True)
class Element:
    """One element type of upstream's printMemref* family."""

    name: str  # upstream's suffix: F32, I8, Ind, C32, ...
    # "float" (printed %g), "half" / "bfloat" (16 bits printed as float), "char", "int", "unsigned", "complex"
    kind: str
    bits: int  # of one scalar (a complex has two)


ELEMENTS = {
    e.name: e
    for e in (
        Element("I8", "char", 8),
        Element("I16", "int", 16),
        Element("I32", "int", 32),
        Element("I64", "int", 64),
        Element("F16", "half", 16),
        Element("BF16", "bfloat", 16),
        Element("F32", "float", 32),
        Element("F64", "float", 64),
        Element("Ind", "unsigned", 64),
        Element("C32", "complex", 32),
        Element("C64", "complex", 64),
    )
}

# Upstream's exported names, each -> how it is emitted: (form, element, rank for ranked forms).
UTILITIES: dict[str, tuple] = {}
for _name in ELEMENTS:
    UTILITIES[f"_mlir_ciface_printMemref{_name}"] = ("unranked_ciface", _name, None)
for _name in ("I32", "I64", "F32", "F64", "Ind", "C32", "C64"):
    UTILITIES[f"printMemref{_name}"] = ("unranked", _name, None)
for _name in ("I8", "I32", "I64", "F32", "F64", "Ind", "C32", "C64"):
    UTILITIES[f"_mlir_ciface_printMemrefShape{_name}"] = ("shape", _name, None)
for _rank in range(5):
    UTILITIES[f"_mlir_ciface_printMemref{_rank}dF32"] = ("ranked", "F32", _rank)
for _name in ("I8", "I32", "I64", "F64", "Ind", "C32", "C64"):
    UTILITIES[f"_mlir_ciface_printMemref1d{_name}"] = ("ranked", _name, 1)
for _name in (
    "printI64",
    "printU64",
    "printF32",
    "printF64",
    "printF16",
    "printBF16",
    "printString",
    "printCString",
    "printOpen",
    "printClose",
    "printComma",
    "printNewline",
    "memrefCopy",
    "rtclock",
    "printFlops",
    "_mlir_ciface_nanoTime",
):
    UTILITIES[_name] = (_name, None, None)

# vector.print's punctuation (CRunnerUtils).
PUNCTUATION = {"printOpen": "( ", "printClose": " )", "printComma": ", ", "printNewline": "\n"}


def is_runner_utility(name: str) -> bool:
    return name in UTILITIES


class RunnerUtilsEmitter:
    """Defines runner utilities in the module of a RuntimeEmitter (whose declare/cstring it shares)."""

    def __init__(self, emitter):
        self.e = emitter
        self.ir = emitter.ir
        ir = self.ir
        self.f32 = ir.FloatType()
        self.f64 = ir.DoubleType()
        # The ranked descriptor's fixed head; field 3 is where sizes[] starts.
        self.head = ir.LiteralStructType([emitter.ptr, emitter.ptr, emitter.i64, emitter.i64])
        self.unranked = ir.LiteralStructType([emitter.i64, emitter.ptr])

    # -- libc ---------------------------------------------------------------------------------------
    def printf(self, b, fmt: str, *args):
        e = self.e
        printf = e.declare("printf", e.i32, [e.ptr], var_arg=True)
        return b.call(printf, [e.cstring(fmt), *args])

    def text(self, b, text: str):
        self.printf(b, "%s", self.e.cstring(text))

    def flush(self, b):
        e = self.e
        b.call(e.declare("fflush", e.i32, [e.ptr]), [self.ir.Constant(e.ptr, None)])

    def internal(self, name: str, ret, args):
        fn = self.e.declare(PREFIX + name, ret, args)
        if not fn.blocks:
            fn.linkage = "internal"
        return fn

    def exported(self, name: str, ret, args):
        """An upstream-named function (external while linking, made internal by the caller)."""
        fn = self.e.declare(name, ret, args)
        return fn, self.ir.IRBuilder(fn.append_basic_block("entry"))

    def const(self, value: int):
        return self.ir.Constant(self.e.i64, value)

    # -- scalars ---------------------------------------------------------------------------------
    def print_scalar(self, b, element: Element, value):
        """Print one loaded scalar of `element` as upstream's stream does."""
        ir, e = self.ir, self.e
        if element.kind == "float":
            self.printf(b, "%g", value if element.bits == 64 else b.fpext(value, self.f64))
        elif element.kind == "half":
            self.printf(b, "%g", b.fpext(b.bitcast(value, ir.HalfType()), self.f64))
        elif element.kind == "bfloat":  # bfloat16 is the upper half of a float32
            as_float = b.bitcast(b.shl(b.zext(value, e.i32), ir.Constant(e.i32, 16)), self.f32)
            self.printf(b, "%g", b.fpext(as_float, self.f64))
        elif element.kind == "char":
            self.printf(b, "%c", b.sext(value, e.i32))
        elif element.kind == "int":
            self.printf(b, "%lld", value if element.bits == 64 else b.sext(value, e.i64))
        elif element.kind == "unsigned":
            self.printf(b, "%llu", value)
        else:
            raise AssertionError(element)

    def scalar_type(self, element: Element):
        if element.kind == "float" or element.kind == "complex":
            return self.f64 if element.bits == 64 else self.f32
        return self.ir.IntType(element.bits)

    def element_printer(self, element: Element):
        """`void (ptr base, i64 index)`: print base[index]."""
        ir, e = self.ir, self.e
        fn = self.internal(f"print_element.{element.name}", e.void, [e.ptr, e.i64])
        if fn.blocks:
            return fn
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        base, index = fn.args
        scalar = self.scalar_type(element)
        if element.kind == "complex":
            pair = ir.LiteralStructType([scalar, scalar])
            address = b.gep(base, [index], source_etype=pair)
            parts = [
                b.load(b.gep(address, [ir.Constant(e.i32, 0), ir.Constant(e.i32, i)], source_etype=pair), typ=scalar)
                for i in (0, 1)
            ]
            self.text(b, "(")
            self.print_scalar(b, Element("part", "float", element.bits), parts[0])
            self.text(b, ",")
            self.print_scalar(b, Element("part", "float", element.bits), parts[1])
            self.text(b, ")")
        else:
            self.print_scalar(b, element, b.load(b.gep(base, [index], source_etype=scalar), typ=scalar))
        b.ret_void()
        return fn

    # -- memrefs ---------------------------------------------------------------------------------
    def spaces(self, b, count):
        """`count` spaces (none when count <= 0), as upstream's printSpace."""
        self.printf(b, "%*s", b.trunc(count, self.e.i32), self.e.cstring(""))

    def data_printer(self, element: Element):
        """`void (ptr base, i64 dim, i64 rank, i64 offset, ptr sizes, ptr strides)`: upstream's
        MemRefDataPrinter::print with printFirst/printLast inlined."""
        ir, e = self.ir, self.e
        fn = self.internal(f"print_data.{element.name}", e.void, [e.ptr, e.i64, e.i64, e.i64, e.ptr, e.ptr])
        if fn.blocks:
            return fn
        base, dim, rank, offset, sizes, strides = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        scalar_block, nested_block = fn.append_basic_block("scalar"), fn.append_basic_block("nested")
        b.cbranch(b.icmp_signed("==", dim, self.const(0)), scalar_block, nested_block)
        b.position_at_end(scalar_block)
        b.call(self.element_printer(element), [base, offset])
        b.ret_void()

        b.position_at_end(nested_block)
        inner_dim = b.sub(dim, self.const(1))
        inner_sizes = b.gep(sizes, [self.const(1)], source_etype=e.i64)
        inner_strides = b.gep(strides, [self.const(1)], source_etype=e.i64)
        extent = b.load(sizes, typ=e.i64)
        stride = b.load(strides, typ=e.i64)
        indent = b.add(b.sub(rank, dim), self.const(1))

        def recurse(builder, at):
            builder.call(fn, [base, inner_dim, rank, at, inner_sizes, inner_strides])

        def separator(builder, after):
            self.text(builder, ", ")
            newline, done = fn.append_basic_block(f"{after}.newline"), fn.append_basic_block(f"{after}.done")
            builder.cbranch(builder.icmp_signed(">", dim, self.const(1)), newline, done)
            builder.position_at_end(newline)
            self.text(builder, "\n")
            builder.branch(done)
            builder.position_at_end(done)

        self.text(b, "[")
        recurse(b, offset)
        single, several = fn.append_basic_block("single"), fn.append_basic_block("several")
        b.cbranch(b.icmp_signed("<=", extent, self.const(1)), single, several)
        b.position_at_end(single)
        self.text(b, "]")
        b.ret_void()

        b.position_at_end(several)
        separator(b, "first")

        def middle(index):
            self.spaces(b, indent)
            recurse(b, b.add(offset, b.mul(index, stride)))
            separator(b, "middle")

        last = b.sub(extent, self.const(1))
        self.counted_loop(fn, b, self.const(1), last, middle, "rows")
        self.spaces(b, indent)
        recurse(b, b.add(offset, b.mul(last, stride)))
        self.text(b, "]")
        b.ret_void()
        return fn

    def descriptor_fields(self, b, descriptor, rank):
        """(aligned pointer, offset, sizes pointer, strides pointer) of a ranked descriptor."""
        ir, e = self.ir, self.e

        def field(i):
            return b.gep(descriptor, [ir.Constant(e.i32, 0), ir.Constant(e.i32, i)], source_etype=self.head)

        aligned = b.load(field(1), typ=e.ptr)
        offset = b.load(field(2), typ=e.i64)
        sizes = field(3)
        return aligned, offset, sizes, b.gep(sizes, [rank], source_etype=e.i64)

    def metadata_printer(self):
        """`void (i64 rank, ptr descriptor)`: upstream's printMemRefMetaData."""
        ir, e = self.ir, self.e
        fn = self.internal("print_metadata", e.void, [e.i64, e.ptr])
        if fn.blocks:
            return fn
        rank, descriptor = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        aligned, offset, sizes, strides = self.descriptor_fields(b, descriptor, rank)
        self.printf(b, "base@ = %p rank = %lld offset = %lld", aligned, rank, offset)
        for label, values in ((" sizes = [", sizes), ("] strides = [", strides)):
            self.text(b, label)
            self.int_list(fn, b, rank, values)
        self.text(b, "]")
        b.ret_void()
        return fn

    def counted_loop(self, fn, b, start, stop, body, name: str) -> None:
        """for (index = start; index < stop; ++index) body(index); b ends after the loop."""
        e = self.e
        before = b.block
        loop, done = fn.append_basic_block(name), fn.append_basic_block(f"{name}.done")
        b.cbranch(b.icmp_signed("<", start, stop), loop, done)
        b.position_at_end(loop)
        index = b.phi(e.i64)
        index.add_incoming(start, before)
        body(index)
        following = b.add(index, self.const(1))
        index.add_incoming(following, b.block)
        b.cbranch(b.icmp_signed("<", following, stop), loop, done)
        b.position_at_end(done)

    def int_list(self, fn, b, count, values):
        """values[0], values[1], ... (", " between), nothing when count is 0."""
        e = self.e

        def element(index):
            first, rest = fn.append_basic_block("first"), fn.append_basic_block("rest")
            b.cbranch(b.icmp_signed("==", index, self.const(0)), first, rest)
            b.position_at_end(rest)
            self.text(b, ", ")
            b.branch(first)
            b.position_at_end(first)
            self.printf(b, "%lld", b.load(b.gep(values, [index], source_etype=e.i64), typ=e.i64))

        self.counted_loop(fn, b, self.const(0), count, element, "list")

    def memref_printer(self, element: Element):
        """`void (ptr prefix, i64 rank, ptr descriptor)`: upstream's printMemRef."""
        ir, e = self.ir, self.e
        fn = self.internal(f"print_memref.{element.name}", e.void, [e.ptr, e.i64, e.ptr])
        if fn.blocks:
            return fn
        prefix, rank, descriptor = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.printf(b, "%s", prefix)
        b.call(self.metadata_printer(), [rank, descriptor])
        self.text(b, " data = \n")
        self.flush(b)
        aligned, offset, sizes, strides = self.descriptor_fields(b, descriptor, rank)
        is_scalar = b.icmp_signed("==", rank, self.const(0))
        with b.if_then(is_scalar):
            self.text(b, "[")
        b.call(self.data_printer(element), [aligned, rank, rank, offset, sizes, strides])
        with b.if_then(is_scalar):
            self.text(b, "]")
        self.text(b, "\n")
        self.flush(b)
        b.ret_void()
        return fn

    def unranked_fields(self, b, unranked):
        ir, e = self.ir, self.e

        def field(i):
            return b.gep(unranked, [ir.Constant(e.i32, 0), ir.Constant(e.i32, i)], source_etype=self.unranked)

        return b.load(field(0), typ=e.i64), b.load(field(1), typ=e.ptr)

    # -- the exported names -----------------------------------------------------------------------
    def define(self, name: str) -> None:
        form, element_name, rank = UTILITIES[name]
        e, ir = self.e, self.ir
        if form in ("unranked_ciface", "shape"):
            fn, b = self.exported(name, e.void, [e.ptr])
            rank_value, descriptor = self.unranked_fields(b, fn.args[0])
            if form == "shape":
                self.text(b, "Unranked Memref ")
                b.call(self.metadata_printer(), [rank_value, descriptor])
                self.text(b, "\n")
            else:
                b.call(
                    self.memref_printer(ELEMENTS[element_name]), [e.cstring("Unranked Memref "), rank_value, descriptor]
                )
            b.ret_void()
        elif form == "unranked":
            fn, b = self.exported(name, e.void, [e.i64, e.ptr])
            b.call(self.memref_printer(ELEMENTS[element_name]), [e.cstring("Unranked Memref "), *fn.args])
            b.ret_void()
        elif form == "ranked":
            fn, b = self.exported(name, e.void, [e.ptr])
            b.call(self.memref_printer(ELEMENTS[element_name]), [e.cstring("Memref "), self.const(rank), fn.args[0]])
            b.ret_void()
        elif form in PUNCTUATION:
            fn, b = self.exported(name, e.void, [])
            self.text(b, PUNCTUATION[form])
            b.ret_void()
        elif form in ("printI64", "printU64"):
            fn, b = self.exported(name, e.void, [e.i64])
            self.printf(b, "%lld" if form == "printI64" else "%llu", fn.args[0])
            b.ret_void()
        elif form in ("printF32", "printF64"):
            fn, b = self.exported(name, e.void, [self.f32 if form == "printF32" else self.f64])
            self.print_scalar(b, ELEMENTS[form[5:]], fn.args[0])
            b.ret_void()
        elif form in ("printF16", "printBF16"):
            fn, b = self.exported(name, e.void, [e.i16])
            self.print_scalar(b, ELEMENTS[form[5:]], fn.args[0])
            b.ret_void()
        elif form in ("printString", "printCString"):
            fn, b = self.exported(name, e.void, [e.ptr])
            self.printf(b, "%s", fn.args[0])
            b.ret_void()
        elif form == "printFlops":
            fn, b = self.exported(name, e.void, [self.f64])
            dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
            gflops = b.fdiv(fn.args[0], ir.Constant(self.f64, 1.0e9))
            b.call(dprintf, [ir.Constant(e.i32, 2), e.cstring("%lf GFLOPS\n"), gflops])
            b.ret_void()
        elif form == "rtclock":
            self.define_rtclock(name)
        elif form == "_mlir_ciface_nanoTime":
            self.define_nano_time(name)
        elif form == "memrefCopy":
            self.define_memref_copy(name)
        else:
            raise AssertionError(name)

    def timespec(self, b):
        """(seconds, nanoseconds) of clock_gettime(CLOCK_REALTIME) as i64s (struct timespec on LP64)."""
        ir, e = self.ir, self.e
        timespec = ir.LiteralStructType([e.i64, e.i64])
        slot = b.alloca(timespec)
        clock_gettime = e.declare("clock_gettime", e.i32, [e.i32, e.ptr])
        b.call(clock_gettime, [ir.Constant(e.i32, 0), slot])
        return [
            b.load(b.gep(slot, [ir.Constant(e.i32, 0), ir.Constant(e.i32, i)], source_etype=timespec), typ=e.i64)
            for i in (0, 1)
        ]

    def define_rtclock(self, name: str):
        """Seconds since the epoch as a double (upstream: gettimeofday, microsecond resolution)."""
        ir = self.ir
        fn, b = self.exported(name, self.f64, [])
        seconds, nanoseconds = self.timespec(b)
        microseconds = b.sdiv(nanoseconds, self.const(1000))
        b.ret(
            b.fadd(b.sitofp(seconds, self.f64), b.fmul(b.sitofp(microseconds, self.f64), ir.Constant(self.f64, 1.0e-6)))
        )

    def define_nano_time(self, name: str):
        fn, b = self.exported(name, self.e.i64, [])
        seconds, nanoseconds = self.timespec(b)
        b.ret(b.add(b.mul(seconds, self.const(1_000_000_000)), nanoseconds))

    def define_memref_copy(self, name: str):
        """memrefCopy(i64 element bytes, unranked* src, unranked* dst): element-wise strided copy."""
        e = self.e
        copy_level = self.internal("copy_level", e.void, [e.ptr, e.ptr, e.i64, e.i64, e.ptr, e.ptr, e.ptr])
        self.define_copy_level(copy_level)
        fn, b = self.exported(name, e.void, [e.i64, e.ptr, e.ptr])
        element_bytes, source, target = fn.args
        rank, source_descriptor = self.unranked_fields(b, source)
        _rank, target_descriptor = self.unranked_fields(b, target)
        src, src_offset, sizes, src_strides = self.descriptor_fields(b, source_descriptor, rank)
        dst, dst_offset, _sizes, dst_strides = self.descriptor_fields(b, target_descriptor, rank)
        src = b.gep(src, [b.mul(src_offset, element_bytes)], source_etype=e.i8)
        dst = b.gep(dst, [b.mul(dst_offset, element_bytes)], source_etype=e.i8)
        b.call(copy_level, [dst, src, element_bytes, rank, sizes, src_strides, dst_strides])
        b.ret_void()

    def define_copy_level(self, fn):
        """`void (ptr dst, ptr src, i64 element bytes, i64 dims left, ptr sizes, ptr src strides,
        ptr dst strides)`: one element when no dimension is left, else each index of the outer one."""
        if fn.blocks:
            return
        ir, e = self.ir, self.e
        dst, src, element_bytes, dims, sizes, src_strides, dst_strides = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        element_block, outer_block = fn.append_basic_block("element"), fn.append_basic_block("outer")
        b.cbranch(b.icmp_signed("==", dims, self.const(0)), element_block, outer_block)
        b.position_at_end(element_block)
        b.call(e.declare("memcpy", e.ptr, [e.ptr, e.ptr, e.i64]), [dst, src, element_bytes])
        b.ret_void()
        b.position_at_end(outer_block)
        extent = b.load(sizes, typ=e.i64)
        src_step = b.mul(b.load(src_strides, typ=e.i64), element_bytes)
        dst_step = b.mul(b.load(dst_strides, typ=e.i64), element_bytes)
        inner = [b.gep(p, [self.const(1)], source_etype=e.i64) for p in (sizes, src_strides, dst_strides)]
        rest = b.sub(dims, self.const(1))

        def level(index):
            b.call(
                fn,
                [
                    b.gep(dst, [b.mul(index, dst_step)], source_etype=e.i8),
                    b.gep(src, [b.mul(index, src_step)], source_etype=e.i8),
                    element_bytes,
                    rest,
                    *inner,
                ],
            )

        self.counted_loop(fn, b, self.const(0), extent, level, "index")
        b.ret_void()


def define_runner_utilities(emitter, names) -> None:
    """Define each runner utility in `names` (those the host module declares) in emitter's module."""
    runner = RunnerUtilsEmitter(emitter)
    for name in names:
        runner.define(name)
