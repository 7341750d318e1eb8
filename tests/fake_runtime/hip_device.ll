; Hand-written AMDGPU device module (no HIP source), the HIP counterpart of tests/data/reference/handwritten_device.ll.
; Kernels: fill(n, a, x), scale(n, x, factor).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @fill(i32 %n, float %a, ptr addrspace(1) %x) {
entry:
  %b = call i32 @llvm.amdgcn.workgroup.id.x()
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %bd = mul i32 %b, 256
  %i = add i32 %bd, %t
  %c = icmp slt i32 %i, %n
  br i1 %c, label %body, label %exit
body:
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i64
  store float %a, ptr addrspace(1) %p, align 4
  br label %exit
exit:
  ret void
}

define amdgpu_kernel void @scale(i32 %n, ptr addrspace(1) %x, double %factor) {
entry:
  %b = call i32 @llvm.amdgcn.workgroup.id.x()
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %bd = mul i32 %b, 256
  %i = add i32 %bd, %t
  %c = icmp slt i32 %i, %n
  br i1 %c, label %body, label %exit
body:
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %p, align 4
  %f = fptrunc double %factor to float
  %s = fmul float %v, %f
  store float %s, ptr addrspace(1) %p, align 4
  br label %exit
exit:
  ret void
}
