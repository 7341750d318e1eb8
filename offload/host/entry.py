"""The program's `main` as the executable's entry point (mlir-runner's `-e main` conventions).

`func.func @main()` becomes the body of a C `int main(void)` returning 0 (a void main would leave the
exit status to whatever the return register held); `func.func @main() -> i32` is C's main already; any
other signature is refused at main's location. A void `llvm.func @main()` (the program went through
upstream's own lowering in --pass-pipeline) gets the same wrapper.
"""

from __future__ import annotations

from offload.errors import OffloadError

ENTRY = "main"
VOID_BODY = "__mlir_offload_main"  # a void main's new name; the generated i32 main calls it


def entry_point(host, path: str) -> None:
    """Give `host` (a builtin.module) a C-compatible main, or refuse main's signature."""
    import mlir.ir as ir
    from mlir.dialects import arith, func

    from offload.mlir.frontend import location_of

    main = None
    for op in host.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == ENTRY:
            main = op
        if op.operation.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == ENTRY:
            _wrap_void_llvm_main(host, op)
            return
    if main is None:
        return
    signature = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    i32 = ir.IntegerType.get_signless(32)
    inputs, results = list(signature.inputs), list(signature.results)
    if results == [i32] and (not inputs or inputs == [i32, ir.Type.parse("!llvm.ptr")]):
        return  # C's main already: int main(void) or int main(int argc, char **argv)
    if inputs or results:
        raise OffloadError(
            f"'main' has type {signature}; the entry point must be () -> () (exit status 0), "
            "() -> i32 (the exit status) or (i32, !llvm.ptr) -> i32 (C's main: argc, argv)",
            location_of(main.location, path),
        )
    ir.SymbolTable.set_symbol_name(main.operation, VOID_BODY)
    ir.SymbolTable.replace_all_symbol_uses(ENTRY, VOID_BODY, host)
    main.attributes["sym_visibility"] = ir.StringAttr.get("private")
    with ir.InsertionPoint(host.regions[0].blocks[0]), main.location:
        wrapper = func.FuncOp(ENTRY, ([], [i32]))
        with ir.InsertionPoint(wrapper.add_entry_block()):
            func.CallOp([], ir.FlatSymbolRefAttr.get(VOID_BODY), [])
            func.ReturnOp([arith.ConstantOp(i32, 0).result])


def _wrap_void_llvm_main(host, main) -> None:
    """A main already in the LLVM dialect (a pipeline with upstream's own lowering ran before): a void one
    gets the same i32 wrapper, calling it with llvm.call; any other is left as it is (C's main already, or
    the C compiler's to judge)."""
    import mlir.ir as ir
    from mlir.dialects import arith, func, llvm

    if not len(main.regions[0].blocks) or ir.TypeAttr(main.attributes["function_type"]).value != ir.Type.parse(
        "!llvm.func<void ()>"
    ):
        return
    ir.SymbolTable.set_symbol_name(main.operation, VOID_BODY)
    ir.SymbolTable.replace_all_symbol_uses(ENTRY, VOID_BODY, host)
    main.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(host.regions[0].blocks[0]), main.location:
        wrapper = func.FuncOp(ENTRY, ([], [i32]))
        with ir.InsertionPoint(wrapper.add_entry_block()):
            llvm.CallOp(None, [], [], [], callee=ir.FlatSymbolRefAttr.get(VOID_BODY))
            func.ReturnOp([arith.ConstantOp(i32, 0).result])
