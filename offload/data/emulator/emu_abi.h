/* The emulator's ABI: what the retargeting pass (retarget.cpp, C++) emits calls to and what the runtime
 * (runtime.c and the files it includes, C) defines, written once and included by both.
 *
 * - EMU_RUNTIME_FUNCTIONS and EMU_SANITIZER_FUNCTIONS list every runtime entry point as
 *   X(waits, return type, name, (parameters)), the symbol being __emu_<name>. runtime.c declares each
 *   (EMU_DECLARE), so the C compiler checks every definition against its line here; retarget.cpp builds
 *   each call's LLVM function type from the same line (RUNTIME_FUNCTIONS there). `waits` is EMU_WAITS for
 *   a function that waits for other GPU threads of the block or warp (its callers need a context per GPU
 *   thread), else EMU_ALONE.
 * - The operation kinds and flags the pass passes as constants, the kernel registration flags, and the
 *   records both sides lay out (struct buffer_resource, struct san_site).
 * - The names the pass gives what it makes in each module (internal symbols, never looked up by the
 *   runtime).
 *
 * tests/emulator/test_emulator_abi.py checks the lists against the built runtime's symbols and retarget.cpp. */
#ifndef EMU_ABI_H
#define EMU_ABI_H

#include <stddef.h>
#include <stdint.h>

#define EMU_SYMBOL_PREFIX "__emu_"
#define EMU_SYMBOL(name) EMU_SYMBOL_PREFIX #name
#define EMU_WAITS 1
#define EMU_ALONE 0

/* The runtime's declaration of one entry point (runtime.c). */
#define EMU_DECLARE(waits, ret, name, params) ret __emu_##name params;

/* ---- records both sides lay out ---------------------------------------------------------------------- */

/* An AMD buffer resource (llvm.amdgcn.make.buffer.rsrc): base, num_records, whether the hardware checks
 * the range, and the stride; the pass keeps one in a stack slot and passes its address. */
struct buffer_resource {
    char *base;
    uint64_t records;
    uint32_t checked, stride;
};

/* What one launch may ask of the arch the kernel was built for (offload/data/targets/launch-limits.toml):
 * the pass makes one per module and registers it before its kernels (__emu_register_limits). */
struct arch_limits {
    const char *arch;
    uint64_t shared_per_block;       /* static + dynamic shared memory of a block */
    uint64_t shared_without_opt_in;  /* dynamic, before cudaFuncSetAttribute raises it (0: no opt-in) */
    uint32_t threads_per_block, block[3], grid[3];
    uint64_t grid_items;             /* blocks x threads per grid dimension (0: no limit) */
};

/* A sanitizer site: a constant the pass (or the host code's annotations) makes per instrumented operation. */
struct san_site {
    const char *location; /* "file:line:col" or NULL */
    const char *object;   /* the object the access belongs to, when the pass knows it */
};

/* ---- constants the pass passes ----------------------------------------------------------------------- */

/* __emu_register_kernel's flags. */
enum { FLAG_NEEDS_CONTEXTS = 1 /* barriers or warp operations: a block's threads run as fibers */,
       FLAG_AMDGPU = 2 /* HIP: the runtime fills the hidden arguments ockl reads */,
       WARP_SIZE_SHIFT = 8 /* bits 8..15: the warp (wavefront) size */ };

/* __emu_barrier_reduce's kind; __emu_shfl_sync's mode; __emu_vote_sync's kind; __emu_redux_sync's kind. */
enum { RED_POPC = 0, RED_AND = 1, RED_OR = 2 };
enum { SHFL_IDX = 0, SHFL_UP = 1, SHFL_DOWN = 2, SHFL_BFLY = 3 };
enum { VOTE_ALL = 0, VOTE_ANY = 1, VOTE_UNI = 2, VOTE_BALLOT = 3 };
enum { REDUX_ADD = 0, REDUX_MIN = 1, REDUX_MAX = 2, REDUX_UMIN = 3, REDUX_UMAX = 4, REDUX_AND = 5, REDUX_OR = 6,
       REDUX_XOR = 7 };

/* __emu_mma's shape and accumulator flags. */
enum { MMA_M16N8K16_F16 = 0, MMA_M16N8K8_F16 = 1, MMA_M16N8K8_TF32 = 2, MMA_M8N8K4_F64 = 3,
       MMA_WMMA_M16N16K16 = 4, MMA_WMMA_M8N8K4_F64 = 5, MMA_M16N8K4_TF32 = 6, MMA_SHAPE_MASK = 15,
       MMA_C_F16 = 16, MMA_D_F16 = 32 };
/* __emu_wmma_load/__emu_wmma_store: shape, operand, element type. */
enum { WMMA_M16N16K16 = 0, WMMA_M8N8K4 = 1 };
enum { WMMA_A = 0, WMMA_B = 1, WMMA_C = 2 };
enum { WMMA_F16 = 0, WMMA_F32 = 1, WMMA_F64 = 2 };
/* __emu_mma_sp's flags (2:4 sparse mma.sp). */
enum { MMA_SP_K32 = 1, MMA_SP_C_F16 = 2, MMA_SP_D_F16 = 4, MMA_SP_SELECTOR_SHIFT = 3 };
/* __emu_wgmma's flags: N in the low bits. */
enum { WGMMA_N_MASK = 0x3ff, WGMMA_ACC_F16 = 1 << 10, WGMMA_BF16 = 1 << 11 };
/* __emu_buffer_atomic's operation. */
enum { BA_SWAP, BA_ADD, BA_SUB, BA_SMIN, BA_UMIN, BA_SMAX, BA_UMAX, BA_AND, BA_OR, BA_XOR, BA_FADD, BA_FMIN, BA_FMAX,
       BA_CMPSWAP };
/* __emu_amd_wmma: the operation's kind and its immediate flags; byte offsets in a lane's operand slots. */
enum { AMD_WMMA_F32_F16 = 0, AMD_WMMA_F32_BF16 = 1, AMD_WMMA_F16_F16 = 2, AMD_WMMA_BF16_BF16 = 3,
       AMD_WMMA_I32_IU8 = 4, AMD_WMMA_I32_IU4 = 5, AMD_WMMA_KIND = 7,
       AMD_WMMA_OPSEL = 8, AMD_WMMA_SIGNED_A = 16, AMD_WMMA_SIGNED_B = 32, AMD_WMMA_CLAMP = 64 };
enum { AMD_WMMA_A = 0, AMD_WMMA_B = 32, AMD_WMMA_C = 64 };
/* An mbarrier's pending arrivals: its low 21 bits (the pass reads mbarrier.pending.count inline). */
#define MBAR_FIELD ((UINT64_C(1) << 21) - 1)
/* __emu_san_access's and __emu_san_shared's flags: kind at SAN_KIND_SHIFT, log2 of the alignment at
 * SAN_ALIGN_SHIFT, and (__emu_san_shared) the access's bytes at SAN_BYTES_SHIFT. */
enum { SAN_WRITE = 1, SAN_ATOMIC = 2, SAN_KIND_SHIFT = 2, SAN_ALIGN_SHIFT = 8, SAN_BYTES_SHIFT = 16 };
enum { SAN_GLOBAL = 0, SAN_SHARED = 1, SAN_DYNAMIC_SHARED = 2, SAN_PRIVATE = 3, SAN_DEVICE_GLOBAL = 4 };

/* ---- names of what the pass makes in a module (internal linkage) ------------------------------------- */

#define EMU_ENTRY_PREFIX EMU_SYMBOL(entry_)                     /* + kernel: void (void **args) */
#define EMU_PARAMETER_SIZES_PREFIX EMU_SYMBOL(parameter_sizes_) /* + kernel: its argument slots' bytes */
#define EMU_KERNEL_NAME_PREFIX EMU_SYMBOL(name_)                /* + kernel: its name, for registration */
#define EMU_REGISTER_MODULE EMU_SYMBOL(register_module)         /* the constructor registering the kernels */
#define EMU_ARCH_LIMITS EMU_SYMBOL(arch_limits)                 /* the module's struct arch_limits */
#define EMU_ARCH_NAME EMU_SYMBOL(arch_name)                     /* its arch text */
#define EMU_SAN_SITE EMU_SYMBOL(san_site)                       /* a struct san_site */
#define EMU_SAN_LOCATION EMU_SYMBOL(san_location)               /* its location text */
#define EMU_SAN_OBJECT EMU_SYMBOL(san_object)                   /* its object text */

/* ---- entry points ------------------------------------------------------------------------------------ */

/* libdevice's rounding-mode arithmetic of one mode M (rn, rm, rp, rz). */
#define EMU_ROUNDED_FUNCTIONS(X, M)                                                 \
    X(EMU_ALONE, float, nvvm_add_##M##_f, (float a, float b))                       \
    X(EMU_ALONE, double, nvvm_add_##M##_d, (double a, double b))                    \
    X(EMU_ALONE, float, nvvm_sub_##M##_f, (float a, float b))                       \
    X(EMU_ALONE, double, nvvm_sub_##M##_d, (double a, double b))                    \
    X(EMU_ALONE, float, nvvm_mul_##M##_f, (float a, float b))                       \
    X(EMU_ALONE, double, nvvm_mul_##M##_d, (double a, double b))                    \
    X(EMU_ALONE, float, nvvm_div_##M##_f, (float a, float b))                       \
    X(EMU_ALONE, double, nvvm_div_##M##_d, (double a, double b))                    \
    X(EMU_ALONE, float, nvvm_fma_##M##_f, (float a, float b, float c))              \
    X(EMU_ALONE, double, nvvm_fma_##M##_d, (double a, double b, double c))          \
    X(EMU_ALONE, float, nvvm_sqrt_##M##_f, (float a))                               \
    X(EMU_ALONE, double, nvvm_sqrt_##M##_d, (double a))                             \
    X(EMU_ALONE, float, nvvm_rcp_##M##_f, (float a))                                \
    X(EMU_ALONE, double, nvvm_rcp_##M##_d, (double a))                              \
    X(EMU_ALONE, float, nvvm_add_##M##_ftz_f, (float a, float b))                   \
    X(EMU_ALONE, float, nvvm_sub_##M##_ftz_f, (float a, float b))                   \
    X(EMU_ALONE, float, nvvm_mul_##M##_ftz_f, (float a, float b))                   \
    X(EMU_ALONE, float, nvvm_div_##M##_ftz_f, (float a, float b))                   \
    X(EMU_ALONE, float, nvvm_fma_##M##_ftz_f, (float a, float b, float c))          \
    X(EMU_ALONE, float, nvvm_sqrt_##M##_ftz_f, (float a))                           \
    X(EMU_ALONE, float, nvvm_rcp_##M##_ftz_f, (float a))

/* libdevice's conversions of one mode M: float -> integer (saturating), integer -> float, double -> float. */
#define EMU_CONVERSION_FUNCTIONS(X, M)                                              \
    X(EMU_ALONE, int32_t, nvvm_f2i_##M, (float x))                                  \
    X(EMU_ALONE, uint32_t, nvvm_f2ui_##M, (float x))                                \
    X(EMU_ALONE, int64_t, nvvm_f2ll_##M, (float x))                                 \
    X(EMU_ALONE, uint64_t, nvvm_f2ull_##M, (float x))                               \
    X(EMU_ALONE, int32_t, nvvm_f2i_##M##_ftz, (float x))                            \
    X(EMU_ALONE, uint32_t, nvvm_f2ui_##M##_ftz, (float x))                          \
    X(EMU_ALONE, int64_t, nvvm_f2ll_##M##_ftz, (float x))                           \
    X(EMU_ALONE, uint64_t, nvvm_f2ull_##M##_ftz, (float x))                         \
    X(EMU_ALONE, int32_t, nvvm_d2i_##M, (double x))                                 \
    X(EMU_ALONE, uint32_t, nvvm_d2ui_##M, (double x))                               \
    X(EMU_ALONE, int64_t, nvvm_d2ll_##M, (double x))                                \
    X(EMU_ALONE, uint64_t, nvvm_d2ull_##M, (double x))                              \
    X(EMU_ALONE, float, nvvm_i2f_##M, (int32_t x))                                  \
    X(EMU_ALONE, float, nvvm_ui2f_##M, (uint32_t x))                                \
    X(EMU_ALONE, float, nvvm_ll2f_##M, (int64_t x))                                 \
    X(EMU_ALONE, float, nvvm_ull2f_##M, (uint64_t x))                               \
    X(EMU_ALONE, double, nvvm_i2d_##M, (int32_t x))                                 \
    X(EMU_ALONE, double, nvvm_ui2d_##M, (uint32_t x))                               \
    X(EMU_ALONE, double, nvvm_ll2d_##M, (int64_t x))                                \
    X(EMU_ALONE, double, nvvm_ull2d_##M, (uint64_t x))                              \
    X(EMU_ALONE, float, nvvm_d2f_##M, (double x))                                   \
    X(EMU_ALONE, float, nvvm_d2f_##M##_ftz, (double x))

/* A special register of dimensions x, y, z. */
#define EMU_DIMENSIONS(X, name)                                                     \
    X(EMU_ALONE, uint32_t, name##_x, (void))                                        \
    X(EMU_ALONE, uint32_t, name##_y, (void))                                        \
    X(EMU_ALONE, uint32_t, name##_z, (void))

#define EMU_RUNTIME_FUNCTIONS(X)                                                                            \
    /* kernels: the module constructor registers each one */                                                \
    X(EMU_ALONE, void, register_kernel,                                                                     \
      (const char *name, void (*entry)(void **), unsigned flags, uint64_t static_shared,                    \
       unsigned parameter_count, const uint64_t *parameter_sizes))                                          \
    X(EMU_ALONE, void, register_limits, (const struct arch_limits *limits))                                 \
    /* special registers, workgroup memory, hidden arguments, clocks */                                     \
    EMU_DIMENSIONS(X, tid) EMU_DIMENSIONS(X, ntid) EMU_DIMENSIONS(X, ctaid) EMU_DIMENSIONS(X, nctaid)       \
    X(EMU_ALONE, uint32_t, laneid, (void))                                                                  \
    X(EMU_ALONE, uint32_t, warpid, (void))                                                                  \
    X(EMU_ALONE, uint32_t, warpsize, (void))                                                                \
    X(EMU_ALONE, uint32_t, nwarpid, (void))                                                                 \
    X(EMU_ALONE, uint32_t, lanemask_eq, (void))                                                             \
    X(EMU_ALONE, uint32_t, lanemask_lt, (void))                                                             \
    X(EMU_ALONE, uint32_t, lanemask_le, (void))                                                             \
    X(EMU_ALONE, uint32_t, lanemask_gt, (void))                                                             \
    X(EMU_ALONE, uint32_t, lanemask_ge, (void))                                                             \
    X(EMU_ALONE, void *, shared_base, (void))                                                               \
    X(EMU_ALONE, void *, implicitarg_ptr, (void))                                                           \
    X(EMU_ALONE, void *, dispatch_ptr, (void))                                                              \
    X(EMU_ALONE, uint32_t, clock, (void))                                                                   \
    X(EMU_ALONE, uint64_t, clock64, (void))                                                                 \
    X(EMU_ALONE, uint64_t, globaltimer, (void))                                                             \
    /* barriers and warp (wavefront) operations */                                                          \
    X(EMU_WAITS, void, barrier, (void))                                                                     \
    X(EMU_WAITS, uint32_t, barrier_reduce, (uint32_t kind, uint32_t predicate))                             \
    X(EMU_WAITS, uint64_t, shfl_sync, (uint32_t mode, uint32_t mask, uint32_t value, uint32_t b, uint32_t c)) \
    X(EMU_WAITS, uint32_t, vote_sync, (uint32_t kind, uint32_t mask, uint32_t predicate))                   \
    X(EMU_WAITS, uint32_t, redux_sync, (uint32_t kind, uint32_t value, uint32_t mask))                      \
    X(EMU_WAITS, void, warp_sync, (uint32_t mask))                                                          \
    X(EMU_WAITS, uint32_t, activemask, (void))                                                              \
    X(EMU_WAITS, uint32_t, bpermute, (uint32_t address, uint32_t value))                                    \
    X(EMU_WAITS, uint32_t, swizzle, (uint32_t value, uint32_t offset))                                      \
    X(EMU_WAITS, uint32_t, readlane, (uint32_t value, uint32_t lane))                                       \
    X(EMU_WAITS, uint32_t, readfirstlane, (uint32_t value))                                                 \
    X(EMU_WAITS, uint64_t, ballot, (uint32_t predicate))                                                    \
    X(EMU_ALONE, uint32_t, mbcnt_lo, (uint32_t mask, uint32_t add))                                         \
    X(EMU_ALONE, uint32_t, mbcnt_hi, (uint32_t mask, uint32_t add))                                         \
    /* Hopper: mbarriers, TMA tensor copies, clusters (hopper.h, cluster.h) */                              \
    X(EMU_ALONE, void, mbarrier_init, (void *p, uint32_t count))                                            \
    X(EMU_ALONE, void, mbarrier_inval, (void *p))                                                           \
    X(EMU_ALONE, uint64_t, mbarrier_arrive, (void *p, uint32_t count))                                      \
    X(EMU_ALONE, uint64_t, mbarrier_arrive_nocomplete, (void *p, uint32_t count))                           \
    X(EMU_ALONE, uint64_t, mbarrier_arrive_expect_tx, (void *p, uint32_t bytes))                            \
    X(EMU_ALONE, void, mbarrier_expect_tx, (void *p, uint32_t bytes))                                       \
    X(EMU_ALONE, void, mbarrier_complete_tx, (void *p, uint32_t bytes))                                     \
    X(EMU_ALONE, uint32_t, mbarrier_pending_count, (uint64_t state))                                        \
    X(EMU_WAITS, uint32_t, mbarrier_wait_parity, (void *p, uint32_t parity))                                \
    X(EMU_WAITS, uint32_t, mbarrier_wait_token, (void *p, uint64_t token))                                  \
    X(EMU_WAITS, uint32_t, mbarrier_test_wait, (void *p, uint64_t token))                                   \
    X(EMU_WAITS, uint32_t, mbarrier_test_wait_parity, (void *p, uint32_t parity))                           \
    X(EMU_ALONE, void, tma_load,                                                                            \
      (void *shared, void *mbar, const void *map, uint32_t rank, const int32_t *coords, uint32_t mask,      \
       uint32_t multicast))                                                                                 \
    X(EMU_ALONE, void, tma_store, (void *shared, const void *map, uint32_t rank, const int32_t *coords))    \
    X(EMU_ALONE, void, bulk_to_shared,                                                                      \
      (void *dst, void *mbar, const void *src, uint32_t size, uint32_t mask, uint32_t multicast))           \
    X(EMU_ALONE, void, bulk_to_global, (void *dst, const void *src, uint32_t size))                         \
    EMU_DIMENSIONS(X, clusterid) EMU_DIMENSIONS(X, nclusterid)                                              \
    EMU_DIMENSIONS(X, cluster_ctaid) EMU_DIMENSIONS(X, cluster_nctaid)                                      \
    X(EMU_ALONE, uint32_t, cluster_ctarank, (void))                                                         \
    X(EMU_ALONE, uint32_t, cluster_nctarank, (void))                                                        \
    X(EMU_ALONE, uint32_t, is_explicit_cluster, (void))                                                     \
    X(EMU_ALONE, void *, mapa, (void *p, uint32_t rank))                                                    \
    X(EMU_ALONE, uint32_t, getctarank, (void *p))                                                           \
    X(EMU_ALONE, void, cluster_arrive, (void))                                                              \
    X(EMU_WAITS, void, cluster_wait, (void))                                                                \
    /* tensor cores: NVIDIA's ldmatrix, stmatrix, mma.sync, mma.sp, wgmma, wmma; AMD's wmma */              \
    X(EMU_WAITS, void, ldmatrix, (uint32_t count, uint32_t transposed, const void *row, void *slots))       \
    X(EMU_WAITS, void, stmatrix, (uint32_t count, uint32_t transposed, const void *slots))                  \
    X(EMU_WAITS, void, mma, (uint32_t shape, const void *operands, void *results))                          \
    X(EMU_WAITS, void, mma_sp, (uint32_t flags, const void *operands, void *results))                       \
    X(EMU_WAITS, void, wgmma, (uint32_t flags, const void *operands, void *results))                        \
    X(EMU_ALONE, void, wmma_load,                                                                           \
      (uint32_t shape, uint32_t which, uint32_t col_major, uint32_t element, const void *matrix,            \
       uint32_t stride, void *slots))                                                                       \
    X(EMU_ALONE, void, wmma_store,                                                                          \
      (uint32_t shape, uint32_t col_major, uint32_t element, void *matrix, uint32_t stride,                 \
       const void *slots))                                                                                  \
    X(EMU_WAITS, void, amd_wmma, (uint32_t flags, const void *operands, void *results))                     \
    /* AMD buffer resources */                                                                              \
    X(EMU_ALONE, void, buffer_load,                                                                         \
      (const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t bytes, void *out))     \
    X(EMU_ALONE, void, buffer_store,                                                                        \
      (const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t bytes, const void *in)) \
    X(EMU_ALONE, void, buffer_atomic,                                                                       \
      (uint32_t op, const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t bytes,    \
       uint32_t is_float, uint64_t *slots))                                                                 \
    /* printf, assertions, traps: CUDA's vprintf and __assertfail, ockl's hostcall */                       \
    X(EMU_ALONE, int, vprintf, (const char *fmt, const char *args))                                         \
    X(EMU_ALONE, void, assertfail,                                                                          \
      (const char *message, const char *file, unsigned line, const char *function, size_t size))            \
    X(EMU_ALONE, void, trap, (void))                                                                        \
    X(EMU_ALONE, uint64_t, hostcall, (const uint64_t *packet, uint32_t count))                              \
    /* libdevice's math: rounding modes, flush to zero, approximations (nvvm_<intrinsic>) */                \
    EMU_ROUNDED_FUNCTIONS(X, rn) EMU_ROUNDED_FUNCTIONS(X, rm)                                               \
    EMU_ROUNDED_FUNCTIONS(X, rp) EMU_ROUNDED_FUNCTIONS(X, rz)                                               \
    EMU_CONVERSION_FUNCTIONS(X, rn) EMU_CONVERSION_FUNCTIONS(X, rm)                                         \
    EMU_CONVERSION_FUNCTIONS(X, rp) EMU_CONVERSION_FUNCTIONS(X, rz)                                         \
    X(EMU_ALONE, float, nvvm_fabs_ftz_f32, (float x))                                                       \
    X(EMU_ALONE, float, nvvm_ceil_ftz_f, (float x))                                                         \
    X(EMU_ALONE, float, nvvm_floor_ftz_f, (float x))                                                        \
    X(EMU_ALONE, float, nvvm_trunc_ftz_f, (float x))                                                        \
    X(EMU_ALONE, float, nvvm_round_ftz_f, (float x))                                                        \
    X(EMU_ALONE, float, nvvm_fmin_ftz_f, (float a, float b))                                                \
    X(EMU_ALONE, float, nvvm_fmax_ftz_f, (float a, float b))                                                \
    X(EMU_ALONE, float, nvvm_fmin_nan_f, (float a, float b))                                                \
    X(EMU_ALONE, float, nvvm_fmax_nan_f, (float a, float b))                                                \
    X(EMU_ALONE, float, nvvm_fmin_ftz_nan_f, (float a, float b))                                            \
    X(EMU_ALONE, float, nvvm_fmax_ftz_nan_f, (float a, float b))                                            \
    X(EMU_ALONE, float, nvvm_saturate_f, (float x))                                                         \
    X(EMU_ALONE, float, nvvm_saturate_ftz_f, (float x))                                                     \
    X(EMU_ALONE, double, nvvm_saturate_d, (double x))                                                       \
    X(EMU_ALONE, float, nvvm_sin_approx_f, (float x))                                                       \
    X(EMU_ALONE, float, nvvm_sin_approx_ftz_f, (float x))                                                   \
    X(EMU_ALONE, float, nvvm_cos_approx_f, (float x))                                                       \
    X(EMU_ALONE, float, nvvm_cos_approx_ftz_f, (float x))                                                   \
    X(EMU_ALONE, float, nvvm_ex2_approx_f32, (float x))                                                     \
    X(EMU_ALONE, float, nvvm_ex2_approx_ftz_f32, (float x))                                                 \
    X(EMU_ALONE, float, nvvm_ex2_approx_f, (float x))                                                       \
    X(EMU_ALONE, float, nvvm_ex2_approx_ftz_f, (float x))                                                   \
    X(EMU_ALONE, double, nvvm_ex2_approx_d, (double x))                                                     \
    X(EMU_ALONE, float, nvvm_lg2_approx_f, (float x))                                                       \
    X(EMU_ALONE, float, nvvm_lg2_approx_ftz_f, (float x))                                                   \
    X(EMU_ALONE, double, nvvm_lg2_approx_d, (double x))                                                     \
    X(EMU_ALONE, float, nvvm_rsqrt_approx_f, (float x))                                                     \
    X(EMU_ALONE, float, nvvm_rsqrt_approx_ftz_f, (float x))                                                 \
    X(EMU_ALONE, double, nvvm_rsqrt_approx_d, (double x))                                                   \
    X(EMU_ALONE, double, nvvm_rsqrt_approx_ftz_d, (double x))                                               \
    X(EMU_ALONE, float, nvvm_sqrt_approx_f, (float x))                                                      \
    X(EMU_ALONE, float, nvvm_sqrt_approx_ftz_f, (float x))                                                  \
    X(EMU_ALONE, float, nvvm_div_approx_f, (float a, float b))                                              \
    X(EMU_ALONE, float, nvvm_div_approx_ftz_f, (float a, float b))                                          \
    X(EMU_ALONE, double, nvvm_rcp_approx_ftz_d, (double x))                                                 \
    X(EMU_ALONE, float, nvvm_rcp_approx_ftz_f, (float x))                                                   \
    X(EMU_ALONE, uint16_t, nvvm_f2h_rn, (float x))                                                          \
    X(EMU_ALONE, uint16_t, nvvm_f2h_rn_ftz, (float x))                                                      \
    X(EMU_ALONE, int32_t, nvvm_d2i_hi, (double x))                                                          \
    X(EMU_ALONE, int32_t, nvvm_d2i_lo, (double x))                                                          \
    X(EMU_ALONE, double, nvvm_lohi_i2d, (int32_t lo, int32_t hi))                                           \
    X(EMU_ALONE, uint32_t, nvvm_prmt, (uint32_t a, uint32_t b, uint32_t selector))                          \
    X(EMU_ALONE, int32_t, nvvm_sad_i, (int32_t a, int32_t b, int32_t c))                                    \
    X(EMU_ALONE, uint32_t, nvvm_sad_ui, (uint32_t a, uint32_t b, uint32_t c))                               \
    X(EMU_ALONE, int16_t, nvvm_sad_s, (int16_t a, int16_t b, int16_t c))                                    \
    X(EMU_ALONE, uint16_t, nvvm_sad_us, (uint16_t a, uint16_t b, uint16_t c))                               \
    X(EMU_ALONE, int64_t, nvvm_sad_ll, (int64_t a, int64_t b, int64_t c))                                   \
    X(EMU_ALONE, uint64_t, nvvm_sad_ull, (uint64_t a, uint64_t b, uint64_t c))                              \
    /* ocml's math intrinsics (amdgcn_<intrinsic>) */                                                       \
    X(EMU_ALONE, float, amdgcn_fract_f32, (float x))                                                        \
    X(EMU_ALONE, double, amdgcn_fract_f64, (double x))                                                      \
    X(EMU_ALONE, float, amdgcn_frexp_mant_f32, (float x))                                                   \
    X(EMU_ALONE, double, amdgcn_frexp_mant_f64, (double x))                                                 \
    X(EMU_ALONE, int32_t, amdgcn_frexp_exp_i32_f32, (float x))                                              \
    X(EMU_ALONE, int32_t, amdgcn_frexp_exp_i32_f64, (double x))                                             \
    X(EMU_ALONE, float, amdgcn_rsq_f32, (float x))                                                          \
    X(EMU_ALONE, double, amdgcn_rsq_f64, (double x))                                                        \
    X(EMU_ALONE, int, amdgcn_class_f32, (float x, int32_t mask))                                            \
    X(EMU_ALONE, int, amdgcn_class_f64, (double x, int32_t mask))                                           \
    X(EMU_ALONE, float, amdgcn_fmed3_f32, (float a, float b, float c))                                      \
    X(EMU_ALONE, double, amdgcn_fmed3_f64, (double a, double b, double c))                                  \
    X(EMU_ALONE, float, amdgcn_sin_f32, (float x))                                                          \
    X(EMU_ALONE, float, amdgcn_cos_f32, (float x))                                                          \
    X(EMU_ALONE, float, amdgcn_fmul_legacy, (float a, float b))                                             \
    X(EMU_ALONE, float, amdgcn_fma_legacy, (float a, float b, float c))                                     \
    X(EMU_ALONE, uint32_t, amdgcn_ubfe_i32, (uint32_t x, uint32_t offset, uint32_t width))                  \
    X(EMU_ALONE, int32_t, amdgcn_sbfe_i32, (int32_t x, uint32_t offset, uint32_t width))                    \
    X(EMU_ALONE, double, amdgcn_trig_preop_f64, (double x, int32_t segment))

/* The sanitizer variant's checks (sanitizer.c), called by the pass under --sanitize only. */
#define EMU_SANITIZER_FUNCTIONS(X)                                                                          \
    X(EMU_ALONE, void *, san_access,                                                                        \
      (char *address, char *base, uint64_t base_size, uint64_t bytes, uint32_t flags,                       \
       const struct san_site *site))                                                                        \
    X(EMU_ALONE, void *, san_shared,                                                                        \
      (char *address, char *base, uint64_t base_size, uint32_t flags, const struct san_site *site))         \
    X(EMU_ALONE, void, san_divide_by_zero, (const struct san_site *site))                                   \
    X(EMU_ALONE, void, san_barrier_site, (const struct san_site *site))                                     \
    X(EMU_ALONE, void, san_op_site, (const struct san_site *site))                                          \
    /* called by the host code (offload/host/host_sites.py, RUNTIME_HOOK), not by the pass */               \
    X(EMU_ALONE, void, san_host_op, (const struct san_site *site, uint64_t destination_bytes, uint64_t source_bytes))

#endif
