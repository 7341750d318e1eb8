"""Async tokens on the host, brought to the form upstream gpu-to-llvm lowers soundly (a token is a stream).

synchronous_ops_on_streams  each synchronous GPU op is put on a stream, with a host wait before the
                            next op that may touch memory (upstream gpu-async-region's rule), while
                            code that is already async keeps its own chains: upstream's pass would
                            thread one token through everything and serialize independent chains
join_and_fork               an op with several dependencies waits for them through one
                            `gpu.wait async [deps]`, an async op with none starts a stream of its
                            own; a token that several ops depend on keeps its stream for its first
                            user, every further user gets its own stream that waits for it
                            (`gpu.wait async [token]`), so forks run concurrently and no stream is
                            synchronized or destroyed twice
"""

from __future__ import annotations

from offload.host.sparse_runtime import SPARSE_OPS

# Ops of gpu's AsyncOpInterface that the host lowering handles; their async token is their last result
# and their async dependencies are their first operands.
# The sparse library ops (sparse_runtime.py) are among them: a stream each, as copies and launches.
ASYNC_OPS = frozenset(("gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset", "gpu.launch_func")) | SPARSE_OPS

# Host ops that touch no memory: a pending synchronous GPU op need not finish before them. Anything
# else (stores, calls, loops, returns, ...) gets a wait first, as upstream waits before side effects.
PURE_PREFIXES = ("arith.", "index.", "math.", "complex.", "ub.")
PURE_OPS = frozenset(
    (
        "affine.apply",
        "affine.min",
        "affine.max",
        "memref.dim",
        "memref.rank",
        "memref.subview",
        "memref.cast",
        "memref.reinterpret_cast",
        "memref.extract_strided_metadata",
        "memref.view",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.extract_aligned_pointer_as_index",
        "memref.get_global",
        "llvm.mlir.constant",
        "llvm.mlir.addressof",
        "llvm.mlir.zero",
        "llvm.mlir.undef",
        "llvm.mlir.poison",
        "builtin.unrealized_conversion_cast",
        "gpu.block_dim",
        "gpu.grid_dim",
    )
)


def synchronous_ops_on_streams(host) -> None:
    import mlir.ir as ir

    blocks = []

    def collect(op):
        for region in op.operation.regions:
            blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE

    host.walk(collect)
    token_type = ir.Type.parse("!gpu.async.token")
    for block in blocks:
        _thread_block(block, token_type)


def _thread_block(block, token_type) -> None:
    import mlir.ir as ir
    from mlir.dialects import gpu

    current = None  # the stream of the pending synchronous ops of this block
    for op in list(block.operations):
        name = op.operation.name
        if name in ASYNC_OPS and not _is_async(op) and not _host_shared_alloc(op):
            with ir.InsertionPoint(op.operation), op.location:
                if current is None:
                    current = gpu.WaitOp(token_type, []).asyncToken
                current = _with_dependencies(op, [current], token_type).results[-1]
        elif current is not None and not _is_pure(name):
            with ir.InsertionPoint(op.operation), op.location:
                gpu.WaitOp(None, [current])
            current = None


def join_and_fork(host, path: str) -> None:
    import mlir.ir as ir
    from mlir.dialects import gpu

    token_type = ir.Type.parse("!gpu.async.token")
    ops = []

    def collect(op):
        if op.operation.name in ASYNC_OPS or op.operation.name == "gpu.wait":
            ops.append(op.operation)
        return ir.WalkResult.ADVANCE

    host.walk(collect)
    first_users: dict = {}  # token -> its first user, in program order
    for op in ops:
        dependencies = _dependencies(op)
        _refuse_carried_tokens(op, dependencies, path)
        unique = list(dict.fromkeys(dependencies))
        forked = []
        for token in unique:
            if first_users.setdefault(token, op) is op:
                forked.append(token)
                continue
            with ir.InsertionPoint(op), op.location:
                forked.append(gpu.WaitOp(token_type, [token]).asyncToken)
        if op.name != "gpu.wait" and len(forked) != 1:  # none: a chain of its own; several: joined
            with ir.InsertionPoint(op), op.location:
                forked = [gpu.WaitOp(token_type, forked).asyncToken]
        if forked != dependencies:
            _with_dependencies(op, forked, token_type)


def _refuse_carried_tokens(op, dependencies, path: str) -> None:
    """A token is a stream only where a GPU op made it: through a block argument or an scf result,
    gpu-to-llvm would take it for an event and call the runtime with the wrong handle."""
    for token in dependencies:
        owner = token.owner
        name = getattr(owner, "name", None)  # a block argument's owner is a Block
        if name not in ASYNC_OPS and name != "gpu.wait":
            from offload.errors import OffloadError
            from offload.mlir.frontend import location_of

            where = "a block argument" if name is None else f"a result of '{name}'"
            raise OffloadError(
                f"'{op.name}' depends on an async token that is {where}: tokens carried through "
                "loops, branches or function arguments are not supported (wait for the token "
                "with `gpu.wait` before, and start a new chain with `gpu.wait async` inside)",
                location_of(op.location, path),
            )


def _is_async(op) -> bool:
    results = op.operation.results
    return len(results) > 0 and str(results[-1].type) == "!gpu.async.token"


def _host_shared_alloc(op) -> bool:
    return op.operation.name == "gpu.alloc" and "hostShared" in op.operation.attributes


def _is_pure(name: str) -> bool:
    return name in PURE_OPS or name.startswith(PURE_PREFIXES)


def _dependencies(op) -> list:
    """The async dependencies: the leading !gpu.async.token operands."""
    found = []
    for operand in op.operands:
        if str(operand.type) != "!gpu.async.token":
            break
        found.append(operand)
    return found


def _with_dependencies(op, dependencies: list, token_type):
    """Replace `op` by the same op with `dependencies` and an async token result; returns the new op."""
    import mlir.ir as ir

    operation = op.operation
    old = _dependencies(operation)
    attributes = {operation.attributes[i].name: operation.attributes[i].attr for i in range(len(operation.attributes))}
    if "operandSegmentSizes" in attributes:  # the async dependencies are the first segment
        sizes = list(ir.DenseI32ArrayAttr(attributes["operandSegmentSizes"]))
        sizes[0] = len(dependencies)
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(sizes)
    results = [r.type for r in operation.results]
    if not _is_async(operation) and operation.name != "gpu.wait":
        results.append(token_type)
        if "resultSegmentSizes" in attributes:  # the async token is the last segment (gpu.spmm_buffer_size)
            sizes = list(ir.DenseI32ArrayAttr(attributes["resultSegmentSizes"]))
            sizes[-1] = 1
            attributes["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(sizes)
    with ir.InsertionPoint(operation):
        new = ir.Operation.create(
            operation.name,
            results=results,
            operands=list(dependencies) + list(operation.operands)[len(old) :],
            attributes=attributes,
            loc=operation.location,
        )
    # strict=False: a synchronous op gains a token result
    for old_result, new_result in zip(operation.results, new.results, strict=False):
        old_result.replace_all_uses_with(new_result)
    operation.erase()
    return new
