"""MLIR's async runtime (what libmlir_async_runtime provides to `convert-async-to-llvm`'s code), emitted into
the bundle when the host calls it, so the target needs no MLIR.

Execution model: synchronous, on the calling thread. `mlirAsyncRuntimeExecute` resumes the coroutine at
once (LLVM allows resuming between `coro.save` and `coro.suspend`: upstream's thread pool may do the same
from another thread), so an `async.execute` body runs to its end, or to its first await of something not
yet available, before the `async.execute` returns. What awaits an unavailable token, value or group is
queued on it and resumed, in the order queued, when it becomes available (or an error). Results are those
of upstream's thread pool for every program whose outcome does not depend on thread timing; GPU work
inside the bodies still runs asynchronously on its streams. A blocking `async.await` of something not
available can then never be satisfied (nothing else runs): the program prints
`mlir-offload: async runtime: ...` on stderr and exits 1 instead of hanging. Not thread-safe: the host
program's async calls must come from one thread (as the code `convert-async-to-llvm` makes does).

Objects (tokens, values, groups) share one layout, seven i64-sized fields, then a value's storage:
  refcount, pending (a token/value: 1 until available; a group: tokens not yet available), errors,
  rank (a group's next token rank), first waiter, last waiter; storage at STORAGE_OFFSET (16-aligned).
Reference counts follow upstream: a token or value starts with 2 (the caller's and the producer's, dropped
when it is emplaced), a group with 1; the object is freed when its count reaches 0.
A waiter is {next, void (*call)(ptr, ptr), ptr first, ptr second}, freed after it ran.
"""

from __future__ import annotations

PREFIX = "__mlir_offload_async."
EXIT_STATUS = 1

# Field indices of the object layout.
REFCOUNT, PENDING, ERRORS, RANK, HEAD, TAIL = range(6)
STORAGE_OFFSET = 48
# Field indices of a waiter.
NEXT, CALL, FIRST, SECOND = range(4)

# Upstream's exported names (mlir/ExecutionEngine/AsyncRuntime.h), each -> (return, parameters) spelled
# as "ptr", "i64", "i1", "void"; "resume" is a `void (ptr)` coroutine resume function (a ptr in LLVM IR).
# The worker-thread query keeps upstream's spelling (no 'e' in Runtim).
FUNCTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mlirAsyncRuntimeAddRef": ("void", ("ptr", "i64")),
    "mlirAsyncRuntimeDropRef": ("void", ("ptr", "i64")),
    "mlirAsyncRuntimeCreateToken": ("ptr", ()),
    "mlirAsyncRuntimeCreateValue": ("ptr", ("i64",)),
    "mlirAsyncRuntimeCreateGroup": ("ptr", ("i64",)),
    "mlirAsyncRuntimeAddTokenToGroup": ("i64", ("ptr", "ptr")),
    "mlirAsyncRuntimeEmplaceToken": ("void", ("ptr",)),
    "mlirAsyncRuntimeEmplaceValue": ("void", ("ptr",)),
    "mlirAsyncRuntimeSetTokenError": ("void", ("ptr",)),
    "mlirAsyncRuntimeSetValueError": ("void", ("ptr",)),
    "mlirAsyncRuntimeIsTokenError": ("i1", ("ptr",)),
    "mlirAsyncRuntimeIsValueError": ("i1", ("ptr",)),
    "mlirAsyncRuntimeIsGroupError": ("i1", ("ptr",)),
    "mlirAsyncRuntimeAwaitToken": ("void", ("ptr",)),
    "mlirAsyncRuntimeAwaitValue": ("void", ("ptr",)),
    "mlirAsyncRuntimeAwaitAllInGroup": ("void", ("ptr",)),
    "mlirAsyncRuntimeGetValueStorage": ("ptr", ("ptr",)),
    "mlirAsyncRuntimeExecute": ("void", ("ptr", "resume")),
    "mlirAsyncRuntimeAwaitTokenAndExecute": ("void", ("ptr", "ptr", "resume")),
    "mlirAsyncRuntimeAwaitValueAndExecute": ("void", ("ptr", "ptr", "resume")),
    "mlirAsyncRuntimeAwaitAllInGroupAndExecute": ("void", ("ptr", "ptr", "resume")),
    "mlirAsyncRuntimGetNumWorkerThreads": ("i64", ()),
    "mlirAsyncRuntimePrintCurrentThreadId": ("void", ()),
}


def is_async_runtime_function(name: str) -> bool:
    return name in FUNCTIONS


class AsyncRuntimeEmitter:
    """Defines the async runtime in the module of a RuntimeEmitter (whose declare/cstring it shares)."""

    def __init__(self, emitter):
        self.e = emitter
        self.ir = emitter.ir
        self.i1 = self.ir.IntType(1)
        self.object_type = self.ir.ArrayType(emitter.i64, STORAGE_OFFSET // 8)
        self.waiter_type = self.ir.LiteralStructType([emitter.ptr] * 4)

    # -- small pieces ---------------------------------------------------------------------------
    def const(self, value: int):
        return self.ir.Constant(self.e.i64, value)

    def field(self, b, obj, index: int):
        return b.gep(
            obj, [self.ir.Constant(self.e.i32, 0), self.ir.Constant(self.e.i32, index)], source_etype=self.object_type
        )

    def load(self, b, obj, index: int, typ=None):
        return b.load(self.field(b, obj, index), typ=typ or self.e.i64)

    def store(self, b, value, obj, index: int):
        b.store(value, self.field(b, obj, index))

    def waiter_field(self, b, waiter, index: int):
        return b.gep(
            waiter,
            [self.ir.Constant(self.e.i32, 0), self.ir.Constant(self.e.i32, index)],
            source_etype=self.waiter_type,
        )

    def internal(self, name: str, ret, args):
        """(function, builder at its entry) of an internal helper, or (function, None) once defined."""
        fn = self.e.declare(PREFIX + name, ret, args)
        if fn.blocks:
            return fn, None
        fn.linkage = "internal"
        return fn, self.ir.IRBuilder(fn.append_basic_block("entry"))

    def fail(self, b, message: str):
        """Print `mlir-offload: async runtime: message` on stderr and exit; b's block ends."""
        e = self.e
        dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
        b.call(dprintf, [self.ir.Constant(e.i32, 2), e.cstring(f"mlir-offload: async runtime: {message}\n")])
        b.call(e.declare("exit", e.void, [e.i32]), [self.ir.Constant(e.i32, EXIT_STATUS)])
        b.unreachable()

    def fail_if(self, fn, b, condition, message: str, name: str):
        failed, go_on = fn.append_basic_block(f"{name}.failed"), fn.append_basic_block(f"{name}.ok")
        b.cbranch(condition, failed, go_on)
        b.position_at_end(failed)
        self.fail(b, message)
        b.position_at_end(go_on)

    # -- objects --------------------------------------------------------------------------------
    def create(self, b, storage_bytes, refcount: int, pending):
        """A zeroed object of STORAGE_OFFSET + storage_bytes bytes with its refcount and pending set."""
        e = self.e
        calloc = e.declare("calloc", e.ptr, [e.i64, e.i64])
        obj = b.call(calloc, [self.const(1), b.add(self.const(STORAGE_OFFSET), storage_bytes)])
        fn = b.function
        self.fail_if(fn, b, b.icmp_unsigned("==", obj, self.ir.Constant(e.ptr, None)), "out of memory", "alloc")
        self.store(b, self.const(refcount), obj, REFCOUNT)
        self.store(b, pending, obj, PENDING)
        return obj

    def drop_ref(self):
        """`void (ptr object, i64 count)`: free the object when its last reference goes."""
        e = self.e
        fn, b = self.internal("drop_ref", e.void, [e.ptr, e.i64])
        if b is None:
            return fn
        obj, count = fn.args
        left = b.sub(self.load(b, obj, REFCOUNT), count)
        self.fail_if(fn, b, b.icmp_signed("<", left, self.const(0)), "reference count below zero", "count")
        self.store(b, left, obj, REFCOUNT)
        with b.if_then(b.icmp_signed("==", left, self.const(0))):
            b.call(e.declare("free", e.void, [e.ptr]), [obj])
        b.ret_void()
        return fn

    def add_waiter(self, b, obj, call, first, second):
        """Queue call(first, second) on obj, to run when it becomes available."""
        e = self.e
        malloc = e.declare("malloc", e.ptr, [e.i64])
        waiter = b.call(malloc, [self.const(32)])
        self.fail_if(
            b.function, b, b.icmp_unsigned("==", waiter, self.ir.Constant(e.ptr, None)), "out of memory", "waiter"
        )
        for index, value in ((NEXT, self.ir.Constant(e.ptr, None)), (CALL, call), (FIRST, first), (SECOND, second)):
            b.store(value, self.waiter_field(b, waiter, index))
        tail = self.load(b, obj, TAIL, e.ptr)
        empty = b.icmp_unsigned("==", tail, self.ir.Constant(e.ptr, None))
        with b.if_else(empty) as (then, otherwise):
            with then:
                self.store(b, waiter, obj, HEAD)
            with otherwise:
                b.store(waiter, self.waiter_field(b, tail, NEXT))
        self.store(b, waiter, obj, TAIL)

    def run_waiters(self):
        """`void (ptr object)`: run and free the queued waiters, first queued first."""
        e = self.e
        fn, b = self.internal("run_waiters", e.void, [e.ptr])
        if b is None:
            return fn
        (obj,) = fn.args
        entry = b.block
        first = self.load(b, obj, HEAD, e.ptr)
        self.store(b, self.ir.Constant(e.ptr, None), obj, HEAD)
        self.store(b, self.ir.Constant(e.ptr, None), obj, TAIL)
        loop, body, done = (fn.append_basic_block(n) for n in ("loop", "body", "done"))
        b.branch(loop)
        b.position_at_end(loop)
        waiter = b.phi(e.ptr)
        waiter.add_incoming(first, entry)
        b.cbranch(b.icmp_unsigned("==", waiter, self.ir.Constant(e.ptr, None)), done, body)
        b.position_at_end(body)
        call = b.load(self.waiter_field(b, waiter, CALL), typ=self.function_pointer([e.ptr, e.ptr]))
        a, c, following = (b.load(self.waiter_field(b, waiter, i), typ=e.ptr) for i in (FIRST, SECOND, NEXT))
        b.call(call, [a, c])
        b.call(e.declare("free", e.void, [e.ptr]), [waiter])
        waiter.add_incoming(following, body)
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def resume_waiter(self):
        """`void (ptr resume, ptr handle)`: resume(handle), the waiter of an await-and-execute."""
        e = self.e
        fn, b = self.internal("resume", e.void, [self.function_pointer([e.ptr]), e.ptr])
        if b is None:
            return fn
        resume, handle = fn.args
        b.call(resume, [handle])
        b.ret_void()
        return fn

    def function_pointer(self, params):
        """The type of a pointer to `void (params)`: llvmlite reads an indirect callee's type from its
        typed pointer (printed as plain `ptr`)."""
        return self.ir.FunctionType(self.e.void, params).as_pointer()

    def set_state(self):
        """`void (ptr token or value, i64 error)`: it becomes available (or an error), its waiters run,
        then the producer's reference is dropped."""
        e = self.e
        fn, b = self.internal("set_state", e.void, [e.ptr, e.i64])
        if b is None:
            return fn
        obj, error = fn.args
        self.fail_if(
            fn,
            b,
            b.icmp_signed("!=", self.load(b, obj, PENDING), self.const(1)),
            "a token or value is made available twice",
            "twice",
        )
        self.store(b, error, obj, ERRORS)
        self.store(b, self.const(0), obj, PENDING)
        b.call(self.run_waiters(), [obj])
        b.call(self.drop_ref(), [obj, self.const(1)])
        b.ret_void()
        return fn

    def group_on_token(self):
        """`void (ptr group, ptr token)`: the token is available: count its error, and when it was the
        group's last pending token run the group's waiters."""
        e = self.e
        fn, b = self.internal("group_on_token", e.void, [e.ptr, e.ptr])
        if b is None:
            return fn
        group, token = fn.args
        errors = b.add(
            self.load(b, group, ERRORS), b.zext(b.icmp_signed("!=", self.load(b, token, ERRORS), self.const(0)), e.i64)
        )
        self.store(b, errors, group, ERRORS)
        pending = self.load(b, group, PENDING)
        self.fail_if(
            fn,
            b,
            b.icmp_signed("<=", pending, self.const(0)),
            "more tokens added to an async group than its size",
            "size",
        )
        left = b.sub(pending, self.const(1))
        self.store(b, left, group, PENDING)
        with b.if_then(b.icmp_signed("==", left, self.const(0))):
            b.call(self.run_waiters(), [group])
        b.ret_void()
        return fn

    def group_on_token_later(self):
        """The waiter an unavailable token gets for its group: group_on_token, then drop the group
        reference taken while the token was pending."""
        e = self.e
        fn, b = self.internal("group_on_token_later", e.void, [e.ptr, e.ptr])
        if b is None:
            return fn
        group, token = fn.args
        b.call(self.group_on_token(), [group, token])
        b.call(self.drop_ref(), [group, self.const(1)])
        b.ret_void()
        return fn

    # -- the exported names -----------------------------------------------------------------------
    def type_of(self, spelling: str):
        e = self.e
        return {"ptr": e.ptr, "i64": e.i64, "i1": self.i1, "void": e.void, "resume": self.function_pointer([e.ptr])}[
            spelling
        ]

    def define(self, name: str) -> None:
        e, ir = self.e, self.ir
        ret, params = FUNCTIONS[name]
        fn = e.declare(name, self.type_of(ret), [self.type_of(p) for p in params])
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        args = fn.args
        if name == "mlirAsyncRuntimeAddRef":
            self.store(b, b.add(self.load(b, args[0], REFCOUNT), args[1]), args[0], REFCOUNT)
            b.ret_void()
        elif name == "mlirAsyncRuntimeDropRef":
            b.call(self.drop_ref(), list(args))
            b.ret_void()
        elif name == "mlirAsyncRuntimeCreateToken":
            b.ret(self.create(b, self.const(0), 2, self.const(1)))
        elif name == "mlirAsyncRuntimeCreateValue":
            b.ret(self.create(b, args[0], 2, self.const(1)))
        elif name == "mlirAsyncRuntimeCreateGroup":
            b.ret(self.create(b, self.const(0), 1, args[0]))
        elif name == "mlirAsyncRuntimeAddTokenToGroup":
            token, group = args
            rank = self.load(b, group, RANK)
            self.store(b, b.add(rank, self.const(1)), group, RANK)
            available = b.icmp_signed("==", self.load(b, token, PENDING), self.const(0))
            with b.if_else(available) as (now, later):
                with now:
                    b.call(self.group_on_token(), [group, token])
                with later:
                    self.store(b, b.add(self.load(b, group, REFCOUNT), self.const(1)), group, REFCOUNT)
                    self.add_waiter(b, token, self.group_on_token_later(), group, token)
            b.ret(rank)
        elif name in ("mlirAsyncRuntimeEmplaceToken", "mlirAsyncRuntimeEmplaceValue"):
            b.call(self.set_state(), [args[0], self.const(0)])
            b.ret_void()
        elif name in ("mlirAsyncRuntimeSetTokenError", "mlirAsyncRuntimeSetValueError"):
            b.call(self.set_state(), [args[0], self.const(1)])
            b.ret_void()
        elif name in ("mlirAsyncRuntimeIsTokenError", "mlirAsyncRuntimeIsValueError", "mlirAsyncRuntimeIsGroupError"):
            b.ret(b.icmp_signed("!=", self.load(b, args[0], ERRORS), self.const(0)))
        elif name in ("mlirAsyncRuntimeAwaitToken", "mlirAsyncRuntimeAwaitValue", "mlirAsyncRuntimeAwaitAllInGroup"):
            what = {"Token": "a token", "Value": "a value", "Group": "a group"}[name[-5:]]
            self.fail_if(
                fn,
                b,
                b.icmp_signed("!=", self.load(b, args[0], PENDING), self.const(0)),
                f"async.await of {what} that nothing can make available any more "
                "(the async runtime runs on one thread: it would wait forever)",
                "pending",
            )
            b.ret_void()
        elif name == "mlirAsyncRuntimeGetValueStorage":
            b.ret(b.gep(args[0], [self.const(STORAGE_OFFSET)], source_etype=e.i8))
        elif name == "mlirAsyncRuntimeExecute":
            handle, resume = args
            b.call(resume, [handle])
            b.ret_void()
        elif name in (
            "mlirAsyncRuntimeAwaitTokenAndExecute",
            "mlirAsyncRuntimeAwaitValueAndExecute",
            "mlirAsyncRuntimeAwaitAllInGroupAndExecute",
        ):
            obj, handle, resume = args
            available = b.icmp_signed("==", self.load(b, obj, PENDING), self.const(0))
            with b.if_else(available) as (now, later):
                with now:
                    b.call(resume, [handle])
                with later:
                    self.add_waiter(b, obj, self.resume_waiter(), resume, handle)
            b.ret_void()
        elif name == "mlirAsyncRuntimGetNumWorkerThreads":
            b.ret(self.const(1))
        elif name == "mlirAsyncRuntimePrintCurrentThreadId":
            self_id = b.call(e.declare("pthread_self", e.i64, []), [])
            printf = e.declare("printf", e.i32, [e.ptr], var_arg=True)
            b.call(printf, [e.cstring("Current thread id: %llu\n"), self_id])
            b.call(e.declare("fflush", e.i32, [e.ptr]), [ir.Constant(e.ptr, None)])
            b.ret_void()
        else:
            raise AssertionError(name)


def define_async_runtime(emitter, names) -> None:
    """Define each async runtime function in `names` (those the host module declares) in emitter's module."""
    runtime = AsyncRuntimeEmitter(emitter)
    for name in names:
        runtime.define(name)
