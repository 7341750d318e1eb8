// mlir-offload's emulation pass: retargets a GPU device module (NVVM or AMDGPU LLVM IR, exactly as the
// device stage made it, device libraries linked) to the host CPU, so the kernels run on the CPU against
// offload/data/emulator/runtime.c.
//
//   opt-22 -load-pass-plugin=retarget.so -passes='mlir-offload-emulate<TRIPLE;WARPSIZE>' in.bc -o out.bc
//
// What it does: host triple and data layout; GPU intrinsics (special registers, barriers, warp operations,
// rounding-mode math) become calls into the runtime or generic LLVM operations (the tables below: one row
// per intrinsic); libdevice's few inline PTX idioms become IR; workgroup memory (addrspace(3) globals)
// becomes offsets into a per-block segment the runtime allocates; each kernel gets an entry taking the
// cudaLaunchKernel-style argument array and is registered by a constructor. Anything the tables do not
// know stops the pass with one line "mlir-offload-emulate: NAME is not emulated" (exit 3), never an
// undefined symbol at link time.
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/AttributeMask.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "emu_abi.h"

using namespace llvm;

namespace {

// Exit status of a refusal (the caller turns the line into its own error).
constexpr int REFUSED = 3;

[[noreturn]] void refuse(const Twine &What) {
  errs() << "mlir-offload-emulate: " << What << "\n";
  errs().flush();
  std::exit(REFUSED);
}

// ---- the runtime's entry points: emu_abi.h's lists ------------------------------------------------------

// One entry point, by its name in emu_abi.h.
enum class Rt : unsigned {
#define EMU_ENUMERATOR(Waits, Ret, Name, Params) Name,
  EMU_RUNTIME_FUNCTIONS(EMU_ENUMERATOR) EMU_SANITIZER_FUNCTIONS(EMU_ENUMERATOR)
#undef EMU_ENUMERATOR
};

// The LLVM type of a C type of emu_abi.h: integers by size, any pointer the generic pointer.
template <typename T> struct IRType {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "emu_abi.h: a C type without LLVM type");
  static Type *get(LLVMContext &C) { return IntegerType::get(C, 8 * sizeof(T)); }
};
template <typename T> struct IRType<T *> {
  static Type *get(LLVMContext &C) { return PointerType::get(C, 0); }
};
template <> struct IRType<void> {
  static Type *get(LLVMContext &C) { return Type::getVoidTy(C); }
};
template <> struct IRType<float> {
  static Type *get(LLVMContext &C) { return Type::getFloatTy(C); }
};
template <> struct IRType<double> {
  static Type *get(LLVMContext &C) { return Type::getDoubleTy(C); }
};
template <typename F> struct IRSignature;
template <typename R, typename... A> struct IRSignature<R(A...)> {
  static FunctionType *get(LLVMContext &C) { return FunctionType::get(IRType<R>::get(C), {IRType<A>::get(C)...}, false); }
};

struct RuntimeFunction {
  const char *Symbol;  // __emu_<name>
  const char *Name;    // <name>
  FunctionType *(*Type)(LLVMContext &);
  bool Waits;  // waits for other GPU threads: its callers need a context per GPU thread
};

const RuntimeFunction RUNTIME_FUNCTIONS[] = {
#define EMU_ROW(Waits, Ret, Name, Params) {EMU_SYMBOL(Name), #Name, &IRSignature<Ret Params>::get, Waits},
    EMU_RUNTIME_FUNCTIONS(EMU_ROW) EMU_SANITIZER_FUNCTIONS(EMU_ROW)
#undef EMU_ROW
};

const RuntimeFunction &runtimeFunction(Rt F) { return RUNTIME_FUNCTIONS[static_cast<unsigned>(F)]; }

// The entry point emu_abi.h names `Name` (a name the tables put together, such as tid_x or an intrinsic's
// math mirror): a name the header lacks is a fault of this pass, reported when the tables are built.
Rt runtimeNamed(StringRef Name) {
  static const StringMap<Rt> ByName = [] {
    StringMap<Rt> Map;
    for (unsigned I = 0; I < std::size(RUNTIME_FUNCTIONS); ++I)
      Map[RUNTIME_FUNCTIONS[I].Name] = static_cast<Rt>(I);
    return Map;
  }();
  auto It = ByName.find(Name);
  if (It == ByName.end())
    report_fatal_error("mlir-offload-emulate: the tables call " + Twine(EMU_SYMBOL_PREFIX) + Name +
                           ", which emu_abi.h does not declare",
                       false);
  return It->second;
}

bool isRuntimeFunction(StringRef Symbol) {
  for (const RuntimeFunction &F : RUNTIME_FUNCTIONS)
    if (Symbol == F.Symbol)
      return true;
  return false;
}

template <typename T> std::string describe(const T *Thing) {
  std::string Text;
  raw_string_ostream OS(Text);
  Thing->print(OS);
  return Text;
}

struct Emulator;
// A replacement: build what stands for the call `CI` (nullptr for a void call).
using Handler = std::function<Value *(Emulator &, IRBuilder<> &, CallInst *)>;

struct Emulator {
  Module &M;
  LLVMContext &C;
  unsigned WarpSize;
  Type *I1, *I8, *I16, *I32, *I64, *F32, *F64, *Ptr;

  Emulator(Module &M, unsigned WarpSize)
      : M(M), C(M.getContext()), WarpSize(WarpSize), I1(Type::getInt1Ty(C)), I8(Type::getInt8Ty(C)),
        I16(Type::getInt16Ty(C)), I32(Type::getInt32Ty(C)), I64(Type::getInt64Ty(C)),
        F32(Type::getFloatTy(C)), F64(Type::getDoubleTy(C)), Ptr(PointerType::get(C, 0)) {}

  // The declaration of a runtime entry point, its type emu_abi.h's.
  FunctionCallee runtime(Rt F) {
    const RuntimeFunction &R = runtimeFunction(F);
    return M.getOrInsertFunction(R.Symbol, R.Type(C));
  }

  // A call of `F` with `Args` converted to its parameters' types (convert).
  CallInst *call(IRBuilder<> &B, Rt F, ArrayRef<Value *> Args, const Twine &What) {
    FunctionCallee Callee = runtime(F);
    FunctionType *T = Callee.getFunctionType();
    if (T->getNumParams() != Args.size())
      refuse(What + " has " + Twine(Args.size()) + " operands where the runtime's " + runtimeFunction(F).Symbol + " takes " +
             Twine(T->getNumParams()) + ", which is not emulated");
    SmallVector<Value *, 8> Converted;
    for (unsigned I = 0; I < Args.size(); ++I)
      Converted.push_back(convert(B, Args[I], T->getParamType(I), What));
    return B.CreateCall(Callee, Converted);
  }

  // A call of `F` with the call's own operands, its result converted to the call's type.
  Value *forward(IRBuilder<> &B, CallInst *CI, Rt F, ArrayRef<Value *> Leading = {}) {
    SmallVector<Value *, 8> Args(Leading);
    Args.append(CI->arg_begin(), CI->arg_end());
    std::string What = CI->getCalledFunction() ? CI->getCalledFunction()->getName().str() : describe(CI);
    Value *R = call(B, F, Args, What);
    return CI->getType()->isVoidTy() ? nullptr : convert(B, R, CI->getType(), What);
  }

  // `V` as a value of type `To` at a runtime call's boundary: integers zero-extended or truncated (a truth
  // value from a nonzero one), pointers to or from the generic address space; other differences are refused.
  static Value *convert(IRBuilder<> &B, Value *V, Type *To, const Twine &What) {
    Type *From = V->getType();
    if (From == To)
      return V;
    if (From->isIntegerTy() && To->isIntegerTy(1))
      return B.CreateICmpNE(V, ConstantInt::get(From, 0));
    if (From->isIntegerTy() && To->isIntegerTy())
      return B.CreateZExtOrTrunc(V, To);
    if (From->isPointerTy() && To->isPointerTy())
      return B.CreateAddrSpaceCast(V, To);
    refuse(What + ": a " + describe(From) + " where the runtime has a " + describe(To) + ", which is not emulated");
  }
};

// ---- handler builders: each table row is one of these ---------------------------------------------

// A call of runtime function `F` with the intrinsic's operands.
Handler rt(Rt F) {
  return [F](Emulator &E, IRBuilder<> &B, CallInst *CI) { return E.forward(B, CI, F); };
}

// A 64-bit readlane/readfirstlane (LLVM's AMDGPU combines widen two 32-bit ones, or hoist one through
// a truncation): the runtime's 32-bit read of each half, from the same lane.
Handler laneRead64(Rt Read) {
  return [Read](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    bool HasLane = CI->arg_size() > 1;
    FunctionCallee F = E.runtime(Read);
    Value *Bits = B.CreateBitCast(CI->getArgOperand(0), E.I64);
    Value *Halves[2] = {B.CreateTrunc(Bits, E.I32), B.CreateTrunc(B.CreateLShr(Bits, 32), E.I32)};
    Value *Wide = nullptr;
    for (unsigned H = 0; H < 2; ++H) {
      SmallVector<Value *, 2> Args{Halves[H]};
      if (HasLane)
        Args.push_back(CI->getArgOperand(1));
      Value *Part = B.CreateZExt(B.CreateCall(F, Args), E.I64);
      Part = H ? B.CreateShl(Part, 32) : Part;
      Wide = Wide ? B.CreateOr(Wide, Part) : Part;
    }
    return B.CreateBitCast(Wide, CI->getType());
  };
}

// The runtime's math mirror of intrinsic `Intrinsic`: its name without "llvm.", dots as underscores.
Handler mirror(StringRef Intrinsic) {
  std::string Name = Intrinsic.drop_front(5).str();
  for (char &Ch : Name)
    if (Ch == '.')
      Ch = '_';
  return rt(runtimeNamed(Name));
}

// A generic LLVM intrinsic overloaded on the result type.
Handler generic(Intrinsic::ID ID) {
  return [ID](Emulator &, IRBuilder<> &B, CallInst *CI) -> Value * {
    SmallVector<Value *, 3> Args(CI->args());
    return B.CreateIntrinsic(CI->getType(), ID, Args);
  };
}

Handler binary(Instruction::BinaryOps Op) {
  return [Op](Emulator &, IRBuilder<> &B, CallInst *CI) { return B.CreateBinOp(Op, CI->getArgOperand(0), CI->getArgOperand(1)); };
}

Handler reciprocal() {
  return [](Emulator &, IRBuilder<> &B, CallInst *CI) {
    return B.CreateFDiv(ConstantFP::get(CI->getType(), 1.0), CI->getArgOperand(0));
  };
}

Handler constant(uint64_t Value) {
  return [Value](Emulator &, IRBuilder<> &, CallInst *CI) -> llvm::Value * { return ConstantInt::get(CI->getType(), Value); };
}

Handler erase() {
  return [](Emulator &, IRBuilder<> &, CallInst *) -> Value * { return nullptr; };
}

Handler fence() {
  return [](Emulator &, IRBuilder<> &B, CallInst *) -> Value * {
    B.CreateFence(AtomicOrdering::SequentiallyConsistent);
    return nullptr;
  };
}

// The high half of a widened product (mul.hi).
Handler multiplyHigh(bool Signed) {
  return [Signed](Emulator &, IRBuilder<> &B, CallInst *CI) {
    Type *T = CI->getType();
    Type *Wide = IntegerType::get(B.getContext(), 2 * T->getIntegerBitWidth());
    auto Extend = [&](Value *V) { return Signed ? B.CreateSExt(V, Wide) : B.CreateZExt(V, Wide); };
    Value *Product = B.CreateMul(Extend(CI->getArgOperand(0)), Extend(CI->getArgOperand(1)));
    return B.CreateTrunc(B.CreateLShr(Product, T->getIntegerBitWidth()), T);
  };
}

// A runtime function with a leading operation-kind constant: F(Kind, operands...).
Handler withKind(Rt F, unsigned Kind) {
  return [F, Kind](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    return E.forward(B, CI, F, {B.getInt32(Kind)});
  };
}

// Warp shuffle (PTX shfl.sync): __emu_shfl_sync(mode, mask, bits, b, c) -> value | valid << 32.
// The .p forms return {value, valid}; f32 travels as its bits.
Handler shuffle(unsigned Mode, bool WithPredicate) {
  return [Mode, WithPredicate](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Value *Mask = CI->getArgOperand(0), *V = CI->getArgOperand(1);
    Type *T = V->getType();
    Value *Bits = T->isFloatTy() ? B.CreateBitCast(V, E.I32) : V;
    FunctionCallee F = E.runtime(Rt::shfl_sync);
    Value *R = B.CreateCall(F, {B.getInt32(Mode), Mask, Bits, CI->getArgOperand(2), CI->getArgOperand(3)});
    Value *Result = B.CreateTrunc(R, E.I32);
    if (T->isFloatTy())
      Result = B.CreateBitCast(Result, T);
    if (!WithPredicate)
      return Result;
    Value *Valid = B.CreateTrunc(B.CreateLShr(R, 32), E.I1);
    Value *Pair = B.CreateInsertValue(PoisonValue::get(CI->getType()), Result, 0);
    return B.CreateInsertValue(Pair, Valid, 1);
  };
}

// vote.sync: __emu_vote_sync(kind, mask, predicate) -> ballot bits or 0/1.
Handler vote(unsigned Kind) {
  return [Kind](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    FunctionCallee F = E.runtime(Rt::vote_sync);
    Value *R = B.CreateCall(F, {B.getInt32(Kind), CI->getArgOperand(0), B.CreateZExt(CI->getArgOperand(1), E.I32)});
    return CI->getType()->isIntegerTy(1) ? B.CreateICmpNE(R, B.getInt32(0)) : R;
  };
}

// barrier.cta.{red}.{popc,and,or}: __emu_barrier_reduce(kind, predicate) -> count or 0/1.
Handler barrierReduce(unsigned Kind) {
  return [Kind](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Value *Predicate = CI->getArgOperand(CI->arg_size() - 1);
    if (Predicate->getType()->isIntegerTy(1))
      Predicate = B.CreateZExt(Predicate, E.I32);
    else
      Predicate = B.CreateICmpNE(Predicate, ConstantInt::get(Predicate->getType(), 0)), Predicate = B.CreateZExt(Predicate, E.I32);
    FunctionCallee F = E.runtime(Rt::barrier_reduce);
    Value *R = B.CreateCall(F, {B.getInt32(Kind), Predicate});
    return CI->getType()->isIntegerTy(1) ? B.CreateICmpNE(R, B.getInt32(0)) : R;
  };
}

// A runtime function returning a pointer in the generic address space, cast to the call's address space.
Handler pointerFrom(Rt F) {
  return [F](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Value *P = B.CreateCall(E.runtime(F));
    return B.CreateAddrSpaceCast(P, CI->getType());
  };
}

// cp.async: the copy happens at issue (groups and waits are then no-ops); the .s forms copy `src_size`
// bytes and zero the rest, as the hardware does.
Handler asyncCopy(unsigned Bytes) {
  return [Bytes](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Value *Dst = B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr);
    Value *Src = B.CreateAddrSpaceCast(CI->getArgOperand(1), E.Ptr);
    if (CI->arg_size() > 2) {  // the source size
      Value *Size = B.CreateZExtOrTrunc(CI->getArgOperand(2), E.I64);
      B.CreateMemSet(Dst, B.getInt8(0), Bytes, MaybeAlign(1));
      B.CreateMemCpy(Dst, MaybeAlign(1), Src, MaybeAlign(1), B.CreateBinaryIntrinsic(Intrinsic::umin, Size, B.getInt64(Bytes)));
    } else {
      B.CreateMemCpy(Dst, MaybeAlign(1), Src, MaybeAlign(1), Bytes);
    }
    return nullptr;
  };
}

// Unpack what the runtime wrote into 8-byte slots of `Results` into the call's result (a struct of
// scalars or vectors, or one scalar).
Value *unpackSlots(Emulator &E, IRBuilder<> &B, Type *ResultType, Value *Results) {
  auto Slot = [&](unsigned I) { return B.CreateConstGEP1_64(E.I8, Results, 8 * I); };
  auto *Struct = dyn_cast<StructType>(ResultType);
  if (!Struct)
    return B.CreateLoad(ResultType, Slot(0));
  Value *R = PoisonValue::get(ResultType);
  for (unsigned I = 0; I < Struct->getNumElements(); ++I)
    R = B.CreateInsertValue(R, B.CreateLoad(Struct->getElementType(I), Slot(I)), I);
  return R;
}

// ldmatrix.sync.aligned.m8n8.xN[.trans].b16: a warp collective reading N 8x8 matrices of 16-bit values
// from workgroup memory, each lane giving one row's address; __emu_ldmatrix(N, trans, row, slots).
Handler loadMatrix(unsigned Count, bool Transposed) {
  return [Count, Transposed](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    auto *SlotsType = ArrayType::get(E.I64, 4);
    AllocaInst *Slots = B.CreateAlloca(SlotsType);
    FunctionCallee F = E.runtime(Rt::ldmatrix);
    B.CreateCall(F, {B.getInt32(Count), B.getInt32(Transposed), B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), Slots});
    return unpackSlots(E, B, CI->getType(), Slots);
  };
}

// mma.sync: a warp collective; every operand in an 8-byte slot, __emu_mma(shape, operands, results).
Handler matrixMultiply(unsigned Shape) {
  return [Shape](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    auto *SlotsType = ArrayType::get(E.I64, 32);
    AllocaInst *Operands = B.CreateAlloca(SlotsType);
    AllocaInst *Results = B.CreateAlloca(SlotsType);
    for (unsigned I = 0; I < CI->arg_size(); ++I)
      B.CreateStore(CI->getArgOperand(I), B.CreateConstGEP1_64(E.I8, Operands, 8 * I));
    unsigned Flags = Shape;
    Type *Last = CI->getArgOperand(CI->arg_size() - 1)->getType();
    if (Last->isVectorTy() && Last->getScalarType()->isHalfTy())
      Flags |= MMA_C_F16;
    Type *Out = cast<StructType>(CI->getType())->getElementType(0);
    if (Out->isVectorTy() && Out->getScalarType()->isHalfTy())
      Flags |= MMA_D_F16;
    FunctionCallee F = E.runtime(Rt::mma);
    B.CreateCall(F, {B.getInt32(Flags), Operands, Results});
    return unpackSlots(E, B, CI->getType(), Results);
  };
}

// wmma (gpu.subgroup_mma_*): the fragment layout is the runtime's own (NVIDIA leaves it opaque); loads
// and stores are per lane, __emu_wmma_load(shape, which, col_major, element, ptr, stride, slots) and
// __emu_wmma_store(shape, col_major, element, ptr, stride, slots); the multiply is matrixMultiply.
Handler wmmaLoad(unsigned Shape, unsigned Which, bool ColMajor, unsigned Element) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    AllocaInst *Slots = B.CreateAlloca(ArrayType::get(E.I64, 8));
    Value *Stride = CI->arg_size() > 1 ? CI->getArgOperand(1) : B.getInt32(Shape == WMMA_M8N8K4 ? 0 : 16);
    FunctionCallee F = E.runtime(Rt::wmma_load);
    B.CreateCall(F, {B.getInt32(Shape), B.getInt32(Which), B.getInt32(ColMajor), B.getInt32(Element),
                     B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), Stride, Slots});
    return unpackSlots(E, B, CI->getType(), Slots);
  };
}

Handler wmmaStore(unsigned Shape, bool ColMajor, unsigned Element) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    AllocaInst *Slots = B.CreateAlloca(ArrayType::get(E.I64, 8));
    unsigned Values = Element == WMMA_F32 ? 8 : Element == WMMA_F16 ? 4 : 2;
    for (unsigned I = 0; I < Values; ++I)
      B.CreateStore(CI->getArgOperand(1 + I), B.CreateConstGEP1_64(E.I8, Slots, 8 * I));
    Value *Stride = CI->arg_size() > 1 + Values ? CI->getArgOperand(1 + Values) : B.getInt32(0);
    FunctionCallee F = E.runtime(Rt::wmma_store);
    B.CreateCall(F, {B.getInt32(Shape), B.getInt32(ColMajor), B.getInt32(Element),
                     B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), Stride, Slots});
    return nullptr;
  };
}

// ---- AMD buffer resources (amdgpu.raw_buffer_*: llvm.amdgcn.make.buffer.rsrc, raw.ptr.buffer.*) ------

// A stack slot in the entry block of `F` (an alloca where the call is would grow the stack in a loop),
// aligned for any vector stored into it.
AllocaInst *entrySlot(Function &F, Type *T) {
  IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *Slot = B.CreateAlloca(T);
  Slot->setAlignment(Align(32));
  return Slot;
}

// The runtime's buffer resource record (emu_abi.h, struct buffer_resource): base, num_records, whether
// the hardware checks the range, and the stride.
static_assert(offsetof(buffer_resource, records) == 8 && offsetof(buffer_resource, checked) == 16 &&
                  offsetof(buffer_resource, stride) == 20 && sizeof(buffer_resource) == 24,
              "struct buffer_resource is {ptr, i64, i32, i32}");
StructType *bufferResourceType(Emulator &E) {
  return StructType::get(E.C, {E.Ptr, E.I64, E.I32, E.I32});
}

// Whether a resource made with these flags (descriptor word 3) is range-checked. gfx9 always checks a raw
// buffer against num_records; gfx10 and later check unless OOB_SELECT (bits 28-29) is 2, which is what
// MLIR's boundsCheck = false sets there.
Value *rangeChecked(IRBuilder<> &B, Function &F, Value *Flags) {
  StringRef Cpu = F.getFnAttribute("target-cpu").getValueAsString();
  bool Gfx9OrOlder = !Cpu.starts_with("gfx") || Cpu.size() < 6;  // gfx9xx: 3 digits; gfx10xx and later: 4
  if (Gfx9OrOlder)
    return B.getInt32(1);
  Value *OobSelect = B.CreateAnd(B.CreateLShr(Flags, 28), 3);
  return B.CreateZExt(B.CreateICmpNE(OobSelect, B.getInt32(2)), B.getInt32Ty());
}

// make.buffer.rsrc(base, stride, num_records, flags): the resource becomes a pointer to a record in a
// stack slot of the function that makes it, so it must not leave that function (stored or returned).
Handler makeBufferResource() {
  return [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Function &F = *CI->getFunction();
    if (CI->getType()->getPointerAddressSpace() != 8)  // a fat pointer the prelude pass did not lower
      refuse("buffer fat pointer " + describe(CI) + " in " + F.getName() + " is not emulated");
    for (User *U : CI->users())
      if (isa<ReturnInst>(U) || (isa<StoreInst>(U) && cast<StoreInst>(U)->getValueOperand() == CI))
        refuse("a buffer resource (llvm.amdgcn.make.buffer.rsrc) leaves the function " + F.getName() +
               " that makes it, which is not emulated");
    auto *Stride = dyn_cast<ConstantInt>(CI->getArgOperand(1));
    if (!Stride || !Stride->isZero())
      refuse("a buffer resource with a stride (llvm.amdgcn.make.buffer.rsrc in " + F.getName() +
             ") is not emulated; raw buffers (stride 0) are");
    StructType *T = bufferResourceType(E);
    AllocaInst *Slot = entrySlot(F, T);
    B.CreateStore(B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), B.CreateStructGEP(T, Slot, 0));
    B.CreateStore(B.CreateZExtOrTrunc(CI->getArgOperand(2), E.I64), B.CreateStructGEP(T, Slot, 1));
    B.CreateStore(rangeChecked(B, F, CI->getArgOperand(3)), B.CreateStructGEP(T, Slot, 2));
    B.CreateStore(B.getInt32(0), B.CreateStructGEP(T, Slot, 3));
    return B.CreateAddrSpaceCast(Slot, CI->getType());
  };
}

uint64_t storeSize(Emulator &E, Type *T) { return E.M.getDataLayout().getTypeStoreSize(T).getFixedValue(); }

// raw.ptr.buffer.load(rsrc, voffset, soffset, aux): __emu_buffer_load(record, voffset, soffset, bytes, out).
Handler bufferLoad() {
  return [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    AllocaInst *Out = entrySlot(*CI->getFunction(), CI->getType());
    FunctionCallee F = E.runtime(Rt::buffer_load);
    B.CreateCall(F, {B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), CI->getArgOperand(1), CI->getArgOperand(2),
                     B.getInt32(storeSize(E, CI->getType())), Out});
    return B.CreateLoad(CI->getType(), Out);
  };
}

// raw.ptr.buffer.store(data, rsrc, voffset, soffset, aux): __emu_buffer_store(record, voffset, soffset, bytes, in).
Handler bufferStore() {
  return [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Value *Data = CI->getArgOperand(0);
    AllocaInst *In = entrySlot(*CI->getFunction(), Data->getType());
    B.CreateStore(Data, In);
    FunctionCallee F = E.runtime(Rt::buffer_store);
    B.CreateCall(F, {B.CreateAddrSpaceCast(CI->getArgOperand(1), E.Ptr), CI->getArgOperand(2), CI->getArgOperand(3),
                     B.getInt32(storeSize(E, Data->getType())), In});
    return nullptr;
  };
}

// raw.ptr.buffer.atomic.<op>(data, [compare,] rsrc, voffset, soffset, aux) -> the old value:
// __emu_buffer_atomic(op, record, voffset, soffset, bytes, is_float, slots {data, compare} -> old in slot 0).
Handler bufferAtomic(unsigned Op) {
  return [Op](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    unsigned Resource = Op == BA_CMPSWAP ? 2 : 1;
    Type *T = CI->getType();
    if (T->isVectorTy())
      refuse("packed buffer atomic " + CI->getCalledFunction()->getName() + " is not emulated");
    AllocaInst *Slots = entrySlot(*CI->getFunction(), ArrayType::get(E.I64, 2));
    B.CreateStore(CI->getArgOperand(0), Slots);
    if (Op == BA_CMPSWAP)
      B.CreateStore(CI->getArgOperand(1), B.CreateConstGEP1_64(E.I8, Slots, 8));
    FunctionCallee F = E.runtime(Rt::buffer_atomic);
    B.CreateCall(F, {B.getInt32(Op), B.CreateAddrSpaceCast(CI->getArgOperand(Resource), E.Ptr),
                     CI->getArgOperand(Resource + 1), CI->getArgOperand(Resource + 2),
                     B.getInt32(storeSize(E, T)), B.getInt32(T->isFloatingPointTy()), Slots});
    return B.CreateLoad(T, Slots);
  };
}

// ---- AMD WMMA (gfx11: llvm.amdgcn.wmma.*, from amdgpu.wmma) ---------------------------------------------

// A wavefront collective over the ISA's fragment layouts (runtime.c, amd_wmma_collective): A at byte 0,
// B at 32, C at 64 of the operand slots; __emu_amd_wmma(kind | flags, operands, results).
// The .tied forms keep C's values in the 16-bit halves opsel does not select, as the runtime always does.
Handler amdWmma(unsigned Kind) {
  return [Kind](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    bool Integer = Kind == AMD_WMMA_I32_IU8 || Kind == AMD_WMMA_I32_IU4;
    unsigned A = Integer ? 1 : 0, Bop = Integer ? 3 : 1, C = Integer ? 4 : 2;
    auto Flag = [&](unsigned Arg, unsigned Bit) {
      auto *Value = dyn_cast<ConstantInt>(CI->getArgOperand(Arg));
      return Value && !Value->isZero() ? Bit : 0u;
    };
    unsigned Flags = Kind;
    if (Integer)
      Flags |= Flag(0, AMD_WMMA_SIGNED_A) | Flag(2, AMD_WMMA_SIGNED_B) | Flag(5, AMD_WMMA_CLAMP);
    else if (CI->arg_size() > 3)
      Flags |= Flag(3, AMD_WMMA_OPSEL);
    // gfx11's wave32 operands: A and B 32 bytes of 16-bit values (16 bytes of i8, 8 of i4), C and D 32 bytes.
    uint64_t ABytes = storeSize(E, CI->getArgOperand(A)->getType()), CBytes = storeSize(E, CI->getType());
    uint64_t WantA = Kind == AMD_WMMA_I32_IU8 ? 16 : Kind == AMD_WMMA_I32_IU4 ? 8 : 32;
    if (E.WarpSize != 32 || ABytes != WantA || CBytes != 32)
      refuse(CI->getCalledFunction()->getName() + " with these operand types (" + describe(CI->getFunctionType()) +
             ") is not emulated: only gfx11's wave32 layout is");
    Function &F = *CI->getFunction();
    AllocaInst *Operands = entrySlot(F, ArrayType::get(E.I64, 12));
    AllocaInst *Results = entrySlot(F, ArrayType::get(E.I64, 4));
    B.CreateStore(CI->getArgOperand(A), Operands);
    B.CreateStore(CI->getArgOperand(Bop), B.CreateConstGEP1_64(E.I8, Operands, AMD_WMMA_B));
    B.CreateStore(CI->getArgOperand(C), B.CreateConstGEP1_64(E.I8, Operands, AMD_WMMA_C));
    FunctionCallee Wmma = E.runtime(Rt::amd_wmma);
    B.CreateCall(Wmma, {B.getInt32(Flags), Operands, Results});
    return B.CreateLoad(CI->getType(), Results);
  };
}

// ---- the intrinsic tables ---------------------------------------------------------------------------

// ---- Hopper (runtime hopper.h): mbarriers and TMA tensor copies ------------------------------------

// F(the call's first operands, as many as F takes; `Count` for a missing count), its result given the
// call's type (Emulator::convert; none for a void call).
Handler hopperCall(Rt F, int Count = -1) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    FunctionType *T = E.runtime(F).getFunctionType();
    SmallVector<Value *, 4> Args;
    for (unsigned I = 0; I < T->getNumParams(); ++I)
      Args.push_back(I < CI->arg_size() ? CI->getArgOperand(I) : ConstantInt::get(T->getParamType(I), Count < 0 ? 0 : Count));
    std::string What = CI->getCalledFunction() ? CI->getCalledFunction()->getName().str() : describe(CI);
    Value *R = E.call(B, F, Args, What);
    return CI->getType()->isVoidTy() ? nullptr : Emulator::convert(B, R, CI->getType(), What);
  };
}

// An array in the function's entry block (a call site inside a loop must not grow the stack).
AllocaInst *entryArray(IRBuilder<> &B, Type *Element, unsigned Count) {
  Function *F = B.GetInsertBlock()->getParent();
  IRBuilder<> Entry(&*F->getEntryBlock().getFirstInsertionPt());
  return Entry.CreateAlloca(ArrayType::get(Element, Count));
}

// The coordinates of a tensor copy in an i32[5] array.
Value *coordinateArray(Emulator &E, IRBuilder<> &B, ArrayRef<Value *> Coords) {
  AllocaInst *Array = entryArray(B, E.I32, 5);
  for (unsigned I = 0; I < Coords.size(); ++I)
    B.CreateStore(B.CreateZExtOrTrunc(Coords[I], E.I32), B.CreateConstGEP2_32(Array->getAllocatedType(), Array, 0, I));
  return Array;
}

// __emu_tma_load(shared, mbarrier, map, rank, coords, multicast mask, multicast): the copy at issue, its
// bytes completed on the mbarrier (of each CTA of the mask, at the same offset, when multicast).
void emitTmaLoad(Emulator &E, IRBuilder<> &B, Value *Shared, Value *Barrier, Value *Map, ArrayRef<Value *> Coords,
                 Value *Mask, Value *Multicast) {
  FunctionCallee F = E.runtime(Rt::tma_load);
  B.CreateCall(F, {B.CreateAddrSpaceCast(Shared, E.Ptr), B.CreateAddrSpaceCast(Barrier, E.Ptr),
                   B.CreateAddrSpaceCast(Map, E.Ptr), B.getInt32(Coords.size()), coordinateArray(E, B, Coords),
                   B.CreateZExtOrTrunc(Mask, E.I32), B.CreateZExtOrTrunc(Multicast, E.I32)});
}

void emitTmaStore(Emulator &E, IRBuilder<> &B, Value *Shared, Value *Map, ArrayRef<Value *> Coords) {
  FunctionCallee F = E.runtime(Rt::tma_store);
  B.CreateCall(F, {B.CreateAddrSpaceCast(Shared, E.Ptr), B.CreateAddrSpaceCast(Map, E.Ptr),
                   B.getInt32(Coords.size()), coordinateArray(E, B, Coords)});
}

// cp.async.bulk.tensor.{g2s,s2g}.tile.Nd intrinsics. g2s: dst, mbar, map, coords..., multicast mask, cache
// hint, multicast flag, cache-hint flag; s2g: src, map, coords....
Handler tensorCopy(unsigned Rank, bool Load) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    unsigned First = Load ? 3 : 2;
    SmallVector<Value *, 5> Coords;
    for (unsigned I = 0; I < Rank; ++I)
      Coords.push_back(CI->getArgOperand(First + I));
    if (Load)
      emitTmaLoad(E, B, CI->getArgOperand(0), CI->getArgOperand(1), CI->getArgOperand(2), Coords,
                  CI->getArgOperand(First + Rank), CI->getArgOperand(First + Rank + 2));
    else
      emitTmaStore(E, B, CI->getArgOperand(0), CI->getArgOperand(1), Coords);
    return nullptr;
  };
}

// An inline-PTX handler that runs only where the predicate operand `Predicate` holds (MLIR 22 writes an
// nvvm op with a `predicate` as "@$N ..." inline PTX).
Handler predicated(unsigned Predicate, Handler Body) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    Instruction *Then = SplitBlockAndInsertIfThen(CI->getArgOperand(Predicate), CI, false);
    IRBuilder<> Guarded(Then);
    Body(E, Guarded, CI);
    return nullptr;
  };
}

std::string collapseSpaces(StringRef Text);

// The inline PTX of MLIR 22's predicated nvgpu/nvvm ops (nvvm's getPtx): mbarrier.init, tensormap
// prefetches, TMA loads (plain and multicast) and stores, 1-5D.
void addPredicatedHopperAsm(std::map<std::string, Handler> &T) {
  T[collapseSpaces("@$2 mbarrier.init.shared.b64 [$0], $1;")] =
      predicated(2, hopperCall(Rt::mbarrier_init));
  T[collapseSpaces("@$1 prefetch.tensormap [$0];")] = [](Emulator &, IRBuilder<> &, CallInst *) -> Value * {
    return nullptr;
  };
  for (unsigned Rank = 1; Rank <= 5; ++Rank) {
    std::string Load = "{", Store = "{";
    for (unsigned I = 0; I < Rank; ++I) {
      Load += (I ? ",$" : "$") + std::to_string(2 + I);
      Store += (I ? ", $" : "$") + std::to_string(2 + I);
    }
    Load += "}";
    Store += "}";
    std::string D = std::to_string(Rank) + "d";
    std::string Mbar = "$" + std::to_string(2 + Rank);
    auto Coords = [Rank](CallInst *CI) {
      SmallVector<Value *, 5> C;
      for (unsigned I = 0; I < Rank; ++I)
        C.push_back(CI->getArgOperand(2 + I));
      return C;
    };
    std::string Head = "cp.async.bulk.tensor." + D + ".shared::cluster.global.mbarrier::complete_tx::bytes";
    T[collapseSpaces("@$" + std::to_string(3 + Rank) + " " + Head + " [$0], [$1, " + Load + " ], [" + Mbar + "];")] =
        predicated(3 + Rank, [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
          emitTmaLoad(E, B, CI->getArgOperand(0), CI->getArgOperand(2 + Rank), CI->getArgOperand(1), Coords(CI),
                      B.getInt32(0), B.getInt32(0));
          return nullptr;
        });
    T[collapseSpaces("@$" + std::to_string(4 + Rank) + " " + Head + ".multicast::cluster [$0], [$1, " + Load +
                     " ], [" + Mbar + "], $" + std::to_string(3 + Rank) + ";")] =
        predicated(4 + Rank, [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
          emitTmaLoad(E, B, CI->getArgOperand(0), CI->getArgOperand(2 + Rank), CI->getArgOperand(1), Coords(CI),
                      CI->getArgOperand(3 + Rank), B.getInt32(1));
          return nullptr;
        });
    T[collapseSpaces("@$" + std::to_string(2 + Rank) + " cp.async.bulk.tensor." + D +
                     ".global.shared::cta.bulk_group [$0, " + Store + " ], [$1];")] =
        predicated(2 + Rank, [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
          emitTmaStore(E, B, CI->getArgOperand(1), CI->getArgOperand(0), Coords(CI));
          return nullptr;
        });
  }
}

// mma.sp (2:4 sparse, runtime sparse_mma.h) as MLIR 22's nvgpu.mma.sp.sync writes it in inline PTX: every
// operand in an 8-byte slot, __emu_mma_sp(flags, operands, results).
Handler sparseMultiply(unsigned Flags) {
  return [Flags](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    auto *SlotsType = ArrayType::get(E.I64, 32);
    AllocaInst *Operands = B.CreateAlloca(SlotsType);
    AllocaInst *Results = B.CreateAlloca(SlotsType);
    for (unsigned I = 0; I < CI->arg_size(); ++I)
      B.CreateStore(CI->getArgOperand(I), B.CreateConstGEP1_64(E.I8, Operands, 8 * I));
    FunctionCallee F = E.runtime(Rt::mma_sp);
    B.CreateCall(F, {B.getInt32(Flags), Operands, Results});
    return unpackSlots(E, B, CI->getType(), Results);
  };
}

// "{$first,...}" for `Count` consecutive operands from `First`.
std::string registerList(unsigned First, unsigned Count) {
  std::string Text = "{";
  for (unsigned I = 0; I < Count; ++I)
    Text += (I ? ",$" : "$") + std::to_string(First + I);
  return Text + "}";
}

void addSparseMmaAsm(std::map<std::string, Handler> &T) {
  for (unsigned K : {16u, 32u})
    for (bool F16Accumulator : {true, false})
      for (unsigned Selector = 0; Selector < (K == 32 ? 2u : 4u); ++Selector) {
        unsigned D = F16Accumulator ? 2 : 4, A = K / 8, Bn = K / 8, C = D;
        std::string Acc = F16Accumulator ? "f16" : "f32";
        std::string Text = "mma.sp.sync.aligned.m16n8k" + std::to_string(K) + ".row.col." + Acc + ".f16.f16." + Acc +
                           " " + registerList(0, D) + "," + registerList(D, A) + "," + registerList(D + A, Bn) + "," +
                           registerList(D + A + Bn, C) + ",$" + std::to_string(D + A + Bn + C) + ",0x" +
                           std::to_string(Selector) + ";";
        unsigned Flags = (K == 32 ? MMA_SP_K32 : 0) | (F16Accumulator ? MMA_SP_C_F16 | MMA_SP_D_F16 : 0) |
                         Selector << MMA_SP_SELECTOR_SHIFT;
        T[collapseSpaces(Text)] = sparseMultiply(Flags);
      }
}


void addClusterIntrinsics(StringMap<Handler> &T) {
  const std::string S = "llvm.nvvm.read.ptx.sreg.";
  for (const char *D : {"x", "y", "z"}) {
    std::string Dim(D);
    T[S + "clusterid." + Dim] = rt(runtimeNamed("clusterid_" + Dim));
    T[S + "nclusterid." + Dim] = rt(runtimeNamed("nclusterid_" + Dim));
    T[S + "cluster.ctaid." + Dim] = rt(runtimeNamed("cluster_ctaid_" + Dim));
    T[S + "cluster.nctaid." + Dim] = rt(runtimeNamed("cluster_nctaid_" + Dim));
  }
  T[S + "cluster.ctarank"] = rt(Rt::cluster_ctarank);
  T[S + "cluster.nctarank"] = rt(Rt::cluster_nctarank);
  T[S + "is.explicit.cluster"] = rt(Rt::is_explicit_cluster);
  T["llvm.nvvm.mapa"] = rt(Rt::mapa);
  T["llvm.nvvm.mapa.shared.cluster"] = rt(Rt::mapa);
  T["llvm.nvvm.getctarank"] = rt(Rt::getctarank);
  T["llvm.nvvm.getctarank.shared.cluster"] = rt(Rt::getctarank);
  for (const char *Tail : {"", ".aligned"}) {
    T[std::string("llvm.nvvm.barrier.cluster.arrive") + Tail] = rt(Rt::cluster_arrive);
    T[std::string("llvm.nvvm.barrier.cluster.arrive.relaxed") + Tail] = rt(Rt::cluster_arrive);
    T[std::string("llvm.nvvm.barrier.cluster.wait") + Tail] = rt(Rt::cluster_wait);
  }
}

// wgmma.mma_async (runtime wgmma.h) as MLIR 22's nvvm.wgmma.mma_async writes it in inline PTX: the tied
// accumulator registers, the two descriptors, scale-d, then the immediates scale-a, scale-b, transpose-a,
// transpose-b, each in an 8-byte slot; __emu_wgmma(flags, operands, results).
Handler warpgroupMultiply(unsigned Flags) {
  return [Flags](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    auto *SlotsType = ArrayType::get(E.I64, 160);
    AllocaInst *Operands = B.CreateAlloca(SlotsType);
    AllocaInst *Results = B.CreateAlloca(SlotsType);
    for (unsigned I = 0; I < CI->arg_size(); ++I)
      B.CreateStore(CI->getArgOperand(I), B.CreateConstGEP1_64(E.I8, Operands, 8 * I));
    FunctionCallee F = E.runtime(Rt::wgmma);
    B.CreateCall(F, {B.getInt32(Flags), Operands, Results});
    return unpackSlots(E, B, CI->getType(), Results);
  };
}

void addWarpgroupMmaAsm(std::map<std::string, Handler> &T) {
  for (unsigned N = 8; N <= 256; N += 8)
    for (bool F16Accumulator : {false, true})
      for (bool Bf16 : {false, true}) {
        if (F16Accumulator && Bf16)
          continue;  // bf16 inputs accumulate in f32 only
        unsigned R = F16Accumulator ? N / 4 : N / 2;
        std::string In = Bf16 ? "bf16" : "f16", Acc = F16Accumulator ? "f16" : "f32";
        std::string Registers = "{";
        for (unsigned I = 0; I < R; ++I)
          Registers += (I ? ", $" : "$") + std::to_string(I);
        Registers += "}";
        auto Op = [&](unsigned I) { return "$" + std::to_string(2 * R + I); };
        std::string Text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + Op(2) + ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                           std::to_string(N) + "k16." + Acc + "." + In + "." + In + " " + Registers + ", " + Op(0) +
                           ", " + Op(1) + ", p, " + Op(3) + ", " + Op(4) + ", " + Op(5) + ", " + Op(6) + ";\n}\n";
        T[collapseSpaces(Text)] = warpgroupMultiply(N | (F16Accumulator ? WGMMA_ACC_F16 : 0) | (Bf16 ? WGMMA_BF16 : 0));
      }
}

// elect.sync: {the leader's lane, whether this lane is it}, the leader being the lowest lane of the mask
// among the lanes that execute it together (a ballot, the runtime's warp collective).
Value *electSync(Emulator &E, IRBuilder<> &B, CallInst *CI) {
  FunctionCallee Vote = E.runtime(Rt::vote_sync);
  Value *Ballot = B.CreateCall(Vote, {B.getInt32(VOTE_BALLOT), CI->getArgOperand(0), B.getInt32(1)});
  Value *Members = B.CreateAnd(Ballot, CI->getArgOperand(0));
  Value *Leader = B.CreateIntrinsic(E.I32, Intrinsic::cttz, {Members, B.getFalse()});
  Value *Lane = B.CreateCall(E.runtime(Rt::laneid));
  Value *Pair = B.CreateInsertValue(PoisonValue::get(CI->getType()), Leader, 0);
  return B.CreateInsertValue(Pair, B.CreateICmpEQ(Lane, Leader), 1);
}

// stmatrix.sync.aligned.m8n8.xN[.trans].b16 (runtime wgmma.h): a warp collective; this lane's row address
// and its N registers in 8-byte slots, __emu_stmatrix(N, trans, slots).
Handler storeMatrix(unsigned Count, bool Transposed) {
  return [Count, Transposed](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    AllocaInst *Slots = entryArray(B, E.I64, 5);
    B.CreateStore(B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), Slots);
    for (unsigned I = 0; I < Count; ++I)
      B.CreateStore(B.CreateZExt(CI->getArgOperand(1 + I), E.I64), B.CreateConstGEP2_32(Slots->getAllocatedType(), Slots, 0, 1 + I));
    FunctionCallee F = E.runtime(Rt::stmatrix);
    B.CreateCall(F, {B.getInt32(Count), B.getInt32(Transposed), Slots});
    return nullptr;
  };
}

// cp.async.bulk without a tensor map (runtime hopper.h). global.to.shared.cluster: dst, mbar, src, size,
// multicast mask, cache hint, multicast flag, cache-hint flag; shared.cta.to.cluster: dst, mbar, src,
// size; shared.cta.to.global: dst, src, size, cache hint, flag.
Handler bulkCopy(bool ToShared, bool Multicasting) {
  return [=](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    auto Arg = [&](unsigned I) { return B.CreateAddrSpaceCast(CI->getArgOperand(I), E.Ptr); };
    if (!ToShared) {
      FunctionCallee F = E.runtime(Rt::bulk_to_global);
      B.CreateCall(F, {Arg(0), Arg(1), CI->getArgOperand(2)});
      return nullptr;
    }
    Value *Mask = Multicasting ? B.CreateZExt(CI->getArgOperand(4), E.I32) : B.getInt32(0);
    Value *Multicast = Multicasting ? B.CreateZExt(CI->getArgOperand(6), E.I32) : B.getInt32(0);
    FunctionCallee F = E.runtime(Rt::bulk_to_shared);
    B.CreateCall(F, {Arg(0), Arg(1), Arg(2), CI->getArgOperand(3), Mask, Multicast});
    return nullptr;
  };
}

void addHopperIntrinsics(StringMap<Handler> &T) {
  addClusterIntrinsics(T);
  for (unsigned Count : {1u, 2u, 4u})
    for (bool Trans : {false, true})
      for (const char *Space : {"", ".p3", ".p0"})
        T[std::string("llvm.nvvm.stmatrix.sync.aligned.m8n8.x") + std::to_string(Count) + (Trans ? ".trans" : "") +
          ".b16" + Space] = storeMatrix(Count, Trans);
  // setmaxnreg only moves registers between warpgroups: nothing for the CPU to do.
  T["llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"] = erase();
  T["llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"] = erase();
  T["llvm.nvvm.cp.async.bulk.global.to.shared.cluster"] = bulkCopy(true, true);
  T["llvm.nvvm.cp.async.bulk.shared.cta.to.cluster"] = bulkCopy(true, false);
  T["llvm.nvvm.cp.async.bulk.shared.cta.to.global"] = bulkCopy(false, false);
  T["llvm.nvvm.cp.async.bulk.prefetch.L2"] = erase();
  T["llvm.nvvm.elect.sync"] = electSync;
  // wgmma's fence, commit and wait: the emulated wgmma is done when it returns.
  for (const char *Name : {"llvm.nvvm.wgmma.fence.sync.aligned", "llvm.nvvm.wgmma.commit_group.sync.aligned",
                           "llvm.nvvm.wgmma.wait_group.sync.aligned"})
    T[Name] = erase();
  const std::string N = "llvm.nvvm.mbarrier.";
  for (const char *Space : {"", ".shared"}) {
    std::string S(Space);
    T[N + "init" + S] = hopperCall(Rt::mbarrier_init);
    T[N + "inval" + S] = hopperCall(Rt::mbarrier_inval);
    T[N + "arrive" + S] = hopperCall(Rt::mbarrier_arrive, 1);
    T[N + "arrive.noComplete" + S] = hopperCall(Rt::mbarrier_arrive_nocomplete);
    T[N + "test.wait" + S] = hopperCall(Rt::mbarrier_test_wait);
  }
  for (const char *Relaxed : {"", "relaxed."})
    for (const char *Scope : {"cta", "cluster"}) {
      std::string Tail = std::string(Relaxed) + "scope." + Scope + ".space.";
      for (const char *Space : {"cta", "cluster"}) {
        T[N + "arrive." + Tail + Space] = hopperCall(Rt::mbarrier_arrive, 1);
        T[N + "arrive.expect.tx." + Tail + Space] = hopperCall(Rt::mbarrier_arrive_expect_tx);
        if (!*Relaxed) {
          T[N + "expect.tx." + Tail + Space] = hopperCall(Rt::mbarrier_expect_tx);
          T[N + "complete.tx." + Tail + Space] = hopperCall(Rt::mbarrier_complete_tx);
        }
      }
      T[N + "test.wait." + Tail + "cta"] = hopperCall(Rt::mbarrier_test_wait);
      T[N + "test.wait.parity." + Tail + "cta"] = hopperCall(Rt::mbarrier_test_wait_parity);
      // try_wait may give up after a time limit; the emulation waits until the phase completes.
      for (const char *Limit : {"", "tl."}) {
        T[N + "try.wait." + Limit + Tail + "cta"] = hopperCall(Rt::mbarrier_wait_token);
        T[N + "try.wait.parity." + Limit + Tail + "cta"] = hopperCall(Rt::mbarrier_wait_parity);
      }
    }
  T[N + "pending.count"] = [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
    return B.CreateTrunc(B.CreateAnd(CI->getArgOperand(0), B.getInt64(MBAR_FIELD)), CI->getType());
  };
  for (unsigned Rank = 1; Rank <= 5; ++Rank) {
    std::string D = std::to_string(Rank) + "d";
    T["llvm.nvvm.cp.async.bulk.tensor.g2s.tile." + D] = tensorCopy(Rank, true);
    T["llvm.nvvm.cp.async.bulk.tensor.s2g.tile." + D] = tensorCopy(Rank, false);
    T["llvm.nvvm.cp.async.bulk.tensor.prefetch.tile." + D] = erase();
  }
  // Bulk copies are done at issue: their groups and waits have nothing left to wait for.
  for (const char *Name : {"llvm.nvvm.cp.async.bulk.commit.group", "llvm.nvvm.cp.async.bulk.wait.group",
                           "llvm.nvvm.cp.async.bulk.wait.group.read"})
    T[Name] = erase();
  // prefetch.tensormap is overloaded on the map's address space (generic, global, param).
  for (const char *Space : {"", ".p0", ".p1", ".p4", ".p101"})
    T[std::string("llvm.nvvm.prefetch.tensormap") + Space] = erase();
  for (const char *Name : {"llvm.nvvm.fence.proxy.async", "llvm.nvvm.fence.proxy.async.global",
                           "llvm.nvvm.fence.proxy.async.shared_cluster", "llvm.nvvm.fence.proxy.async.shared_cta",
                           "llvm.nvvm.fence.mbarrier_init.release.cluster"})
    T[Name] = fence();
  for (const char *Order : {"acquire", "release"})
    for (const char *Scope : {"cta", "cluster", "gpu", "sys"})
      T[std::string("llvm.nvvm.fence.proxy.tensormap_generic.") + Order + "." + Scope] = fence();
}

const StringMap<Handler> &intrinsicTable() {
  static const StringMap<Handler> Table = [] {
    StringMap<Handler> T;
    auto Mirror = [&T](const std::string &Intrinsic) { T[Intrinsic] = mirror(Intrinsic); };
    // Special registers (NVVM).
    for (const char *D : {"x", "y", "z"})
      for (const char *R : {"tid", "ntid", "ctaid", "nctaid"})
        T[std::string("llvm.nvvm.read.ptx.sreg.") + R + "." + D] = rt(runtimeNamed(std::string(R) + "_" + D));
    T["llvm.nvvm.read.ptx.sreg.laneid"] = rt(Rt::laneid);
    T["llvm.nvvm.read.ptx.sreg.warpid"] = rt(Rt::warpid);
    T["llvm.nvvm.read.ptx.sreg.nwarpid"] = rt(Rt::nwarpid);
    T["llvm.nvvm.read.ptx.sreg.warpsize"] = rt(Rt::warpsize);
    T["llvm.nvvm.read.ptx.sreg.smid"] = constant(0);
    T["llvm.nvvm.read.ptx.sreg.nsmid"] = constant(1);
    T["llvm.nvvm.read.ptx.sreg.clock"] = rt(Rt::clock);
    T["llvm.nvvm.read.ptx.sreg.clock64"] = rt(Rt::clock64);
    T["llvm.nvvm.read.ptx.sreg.globaltimer"] = rt(Rt::globaltimer);
    for (const char *R : {"lt", "le", "eq", "ge", "gt"})
      T[std::string("llvm.nvvm.read.ptx.sreg.lanemask.") + R] = rt(runtimeNamed(std::string("lanemask_") + R));
    // Barriers and fences.
    for (const char *B : {"llvm.nvvm.barrier0", "llvm.nvvm.barrier.sync", "llvm.nvvm.barrier.sync.cnt",
                          "llvm.nvvm.barrier.cta.sync.aligned.all", "llvm.nvvm.barrier.cta.sync.all",
                          "llvm.nvvm.barrier.cta.sync.aligned.count", "llvm.nvvm.barrier.cta.sync.count",
                          "llvm.nvvm.barrier.cta.arrive.aligned.count", "llvm.nvvm.barrier.cta.arrive.count",
                          "llvm.nvvm.barrier.n", "llvm.nvvm.barrier", "llvm.nvvm.bar.sync", "llvm.amdgcn.s.barrier"})
      T[B] = [](Emulator &E, IRBuilder<> &B, CallInst *) -> Value * {
        B.CreateCall(E.runtime(Rt::barrier));
        return nullptr;
      };
    T["llvm.nvvm.barrier0.popc"] = barrierReduce(RED_POPC);
    T["llvm.nvvm.barrier0.and"] = barrierReduce(RED_AND);
    T["llvm.nvvm.barrier0.or"] = barrierReduce(RED_OR);
    T["llvm.nvvm.barrier.cta.red.popc.aligned.all"] = barrierReduce(RED_POPC);
    T["llvm.nvvm.barrier.cta.red.and.aligned.all"] = barrierReduce(RED_AND);
    T["llvm.nvvm.barrier.cta.red.or.aligned.all"] = barrierReduce(RED_OR);
    for (const char *F : {"llvm.nvvm.membar.cta", "llvm.nvvm.membar.gl", "llvm.nvvm.membar.sys",
                          "llvm.nvvm.fence.sc.cluster", "llvm.nvvm.fence.acq_rel.cluster"})
      T[F] = fence();
    // Warp operations.
    const std::pair<const char *, unsigned> Modes[] = {{"idx", SHFL_IDX}, {"up", SHFL_UP}, {"down", SHFL_DOWN}, {"bfly", SHFL_BFLY}};
    for (auto [Name, Mode] : Modes)
      for (const char *Ty : {"i32", "f32"}) {
        T[std::string("llvm.nvvm.shfl.sync.") + Name + "." + Ty] = shuffle(Mode, false);
        T[std::string("llvm.nvvm.shfl.sync.") + Name + "." + Ty + "p"] = shuffle(Mode, true);
      }
    T["llvm.nvvm.vote.all.sync"] = vote(VOTE_ALL);
    T["llvm.nvvm.vote.any.sync"] = vote(VOTE_ANY);
    T["llvm.nvvm.vote.uni.sync"] = vote(VOTE_UNI);
    T["llvm.nvvm.vote.ballot.sync"] = vote(VOTE_BALLOT);
    T["llvm.nvvm.activemask"] = rt(Rt::activemask);
    T["llvm.nvvm.bar.warp.sync"] = rt(Rt::warp_sync);
    const std::pair<const char *, unsigned> Reduxes[] = {{"add", REDUX_ADD}, {"min", REDUX_MIN}, {"max", REDUX_MAX},
                                                         {"umin", REDUX_UMIN}, {"umax", REDUX_UMAX}, {"and", REDUX_AND},
                                                         {"or", REDUX_OR}, {"xor", REDUX_XOR}};
    for (auto [Name, Kind] : Reduxes)
      T[std::string("llvm.nvvm.redux.sync.") + Name] = withKind(Rt::redux_sync, Kind);
    // Math and conversions libdevice uses: round-to-nearest forms are LLVM operations, the other rounding
    // modes, flush-to-zero and approximations are the runtime's mirrors (nvvm_<name>).
    for (const char *Ty : {"f", "d"}) {
      std::string S(Ty);
      T["llvm.nvvm.add.rn." + S] = binary(Instruction::FAdd);
      T["llvm.nvvm.mul.rn." + S] = binary(Instruction::FMul);
      T["llvm.nvvm.div.rn." + S] = binary(Instruction::FDiv);
      T["llvm.nvvm.fma.rn." + S] = generic(Intrinsic::fma);
      T["llvm.nvvm.sqrt.rn." + S] = generic(Intrinsic::sqrt);
      T["llvm.nvvm.rcp.rn." + S] = reciprocal();
      T["llvm.nvvm.ceil." + S] = generic(Intrinsic::ceil);
      T["llvm.nvvm.floor." + S] = generic(Intrinsic::floor);
      T["llvm.nvvm.trunc." + S] = generic(Intrinsic::trunc);
      T["llvm.nvvm.round." + S] = generic(Intrinsic::round);
      T["llvm.nvvm.fmin." + S] = generic(Intrinsic::minnum);
      T["llvm.nvvm.fmax." + S] = generic(Intrinsic::maxnum);
      for (const char *Mode : {"rm", "rp", "rz"})
        for (const char *Op : {"add", "mul", "div", "fma", "sqrt", "rcp"})
          Mirror(std::string("llvm.nvvm.") + Op + "." + Mode + "." + S);
      for (const char *Mode : {"rn", "rm", "rp", "rz"})
        for (const char *Op : {"add", "mul", "div", "fma", "sqrt", "rcp"})
          if (S == "f")
            Mirror(std::string("llvm.nvvm.") + Op + "." + Mode + ".ftz.f");
    }
    T["llvm.nvvm.sqrt.f"] = generic(Intrinsic::sqrt);
    T["llvm.nvvm.fabs.f32"] = generic(Intrinsic::fabs);
    T["llvm.nvvm.fabs.f64"] = generic(Intrinsic::fabs);
    T["llvm.nvvm.fabs"] = generic(Intrinsic::fabs);
    for (const char *Name : {
             "fabs.ftz.f32", "ceil.ftz.f", "floor.ftz.f", "trunc.ftz.f", "round.ftz.f", "fmin.ftz.f", "fmax.ftz.f",
             "saturate.f", "saturate.ftz.f", "saturate.d", "sin.approx.f", "sin.approx.ftz.f", "cos.approx.f",
             "cos.approx.ftz.f", "ex2.approx.f32", "ex2.approx.ftz.f32", "ex2.approx.f", "ex2.approx.ftz.f",
             "ex2.approx.d", "lg2.approx.f", "lg2.approx.ftz.f", "lg2.approx.d", "rsqrt.approx.f",
             "rsqrt.approx.ftz.f", "rsqrt.approx.d", "rsqrt.approx.ftz.d", "sqrt.approx.f", "sqrt.approx.ftz.f",
             "div.approx.f", "div.approx.ftz.f", "rcp.approx.ftz.d", "rcp.approx.ftz.f", "f2h.rn", "f2h.rn.ftz",
             "d2i.hi", "d2i.lo", "lohi.i2d", "prmt", "sad.i", "sad.ui", "sad.s", "sad.us", "sad.ll", "sad.ull",
             "fmin.nan.f", "fmax.nan.f", "fmin.ftz.nan.f", "fmax.ftz.nan.f"})
      Mirror(std::string("llvm.nvvm.") + Name);
    // Conversions: every rounding mode of every pair libdevice uses.
    for (const char *Mode : {"rn", "rm", "rp", "rz"}) {
      for (const char *Conv : {"f2i", "f2ui", "f2ll", "f2ull", "d2i", "d2ui", "d2ll", "d2ull", "i2f", "ui2f",
                               "ll2f", "ull2f", "i2d", "ui2d", "ll2d", "ull2d", "d2f"})
        Mirror(std::string("llvm.nvvm.") + Conv + "." + Mode);
      for (const char *Conv : {"f2i", "f2ui", "f2ll", "f2ull", "d2f"})
        Mirror(std::string("llvm.nvvm.") + Conv + "." + Mode + ".ftz");
    }
    // AMDGPU: work-item ids, the hidden arguments ockl reads, wavefront operations.
    const char *Dims[] = {"x", "y", "z"};
    for (const char *D : Dims) {
      T[std::string("llvm.amdgcn.workitem.id.") + D] = rt(runtimeNamed(std::string("tid_") + D));
      T[std::string("llvm.amdgcn.workgroup.id.") + D] = rt(runtimeNamed(std::string("ctaid_") + D));
    }
    T["llvm.amdgcn.implicitarg.ptr"] = pointerFrom(Rt::implicitarg_ptr);
    T["llvm.amdgcn.dispatch.ptr"] = pointerFrom(Rt::dispatch_ptr);
    T["llvm.amdgcn.dispatch.id"] = constant(0);
    T["llvm.amdgcn.wavefrontsize"] = rt(Rt::warpsize);
    T["llvm.amdgcn.s.memtime"] = rt(Rt::clock64);
    T["llvm.amdgcn.s.memrealtime"] = rt(Rt::globaltimer);
    for (const char *Name : {"llvm.amdgcn.wave.barrier", "llvm.amdgcn.s.waitcnt", "llvm.amdgcn.s.sleep",
                             "llvm.amdgcn.s.setprio", "llvm.amdgcn.sched.barrier", "llvm.amdgcn.s.nop"})
      T[Name] = erase();
    T["llvm.amdgcn.ds.bpermute"] = rt(Rt::bpermute);
    T["llvm.amdgcn.ds.swizzle"] = rt(Rt::swizzle);
    T["llvm.amdgcn.mbcnt.lo"] = rt(Rt::mbcnt_lo);
    T["llvm.amdgcn.mbcnt.hi"] = rt(Rt::mbcnt_hi);
    T["llvm.amdgcn.readlane.i32"] = rt(Rt::readlane);
    T["llvm.amdgcn.readlane"] = rt(Rt::readlane);
    T["llvm.amdgcn.readfirstlane.i32"] = rt(Rt::readfirstlane);
    T["llvm.amdgcn.readfirstlane"] = rt(Rt::readfirstlane);
    for (const char *Wide : {"i64", "f64"}) {
      T[std::string("llvm.amdgcn.readlane.") + Wide] = laneRead64(Rt::readlane);
      T[std::string("llvm.amdgcn.readfirstlane.") + Wide] = laneRead64(Rt::readfirstlane);
    }
    for (const char *Ballot : {"llvm.amdgcn.ballot.i64", "llvm.amdgcn.ballot.i32"})
      T[Ballot] = [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
        FunctionCallee F = E.runtime(Rt::ballot);
        Value *R = B.CreateCall(F, {B.CreateZExt(CI->getArgOperand(0), E.I32)});
        return B.CreateTrunc(R, CI->getType());
      };
    // AMDGPU math ocml uses: the runtime's mirrors (amdgcn_<name>), exact where the hardware
    // approximates (rcp, rsq, sqrt, exp2, log).
    for (const char *Ty : {"f32", "f64"}) {
      std::string S(Ty);
      T["llvm.amdgcn.rcp." + S] = reciprocal();
      T["llvm.amdgcn.sqrt." + S] = generic(Intrinsic::sqrt);
      Mirror("llvm.amdgcn.fract." + S);
      Mirror("llvm.amdgcn.frexp.mant." + S);
      Mirror("llvm.amdgcn.frexp.exp.i32." + S);
      Mirror("llvm.amdgcn.rsq." + S);
      Mirror("llvm.amdgcn.class." + S);
      Mirror("llvm.amdgcn.fmed3." + S);
      T["llvm.amdgcn.ldexp." + S] = generic(Intrinsic::ldexp);
    }
    Mirror("llvm.amdgcn.trig.preop.f64");
    T["llvm.amdgcn.exp2.f32"] = generic(Intrinsic::exp2);
    T["llvm.amdgcn.log.f32"] = generic(Intrinsic::log2);
    Mirror("llvm.amdgcn.sin.f32");
    Mirror("llvm.amdgcn.cos.f32");
    Mirror("llvm.amdgcn.fmul.legacy");
    Mirror("llvm.amdgcn.fma.legacy");
    Mirror("llvm.amdgcn.ubfe.i32");
    Mirror("llvm.amdgcn.sbfe.i32");
    // Asynchronous copies, ldmatrix, mma.sync (sm_80's tensor-core path of nvgpu).
    for (const char *Cache : {"ca", "cg"})
      for (unsigned Bytes : {4u, 8u, 16u})
        for (const char *Sized : {"", ".s"})
          T[std::string("llvm.nvvm.cp.async.") + Cache + ".shared.global." + std::to_string(Bytes) + Sized] =
              asyncCopy(Bytes);
    for (const char *Name : {"llvm.nvvm.cp.async.commit.group", "llvm.nvvm.cp.async.wait.group",
                             "llvm.nvvm.cp.async.wait.all"})
      T[Name] = erase();
    for (unsigned Count : {1u, 2u, 4u})
      for (bool Trans : {false, true})
        for (const char *Space : {"", ".p3", ".p0"})
          T[std::string("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x") + std::to_string(Count) + (Trans ? ".trans" : "") +
            ".b16" + Space] = loadMatrix(Count, Trans);
    for (const char *D : {"f16", "f32"})
      for (const char *Cty : {"f16", "f32"}) {
        T[std::string("llvm.nvvm.mma.m16n8k16.row.col.") + D + "." + Cty] = matrixMultiply(MMA_M16N8K16_F16);
        T[std::string("llvm.nvvm.mma.m16n8k8.row.col.") + D + "." + Cty] = matrixMultiply(MMA_M16N8K8_F16);
      }
    T["llvm.nvvm.mma.m16n8k8.row.col.tf32"] = matrixMultiply(MMA_M16N8K8_TF32);
    T["llvm.nvvm.mma.m16n8k4.row.col.tf32"] = matrixMultiply(MMA_M16N8K4_TF32);
    T["llvm.nvvm.mma.m8n8k4.row.col.f64"] = matrixMultiply(MMA_M8N8K4_F64);
    const char *Spaces[] = {"", ".p0", ".p1", ".p3"};
    for (const char *Layout : {"row", "col"})
      for (const char *Stride : {"", ".stride"})
        for (const char *Space : Spaces) {
          std::string Tail = std::string(".") + Layout + Stride;
          bool Col = std::string(Layout) == "col";
          std::string M16 = "llvm.nvvm.wmma.m16n16k16.", M8 = "llvm.nvvm.wmma.m8n8k4.";
          T[M16 + "load.a" + Tail + ".f16" + Space] = wmmaLoad(WMMA_M16N16K16, WMMA_A, Col, WMMA_F16);
          T[M16 + "load.b" + Tail + ".f16" + Space] = wmmaLoad(WMMA_M16N16K16, WMMA_B, Col, WMMA_F16);
          T[M16 + "load.c" + Tail + ".f16" + Space] = wmmaLoad(WMMA_M16N16K16, WMMA_C, Col, WMMA_F16);
          T[M16 + "load.c" + Tail + ".f32" + Space] = wmmaLoad(WMMA_M16N16K16, WMMA_C, Col, WMMA_F32);
          T[M16 + "store.d" + Tail + ".f16" + Space] = wmmaStore(WMMA_M16N16K16, Col, WMMA_F16);
          T[M16 + "store.d" + Tail + ".f32" + Space] = wmmaStore(WMMA_M16N16K16, Col, WMMA_F32);
          T[M8 + "load.a" + Tail + ".f64" + Space] = wmmaLoad(WMMA_M8N8K4, WMMA_A, Col, WMMA_F64);
          T[M8 + "load.b" + Tail + ".f64" + Space] = wmmaLoad(WMMA_M8N8K4, WMMA_B, Col, WMMA_F64);
          T[M8 + "load.c" + Tail + ".f64" + Space] = wmmaLoad(WMMA_M8N8K4, WMMA_C, Col, WMMA_F64);
          T[M8 + "store.d" + Tail + ".f64" + Space] = wmmaStore(WMMA_M8N8K4, Col, WMMA_F64);
        }
    for (const char *A : {"row", "col"})
      for (const char *Bl : {"row", "col"}) {
        for (const char *D : {"f16", "f32"})
          for (const char *Cty : {"f16", "f32"})
            for (const char *Sat : {"", ".satfinite"})
              T[std::string("llvm.nvvm.wmma.m16n16k16.mma.") + A + "." + Bl + "." + D + "." + Cty + Sat] =
                  matrixMultiply(MMA_WMMA_M16N16K16);
        for (const char *Rounding : {"", ".rn", ".rz", ".rm", ".rp"})
          T[std::string("llvm.nvvm.wmma.m8n8k4.mma.") + A + "." + Bl + ".f64" + Rounding] =
              matrixMultiply(MMA_WMMA_M8N8K4_F64);
      }
    // A trap (after a failed device assertion) stops the GPU thread and the launch.
    T["llvm.trap"] = rt(Rt::trap);
    T["llvm.nvvm.mulhi.i"] = multiplyHigh(true);
    T["llvm.nvvm.mulhi.ll"] = multiplyHigh(true);
    T["llvm.nvvm.mulhi.s"] = multiplyHigh(true);
    T["llvm.nvvm.mulhi.ui"] = multiplyHigh(false);
    T["llvm.nvvm.mulhi.ull"] = multiplyHigh(false);
    T["llvm.nvvm.mulhi.us"] = multiplyHigh(false);
    addHopperIntrinsics(T);
    return T;
  }();
  return Table;
}

// Intrinsics overloaded on their types (one name per type), by ID.
const std::map<Intrinsic::ID, Handler> &overloadedTable() {
  static const std::map<Intrinsic::ID, Handler> Table = [] {
    std::map<Intrinsic::ID, Handler> T;
    T[Intrinsic::amdgcn_make_buffer_rsrc] = makeBufferResource();
    T[Intrinsic::amdgcn_raw_ptr_buffer_load] = bufferLoad();
    T[Intrinsic::amdgcn_raw_ptr_buffer_store] = bufferStore();
    const std::pair<Intrinsic::ID, unsigned> Atomics[] = {
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_swap, BA_SWAP}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_add, BA_ADD},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_sub, BA_SUB}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_smin, BA_SMIN},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_umin, BA_UMIN}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_smax, BA_SMAX},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_umax, BA_UMAX}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_and, BA_AND},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_or, BA_OR}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_xor, BA_XOR},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fadd, BA_FADD}, {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fmin, BA_FMIN},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_fmax, BA_FMAX},
        {Intrinsic::amdgcn_raw_ptr_buffer_atomic_cmpswap, BA_CMPSWAP}};
    for (auto [ID, Op] : Atomics)
      T[ID] = bufferAtomic(Op);
    T[Intrinsic::amdgcn_wmma_f32_16x16x16_f16] = amdWmma(AMD_WMMA_F32_F16);
    T[Intrinsic::amdgcn_wmma_f32_16x16x16_bf16] = amdWmma(AMD_WMMA_F32_BF16);
    T[Intrinsic::amdgcn_wmma_f16_16x16x16_f16] = amdWmma(AMD_WMMA_F16_F16);
    T[Intrinsic::amdgcn_wmma_f16_16x16x16_f16_tied] = amdWmma(AMD_WMMA_F16_F16);
    T[Intrinsic::amdgcn_wmma_bf16_16x16x16_bf16] = amdWmma(AMD_WMMA_BF16_BF16);
    T[Intrinsic::amdgcn_wmma_bf16_16x16x16_bf16_tied] = amdWmma(AMD_WMMA_BF16_BF16);
    T[Intrinsic::amdgcn_wmma_i32_16x16x16_iu8] = amdWmma(AMD_WMMA_I32_IU8);
    T[Intrinsic::amdgcn_wmma_i32_16x16x16_iu4] = amdWmma(AMD_WMMA_I32_IU4);
    return T;
  }();
  return Table;
}

// ---- libdevice's inline PTX ---------------------------------------------------------------------------

std::string collapseSpaces(StringRef Text) {
  std::string Out;
  bool Space = false;
  for (char Ch : Text) {
    if (Ch == ' ' || Ch == '\t' || Ch == '\n') {
      Space = !Out.empty();
      continue;
    }
    if (Space)
      Out += ' ';
    Space = false;
    Out += Ch;
  }
  return Out;
}

// The two 64-bit halves of a 128-bit value, as {i64, i64} (libdevice's wide arithmetic outputs).
Value *halves(Emulator &E, IRBuilder<> &B, Type *ResultType, Value *Wide) {
  Value *Low = B.CreateTrunc(Wide, E.I64);
  Value *High = B.CreateTrunc(B.CreateLShr(Wide, 64), E.I64);
  return B.CreateInsertValue(B.CreateInsertValue(PoisonValue::get(ResultType), Low, 0), High, 1);
}

Value *wide(Emulator &E, IRBuilder<> &B, Value *Low, Value *High) {
  Type *I128 = Type::getInt128Ty(E.C);
  return B.CreateOr(B.CreateZExt(Low, I128), B.CreateShl(B.CreateZExt(High, I128), 64));
}

const std::map<std::string, Handler> &inlineAsmTable() {
  static const std::map<std::string, Handler> Table = [] {
    std::map<std::string, Handler> T;
    // {lo, hi} = a * b + c on u32 (the trigonometric argument reduction).
    T[collapseSpaces("{\n\tmad.lo.cc.u32   $0, $2, $3, $4;\n\tmadc.hi.u32     $1, $2, $3,  0;\n\t}")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      auto Z = [&](unsigned I) { return B.CreateZExt(CI->getArgOperand(I), E.I64); };
      Value *Full = B.CreateAdd(B.CreateMul(Z(0), Z(1)), Z(2));
      Value *Pair = B.CreateInsertValue(PoisonValue::get(CI->getType()), B.CreateTrunc(Full, E.I32), 0);
      return B.CreateInsertValue(Pair, B.CreateTrunc(B.CreateLShr(Full, 32), E.I32), 1);
    };
    // 128-bit a + b, a - b (operands as lo, hi pairs), a * b and a * b + c (64-bit operands).
    T[collapseSpaces("{\n\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n\tmov.b64         {a0,a1}, $2;\n\tmov.b64         {a2,a3}, $3;\n\tmov.b64         {b0,b1}, $4;\n\tmov.b64         {b2,b3}, $5;\n\tadd.cc.u32      r0, a0, b0; \n\taddc.cc.u32     r1, a1, b1; \n\taddc.cc.u32     r2, a2, b2; \n\taddc.u32        r3, a3, b3; \n\tmov.b64         $0, {r0,r1};\n\tmov.b64         $1, {r2,r3};\n\t}")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Value *A = wide(E, B, CI->getArgOperand(0), CI->getArgOperand(1));
      Value *Bv = wide(E, B, CI->getArgOperand(2), CI->getArgOperand(3));
      return halves(E, B, CI->getType(), B.CreateAdd(A, Bv));
    };
    T[collapseSpaces("{\n\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n\tmov.b64         {a0,a1}, $2;\n\tmov.b64         {a2,a3}, $3;\n\tmov.b64         {b0,b1}, $4;\n\tmov.b64         {b2,b3}, $5;\n\tsub.cc.u32      r0, a0, b0; \n\tsubc.cc.u32     r1, a1, b1; \n\tsubc.cc.u32     r2, a2, b2; \n\tsubc.u32        r3, a3, b3; \n\tmov.b64         $0, {r0,r1};\n\tmov.b64         $1, {r2,r3};\n\t}")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Value *A = wide(E, B, CI->getArgOperand(0), CI->getArgOperand(1));
      Value *Bv = wide(E, B, CI->getArgOperand(2), CI->getArgOperand(3));
      return halves(E, B, CI->getType(), B.CreateSub(A, Bv));
    };
    T[collapseSpaces("{\n\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi;\n\tmov.b64         {alo,ahi}, $2;    \n\tmov.b64         {blo,bhi}, $3;    \n\tmov.b64         {clo,chi}, $4;    \n\tmad.lo.cc.u32   r0, alo, blo, clo;\n\tmadc.hi.cc.u32  r1, alo, blo, chi;\n\tmadc.hi.u32     r2, alo, bhi,   0;\n\tmad.lo.cc.u32   r1, alo, bhi,  r1;\n\tmadc.hi.cc.u32  r2, ahi, blo,  r2;\n\tmadc.hi.u32     r3, ahi, bhi,   0;\n\tmad.lo.cc.u32   r1, ahi, blo,  r1;\n\tmadc.lo.cc.u32  r2, ahi, bhi,  r2;\n\taddc.u32        r3,  r3,   0;     \n\tmov.b64         $0, {r0,r1};      \n\tmov.b64         $1, {r2,r3};      \n\t}")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Type *I128 = Type::getInt128Ty(E.C);
      auto Z = [&](unsigned I) { return B.CreateZExt(CI->getArgOperand(I), I128); };
      return halves(E, B, CI->getType(), B.CreateAdd(B.CreateMul(Z(0), Z(1)), Z(2)));
    };
    T[collapseSpaces("{\n\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\n\tmov.b64         {alo,ahi}, $2;   \n\tmov.b64         {blo,bhi}, $3;   \n\tmul.lo.u32      r0, alo, blo;    \n\tmul.hi.u32      r1, alo, blo;    \n\tmad.lo.cc.u32   r1, alo, bhi, r1;\n\tmadc.hi.u32     r2, alo, bhi,  0;\n\tmad.lo.cc.u32   r1, ahi, blo, r1;\n\tmadc.hi.cc.u32  r2, ahi, blo, r2;\n\tmadc.hi.u32     r3, ahi, bhi,  0;\n\tmad.lo.cc.u32   r2, ahi, bhi, r2;\n\taddc.u32        r3, r3,  0;      \n\tmov.b64         $0, {r0,r1};     \n\tmov.b64         $1, {r2,r3};     \n\t}")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Type *I128 = Type::getInt128Ty(E.C);
      auto Z = [&](unsigned I) { return B.CreateZExt(CI->getArgOperand(I), I128); };
      return halves(E, B, CI->getType(), B.CreateMul(Z(0), Z(1)));
    };
    // $0 = ($1 == $2 or unordered) ? $3 : $4.
    T[collapseSpaces("{ .reg .pred __$$temp3;\n  setp.equ.f64 __$$temp3, $1, $2;\n  selp.f64 $0, $3, $4, __$$temp3;}")] =
        [](Emulator &, IRBuilder<> &B, CallInst *CI) -> Value * {
      Value *Equal = B.CreateFCmpUEQ(CI->getArgOperand(0), CI->getArgOperand(1));
      return B.CreateSelect(Equal, CI->getArgOperand(2), CI->getArgOperand(3));
    };
    // bfind.shiftamt.u32: the leading zero count, 0xffffffff for 0.
    T[collapseSpaces("bfind.shiftamt.u32 $0, $1;")] = [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Value *X = CI->getArgOperand(0);
      Value *Zeros = B.CreateIntrinsic(E.I32, Intrinsic::ctlz, {X, B.getTrue()});
      return B.CreateSelect(B.CreateICmpEQ(X, B.getInt32(0)), B.getInt32(0xffffffffu), Zeros);
    };
    T[collapseSpaces("rcp.approx.ftz.f32 $0,$1;")] = rt(Rt::nvvm_rcp_approx_ftz_f);
    addSparseMmaAsm(T);
    addWarpgroupMmaAsm(T);
    addPredicatedHopperAsm(T);
    // MLIR 22's predicated nvvm.mbarrier.arrive.expect_tx: "@$2" guards it.
    T[collapseSpaces("@$2 mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;")] =
        [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
      Instruction *Then = SplitBlockAndInsertIfThen(CI->getArgOperand(2), CI, false);
      IRBuilder<> Guarded(Then);
      FunctionCallee F = E.runtime(Rt::mbarrier_arrive_expect_tx);
      Guarded.CreateCall(F, {Guarded.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr),
                             Guarded.CreateZExtOrTrunc(CI->getArgOperand(1), E.I32)});
      return nullptr;
    };
    // MLIR 22's nvvm.mbarrier.try_wait.parity: a loop around try_wait until the phase of parity $1 completes
    // (the time limit $2 only bounds each try).
    for (const char *Space : {".shared", ""})
      T[collapseSpaces(std::string("{\n\t.reg .pred       P1; \n\tLAB_WAIT: \n\tmbarrier.try_wait.parity") + Space +
                       ".b64 P1, [$0], $1, $2; \n\t@P1 bra.uni DONE; \n\tbra.uni     LAB_WAIT; \n\tDONE: \n\t}")] =
          [](Emulator &E, IRBuilder<> &B, CallInst *CI) -> Value * {
        FunctionCallee F = E.runtime(Rt::mbarrier_wait_parity);
        B.CreateCall(F, {B.CreateAddrSpaceCast(CI->getArgOperand(0), E.Ptr), B.CreateZExtOrTrunc(CI->getArgOperand(1), E.I32)});
        return nullptr;
      };
    T[collapseSpaces("rsqrt.approx.ftz.f64 $0, $1;")] = rt(Rt::nvvm_rsqrt_approx_ftz_d);
    for (const char *Mode : {"rn", "rm", "rp", "rz"})
      for (const char *Ftz : {"", ".ftz"})
        for (const char *Ty : {"f32", "f64"}) {
          if (*Ftz && std::string(Ty) == "f64")
            continue;
          std::string Text = std::string("sub.") + Mode + Ftz + "." + Ty + " $0, $1, $2;";
          if (std::string(Mode) == "rn" && !*Ftz)
            T[collapseSpaces(Text)] = [](Emulator &, IRBuilder<> &B, CallInst *CI) -> Value * {
              return B.CreateFSub(CI->getArgOperand(0), CI->getArgOperand(1));
            };
          else
            T[collapseSpaces(Text)] = rt(runtimeNamed(std::string("nvvm_sub_") + Mode + (*Ftz ? "_ftz" : "") +
                                                      (std::string(Ty) == "f32" ? "_f" : "_d")));
        }
    return T;
  }();
  return Table;
}

// ---- sanitizer instrumentation (--sanitize; the sanitizer variant only, offload/data/emulator/sanitizer.c) ----
//
// Before each load, store, atomic and memory intrinsic: a call __emu_san_access(address, base, base size, bytes,
// flags, site) that checks the access against the object it belongs to and returns the address to use. The
// object is the access's underlying object: a workgroup variable, the dynamic workgroup array, a private
// array or a device global (their sizes known here), else a pointer the runtime looks up in its allocation
// table (device buffers). Integer divisions by a zero divisor are reported instead of trapping; barriers
// and shuffles name their site first. Each site is a constant {MLIR location "file:line:col" or null, object or null}
// from the instruction's debug location (device line information: compile --sanitize keeps it).
// The flags, kinds and site record: emu_abi.h.

struct SanitizerInstrumentation {
  Module &M;
  Emulator &E;
  std::map<std::pair<std::string, std::string>, Constant *> Sites;

  SanitizerInstrumentation(Module &M, Emulator &E) : M(M), E(E) {}

  static std::string location(const Instruction *I) {
    const DILocation *L = I->getDebugLoc().get();
    if (!L || !L->getLine())
      return "";
    return (L->getFilename() + ":" + Twine(L->getLine()) + ":" + Twine(L->getColumn())).str();
  }

  Constant *text(const std::string &Text, const char *Name) {
    if (Text.empty())
      return ConstantPointerNull::get(PointerType::get(E.C, 0));
    Constant *Data = ConstantDataArray::getString(E.C, Text);
    auto *G = new GlobalVariable(M, Data->getType(), true, GlobalValue::PrivateLinkage, Data, Name);
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    return G;
  }

  Constant *site(const Instruction *I, const std::string &Object) {
    auto Key = std::make_pair(location(I), Object);
    Constant *&Site = Sites[Key];
    if (!Site) {
      Constant *Fields[2] = {text(Key.first, EMU_SAN_LOCATION), text(Key.second, EMU_SAN_OBJECT)};
      Constant *Record = ConstantStruct::getAnon(E.C, Fields);  // struct san_site
      Site = new GlobalVariable(M, Record->getType(), true, GlobalValue::PrivateLinkage, Record, EMU_SAN_SITE);
    }
    return Site;
  }

  Value *generic(IRBuilder<> &B, Value *P) {
    return P->getType()->getPointerAddressSpace() == 0 ? P : B.CreateAddrSpaceCast(P, E.Ptr);
  }

  // Checks the access of `Bytes` (a constant or a value) at operand `Index` of `I`; the operand becomes
  // the address the runtime returns (a scratch slot for an access it reported under --sanitize-keep-going).
  void access(Instruction *I, unsigned Index, Value *Bytes, unsigned Flags, uint64_t Alignment) {
    Value *Address = I->getOperand(Index);
    Value *Object = getUnderlyingObject(Address, 0);
    const DataLayout &DL = M.getDataLayout();
    unsigned Kind = SAN_GLOBAL;
    uint64_t Size = 0;
    std::string What;
    if (auto *G = dyn_cast<GlobalVariable>(Object)) {
      bool Dynamic = G->isDeclaration() || DL.getTypeAllocSize(G->getValueType()) == 0;
      if (G->isConstant())
        return;  // a read-only table (no store can reach it)
      Size = Dynamic ? 0 : DL.getTypeAllocSize(G->getValueType());
      if (G->getAddressSpace() == 3) {
        Kind = Dynamic ? SAN_DYNAMIC_SHARED : SAN_SHARED;
        What = Dynamic ? "dynamic workgroup memory" : ("workgroup variable '" + G->getName() + "'").str();
      } else {
        if (Dynamic)
          return;
        Kind = SAN_DEVICE_GLOBAL;
        What = ("device global '" + G->getName() + "'").str();
      }
    } else if (auto *A = dyn_cast<AllocaInst>(Object)) {
      std::optional<TypeSize> Bits = A->getAllocationSizeInBits(DL);
      if (!Bits || Bits->isScalable())
        return;
      Kind = SAN_PRIVATE;
      Size = Bits->getFixedValue() / 8;
      What = "private array";
    } else if (auto *Arg = dyn_cast<Argument>(Object)) {
      if (Arg->hasByValAttr())
        return;  // the kernel's own copy of a by-value argument
    } else if (auto *CB = dyn_cast<CallBase>(Object)) {
      // A hardware record (AMD's implicit arguments, dispatch packet) is not checked; a mapa result is
      // shared memory of a block of the cluster, which the runtime finds by address.
      if (CB->getCalledFunction() && CB->getCalledFunction()->isIntrinsic() &&
          !CB->getCalledFunction()->getName().starts_with("llvm.nvvm.mapa"))
        return;
    }
    IRBuilder<> B(I);
    unsigned Log2 = Log2_64(std::max<uint64_t>(1, Alignment));
    unsigned AllFlags = Flags | Kind << SAN_KIND_SHIFT | Log2 << SAN_ALIGN_SHIFT;
    Value *Checked;
    auto *Constant = dyn_cast<ConstantInt>(Bytes);
    if ((Kind == SAN_SHARED || Kind == SAN_DYNAMIC_SHARED) && Constant && Constant->getZExtValue() < 1u << 16) {
      // The hot path of tiled kernels: __emu_san_shared(address, base, size, flags | bytes << 16, site).
      FunctionCallee Check = E.runtime(Rt::san_shared);
      Checked = B.CreateCall(Check, {generic(B, Address), generic(B, Object), B.getInt64(Size),
                                     B.getInt32(AllFlags | Constant->getZExtValue() << SAN_BYTES_SHIFT), site(I, What)});
    } else {
      FunctionCallee Check = E.runtime(Rt::san_access);
      Checked = B.CreateCall(Check, {generic(B, Address), generic(B, Object), B.getInt64(Size),
                                     B.CreateZExtOrTrunc(Bytes, E.I64), B.getInt32(AllFlags), site(I, What)});
    }
    Type *Original = Address->getType();
    I->setOperand(Index, Original->getPointerAddressSpace() == 0 ? Checked : B.CreateAddrSpaceCast(Checked, Original));
  }

  uint64_t storeSize(Type *T) { return M.getDataLayout().getTypeStoreSize(T).getFixedValue(); }

  // The natural alignment the hardware needs: the instruction's own, at most the access's size.
  static uint64_t natural(Align A, uint64_t Bytes) { return std::min<uint64_t>(A.value(), PowerOf2Ceil(Bytes)); }

  // x / 0 and x % 0 report and divide by 1; INT_MIN / -1 (a host trap, no GPU's) divides by 1 too.
  void division(BinaryOperator *I) {
    Value *Divisor = I->getOperand(1);
    if (!Divisor->getType()->isIntegerTy() || (isa<ConstantInt>(Divisor) && !cast<ConstantInt>(Divisor)->isZero() &&
                                               !cast<ConstantInt>(Divisor)->isMinusOne()))
      return;
    IRBuilder<> B(I);
    Type *T = Divisor->getType();
    Value *Zero = B.CreateICmpEQ(Divisor, ConstantInt::get(T, 0));
    Value *Unsafe = Zero;
    if (I->getOpcode() == Instruction::SDiv || I->getOpcode() == Instruction::SRem)
      Unsafe = B.CreateOr(Zero, B.CreateAnd(B.CreateICmpEQ(Divisor, ConstantInt::getAllOnesValue(T)),
                                            B.CreateICmpEQ(I->getOperand(0),
                                                           ConstantInt::get(T, APInt::getSignedMinValue(T->getIntegerBitWidth())))));
    Instruction *Safe = B.Insert(SelectInst::Create(Unsafe, ConstantInt::get(T, 1), Divisor));
    Instruction *Report = SplitBlockAndInsertIfThen(Zero, Safe->getNextNode(), false);
    IRBuilder<> R(Report);
    R.CreateCall(E.runtime(Rt::san_divide_by_zero), {site(I, "")});
    I->setOperand(1, Safe);
  }

  void run() {
    static const std::set<std::string> Barriers = {
        "llvm.nvvm.barrier0", "llvm.nvvm.barrier.sync", "llvm.nvvm.barrier.sync.cnt",
        "llvm.nvvm.barrier.cta.sync.aligned.all", "llvm.nvvm.barrier.cta.sync.all",
        "llvm.nvvm.barrier.cta.sync.aligned.count", "llvm.nvvm.barrier.cta.sync.count", "llvm.nvvm.barrier.n",
        "llvm.nvvm.barrier", "llvm.nvvm.bar.sync", "llvm.amdgcn.s.barrier", "llvm.nvvm.barrier0.popc",
        "llvm.nvvm.barrier0.and", "llvm.nvvm.barrier0.or", "llvm.nvvm.barrier.cta.red.popc.aligned.all",
        "llvm.nvvm.barrier.cta.red.and.aligned.all", "llvm.nvvm.barrier.cta.red.or.aligned.all"};
    SmallVector<Instruction *, 256> Work;
    for (Function &F : M)
      if (!F.isDeclaration())
        for (Instruction &I : instructions(F))
          if (isa<LoadInst, StoreInst, AtomicRMWInst, AtomicCmpXchgInst, MemIntrinsic, BinaryOperator, CallInst>(I))
            Work.push_back(&I);
    for (Instruction *I : Work) {
      if (auto *L = dyn_cast<LoadInst>(I)) {
        uint64_t Bytes = storeSize(L->getType());
        access(L, L->getPointerOperandIndex(), ConstantInt::get(E.I64, Bytes), L->isAtomic() ? SAN_ATOMIC : 0,
               natural(L->getAlign(), Bytes));
      } else if (auto *S = dyn_cast<StoreInst>(I)) {
        uint64_t Bytes = storeSize(S->getValueOperand()->getType());
        access(S, S->getPointerOperandIndex(), ConstantInt::get(E.I64, Bytes),
               SAN_WRITE | (S->isAtomic() ? SAN_ATOMIC : 0), natural(S->getAlign(), Bytes));
      } else if (auto *A = dyn_cast<AtomicRMWInst>(I)) {
        uint64_t Bytes = storeSize(A->getValOperand()->getType());
        access(A, A->getPointerOperandIndex(), ConstantInt::get(E.I64, Bytes), SAN_WRITE | SAN_ATOMIC,
               natural(A->getAlign(), Bytes));
      } else if (auto *X = dyn_cast<AtomicCmpXchgInst>(I)) {
        uint64_t Bytes = storeSize(X->getCompareOperand()->getType());
        access(X, X->getPointerOperandIndex(), ConstantInt::get(E.I64, Bytes), SAN_WRITE | SAN_ATOMIC,
               natural(X->getAlign(), Bytes));
      } else if (auto *MI = dyn_cast<MemIntrinsic>(I)) {
        access(MI, 0, MI->getLength(), SAN_WRITE, 1);
        if (auto *Transfer = dyn_cast<MemTransferInst>(MI))
          access(Transfer, 1, Transfer->getLength(), 0, 1);
      } else if (auto *Op = dyn_cast<BinaryOperator>(I)) {
        if (Op->getOpcode() == Instruction::UDiv || Op->getOpcode() == Instruction::SDiv ||
            Op->getOpcode() == Instruction::URem || Op->getOpcode() == Instruction::SRem)
          division(Op);
      } else if (auto *CI = dyn_cast<CallInst>(I)) {
        Function *Callee = CI->getCalledFunction();
        if (Callee && Barriers.count(Callee->getName().str())) {
          IRBuilder<> B(CI);
          B.CreateCall(E.runtime(Rt::san_barrier_site), {site(CI, "")});
        }
        StringRef Name = Callee ? Callee->getName() : "";
        if (Name.starts_with("llvm.nvvm.shfl.sync.") || Name == "llvm.amdgcn.ds.bpermute" || Name == "llvm.amdgcn.ds.swizzle" ||
            Name.starts_with("llvm.nvvm.wmma.") || Name.starts_with("llvm.nvvm.ldmatrix.") ||
            Name.starts_with("llvm.amdgcn.raw.ptr.buffer.") || Name.starts_with("llvm.nvvm.stmatrix.") ||
            Name.starts_with("llvm.nvvm.cp.async.bulk.") || Name.starts_with("llvm.nvvm.wgmma.mma_async.") ||
            CI->isInlineAsm()) {
          // An op the runtime carries out names its site: synccheck's shuffle reports (san_warp_sources),
          // memcheck's reports of the accesses the runtime makes for it (san_op_access; MLIR 22's inline PTX
          // for TMA, mbarriers and wgmma becomes such an op after this pass).
          IRBuilder<> B(CI);
          B.CreateCall(E.runtime(Rt::san_op_site), {site(CI, "")});
        }
        if (Name.consume_front("llvm.nvvm.cp.async.") && Name.contains(".shared.global.")) {
          // cp.async.{ca,cg}.shared.global.N[.s](dst, src[, src_size]): N bytes written, N (or src_size) read.
          uint64_t Bytes = 0;
          Name.substr(Name.rfind("global.") + 7).consumeInteger(10, Bytes);
          Value *Read = CI->arg_size() > 2 ? CI->getArgOperand(2) : ConstantInt::get(E.I64, Bytes);
          access(CI, 0, ConstantInt::get(E.I64, Bytes), SAN_WRITE, 1);
          access(CI, 1, Read, 0, 1);
        }
      }
    }
  }
};

// ---- the pass ---------------------------------------------------------------------------------------

bool isKernel(const Function &F) {
  CallingConv::ID CC = F.getCallingConv();
  return CC == CallingConv::PTX_Kernel || CC == CallingConv::AMDGPU_KERNEL;
}

// External functions device code may call, and the runtime function each becomes on the host (none: the
// host's own function of that name).
const std::map<std::string, std::optional<Rt>> &externalTable() {
  static const std::map<std::string, std::optional<Rt>> Table = {
      {"vprintf", Rt::vprintf},
      {"__assertfail", Rt::assertfail},
      {"malloc", std::nullopt},
      {"free", std::nullopt},
  };
  return Table;
}

// The arch's launch limits (the runtime's struct arch_limits): shared memory per block, shared memory before
// CUDA's opt-in, threads per block, block x/y/z, grid x/y/z, work-items per grid dimension (0: no limit).
// The arch's launch limits, laid out as struct arch_limits (registerKernels).
static_assert(offsetof(arch_limits, shared_per_block) == 8 && offsetof(arch_limits, threads_per_block) == 24 &&
                  offsetof(arch_limits, block) == 28 && offsetof(arch_limits, grid) == 40 &&
                  offsetof(arch_limits, grid_items) == 56 && sizeof(arch_limits) == 64,
              "struct arch_limits is {ptr, i64, i64, i32 x 7, i64}");
struct LaunchLimits {
  bool Given = false;
  std::string Arch;
  uint64_t Numbers[10] = {};
};

struct Retarget {
  Module &M;
  Emulator E;
  std::string Triple, Layout;
  uint64_t SharedBytes = 0;
  bool Amdgpu = false;
  bool Sanitize = false;  // the sanitizer variant (SanitizerInstrumentation)
  LaunchLimits Limits;

  Retarget(Module &M, std::string Triple, std::string Layout, unsigned WarpSize)
      : M(M), E(M, WarpSize), Triple(std::move(Triple)), Layout(std::move(Layout)),
        Amdgpu(M.getTargetTriple().isAMDGPU()) {}

  SmallVector<Function *, 8> Kernels;

  void run() {
    // Kernels are recognised by their GPU calling convention, which cleanFunctions replaces.
    for (Function &F : M)
      if (!F.isDeclaration() && isKernel(F))
        Kernels.push_back(&F);
    M.setTargetTriple(llvm::Triple(Triple));
    M.setDataLayout(Layout);
    replaceHostcall();
    removeDeadFunctions();
    replaceExternals();
    if (Sanitize)
      SanitizerInstrumentation(M, E).run();
    replaceIntrinsics();
    replaceInlineAsm();
    layOutWorkgroupMemory();
    moveAllocasToGenericSpace();
    registerKernels();
    cleanFunctions();
  }

  // ockl's printf talks to the host through hostcall packets (after the optimizer, a specialized
  // __ockl_hostcall_internal(buffer, descriptor, words...)): its body becomes one call handing the
  // descriptor and words to the runtime, which assembles and prints the message.
  void replaceHostcall() {
    Function *F = M.getFunction("__ockl_hostcall_internal");
    if (!F || F->isDeclaration())
      return;
    auto *VecTy = dyn_cast<FixedVectorType>(F->getReturnType());
    if (!VecTy || VecTy->getNumElements() != 2 || !VecTy->getElementType()->isIntegerTy(64))
      refuse("__ockl_hostcall_internal has an unexpected signature: " + describe(F->getFunctionType()));
    F->deleteBody();
    F->setLinkage(GlobalValue::InternalLinkage);
    IRBuilder<> B(BasicBlock::Create(E.C, "entry", F));
    SmallVector<Value *, 8> Words;
    for (Argument &A : F->args())
      if (A.getType()->isIntegerTy(64))
        Words.push_back(&A);
    auto *Array = ArrayType::get(E.I64, std::max<size_t>(1, Words.size()));
    Value *Buffer = B.CreateAlloca(Array);
    for (size_t I = 0; I < Words.size(); ++I)
      B.CreateStore(Words[I], B.CreateConstGEP2_32(Array, Buffer, 0, I));
    FunctionCallee Host = E.runtime(Rt::hostcall);
    Value *Descriptor = B.CreateCall(Host, {Buffer, B.getInt32(Words.size())});
    Value *R = B.CreateInsertElement(ConstantVector::getNullValue(VecTy), Descriptor, B.getInt64(0));
    B.CreateRet(R);
  }

  // Internal functions nothing calls any more (the hostcall machinery): gone before the tables judge them.
  void removeDeadFunctions() {
    bool Changed = true;
    while (Changed) {
      Changed = false;
      for (Function &F : llvm::make_early_inc_range(M))
        if (!F.isDeclaration() && F.hasLocalLinkage() && F.use_empty() && !isKernel(F)) {
          F.eraseFromParent();
          Changed = true;
        }
    }
  }

  void replaceCalls(Function &F, const Handler &H) {
    SmallVector<User *, 16> Users(F.users());
    for (User *U : Users) {
      auto *CI = dyn_cast<CallInst>(U);
      if (!CI || CI->getCalledFunction() != &F)
        refuse(F.getName() + " is used other than by a call: " + describe(U));
      IRBuilder<> B(CI);
      Value *R = H(E, B, CI);
      if (R)
        CI->replaceAllUsesWith(R);
      else if (!CI->use_empty())
        refuse(F.getName() + ": its result is used but the emulation gives none");
      CI->eraseFromParent();
    }
  }

  void replaceIntrinsics() {
    const StringMap<Handler> &Table = intrinsicTable();
    SmallVector<Function *, 32> Gpu;
    for (Function &F : M)
      if (F.isDeclaration() && (F.getName().starts_with("llvm.nvvm.") || F.getName().starts_with("llvm.amdgcn.") ||
                                F.getName() == "llvm.trap"))
        Gpu.push_back(&F);
    for (Function *F : Gpu) {
      if (F->use_empty()) {
        F->eraseFromParent();
        continue;
      }
      auto It = Table.find(F->getName());
      const auto &ByID = overloadedTable();
      auto Overloaded = ByID.find(F->getIntrinsicID());
      if (It == Table.end() && Overloaded == ByID.end())
        refuse("intrinsic " + F->getName() + " is not emulated");
      replaceCalls(*F, It != Table.end() ? It->second : Overloaded->second);
      F->eraseFromParent();
    }
  }

  void replaceExternals() {
    const auto &Table = externalTable();
    SmallVector<Function *, 8> Externals;
    for (Function &F : M)
      if (!F.isIntrinsic() && !F.use_empty() && Table.count(F.getName().str()))
        Externals.push_back(&F);
    for (Function *F : Externals) {
      std::optional<Rt> Target = Table.at(F->getName().str());
      if (!Target)
        continue;
      FunctionCallee Host = E.runtime(*Target);
      if (Host.getFunctionType() != F->getFunctionType())
        refuse("device code's " + F->getName() + " has the type " + describe(F->getFunctionType()) +
               ", not the runtime's " + describe(Host.getFunctionType()) + ", which is not emulated");
      if (!F->isDeclaration())  // a device library's body (ockl's hostcall printf): the runtime's instead
        F->deleteBody();
      F->replaceAllUsesWith(Host.getCallee());
      F->eraseFromParent();
    }
    for (Function &F : M)
      if (F.isDeclaration() && !F.isIntrinsic() && !F.use_empty() && !isRuntimeFunction(F.getName()) &&
          !Table.count(F.getName().str()))
        refuse("device code calls external function " + F.getName() + ", which is not emulated");
  }

  void replaceInlineAsm() {
    const auto &Table = inlineAsmTable();
    SmallVector<CallInst *, 16> Calls;
    for (Function &F : M)
      for (Instruction &I : instructions(F))
        if (auto *CI = dyn_cast<CallInst>(&I))
          if (isa<InlineAsm>(CI->getCalledOperand()))
            Calls.push_back(CI);
    for (CallInst *CI : Calls) {
      auto *Asm = cast<InlineAsm>(CI->getCalledOperand());
      auto It = Table.find(collapseSpaces(Asm->getAsmString()));
      if (It == Table.end())
        refuse("inline assembly \"" + Asm->getAsmString() + "\" in " + CI->getFunction()->getName() +
               " is not emulated");
      IRBuilder<> B(CI);
      if (Value *R = It->second(E, B, CI))
        CI->replaceAllUsesWith(R);
      CI->eraseFromParent();
    }
  }

  // Every addrspace(3) global (static shared memory, workgroup attributions) at a fixed offset of one
  // per-block segment, the dynamic shared array (external, zero-sized) at its end.
  void layOutWorkgroupMemory() {
    const DataLayout &DL = M.getDataLayout();
    SmallVector<GlobalVariable *, 8> Shared, Dynamic;
    for (GlobalVariable &G : M.globals())
      if (G.getAddressSpace() == 3)
        (G.isDeclaration() || DL.getTypeAllocSize(G.getValueType()) == 0 ? Dynamic : Shared).push_back(&G);
    SmallVector<std::pair<GlobalVariable *, uint64_t>, 8> Offsets;  // in module order: deterministic output
    uint64_t Offset = 0;
    for (GlobalVariable *G : Shared) {
      uint64_t Align = std::max<uint64_t>(16, G->getAlign().valueOrOne().value());
      Offset = alignTo(Offset, Align);
      Offsets.push_back({G, Offset});
      Offset += DL.getTypeAllocSize(G->getValueType());
    }
    Offset = alignTo(Offset, 16);
    SharedBytes = Offset;
    for (GlobalVariable *G : Dynamic)
      Offsets.push_back({G, Offset});
    for (auto &[G, At] : Offsets) {
      convertUsersOfConstantsToInstructions({G});
      std::map<Function *, Value *> Bases;
      SmallVector<Use *, 16> Uses;
      for (Use &U : G->uses())
        Uses.push_back(&U);
      for (Use *U : Uses) {
        auto *I = dyn_cast<Instruction>(U->getUser());
        if (!I)
          refuse("workgroup variable " + G->getName() + " is used by a constant: " + describe(U->getUser()));
        Function *F = I->getFunction();
        Value *&Base = Bases[F];
        if (!Base) {
          IRBuilder<> B(&*F->getEntryBlock().getFirstInsertionPt());
          Base = B.CreateCall(E.runtime(Rt::shared_base));
        }
        IRBuilder<> B(&*F->getEntryBlock().getFirstInsertionPt());
        B.SetInsertPoint(cast<Instruction>(Base)->getNextNode());
        Value *Address = B.CreateInBoundsGEP(E.I8, Base, B.getInt64(At));
        U->set(B.CreateAddrSpaceCast(Address, G->getType()));
      }
      G->eraseFromParent();
    }
  }

  // AMDGPU's private allocas live in addrspace(5); the host's in 0.
  void moveAllocasToGenericSpace() {
    SmallVector<AllocaInst *, 16> Allocas;
    for (Function &F : M)
      for (Instruction &I : instructions(F))
        if (auto *A = dyn_cast<AllocaInst>(&I))
          if (A->getAddressSpace() != 0)
            Allocas.push_back(A);
    for (AllocaInst *A : Allocas) {
      IRBuilder<> B(A);
      AllocaInst *Host = B.CreateAlloca(A->getAllocatedType(), 0, A->getArraySize());
      Host->setAlignment(A->getAlign());
      Host->takeName(A);
      A->replaceAllUsesWith(B.CreateAddrSpaceCast(Host, A->getType()));
      A->eraseFromParent();
    }
  }

  // Host calling convention, no GPU attributes, and every definition internal: device symbols never meet
  // the host program's (a kernel named like a libc function stays apart); the registration finds them.
  void cleanFunctions() {
    for (Function &F : M) {
      if (F.isDeclaration())
        continue;
      F.setCallingConv(CallingConv::C);
      F.setLinkage(GlobalValue::InternalLinkage);
      AttributeMask Drop;
      Drop.addAttribute(Attribute::Memory).addAttribute(Attribute::NoSync).addAttribute(Attribute::WillReturn);
      for (const Attribute &A : F.getAttributes().getFnAttrs())
        if (A.isStringAttribute() && (A.getKindAsString().starts_with("target-") || A.getKindAsString().starts_with("amdgpu-") ||
                                      A.getKindAsString().starts_with("nvvm.") || A.getKindAsString() == "uniform-work-group-size"))
          Drop.addAttribute(A.getKindAsString());
      F.removeFnAttrs(Drop);
      for (Instruction &I : instructions(F))
        if (auto *CB = dyn_cast<CallBase>(&I)) {
          CB->setCallingConv(CallingConv::C);
          CB->removeFnAttrs(Drop);
        }
    }
    for (GlobalVariable &G : M.globals())
      if (!G.isDeclaration() && !G.getName().starts_with("llvm."))
        G.setLinkage(GlobalValue::InternalLinkage);
    if (NamedMDNode *Annotations = M.getNamedMetadata("nvvm.annotations"))
      Annotations->eraseFromParent();
  }

  // Functions that, transitively, wait for other GPU threads (barriers, warp operations).
  std::set<Function *> synchronizingFunctions() {
    std::set<Function *> Result;
    SmallVector<Function *, 16> Work;
    for (const RuntimeFunction &R : RUNTIME_FUNCTIONS)
      if (Function *F = R.Waits ? M.getFunction(R.Symbol) : nullptr) {
        Result.insert(F);
        Work.push_back(F);
      }
    while (!Work.empty()) {
      Function *F = Work.pop_back_val();
      for (User *U : F->users())
        if (auto *CB = dyn_cast<CallBase>(U))
          if (Result.insert(CB->getFunction()).second)
            Work.push_back(CB->getFunction());
    }
    bool Indirect = false;  // an indirect call could reach a synchronizing function: assume it does
    for (Function &F : M)
      for (Instruction &I : instructions(F))
        if (auto *CB = dyn_cast<CallBase>(&I))
          if (!CB->getCalledFunction() && !CB->isInlineAsm())
            Indirect = true;
    if (Indirect)
      for (Function &F : M)
        Result.insert(&F);
    return Result;
  }

  // void EMU_ENTRY_PREFIX<kernel>(void **args): args[i] points at argument i (cudaLaunchKernel's array).
  Function *makeEntry(Function &K) {
    LLVMContext &C = E.C;
    auto *Type = FunctionType::get(Type::getVoidTy(C), {E.Ptr}, false);
    Function *Entry = Function::Create(Type, GlobalValue::InternalLinkage, EMU_ENTRY_PREFIX + K.getName(), M);
    IRBuilder<> B(BasicBlock::Create(C, "entry", Entry));
    SmallVector<Value *, 16> Args;
    for (Argument &A : K.args()) {
      Value *Slot = B.CreateLoad(E.Ptr, B.CreateConstGEP1_64(E.Ptr, Entry->getArg(0), A.getArgNo()));
      if (llvm::Type *ByVal = A.getParamByValType()) {  // the kernel may write its own copy
        AllocaInst *Copy = B.CreateAlloca(ByVal);
        B.CreateMemCpy(Copy, Copy->getAlign(), Slot, MaybeAlign(1), M.getDataLayout().getTypeAllocSize(ByVal));
        Args.push_back(B.CreateAddrSpaceCast(Copy, A.getType()));
      } else if (A.getType()->isPointerTy() && A.getType()->getPointerAddressSpace() != 0) {
        Args.push_back(B.CreateAddrSpaceCast(B.CreateLoad(E.Ptr, Slot), A.getType()));
      } else {
        LoadInst *L = B.CreateLoad(A.getType(), Slot);
        L->setAlignment(Align(1));
        Args.push_back(L);
      }
    }
    B.CreateCall(&K, Args);
    B.CreateRetVoid();
    return Entry;
  }

  // The bytes each argument slot holds (what makeEntry reads): a launch copies them when it is queued,
  // since the caller's argument array lives only until the launch call returns.
  Constant *parameterSizes(Function &K) {
    const DataLayout &DL = M.getDataLayout();
    SmallVector<uint64_t, 16> Sizes;
    for (Argument &A : K.args()) {
      if (llvm::Type *ByVal = A.getParamByValType())
        Sizes.push_back(DL.getTypeAllocSize(ByVal));
      else if (A.getType()->isPointerTy())
        Sizes.push_back(DL.getPointerSize(0));
      else
        Sizes.push_back(DL.getTypeStoreSize(A.getType()));
    }
    if (Sizes.empty())
      return ConstantPointerNull::get(PointerType::get(E.C, 0));
    Constant *Table = ConstantDataArray::get(E.C, Sizes);
    return new GlobalVariable(M, Table->getType(), true, GlobalValue::PrivateLinkage, Table,
                              EMU_PARAMETER_SIZES_PREFIX + K.getName());
  }

  void registerKernels() {
    std::set<Function *> Synchronizing = synchronizingFunctions();
    LLVMContext &C = E.C;
    Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(C), false), GlobalValue::InternalLinkage,
                                      EMU_REGISTER_MODULE, M);
    IRBuilder<> B(BasicBlock::Create(C, "entry", Ctor));
    FunctionCallee Register = E.runtime(Rt::register_kernel);
    if (Limits.Given) {
      // struct arch_limits (emu_abi.h): {ptr arch, i64 shared per block, i64 before opt-in, i32 threads,
      // i32 block[3], i32 grid[3], i64 grid items}
      const uint64_t *N = Limits.Numbers;
      SmallVector<Constant *, 10> Fields = {B.CreateGlobalString(Limits.Arch, EMU_ARCH_NAME),
                                            B.getInt64(N[0]), B.getInt64(N[1])};
      for (size_t I = 2; I < 9; ++I)
        Fields.push_back(B.getInt32(static_cast<uint32_t>(N[I])));
      Fields.push_back(B.getInt64(N[9]));
      Constant *Record = ConstantStruct::getAnon(C, Fields);
      auto *G = new GlobalVariable(M, Record->getType(), true, GlobalValue::PrivateLinkage, Record, EMU_ARCH_LIMITS);
      B.CreateCall(E.runtime(Rt::register_limits), {G});
    }
    for (Function *K : Kernels) {
      Function *Entry = makeEntry(*K);
      unsigned Flags = (E.WarpSize << WARP_SIZE_SHIFT) | (Synchronizing.count(K) ? FLAG_NEEDS_CONTEXTS : 0) |
                       (Amdgpu ? FLAG_AMDGPU : 0);
      Constant *Name = B.CreateGlobalString(K->getName(), EMU_KERNEL_NAME_PREFIX + K->getName());
      Constant *Sizes = parameterSizes(*K);
      B.CreateCall(Register, {Name, Entry, B.getInt32(Flags), B.getInt64(SharedBytes), B.getInt32(K->arg_size()), Sizes});
    }
    B.CreateRetVoid();
    appendToGlobalCtors(M, Ctor, 0);
  }
};

// The host's data layout, from LLVM's own target (opt has every target registered).
std::string hostDataLayout(const std::string &TripleText) {
  llvm::Triple T(TripleText);
  std::string Error;
  const Target *Host = TargetRegistry::lookupTarget(T, Error);
  if (!Host)
    refuse("no LLVM target for host triple " + TripleText + ": " + Error);
  std::unique_ptr<TargetMachine> TM(Host->createTargetMachine(T, "", "", TargetOptions(), std::nullopt));
  if (!TM)
    refuse("cannot make a target machine for " + TripleText);
  return TM->createDataLayout().getStringRepresentation();
}

struct EmulatePass : PassInfoMixin<EmulatePass> {
  std::string Triple;
  unsigned WarpSize;
  bool Sanitize = false;
  LaunchLimits Limits;
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    Retarget R(M, Triple, hostDataLayout(Triple), WarpSize);
    R.Sanitize = Sanitize;
    R.Limits = Limits;
    R.run();
    return PreservedAnalyses::none();
  }
};

// "TRIPLE;WARPSIZE[;limits=ARCH:N:...][;sanitize]" (limits: offload/formats/launch_limits.py)
bool parse(StringRef Params, EmulatePass &P) {
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';');
  if (Parts.size() < 2 || Parts[1].getAsInteger(10, P.WarpSize))
    return false;
  for (StringRef Part : ArrayRef<StringRef>(Parts).drop_front(2)) {
    if (Part == "sanitize") {
      P.Sanitize = true;
      continue;
    }
    if (!Part.consume_front("limits="))
      return false;
    SmallVector<StringRef, 12> Fields;
    Part.split(Fields, ':');
    if (Fields.size() != 1 + std::size(P.Limits.Numbers))
      return false;
    P.Limits.Arch = Fields[0].str();
    for (size_t I = 0; I < std::size(P.Limits.Numbers); ++I)
      if (Fields[I + 1].getAsInteger(10, P.Limits.Numbers[I]))
        return false;
    P.Limits.Given = true;
  }
  P.Triple = Parts[0].str();
  return true;
}

// ---- joining device images (CUDA C++/HIP objects beside bundles) -----------------------------------------
// Module flags that make llvm-link refuse to join images of different compilers though the emulation reads
// none of them (clang 22's HIP objects say code object 6, mlir-offload's images 5).
const char *const JOIN_BLOCKING_FLAGS[] = {"amdhsa_code_object_version"};

struct JoinPass : PassInfoMixin<JoinPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    NamedMDNode *Flags = M.getModuleFlagsMetadata();
    if (!Flags)
      return PreservedAnalyses::all();
    SmallVector<MDNode *, 8> Kept;
    for (MDNode *Flag : Flags->operands()) {
      auto *Key = Flag->getNumOperands() > 1 ? dyn_cast<MDString>(Flag->getOperand(1)) : nullptr;
      if (!Key || llvm::find(JOIN_BLOCKING_FLAGS, Key->getString()) == std::end(JOIN_BLOCKING_FLAGS))
        Kept.push_back(Flag);
    }
    Flags->clearOperands();
    for (MDNode *Flag : Kept)
      Flags->addOperand(Flag);
    return PreservedAnalyses::none();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mlir-offload-emulate", "1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "mlir-offload-emulate-join") {
                    MPM.addPass(JoinPass());
                    return true;
                  }
                  if (!Name.consume_front("mlir-offload-emulate<") || !Name.consume_back(">"))
                    return false;
                  EmulatePass P;
                  if (!parse(Name, P))
                    refuse("bad parameters '" + Name + "': want <TRIPLE;WARPSIZE[;limits=ARCH:N:...][;sanitize]>");
                  MPM.addPass(std::move(P));
                  return true;
                });
          }};
}
