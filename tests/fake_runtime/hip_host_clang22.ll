; Hand-written HIP host module (no HIP source), clang 22 entry layout: struct v1 in "llvm_offload_entries",
; Kind=4 (HIP in LLVM >= 21). HIP's kernel handle is a global pointing at the stub; the entry and the
; launch use the handle, not the stub.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }

@fill = constant ptr @__device_stub__fill, align 8
@scale = constant ptr @__device_stub__scale, align 8

@.offloading.entry_name.fill = internal unnamed_addr constant [5 x i8] c"fill\00", section ".llvm.rodata.offloading", align 1
@.offloading.entry.fill = weak constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 4, i32 0, ptr @fill, ptr @.offloading.entry_name.fill, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8
@.offloading.entry_name.scale = internal unnamed_addr constant [6 x i8] c"scale\00", section ".llvm.rodata.offloading", align 1
@.offloading.entry.scale = weak constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 4, i32 0, ptr @scale, ptr @.offloading.entry_name.scale, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8

@.fmt = private unnamed_addr constant [22 x i8] c"launch=%d,%d sync=%d\0A\00", align 1

; hipError_t hipLaunchKernel(const void* handle, dim3 grid, dim3 block, void** args, size_t shmem, hipStream_t s)
declare i32 @hipLaunchKernel(ptr, i64, i32, i64, i32, ptr, i64, ptr)
declare i32 @hipMalloc(ptr, i64)
declare i32 @hipMemcpy(ptr, ptr, i64, i32)
declare i32 @hipDeviceSynchronize()
declare i32 @hipFree(ptr)
declare i32 @hipStreamCreate(ptr)
declare i32 @hipStreamDestroy(ptr)
declare i32 @printf(ptr, ...)

define void @__device_stub__fill(i32 %n, float %a, ptr %x) {
  ret void
}
define void @__device_stub__scale(i32 %n, ptr %x, double %f) {
  ret void
}

define i32 @main() {
entry:
  %dptr = alloca ptr, align 8
  %stream = alloca ptr, align 8
  %n = alloca i32, align 4
  %a = alloca float, align 4
  %f = alloca double, align 8
  %h = alloca [4 x float], align 16
  %args3 = alloca [3 x ptr], align 8
  %argsb = alloca [3 x ptr], align 8
  store i32 1000, ptr %n, align 4
  store float 4.0, ptr %a, align 4
  store double 0.5, ptr %f, align 8
  %e0 = call i32 @hipMalloc(ptr %dptr, i64 4000)
  %es = call i32 @hipStreamCreate(ptr %stream)
  ; fill<<<4,256>>>(n, a, d)
  store ptr %n, ptr %args3, align 8
  %a1 = getelementptr inbounds [3 x ptr], ptr %args3, i64 0, i64 1
  store ptr %a, ptr %a1, align 8
  %a2 = getelementptr inbounds [3 x ptr], ptr %args3, i64 0, i64 2
  store ptr %dptr, ptr %a2, align 8
  %e1 = call i32 @hipLaunchKernel(ptr @fill, i64 4294967300, i32 1, i64 4294967552, i32 1, ptr %args3, i64 0, ptr null)
  ; scale<<<dim3(2,3,1), dim3(64,2,1), 128, stream>>>(n, d, 0.5)
  store ptr %n, ptr %argsb, align 8
  %b1 = getelementptr inbounds [3 x ptr], ptr %argsb, i64 0, i64 1
  store ptr %dptr, ptr %b1, align 8
  %b2 = getelementptr inbounds [3 x ptr], ptr %argsb, i64 0, i64 2
  store ptr %f, ptr %b2, align 8
  %s = load ptr, ptr %stream, align 8
  ; grid (2,3,1) -> 2 | 3<<32 = 12884901890 ; block (64,2,1) -> 64 | 2<<32 = 8589934656
  %e2 = call i32 @hipLaunchKernel(ptr @scale, i64 12884901890, i32 1, i64 8589934656, i32 1, ptr %argsb, i64 128, ptr %s)
  %d = load ptr, ptr %dptr, align 8
  %e3 = call i32 @hipMemcpy(ptr %h, ptr %d, i64 16, i32 2)
  %e4 = call i32 @hipDeviceSynchronize()
  %p = call i32 (ptr, ...) @printf(ptr @.fmt, i32 %e1, i32 %e2, i32 %e4)
  %e5 = call i32 @hipStreamDestroy(ptr %s)
  %e6 = call i32 @hipFree(ptr %d)
  ret i32 0
}
