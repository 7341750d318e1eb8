/* mlir-offload's emulation runtime: the CUDA and HIP runtime API a bundle's host code calls, and the
 * functions the retargeted kernels call (offload/data/emulator/retarget.cpp), so an executable runs its
 * kernels on the host CPU.
 *
 * - Launches, copies and sets are queued on their stream and the call returns, as on a GPU. Each stream
 *   with queued work has an executor thread that runs it in order, so work on different streams runs
 *   concurrently; the legacy default stream waits for and blocks the other blocking streams (CUDA's and
 *   HIP's rule), events and stream waits order streams. The blocks of a launch run concurrently on its
 *   executor and a pool of OS threads, one per core.
 * - A block's threads run as a plain loop when the kernel never waits for other threads; otherwise each
 *   GPU thread is a fiber (own stack, hand-written context switch) and a barrier or warp operation
 *   switches to the next fiber of the block until all have arrived.
 * - Device memory is host memory with an inaccessible page after each buffer and after each block's
 *   workgroup segment: an out-of-bounds access faults and is reported with kernel, block and thread.
 *
 * C11 and POSIX only; no C++ runtime. */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#include "emu_abi.h"
EMU_RUNTIME_FUNCTIONS(EMU_DECLARE)
EMU_SANITIZER_FUNCTIONS(EMU_DECLARE)
struct san_word;
struct san_cell;
#define NORETURN __attribute__((noreturn))

/* ---- errors ---------------------------------------------------------------------------------------- */

enum {
    SUCCESS = 0, ERROR_INVALID_VALUE = 1, ERROR_MEMORY_ALLOCATION = 2, ERROR_INVALID_CONFIGURATION = 9,
    ERROR_INVALID_DEVICE_POINTER = 17, ERROR_INVALID_RESOURCE_HANDLE = 400, ERROR_NOT_SUPPORTED = 801,
    ERROR_INVALID_DEVICE_FUNCTION = 98, ERROR_INVALID_DEVICE = 101, ERROR_NOT_READY = 600, ERROR_ASSERT = 710,
};

/* A device-side assertion failed: the launch stopped, and every later call reports it (sticky). */
static _Atomic int device_trapped;

/* Why the last call refused (a launch past its arch's limits): GetErrorString's text for that status. */
static _Thread_local int refusal_code;
static _Thread_local char refusal_text[320];

static const char *error_text(int code) {
    if (code && code == refusal_code) return refusal_text;
    switch (code) {
    case SUCCESS: return "no error";
    case ERROR_INVALID_VALUE: return "invalid argument";
    case ERROR_MEMORY_ALLOCATION: return "out of memory";
    case ERROR_INVALID_CONFIGURATION: return "invalid configuration argument";
    case ERROR_INVALID_DEVICE_POINTER: return "invalid device pointer";
    case ERROR_INVALID_DEVICE_FUNCTION: return "invalid device function";
    case ERROR_INVALID_DEVICE: return "invalid device ordinal";
    case ERROR_INVALID_RESOURCE_HANDLE: return "invalid resource handle";
    case ERROR_NOT_SUPPORTED: return "operation not supported";
    case ERROR_NOT_READY: return "device not ready";
    case ERROR_ASSERT: return "device-side assert triggered";
    default: return "unknown error";
    }
}

static const char *error_name(int code) {
    switch (code) {
    case SUCCESS: return "Success";
    case ERROR_INVALID_VALUE: return "ErrorInvalidValue";
    case ERROR_MEMORY_ALLOCATION: return "ErrorMemoryAllocation";
    case ERROR_INVALID_CONFIGURATION: return "ErrorInvalidConfiguration";
    case ERROR_INVALID_DEVICE_POINTER: return "ErrorInvalidDevicePointer";
    case ERROR_INVALID_DEVICE_FUNCTION: return "ErrorInvalidDeviceFunction";
    case ERROR_INVALID_DEVICE: return "ErrorInvalidDevice";
    case ERROR_INVALID_RESOURCE_HANDLE: return "ErrorInvalidResourceHandle";
    case ERROR_NOT_READY: return "ErrorNotReady";
    case ERROR_ASSERT: return "ErrorAssert";
    default: return "ErrorUnknown";
    }
}

static _Thread_local int last_error;
static int status(int code) {
    if (code) last_error = code, refusal_code = 0;
    return code;
}

/* status(code), GetErrorString then giving the code's text followed by why. */
static __attribute__((format(printf, 2, 3))) int refuse(int code, const char *fmt, ...) {
    status(code);
    int n = snprintf(refusal_text, sizeof refusal_text, "%s: ", error_text(code));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(refusal_text + n, sizeof refusal_text - (size_t)n, fmt, ap);
    va_end(ap);
    refusal_code = code;
    return code;
}

/* ---- kernels: registered by the retargeted module, found through the bundle's offload entries ---------- */

/* The default launch limits (a module registers its arch's: struct arch_limits, emu_abi.h). */
static const struct arch_limits default_limits = {"the GPU", 48 * 1024, 48 * 1024, 1024, {1024, 1024, 64},
                                                  {0x7fffffffu, 65535, 65535}, 0};

struct kernel {
    const char *name;
    void (*entry)(void **);
    unsigned flags;
    uint64_t static_shared;
    uint64_t max_dynamic_shared;
    unsigned parameter_count;
    const uint64_t *parameter_sizes;  /* the bytes each argument slot holds */
    const struct arch_limits *limits;
};

static struct kernel *kernels;
static size_t kernel_count, kernel_capacity;
static const struct arch_limits *registering_limits = &default_limits;

/* The limits of the kernels a module registers next (retarget.cpp, registerKernels). */
EXPORT void __emu_register_limits(const struct arch_limits *limits) { registering_limits = limits; }

EXPORT void __emu_register_kernel(const char *name, void (*entry)(void **), unsigned flags, uint64_t static_shared,
                                  unsigned parameter_count, const uint64_t *parameter_sizes) {
    if (kernel_count == kernel_capacity) {
        kernel_capacity = kernel_capacity ? 2 * kernel_capacity : 16;
        kernels = realloc(kernels, kernel_capacity * sizeof *kernels);
        if (!kernels) abort();
    }
    const struct arch_limits *limits = registering_limits;
    uint64_t dynamic = limits->shared_without_opt_in ? limits->shared_without_opt_in : limits->shared_per_block;
    kernels[kernel_count++] =
        (struct kernel){name, entry, flags, static_shared, dynamic, parameter_count, parameter_sizes, limits};
}

/* clang 22's __tgt_offload_entry, in section llvm_offload_entries: `address` is what the host code passes
 * to cudaLaunchKernel/hipLaunchKernel (the stub, or HIP's kernel handle). */
struct offload_entry {
    uint64_t reserved;
    uint16_t version, kind;
    uint32_t flags;
    void *address;
    const char *name;
    uint64_t size, data;
    void *aux;
};
extern struct offload_entry __start_llvm_offload_entries[] __attribute__((weak));
extern struct offload_entry __stop_llvm_offload_entries[] __attribute__((weak));

static struct kernel *kernel_of(const void *handle) {
    static _Thread_local const void *last_handle;
    static _Thread_local struct kernel *last_kernel;
    if (handle && handle == last_handle) return last_kernel;
    for (struct offload_entry *e = __start_llvm_offload_entries; e && e < __stop_llvm_offload_entries; ++e) {
        if (e->address != handle || e->size != 0 || !e->name) continue;
        for (size_t i = 0; i < kernel_count; ++i)
            if (strcmp(kernels[i].name, e->name) == 0) {
                last_handle = handle;
                last_kernel = &kernels[i];
                return &kernels[i];
            }
    }
    return NULL;
}

/* ---- what the kernels' threads see --------------------------------------------------------------------- */

enum fiber_state { RUNNABLE, AT_BARRIER, AT_WARP, AT_WAIT, EXITED };

struct launch {
    const struct kernel *kernel;
    void **args;            /* the launch's own copy of the arguments */
    uint32_t grid[3], block[3];
    uint64_t shared_bytes;  /* static + dynamic */
    unsigned warp_size, threads_per_block;
    uint64_t block_count;
    uint32_t cluster[3];          /* thread-block cluster dimensions (1, 1, 1 without clusters) */
    unsigned cluster_size, explicit_cluster;
    uint64_t unit_count;          /* clusters: the blocks of one run together (cluster.h) */
    _Atomic uint64_t next_block;  /* the next cluster a thread takes */
    unsigned helpers;             /* pool workers inside the launch (under pool.lock) */
    int listed;                   /* on pool.active */
    struct launch *next_active;
#ifdef EMU_SANITIZE
    uint32_t san_serial;          /* racecheck tells launches apart by it (sanitizer.c) */
#endif
};

struct emu_thread {
#ifdef EMU_SANITIZE
    const struct san_site *barrier_site;  /* the barrier it waits at (sanitizer.c) */
    const struct san_site *op_site;       /* the warp or matrix operation it is at (sanitizer.c) */
#endif
    uint32_t tid[3];
    uint32_t linear, lane, warp;
    enum fiber_state state;
    void *sp;            /* saved stack pointer while switched out */
    uint64_t result;     /* a warp collective's result for this lane */
    uint32_t value, operand_b, operand_c, mask;  /* what this lane brought to the warp collective */
    int kind, mask_given;
    const void *operands;  /* matrix collectives: this lane's operand slots (or row address), */
    void *results;         /* and where its fragment of the result goes */
    int (*wait_over)(const struct emu_thread *);  /* AT_WAIT: whether the wait is over (hopper.h, cluster.h), */
    void *wait_on;         /* on what (an mbarrier, the cluster barrier) and for which phase parity */
    unsigned wait_parity, cluster_phase;  /* cluster_phase: the cluster barrier's phase it arrived at */
    int polling;           /* it yielded from an mbarrier test that failed: no progress (hopper.h) */
};

struct warp {
    unsigned first, count;  /* its lanes: threads first .. first + count - 1 */
};

struct block {
#ifdef EMU_SANITIZE
    const struct san_site *barrier_site;  /* where the first thread to arrive waits (sanitizer.c) */
    uint32_t barrier_thread, barrier_generation;
    uint64_t san_epoch;  /* block serial << 24 | barrier_generation: racecheck's interval */
    uint32_t san_first_thread;  /* grid-linear id + 1 of its thread 0 */
    uint64_t san_serial;        /* the block's serial number (its cells' epochs name it) */
    struct san_cell *san_cells; /* its workgroup shadow: the blocks of a cluster run together */
    size_t san_cell_count;
#endif
    const struct launch *launch;
    uint32_t ctaid[3];
    char *shared;
    struct emu_thread *threads;
    struct warp *warps;
    unsigned live, arrived, reduce_kind;
    uint32_t reduce_value;
    void *scheduler_sp;
    struct block *cluster_blocks;  /* the blocks of its cluster, by rank (itself alone without clusters) */
    unsigned cluster_rank;
    uint32_t cluster_position[3];
    struct cluster_barrier *cluster_barrier;
    jmp_buf escape;  /* plain-loop blocks: where a thread that trapped (failed assertion) leaves to */
    /* HIP: hidden kernel arguments (code object v5) and the HSA dispatch packet, read by ockl. */
    _Alignas(16) unsigned char implicit_args[256];
    _Alignas(16) unsigned char dispatch_packet[64];
};

static _Thread_local struct emu_thread *current;
static _Thread_local struct block *current_block;

#define SREG(name, expr) EXPORT uint32_t __emu_##name(void) { return (expr); }
SREG(tid_x, current->tid[0]) SREG(tid_y, current->tid[1]) SREG(tid_z, current->tid[2])
SREG(ntid_x, current_block->launch->block[0]) SREG(ntid_y, current_block->launch->block[1])
SREG(ntid_z, current_block->launch->block[2])
SREG(ctaid_x, current_block->ctaid[0]) SREG(ctaid_y, current_block->ctaid[1]) SREG(ctaid_z, current_block->ctaid[2])
SREG(nctaid_x, current_block->launch->grid[0]) SREG(nctaid_y, current_block->launch->grid[1])
SREG(nctaid_z, current_block->launch->grid[2])
SREG(laneid, current->lane) SREG(warpid, current->warp) SREG(warpsize, current_block->launch->warp_size)
SREG(nwarpid, (current_block->launch->threads_per_block + current_block->launch->warp_size - 1) /
                  current_block->launch->warp_size)
SREG(lanemask_eq, 1u << current->lane) SREG(lanemask_lt, (1u << current->lane) - 1)
SREG(lanemask_le, (uint32_t)((2ull << current->lane) - 1)) SREG(lanemask_gt, ~(uint32_t)((2ull << current->lane) - 1))
SREG(lanemask_ge, ~((1u << current->lane) - 1))

EXPORT void *__emu_shared_base(void) { return current_block->shared; }
EXPORT void *__emu_implicitarg_ptr(void) { return current_block->implicit_args; }
EXPORT void *__emu_dispatch_ptr(void) { return current_block->dispatch_packet; }

static uint64_t nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
EXPORT uint32_t __emu_clock(void) { return (uint32_t)nanoseconds(); }
EXPORT uint64_t __emu_clock64(void) { return nanoseconds(); }
EXPORT uint64_t __emu_globaltimer(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- reports ------------------------------------------------------------------------------------------ */


NORETURN static void fail(const char *fmt, ...) {
    static atomic_flag failing = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&failing))  /* another thread reports: one error line, then exit */
        for (;;) pause();
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fflush(stdout);
    dprintf(2, "mlir-offload emulator: error: %s\n", text);
    _exit(1);
}

/* "kernel 'K', block (x,y,z), thread (x,y,z)" of the current GPU thread. */
static void where(char *out, size_t size, const struct emu_thread *t) {
    const struct block *b = current_block;
    if (!b) {
        snprintf(out, size, "host code");
        return;
    }
    snprintf(out, size, "kernel '%s', block (%u,%u,%u), thread (%u,%u,%u)", b->launch->kernel->name, b->ctaid[0],
             b->ctaid[1], b->ctaid[2], t ? t->tid[0] : 0, t ? t->tid[1] : 0, t ? t->tid[2] : 0);
}

/* ---- fibers ------------------------------------------------------------------------------------------- */

/* void emu_switch(void **save_sp, void *next_sp): save the callee-saved registers on this stack, store the
 * stack pointer in *save_sp, continue on next_sp (whose top holds what an earlier switch saved, or what
 * fiber_stack_init put there). */
void emu_switch(void **save_sp, void *next_sp);
#if defined(__x86_64__)
__asm__(".text\n.globl emu_switch\n.hidden emu_switch\n.type emu_switch,@function\nemu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
        ".size emu_switch, .-emu_switch\n");
enum { SAVED_WORDS = 6 };
#elif defined(__aarch64__)
__asm__(".text\n.globl emu_switch\n.hidden emu_switch\n.type emu_switch,%function\nemu_switch:\n"
        "  sub sp, sp, #160\n"
        "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
        "  mov x2, sp\n  str x2, [x0]\n  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #160\n  ret\n"
        ".size emu_switch, .-emu_switch\n");
#else
#error "the emulation runtime has a context switch for x86_64 and aarch64 only"
#endif

static void fiber_main(void);

/* A new fiber's stack: a frame emu_switch "returns" from into fiber_main. */
static void *fiber_stack_init(char *top) {
    uintptr_t sp = ((uintptr_t)top) & ~(uintptr_t)15;
#if defined(__x86_64__)
    void **words = (void **)sp;
    *--words = NULL;                    /* fiber_main's return address: it never returns */
    *--words = (void *)fiber_main;      /* emu_switch's ret */
    for (int i = 0; i < SAVED_WORDS; ++i) *--words = NULL;
    return words;
#else
    sp -= 160;
    memset((void *)sp, 0, 160);
    ((void **)sp)[11] = (void *)fiber_main;  /* x30 */
    return (void *)sp;
#endif
}

static void yield_to_scheduler(void) { emu_switch(&current->sp, current_block->scheduler_sp); }

static void fiber_main(void) {
    struct block *b = current_block;
    b->launch->kernel->entry(b->launch->args);
    void thread_exited(void);
    thread_exited();
}

/* ---- barriers and warp collectives ----------------------------------------------------------------------- */

#ifdef EMU_SANITIZE
static void san_barrier_arrive(struct block *b, struct emu_thread *t);
static void san_barrier_released(struct block *b);
static void san_barrier_skipped(const struct emu_thread *exited);
static void san_block_started(struct block *b);
static void san_launch_started(struct launch *l);
#endif

static void report_divergent_barrier(const struct emu_thread *exited) {
#ifdef EMU_SANITIZE
    san_barrier_skipped(exited);
    return;
#endif
    char at[256];
    where(at, sizeof at, exited);
    fail("barrier divergence in %s: the thread exited while %u other thread(s) of its block wait at a barrier",
         at, current_block->arrived);
}

static void release_barrier(struct block *b) {
    for (unsigned i = 0; i < b->launch->threads_per_block; ++i)
        if (b->threads[i].state == AT_BARRIER) b->threads[i].state = RUNNABLE;
    b->arrived = 0;
#ifdef EMU_SANITIZE
    san_barrier_released(b);
#endif
}

static uint32_t barrier_wait(unsigned kind, uint32_t predicate) {
    struct block *b = current_block;
    struct emu_thread *t = current;
    if (!b->threads) {  /* a plain-loop block: only a one-thread block gets here */
        if (b->launch->threads_per_block != 1) fail("internal error: barrier in a kernel registered without contexts");
        return kind == RED_POPC ? predicate != 0 : predicate != 0;
    }
#ifdef EMU_SANITIZE
    san_barrier_arrive(b, t);
#endif
    if (b->arrived == 0) {
        b->reduce_kind = kind;
        b->reduce_value = kind == RED_AND ? 1 : 0;
    }
    if (kind == RED_POPC) b->reduce_value += predicate != 0;
    else if (kind == RED_AND) b->reduce_value &= predicate != 0;
    else b->reduce_value |= predicate != 0;
    t->state = AT_BARRIER;
    if (++b->arrived == b->live) {
        if (b->live != b->launch->threads_per_block) {
            for (unsigned i = 0; i < b->launch->threads_per_block; ++i)
                if (b->threads[i].state == EXITED) report_divergent_barrier(&b->threads[i]);
        }
        t->result = b->reduce_value;
        for (unsigned i = 0; i < b->launch->threads_per_block; ++i)
            if (b->threads[i].state == AT_BARRIER) b->threads[i].result = b->reduce_value;
        release_barrier(b);
        return (uint32_t)t->result;
    }
    yield_to_scheduler();
    return (uint32_t)t->result;
}

EXPORT void __emu_barrier(void) { (void)barrier_wait(RED_OR, 0); }
EXPORT uint32_t __emu_barrier_reduce(uint32_t kind, uint32_t predicate) { return barrier_wait(kind, predicate); }

#ifdef EMU_SANITIZE
/* The access the runtime makes for an op of the current thread (wmma, ldmatrix, buffer operations) at
 * `address`, derived from the op's `base` pointer (flags: 1 a write, 2 an atomic, OP_ASYNC an asynchronous
 * copy's; sanitizer.c's SAN_WRITE, SAN_ATOMIC, SAN_ASYNC): checked as a kernel's own access; the address
 * to use. */
static void *san_op_access(const void *address, const void *base, uint64_t bytes, uint32_t flags);
/* The same for an access to the current block's shared memory (hopper.h's TMA, bulk copies, wgmma, stmatrix). */
static void *san_op_shared(const void *address, uint64_t bytes, uint32_t flags);
#define OP_ACCESS(address, base, bytes, write) san_op_access(address, base, bytes, write)
#define OP_SHARED_ACCESS(address, bytes, flags) san_op_shared(address, bytes, flags)
#else
#define OP_ACCESS(address, base, bytes, write) ((void *)(address))
#define OP_SHARED_ACCESS(address, bytes, flags) ((void *)(address))
#endif
/* OP_ACCESS's flags: a write; an asynchronous op's access, outside racecheck (sanitizer.c's SAN_ASYNC). */
enum { OP_WRITE = 1, OP_ASYNC = 1 << 7 };

#include "hopper.h"
#include "cluster.h"

typedef uint64_t lane_set;
#define LANE(l) ((lane_set)1 << (l))

enum {
    COLLECTIVE_SHUFFLE_IDX = SHFL_IDX, COLLECTIVE_SHUFFLE_UP = SHFL_UP, COLLECTIVE_SHUFFLE_DOWN = SHFL_DOWN,
    COLLECTIVE_SHUFFLE_BFLY = SHFL_BFLY, /* __emu_shfl_sync's mode is the collective */
    COLLECTIVE_VOTE_ALL = 4 + VOTE_ALL, COLLECTIVE_VOTE_ANY = 4 + VOTE_ANY, COLLECTIVE_VOTE_UNI = 4 + VOTE_UNI,
    COLLECTIVE_BALLOT = 4 + VOTE_BALLOT,
    COLLECTIVE_SYNC = 8, COLLECTIVE_REDUX = 16 /* + redux kind */, COLLECTIVE_BPERMUTE = 32,
    COLLECTIVE_READLANE = 33, COLLECTIVE_READFIRSTLANE = 34, COLLECTIVE_BALLOT64 = 35,
    COLLECTIVE_SWIZZLE = 36,
    COLLECTIVE_LDMATRIX = 64 /* + count * 2 + transposed */, COLLECTIVE_STMATRIX = 96 /* the same (hopper.h) */,
    COLLECTIVE_MMA = 128 /* + shape flags */,
    COLLECTIVE_AMD_WMMA = 256 /* + kind and flags */,
};
static void matrix_collective(int kind, struct emu_thread *lanes, unsigned count, lane_set group);
static void amd_wmma_collective(unsigned flags, struct emu_thread *lanes, unsigned count, lane_set group);

/* A warp collective completes for the lanes of the warp that can reach it: those neither exited nor
 * waiting at a barrier (as the hardware's converged lanes; CUDA's masks are synchronisation hints, and
 * MLIR's width-limited shuffles name only the first segment in theirs). The last lane to arrive computes
 * every member's result. Where lanes diverged to different warp operations, nothing completes until no
 * thread of the block can run; then the lanes waiting at each kind of operation complete it together. */

/* PTX shfl.sync's source lane (in the warp) for lane `lane`, and whether the shuffle is valid there. */
static unsigned shuffle_source(int mode, const struct emu_thread *self, unsigned lane, int *valid) {
    uint32_t b = self->operand_b & 31, c = self->operand_c;
    uint32_t clamp = c & 31, segmask = (c >> 8) & 31;
    unsigned base = lane & ~31u;  /* wave64 shuffles are emulated per 32-lane half, as CUDA's warps */
    unsigned sub = lane & 31;
    int32_t max_lane = (int32_t)((sub & segmask) | (clamp & ~segmask)), min_lane = (int32_t)(sub & segmask);
    int32_t j;
    switch (mode) {
    case COLLECTIVE_SHUFFLE_UP: j = (int32_t)sub - (int32_t)b; *valid = j >= max_lane; break;
    case COLLECTIVE_SHUFFLE_DOWN: j = (int32_t)sub + (int32_t)b; *valid = j <= max_lane; break;
    case COLLECTIVE_SHUFFLE_BFLY: j = (int32_t)(sub ^ b); *valid = j <= max_lane; break;
    default: j = min_lane | (int32_t)(b & ~segmask); *valid = j <= max_lane; break;
    }
    return *valid ? base + (unsigned)j : lane;
}

/* PTX shfl.sync for lane `lane` of `group`: value | valid << 32. */
static uint64_t shuffle_result(int mode, const struct emu_thread *lanes, unsigned count, unsigned lane, lane_set group) {
    int valid;
    unsigned source = shuffle_source(mode, &lanes[lane], lane, &valid);
    if (source >= count || !(group & LANE(source))) source = lane;
    return lanes[source].value | ((uint64_t)(valid != 0) << 32);
}

/* ds_swizzle_b32's source lane: offset bit 15 set: quad permute (lane i of each 4 reads 2 bits i of the
 * offset); else within each 32 lanes ((lane & and) | or) ^ xor, masks in bits 0-4, 5-9, 10-14. */
static unsigned swizzle_source(uint32_t offset, unsigned l) {
    offset &= 0xffff;
    if (offset & 0x8000) return (l & ~3u) | ((offset >> (2 * (l & 3))) & 3);
    unsigned and_mask = offset & 31, or_mask = (offset >> 5) & 31, xor_mask = (offset >> 10) & 31;
    return (l & ~31u) | ((((l & 31) & and_mask) | or_mask) ^ xor_mask);
}

#ifdef EMU_SANITIZE
static void san_warp_sources(int kind, const struct emu_thread *lanes, unsigned count, lane_set group);
#endif

static void complete_collective(struct emu_thread *lanes, unsigned count, lane_set group) {
    int kind = -1;
    uint64_t ballot = 0;
    uint32_t first = 0;
    int have_first = 0;
    for (unsigned l = 0; l < count; ++l) {
        if (!(group & LANE(l))) continue;
        if (kind < 0) kind = lanes[l].kind;
        else if (lanes[l].kind != kind) {
            char at[256];
            where(at, sizeof at, &lanes[l]);
            fail("warp divergence in %s: lanes of warp %u are at different warp operations", at, lanes[l].warp);
        }
        if (lanes[l].value) ballot |= LANE(l);
        if (!have_first) first = lanes[l].value, have_first = 1;
    }
    if (kind >= COLLECTIVE_LDMATRIX) {
        matrix_collective(kind, lanes, count, group);
        for (unsigned l = 0; l < count; ++l)
            if (group & LANE(l)) lanes[l].state = RUNNABLE;
        return;
    }
#ifdef EMU_SANITIZE
    san_warp_sources(kind, lanes, count, group);
#endif
    uint32_t reduced = 0;
    if (kind >= COLLECTIVE_REDUX && kind < COLLECTIVE_REDUX + 8) {
        int op = kind - COLLECTIVE_REDUX, started = 0;
        for (unsigned l = 0; l < count; ++l) {
            if (!(group & LANE(l))) continue;
            uint32_t v = lanes[l].value;
            if (!started) { reduced = v; started = 1; continue; }
            switch (op) {
            case REDUX_ADD: reduced += v; break;
            case REDUX_MIN: reduced = (int32_t)v < (int32_t)reduced ? v : reduced; break;
            case REDUX_MAX: reduced = (int32_t)v > (int32_t)reduced ? v : reduced; break;
            case REDUX_UMIN: reduced = v < reduced ? v : reduced; break;
            case REDUX_UMAX: reduced = v > reduced ? v : reduced; break;
            case REDUX_AND: reduced &= v; break;
            case REDUX_OR: reduced |= v; break;
            default: reduced ^= v; break;
            }
        }
    }
    for (unsigned l = 0; l < count; ++l) {
        if (!(group & LANE(l))) continue;
        struct emu_thread *t = &lanes[l];
        uint32_t half = (uint32_t)(ballot >> (l & 32));  /* CUDA's 32-lane view of the predicates */
        switch (kind) {
        case COLLECTIVE_SHUFFLE_IDX: case COLLECTIVE_SHUFFLE_UP: case COLLECTIVE_SHUFFLE_DOWN: case COLLECTIVE_SHUFFLE_BFLY:
            t->result = shuffle_result(kind, lanes, count, l, group);
            break;
        case COLLECTIVE_VOTE_ALL: t->result = (half & t->mask) == ((uint32_t)(group >> (l & 32)) & t->mask); break;
        case COLLECTIVE_VOTE_ANY: t->result = (half & t->mask) != 0; break;
        case COLLECTIVE_VOTE_UNI: {
            uint32_t in = (uint32_t)(group >> (l & 32)) & t->mask;
            t->result = (half & in) == 0 || (half & in) == in;
            break;
        }
        case COLLECTIVE_BALLOT: t->result = half & t->mask; break;
        case COLLECTIVE_BALLOT64: t->result = ballot; break;
        case COLLECTIVE_SYNC: t->result = 0; break;
        case COLLECTIVE_BPERMUTE: {
            unsigned source = (t->operand_b / 4) % count;
            t->result = (group & LANE(source)) ? lanes[source].operand_c : 0;
            break;
        }
        case COLLECTIVE_READLANE: {
            unsigned source = t->operand_b % count;
            t->result = lanes[source].value;
            break;
        }
        case COLLECTIVE_READFIRSTLANE: t->result = first; break;
        case COLLECTIVE_SWIZZLE: {
            unsigned source = swizzle_source(t->operand_b, l);
            t->result = source < count && (group & LANE(source)) ? lanes[source].value : 0;
            break;
        }
        default: t->result = reduced; break;
        }
        t->state = RUNNABLE;
    }
}

/* The lanes a collective of `t` waits for (itself included). */
static lane_set required_lanes(const struct emu_thread *lanes, unsigned count, const struct emu_thread *t) {
    lane_set group = 0;
    for (unsigned l = 0; l < count; ++l) {
        if (lanes[l].state == EXITED) continue;
        if (lanes[l].state != AT_BARRIER) group |= LANE(l);
    }
    return group | LANE(t->lane);
}

static uint64_t warp_collective(int kind, int mask_given, uint32_t mask, uint32_t value, uint32_t b, uint32_t c) {
    struct block *blk = current_block;
    struct emu_thread *t = current;
    if (!blk->threads) fail("internal error: warp operation in a kernel registered without contexts");
    struct warp *w = &blk->warps[t->warp];
    struct emu_thread *lanes = &blk->threads[w->first];
    t->kind = kind;
    t->value = value;
    t->operand_b = b;
    t->operand_c = c;
    t->mask = mask;
    t->mask_given = mask_given;
    t->state = AT_WARP;
    lane_set group = required_lanes(lanes, w->count, t);
    int all_here = 1;
    for (unsigned l = 0; l < w->count; ++l)
        if ((group & LANE(l)) && (lanes[l].state != AT_WARP || lanes[l].kind != kind)) all_here = 0;
    if (all_here) complete_collective(lanes, w->count, group);
    /* Even the completing lane lets the scheduler resume the group in lane order: until their next
     * synchronisation the lanes then run lowest first, so of conflicting stores the highest lane's lands
     * last, as NVIDIA hardware does for one instruction's stores (MLIR's partial-warp all_reduce relies
     * on it; PTX leaves the winner unspecified). */
    yield_to_scheduler();
    return t->result;
}

/* No thread of the block can run: the lanes waiting at warp operations complete them among themselves. */
static int complete_waiting_collectives(struct block *b) {
    int completed = 0;
    unsigned warps = (b->launch->threads_per_block + b->launch->warp_size - 1) / b->launch->warp_size;
    for (unsigned i = 0; i < warps; ++i) {
        struct warp *w = &b->warps[i];
        struct emu_thread *lanes = &b->threads[w->first];
        for (;;) {  /* one group per kind of operation waited at */
            lane_set waiting = 0;
            int kind = -1;
            for (unsigned l = 0; l < w->count; ++l)
                if (lanes[l].state == AT_WARP && (kind < 0 || lanes[l].kind == kind)) {
                    kind = lanes[l].kind;
                    waiting |= LANE(l);
                }
            if (!waiting) break;
            complete_collective(lanes, w->count, waiting);
            completed = 1;
        }
    }
    return completed;
}

/* ---- tensor-core operations: whole-warp collectives over the PTX fragment layouts ------------------ */

static uint64_t matrix_call(int kind, const void *operands, void *results) {
    current->operands = operands;
    current->results = results;
    return warp_collective(kind, 0, 0, 0, 0, 0);
}

EXPORT void __emu_ldmatrix(uint32_t count, uint32_t transposed, const void *row, void *slots) {
    if (current->lane % 32 < 8 * count) row = OP_ACCESS(row, row, 16, 0);  /* this lane's row: 8 halves */
    (void)matrix_call(COLLECTIVE_LDMATRIX + (int)(count * 2 + (transposed != 0)), row, slots);
}

EXPORT void __emu_mma(uint32_t shape, const void *operands, void *results) {
    (void)matrix_call(COLLECTIVE_MMA + (int)shape, operands, results);
}


static float half_at(const void *slots, unsigned slot, unsigned which) {
    _Float16 h[2];
    memcpy(h, (const char *)slots + 8 * slot, 4);
    return (float)h[which];
}
static void put_half(void *slots, unsigned slot, unsigned which, float v) {
    _Float16 h = (_Float16)v;
    memcpy((char *)slots + 8 * slot + 2 * which, &h, 2);
}
static float float_at(const void *slots, unsigned slot) {
    float f;
    memcpy(&f, (const char *)slots + 8 * slot, 4);
    return f;
}
static float tf32_at(const void *slots, unsigned slot) {  /* tf32: an f32 with 10 mantissa bits */
    uint32_t bits;
    memcpy(&bits, (const char *)slots + 8 * slot, 4);
    bits &= 0xffffe000u;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

#include "sparse_mma.h"
#include "wgmma.h"

/* wmma fragments (the emulator's layout; NVIDIA leaves it unspecified). m16n16k16: A and B, 16 halves
 * per lane, hold logical element (l % 16) * 16 + e (lanes 16..31 repeat lanes 0..15); C and D, 8 values
 * per lane, element l * 8 + e; all 16x16. m8n8k4 (f64): A (8x4) and B (4x8) element l, C and D (8x8)
 * elements 2l and 2l + 1. Element m of an R x C matrix is row m / C, column m % C. */

static unsigned wmma_element(unsigned which, unsigned lane, unsigned e) {
    return which == WMMA_C ? lane * 8 + e : (lane % 16) * 16 + e;
}

struct wmma_fragment { unsigned values, columns, first, step; };  /* element first + e (step: per lane) */

static struct wmma_fragment wmma_layout(unsigned shape, unsigned which, unsigned lane) {
    if (shape == WMMA_M8N8K4) {
        if (which == WMMA_C) return (struct wmma_fragment){2, 8, 2 * lane, 1};
        return (struct wmma_fragment){1, which == WMMA_A ? 4 : 8, lane, 1};
    }
    return (struct wmma_fragment){which == WMMA_C ? 8 : 16, 16, wmma_element(which, lane, 0), 1};
}

static size_t element_bytes(unsigned element) { return element == WMMA_F16 ? 2 : element == WMMA_F32 ? 4 : 8; }

/* Where element e of a fragment sits among the 8-byte slots (f16 values pair up in one slot). */
static size_t slot_offset(unsigned element, unsigned e) {
    return element == WMMA_F16 ? 8 * (e / 2) + 2 * (e % 2) : 8 * (size_t)e;
}

EXPORT void __emu_wmma_load(uint32_t shape, uint32_t which, uint32_t col_major, uint32_t element, const void *matrix,
                            uint32_t stride, void *slots) {
    struct wmma_fragment f = wmma_layout(shape, which, current->lane % 32);
    size_t bytes = element_bytes(element);
    if (!stride) stride = f.columns;
    memset(slots, 0, 64);
    for (unsigned e = 0; e < f.values; ++e) {
        unsigned m = f.first + e, row = m / f.columns, col = m % f.columns;
        size_t at = col_major ? (size_t)col * stride + row : (size_t)row * stride + col;
        memcpy((char *)slots + slot_offset(element, e), OP_ACCESS((const char *)matrix + at * bytes, matrix, bytes, 0),
               bytes);
    }
}

EXPORT void __emu_wmma_store(uint32_t shape, uint32_t col_major, uint32_t element, void *matrix, uint32_t stride,
                             const void *slots) {
    struct wmma_fragment f = wmma_layout(shape, WMMA_C, current->lane % 32);
    size_t bytes = element_bytes(element);
    if (!stride) stride = f.columns;
    for (unsigned e = 0; e < f.values; ++e) {
        unsigned m = f.first + e, row = m / f.columns, col = m % f.columns;
        size_t at = col_major ? (size_t)col * stride + row : (size_t)row * stride + col;
        memcpy(OP_ACCESS((char *)matrix + at * bytes, matrix, bytes, 1), (const char *)slots + slot_offset(element, e),
               bytes);
    }
}

static void wmma_multiply_f64(struct emu_thread *lanes) {
    double a[32], b[32], c[64];  /* A 8x4, B 4x8, C 8x8, row-major */
    for (unsigned l = 0; l < 32; ++l) {
        const char *o = lanes[l].operands;
        memcpy(&a[l], o, 8);
        memcpy(&b[l], o + 8, 8);
        memcpy(&c[2 * l], o + 16, 8);
        memcpy(&c[2 * l + 1], o + 24, 8);
    }
    for (unsigned l = 0; l < 32; ++l)
        for (unsigned e = 0; e < 2; ++e) {
            unsigned m = 2 * l + e, row = m / 8, col = m % 8;
            double d = c[m];
            for (unsigned k = 0; k < 4; ++k) d = fma(a[row * 4 + k], b[k * 8 + col], d);
            memcpy((char *)lanes[l].results + 8 * e, &d, 8);
        }
}

static void wmma_multiply(int flags, struct emu_thread *lanes) {
    float a[256], b[256], c[256];
    for (unsigned l = 0; l < 32; ++l) {
        const void *o = lanes[l].operands;
        for (unsigned e = 0; e < 16 && l < 16; ++e) {
            a[wmma_element(WMMA_A, l, e)] = half_at(o, e / 2, e % 2);
            b[wmma_element(WMMA_B, l, e)] = half_at(o, 8 + e / 2, e % 2);
        }
        for (unsigned e = 0; e < 8; ++e)
            c[wmma_element(WMMA_C, l, e)] = (flags & MMA_C_F16) ? half_at(o, 16 + e / 2, e % 2) : float_at(o, 16 + e);
    }
    for (unsigned l = 0; l < 32; ++l)
        for (unsigned e = 0; e < 8; ++e) {
            unsigned m = wmma_element(WMMA_C, l, e), row = m / 16, col = m % 16;
            float d = c[m];
            for (unsigned k = 0; k < 16; ++k) d = fmaf(a[row * 16 + k], b[k * 16 + col], d);
            if (flags & MMA_D_F16) put_half(lanes[l].results, e / 2, e % 2, d);
            else memcpy((char *)lanes[l].results + 8 * e, &d, 4);
        }
}

static void matrix_collective(int kind, struct emu_thread *lanes, unsigned count, lane_set group) {
    if (kind >= COLLECTIVE_AMD_WMMA && kind < COLLECTIVE_MMA_SP) {
        amd_wmma_collective((unsigned)(kind - COLLECTIVE_AMD_WMMA), lanes, count, group);
        return;
    }
    if (count != 32 || (group & 0xffffffffu) != 0xffffffffu) {
        char at[256];
        where(at, sizeof at, &lanes[0]);
        fail("matrix operation in %s with %u of 32 lanes: ldmatrix and mma.sync need the whole warp", at,
             (unsigned)__builtin_popcountll(group));
    }
    if (kind >= COLLECTIVE_MMA_SP) {
        mma_sp_collective((unsigned)(kind - COLLECTIVE_MMA_SP), lanes);
        return;
    }
    if (kind >= COLLECTIVE_STMATRIX && kind < COLLECTIVE_MMA) {
        stmatrix_collective((unsigned)(kind - COLLECTIVE_STMATRIX), lanes);
        return;
    }
    if (kind < COLLECTIVE_MMA) {  /* ldmatrix: matrix i's rows from lanes 8i..8i+7 */
        unsigned n = (unsigned)(kind - COLLECTIVE_LDMATRIX) / 2, transposed = (unsigned)(kind - COLLECTIVE_LDMATRIX) % 2;
        for (unsigned l = 0; l < 32; ++l) {
            unsigned row = l / 4, col = 2 * (l % 4);
            for (unsigned i = 0; i < n; ++i) {
                uint16_t pair[2];
                for (unsigned j = 0; j < 2; ++j) {
                    const uint16_t *source = transposed ? (const uint16_t *)lanes[8 * i + col + j].operands + row
                                                        : (const uint16_t *)lanes[8 * i + row].operands + col + j;
                    memcpy(&pair[j], source, 2);
                }
                memset((char *)lanes[l].results + 8 * i, 0, 8);
                memcpy((char *)lanes[l].results + 8 * i, pair, 4);
            }
        }
        return;
    }
    int flags = kind - COLLECTIVE_MMA, shape = flags & MMA_SHAPE_MASK;
    if (shape == MMA_M8N8K4_F64) {
        double a[8][4], b[4][8], c[8][8];
        for (unsigned l = 0; l < 32; ++l) {
            const char *o = lanes[l].operands;
            unsigned g = l / 4, t = l % 4;
            memcpy(&a[g][t], o, 8);
            memcpy(&b[t][g], o + 8, 8);
            memcpy(&c[g][2 * t], o + 16, 8);
            memcpy(&c[g][2 * t + 1], o + 24, 8);
        }
        for (unsigned l = 0; l < 32; ++l) {
            unsigned g = l / 4, t = l % 4;
            for (unsigned j = 0; j < 2; ++j) {
                double d = c[g][2 * t + j];
                for (unsigned k = 0; k < 4; ++k) d = fma(a[g][k], b[k][2 * t + j], d);
                memcpy((char *)lanes[l].results + 8 * j, &d, 8);
            }
        }
        return;
    }
    if (shape == MMA_WMMA_M16N16K16) {
        wmma_multiply(flags, lanes);
        return;
    }
    if (shape == MMA_WMMA_M8N8K4_F64) {
        wmma_multiply_f64(lanes);
        return;
    }
    unsigned K = shape == MMA_M16N8K16_F16 ? 16 : shape == MMA_M16N8K4_TF32 ? 4 : 8;
    float a[16][16], b[16][8], c[16][8];
    for (unsigned l = 0; l < 32; ++l) {
        const void *o = lanes[l].operands;
        unsigned g = l / 4, t = l % 4, slot = 0;
        if (shape == MMA_M16N8K4_TF32) {  /* a0: (g, t), a1: (g + 8, t); b0: (k = t, n = g) */
            a[g][t] = tf32_at(o, 0), a[g + 8][t] = tf32_at(o, 1);
            b[t][g] = tf32_at(o, 2);
            slot = 3;
        } else if (shape == MMA_M16N8K8_TF32) {
            a[g][t] = tf32_at(o, 0), a[g + 8][t] = tf32_at(o, 1), a[g][t + 4] = tf32_at(o, 2), a[g + 8][t + 4] = tf32_at(o, 3);
            b[t][g] = tf32_at(o, 4), b[t + 4][g] = tf32_at(o, 5);
            slot = 6;
        } else {
            for (unsigned r = 0; r < K / 4; ++r)  /* a0: (g, 2t..), a1: (g + 8, 2t..), a2: (g, 2t + 8..), a3 */
                for (unsigned j = 0; j < 2; ++j) a[g + 8 * (r % 2)][2 * t + 8 * (r / 2) + j] = half_at(o, r, j);
            for (unsigned r = 0; r < K / 8; ++r)  /* b0: (k = 2t.., n = g), b1: (k = 2t + 8.., n = g) */
                for (unsigned j = 0; j < 2; ++j) b[2 * t + 8 * r + j][g] = half_at(o, K / 4 + r, j);
            slot = K / 4 + K / 8;
        }
        if (flags & MMA_C_F16) {
            for (unsigned r = 0; r < 2; ++r)
                for (unsigned j = 0; j < 2; ++j) c[g + 8 * r][2 * t + j] = half_at(o, slot + r, j);
        } else {
            for (unsigned r = 0; r < 4; ++r) c[g + 8 * (r / 2)][2 * t + r % 2] = float_at(o, slot + r);
        }
    }
    for (unsigned l = 0; l < 32; ++l) {
        unsigned g = l / 4, t = l % 4;
        for (unsigned r = 0; r < 4; ++r) {
            unsigned row = g + 8 * (r / 2), col = 2 * t + r % 2;
            float d = c[row][col];
            for (unsigned k = 0; k < K; ++k) d = fmaf(a[row][k], b[k][col], d);
            if (flags & MMA_D_F16) put_half(lanes[l].results, r / 2, r % 2, d);
            else memcpy((char *)lanes[l].results + 8 * r, &d, 4);
        }
    }
}

EXPORT uint64_t __emu_shfl_sync(uint32_t mode, uint32_t mask, uint32_t value, uint32_t b, uint32_t c) {
    return warp_collective((int)mode, 1, mask, value, b, c);
}
EXPORT uint32_t __emu_vote_sync(uint32_t kind, uint32_t mask, uint32_t predicate) {
    return (uint32_t)warp_collective(COLLECTIVE_VOTE_ALL + (int)kind, 1, mask, predicate != 0, 0, 0);
}
EXPORT uint32_t __emu_redux_sync(uint32_t kind, uint32_t value, uint32_t mask) {
    return (uint32_t)warp_collective(COLLECTIVE_REDUX + (int)kind, 1, mask, value, 0, 0);
}
EXPORT void __emu_warp_sync(uint32_t mask) { (void)warp_collective(COLLECTIVE_SYNC, 1, mask, 0, 0, 0); }
EXPORT uint32_t __emu_activemask(void) {
    struct block *blk = current_block;
    struct warp *w = &blk->warps[current->warp];
    uint32_t mask = 0;
    for (unsigned l = 0; l < w->count; ++l)
        if (blk->threads[w->first + l].state != EXITED) mask |= 1u << l;
    return mask;
}
/* AMDGPU: ds_bpermute (byte address, value), readlane, readfirstlane, ballot (wave32 or wave64). */
EXPORT uint32_t __emu_bpermute(uint32_t address, uint32_t value) {
    return (uint32_t)warp_collective(COLLECTIVE_BPERMUTE, 0, 0, 0, address, value);
}
EXPORT uint32_t __emu_swizzle(uint32_t value, uint32_t offset) {
    return (uint32_t)warp_collective(COLLECTIVE_SWIZZLE, 0, 0, value, offset, 0);
}
EXPORT uint32_t __emu_readlane(uint32_t value, uint32_t lane) {
    return (uint32_t)warp_collective(COLLECTIVE_READLANE, 0, 0, value, lane, 0);
}
EXPORT uint32_t __emu_readfirstlane(uint32_t value) {
    return (uint32_t)warp_collective(COLLECTIVE_READFIRSTLANE, 0, 0, value, 0, 0);
}
EXPORT uint64_t __emu_ballot(uint32_t predicate) {
    return warp_collective(COLLECTIVE_BALLOT64, 0, 0, predicate != 0, 0, 0);
}
EXPORT uint32_t __emu_mbcnt_lo(uint32_t mask, uint32_t add) {
    unsigned lane = current->lane;
    uint32_t below = lane >= 32 ? ~0u : (1u << lane) - 1;
    return add + (uint32_t)__builtin_popcount(mask & below);
}
EXPORT uint32_t __emu_mbcnt_hi(uint32_t mask, uint32_t add) {
    unsigned lane = current->lane;
    uint32_t below = lane < 32 ? 0 : (lane >= 64 ? ~0u : (1u << (lane - 32)) - 1);
    return add + (uint32_t)__builtin_popcount(mask & below);
}

void thread_exited(void) {
    struct block *b = current_block;
    struct emu_thread *t = current;
    t->state = EXITED;
    b->live--;
    if (b->arrived && b->arrived == b->live && !atomic_load(&device_trapped)) {
        report_divergent_barrier(t);
        release_barrier(b);  /* the sanitizer's keep-going: the waiting threads go on */
    }
    emu_switch(&t->sp, b->scheduler_sp);
    __builtin_unreachable();
}

/* ---- workers: the blocks of a launch on all cores --------------------------------------------------- */

enum { FIBER_STACK = 256 * 1024 };

struct worker {
    char *shared_map;
    size_t shared_map_size, shared_capacity;
    char *cluster_maps[MAX_CLUSTER_BLOCKS];  /* workgroup segments of cluster ranks 1.. */
    size_t cluster_map_sizes[MAX_CLUSTER_BLOCKS], cluster_capacities[MAX_CLUSTER_BLOCKS];
    char *stacks;
    unsigned stack_count;
    struct emu_thread *threads;
    struct warp *warps;
    char *signal_stack;
};

static size_t page_size;

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Inaccessible bytes after each device buffer and workgroup segment (and before: a page): an access up
 * to this far out of bounds faults instead of touching a neighbour. Address space only, no memory. */
enum { GUARD_BYTES = 1 << 20 };

/* A mapping of `size` usable bytes between guards; returns the end of the usable bytes (callers place
 * their data so that it ends there). */
static char *map_with_guard(size_t size, char **map, size_t *map_size) {
    size_t usable = round_up(size ? size : 1, page_size);
    size_t total = page_size + usable + GUARD_BYTES;
    char *m = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    if (mprotect(m + page_size, usable, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, total);
        return NULL;
    }
    *map = m;
    *map_size = total;
    return m + page_size + usable;
}

static void worker_prepare(struct worker *w, const struct launch *l) {
    if (l->shared_bytes > w->shared_capacity || !w->shared_map) {
        if (w->shared_map) munmap(w->shared_map, w->shared_map_size);
        size_t cap = round_up(l->shared_bytes ? l->shared_bytes : 16, page_size);
        if (!map_with_guard(cap, &w->shared_map, &w->shared_map_size)) fail("out of memory for workgroup memory");
        w->shared_capacity = cap;
    }
    for (unsigned r = 1; r < l->cluster_size; ++r)
        if (l->shared_bytes > w->cluster_capacities[r] || !w->cluster_maps[r]) {
            if (w->cluster_maps[r]) munmap(w->cluster_maps[r], w->cluster_map_sizes[r]);
            size_t cap = round_up(l->shared_bytes ? l->shared_bytes : 16, page_size);
            if (!map_with_guard(cap, &w->cluster_maps[r], &w->cluster_map_sizes[r]))
                fail("out of memory for workgroup memory");
            w->cluster_capacities[r] = cap;
        }
    unsigned n = l->threads_per_block * l->cluster_size;  /* the fibers of a whole cluster */
    if ((l->kernel->flags & FLAG_NEEDS_CONTEXTS) && n > w->stack_count) {
        if (w->stacks) munmap(w->stacks, (size_t)w->stack_count * (FIBER_STACK + page_size));
        size_t each = FIBER_STACK + page_size;
        w->stacks = mmap(NULL, (size_t)n * each, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (w->stacks == MAP_FAILED) fail("out of memory for %u thread stacks", n);
        for (unsigned i = 0; i < n; ++i) mprotect(w->stacks + (size_t)i * each, page_size, PROT_NONE);
        w->stack_count = n;
        free(w->threads);
        free(w->warps);
        w->threads = calloc(n, sizeof *w->threads);
        w->warps = calloc(n, sizeof *w->warps);
        if (!w->threads || !w->warps) fail("out of memory");
    }
}

/* The segment of this block: its end touches the guard page. */
static char *shared_segment(struct worker *w, const struct launch *l, unsigned rank) {
    char *map = rank ? w->cluster_maps[rank] : w->shared_map;
    size_t size = rank ? w->cluster_map_sizes[rank] : w->shared_map_size;
    return map + size - GUARD_BYTES - round_up(l->shared_bytes, 16);
}

static void fill_hip_arguments(struct block *b, const struct launch *l) {
    memset(b->implicit_args, 0, sizeof b->implicit_args);
    memset(b->dispatch_packet, 0, sizeof b->dispatch_packet);
    for (int d = 0; d < 3; ++d) {
        uint32_t count = l->grid[d];
        uint16_t size = (uint16_t)l->block[d];
        memcpy(b->implicit_args + 4 * d, &count, 4);           /* hidden_block_count_{x,y,z} */
        memcpy(b->implicit_args + 12 + 2 * d, &size, 2);       /* hidden_group_size_{x,y,z} */
        uint16_t remainder = 0;                                 /* grids are whole blocks */
        memcpy(b->implicit_args + 18 + 2 * d, &remainder, 2);
        memcpy(b->dispatch_packet + 4 + 2 * d, &size, 2);      /* workgroup_size_{x,y,z} */
        uint32_t total = l->grid[d] * l->block[d];
        memcpy(b->dispatch_packet + 12 + 4 * d, &total, 4);    /* grid_size_{x,y,z} */
    }
    uint16_t dims = l->grid[2] * l->block[2] > 1 ? 3 : l->grid[1] * l->block[1] > 1 ? 2 : 1;
    memcpy(b->implicit_args + 64, &dims, 2);                   /* hidden_grid_dims */
    uint16_t setup = dims;
    memcpy(b->dispatch_packet + 2, &setup, 2);
    uint32_t group_segment = (uint32_t)l->shared_bytes;
    memcpy(b->dispatch_packet + 28, &group_segment, 4);
}

/* Runs cluster `unit` of launch `l` (a single block without clusters): its blocks' threads as one plain
 * loop per block when the kernel never waits for other threads, else as fibers of one scheduler. */
static void run_block(struct worker *w, const struct launch *l, uint64_t unit) {
    static _Thread_local struct block blocks[MAX_CLUSTER_BLOCKS];  /* the same across a longjmp from a trap */
    static _Thread_local struct cluster_barrier barrier;
    unsigned size = l->cluster_size, n = l->threads_per_block, warp_size = l->warp_size;
    uint32_t clusters_x = l->grid[0] / l->cluster[0], clusters_y = l->grid[1] / l->cluster[1];
    uint32_t cluster_id[3] = {(uint32_t)(unit % clusters_x), (uint32_t)(unit / clusters_x % clusters_y),
                              (uint32_t)(unit / clusters_x / clusters_y)};
    cluster_barrier_init(&barrier, size * n);
    for (unsigned r = 0; r < size; ++r) {
        struct block *b = &blocks[r];
        b->launch = l;
        b->cluster_position[0] = r % l->cluster[0];
        b->cluster_position[1] = r / l->cluster[0] % l->cluster[1];
        b->cluster_position[2] = r / l->cluster[0] / l->cluster[1];
        for (unsigned d = 0; d < 3; ++d) b->ctaid[d] = cluster_id[d] * l->cluster[d] + b->cluster_position[d];
        b->shared = shared_segment(w, l, r);
        b->threads = NULL;
        b->warps = NULL;
        b->arrived = 0;
        b->cluster_blocks = blocks;
        b->cluster_rank = r;
        b->cluster_barrier = &barrier;
#ifdef EMU_SANITIZE
        san_block_started(b);
#endif
        if (l->kernel->flags & FLAG_AMDGPU) fill_hip_arguments(b, l);
    }
    if (!(l->kernel->flags & FLAG_NEEDS_CONTEXTS)) {
        static _Thread_local struct emu_thread t;  /* static: the same across a longjmp from a trap */
        static _Thread_local unsigned r;
        for (r = 0; r < size; ++r) {
            current_block = &blocks[r];
            memset(&t, 0, sizeof t);
            current = &t;
            if (_setjmp(blocks[r].escape)) t.linear++;  /* a thread trapped: the block goes on with the next */
            for (; t.linear < n; t.linear++) {
                unsigned linear = t.linear;
                t.tid[0] = linear % l->block[0];
                t.tid[1] = linear / l->block[0] % l->block[1];
                t.tid[2] = linear / l->block[0] / l->block[1];
                t.lane = linear % warp_size, t.warp = linear / warp_size;
                l->kernel->entry(l->args);
            }
        }
        current = NULL;
        current_block = NULL;
        return;
    }
    unsigned warps = (n + warp_size - 1) / warp_size;
    size_t each = FIBER_STACK + page_size;
    for (unsigned r = 0; r < size; ++r) {
        struct block *b = &blocks[r];
        b->threads = w->threads + (size_t)r * n;
        b->warps = w->warps + (size_t)r * warps;
        b->live = n;
        for (unsigned i = 0; i < warps; ++i) {
            b->warps[i].first = i * warp_size;
            b->warps[i].count = n - i * warp_size < warp_size ? n - i * warp_size : warp_size;
        }
        for (unsigned i = 0; i < n; ++i) {
            struct emu_thread *t = &b->threads[i];
            memset(t, 0, sizeof *t);
            t->tid[0] = i % l->block[0];
            t->tid[1] = i / l->block[0] % l->block[1];
            t->tid[2] = i / l->block[0] / l->block[1];
            t->linear = i, t->lane = i % warp_size, t->warp = i / warp_size;
            t->state = RUNNABLE;
            t->sp = fiber_stack_init(w->stacks + ((size_t)r * n + i + 1) * each);
        }
    }
    unsigned exited = 0, total = size * n;
    while (exited < total) {
        int progressed = 0;
        exited = 0;
        for (unsigned r = 0; r < size; ++r)
            for (unsigned i = 0; i < n; ++i) {
                struct emu_thread *t = &blocks[r].threads[i];
                if (t->state == AT_WAIT && t->wait_over(t)) t->state = RUNNABLE;
                if (t->state == RUNNABLE) {
                    current_block = &blocks[r];
                    current = t;
                    emu_switch(&blocks[r].scheduler_sp, t->sp);
                    if (!t->polling) progressed = 1;
                }
                if (t->state == EXITED) exited++;
            }
        if (progressed || exited == total) continue;
        if (atomic_load(&device_trapped)) break;  /* the launch was trapped */
        if (deliver_bulk_transactions()) continue;  /* the asynchronous copies' bytes land (hopper.h) */
        int completed = 0;
        for (unsigned r = 0; r < size; ++r) completed |= complete_waiting_collectives(&blocks[r]);
        if (completed) continue;
        for (unsigned r = 0; r < size; ++r)
            for (unsigned i = 0; i < n; ++i) {
                const struct emu_thread *t = &blocks[r].threads[i];
                if (t->state == RUNNABLE && t->polling) report_mbarrier_deadlock(t, &blocks[r]);
                if (t->state != AT_WAIT) continue;
                if (t->wait_over == mbar_wait_over) report_mbarrier_deadlock(t, &blocks[r]);
                if (t->wait_over == wgmma_wait_over) report_wgmma_deadlock(t, &blocks[r]);
                report_cluster_deadlock(t, &blocks[r]);
            }
        for (unsigned r = 0; r < size; ++r) {
            unsigned at_barrier = 0, at_warp = 0;
            const struct emu_thread *one = NULL;
            for (unsigned i = 0; i < n; ++i) {
                if (blocks[r].threads[i].state == AT_BARRIER) at_barrier++;
                if (blocks[r].threads[i].state == AT_WARP) { at_warp++; one = &blocks[r].threads[i]; }
            }
            if (!at_barrier && !at_warp) continue;
            current_block = &blocks[r];
            char at[256];
            where(at, sizeof at, one);
            fail("deadlock in %s: %u thread(s) of the block wait at a barrier while %u wait at a warp operation",
                 at, at_barrier, at_warp);
        }
    }
    drop_bulk_transactions();  /* copies into blocks that have ended */
    current = NULL;
    current_block = NULL;
}

/* The pool's workers help with any launch that has blocks left; each launch also has its executor (the
 * stream's thread), so launches on different streams always progress, as on a GPU with one SM each. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    struct launch *active;  /* launches with blocks not yet taken, oldest first */
    unsigned count;
    int started;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static _Thread_local struct worker *this_worker;

static void install_signal_stack(struct worker *w) {
    size_t size = 64 * 1024;
    w->signal_stack = malloc(size);
    stack_t ss = {.ss_sp = w->signal_stack, .ss_size = size, .ss_flags = 0};
    sigaltstack(&ss, NULL);
}

static void work_on(struct launch *l) {
    struct worker *w = this_worker;
    worker_prepare(w, l);
    for (;;) {
        uint64_t index = atomic_fetch_add(&l->next_block, 1);
        if (index >= l->unit_count || atomic_load(&device_trapped)) break;  /* a trap ends the launch */
        run_block(w, l, index);
    }
}

static void unlist_launch(struct launch *l) {  /* under pool.lock */
    if (!l->listed) return;
    for (struct launch **link = &pool.active; *link; link = &(*link)->next_active)
        if (*link == l) {
            *link = l->next_active;
            break;
        }
    l->listed = 0;
}

static void *worker_main(void *unused) {
    (void)unused;
    struct worker *w = calloc(1, sizeof *w);
    this_worker = w;
    install_signal_stack(w);
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (!pool.active) pthread_cond_wait(&pool.wake, &pool.lock);
        struct launch *l = pool.active;
        l->helpers++;
        pthread_mutex_unlock(&pool.lock);
        work_on(l);
        pthread_mutex_lock(&pool.lock);
        unlist_launch(l);  /* no block left to take */
        if (--l->helpers == 0) pthread_cond_broadcast(&pool.done);
    }
    return NULL;
}

static unsigned worker_count(void) {
#ifdef EMU_SANITIZE
    return 1;  /* the blocks of a launch in order: the same report every run */
#endif
    const char *text = getenv("MLIR_OFFLOAD_EMULATE_THREADS");
    long n = text ? strtol(text, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

/* A detached thread with a stack big enough for kernels that run as a plain loop, leaving Ctrl-C and the
 * like to the program's main thread. */
static int start_thread(void *(*main)(void *), void *argument) {
    sigset_t asynchronous, old;
    sigemptyset(&asynchronous);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE, SIGWINCH};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; ++i) sigaddset(&asynchronous, signals[i]);
    pthread_sigmask(SIG_BLOCK, &asynchronous, &old);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&thread, &attr, main, argument) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* Runs launch `l` on the calling thread (a stream's executor) with the pool's help; returns when all its
 * blocks are done. */
static void run_launch(struct launch *l) {
    if (!this_worker) {
        this_worker = calloc(1, sizeof *this_worker);
        if (!this_worker) fail("out of memory");
        install_signal_stack(this_worker);
    }
    pthread_mutex_lock(&pool.lock);
    if (!pool.started) {
        pool.started = 1;
        pool.count = worker_count() - 1;  /* the executor works too */
        for (unsigned i = 0; i < pool.count; ++i) start_thread(worker_main, NULL);
    }
    atomic_store(&l->next_block, 0);
#ifdef EMU_SANITIZE
    san_launch_started(l);
#endif
    l->helpers = 0;
    l->listed = 0;
    if (l->unit_count > 1 && pool.count) {
        struct launch **link = &pool.active;
        while (*link) link = &(*link)->next_active;
        l->next_active = NULL;
        *link = l;
        l->listed = 1;
        pthread_cond_broadcast(&pool.wake);
    }
    pthread_mutex_unlock(&pool.lock);
    work_on(l);
    pthread_mutex_lock(&pool.lock);
    unlist_launch(l);
    while (l->helpers) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}

/* ---- device memory ----------------------------------------------------------------------------------- */

enum { ALLOCATION_ALIGN = 16 };

struct allocation {
    char *start;
    size_t size;
    char *map;  /* NULL: host memory the program registered (cudaHostRegister) */
    size_t map_size;
    struct allocation *next;
#ifdef EMU_SANITIZE
    unsigned serial;          /* its number, in allocation order (reports name it) */
    int freed;                /* quarantined: stays mapped (inaccessible) and listed */
    unsigned char *written;   /* initcheck: a bit per byte; NULL: host-visible memory, taken as written */
    struct san_word *race;    /* racecheck: a record per 4 bytes */
    const struct san_site *allocated_at, *freed_at;  /* the host ops' MLIR locations, where known */
#endif
};
static struct allocation *allocations;
static pthread_mutex_t allocations_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef EMU_SANITIZE
static void san_allocated(struct allocation *a, int host_visible);
static int san_free(void *p);
static int san_copy(void *destination, const void *source, size_t bytes);
static int san_set(void *destination, size_t bytes);
#endif

static void init_page_size(void) {
    if (!page_size) page_size = (size_t)sysconf(_SC_PAGESIZE);
}

/* host_visible: managed or pinned memory, which the host writes directly (the sanitizer's initcheck takes
 * it as written). */
static int allocate(void **out, size_t size, int host_visible) {
    init_page_size();
    if (!out) return status(ERROR_INVALID_VALUE);
    struct allocation *a = malloc(sizeof *a);
    if (!a) return status(ERROR_MEMORY_ALLOCATION);
    size_t padded = round_up(size ? size : 1, ALLOCATION_ALIGN);
    char *end = map_with_guard(padded, &a->map, &a->map_size);
    if (!end) {
        free(a);
        return status(ERROR_MEMORY_ALLOCATION);
    }
    a->start = end - padded;
    a->size = size;
#ifdef EMU_SANITIZE
    san_allocated(a, host_visible);
#else
    (void)host_visible;
#endif
    pthread_mutex_lock(&allocations_lock);
    a->next = allocations;
    allocations = a;
    pthread_mutex_unlock(&allocations_lock);
    *out = a->start;
    return SUCCESS;
}

static int device_alloc(void **out, size_t size) { return allocate(out, size, 0); }
static int host_visible_alloc(void **out, size_t size) { return allocate(out, size, 1); }

static void device_synchronize(void);

/* Frees wait for the device first, as cudaFree and hipFree do: queued work may still use the memory. */
static int device_free(void *p) {
    if (!p) return SUCCESS;
    device_synchronize();
#ifdef EMU_SANITIZE
    return san_free(p);
#endif
    pthread_mutex_lock(&allocations_lock);
    for (struct allocation **link = &allocations; *link; link = &(*link)->next)
        if ((*link)->start == p && (*link)->map) {
            struct allocation *a = *link;
            *link = a->next;
            pthread_mutex_unlock(&allocations_lock);
            munmap(a->map, a->map_size);
            free(a);
            return SUCCESS;
        }
    pthread_mutex_unlock(&allocations_lock);
    return status(ERROR_INVALID_DEVICE_POINTER);
}

static int host_register(void *p, size_t size) {
    if (!p || !size) return status(ERROR_INVALID_VALUE);
    struct allocation *a = calloc(1, sizeof *a);
    if (!a) return status(ERROR_MEMORY_ALLOCATION);
    a->start = p;
    a->size = size;
#ifdef EMU_SANITIZE
    san_allocated(a, 1);
#endif
    pthread_mutex_lock(&allocations_lock);
    a->next = allocations;
    allocations = a;
    pthread_mutex_unlock(&allocations_lock);
    return SUCCESS;
}

static int host_unregister(void *p) {
#ifdef EMU_SANITIZE
    return SUCCESS;  /* stays listed: the sanitizer's lookups never meet a freed record */
#endif
    pthread_mutex_lock(&allocations_lock);
    for (struct allocation **link = &allocations; *link; link = &(*link)->next)
        if ((*link)->start == p && !(*link)->map) {
            struct allocation *a = *link;
            *link = a->next;
            pthread_mutex_unlock(&allocations_lock);
            free(a);
            return SUCCESS;
        }
    pthread_mutex_unlock(&allocations_lock);
    return status(ERROR_INVALID_VALUE);
}

/* Memory the runtime knows (device, managed, pinned or registered host memory): copies between such
 * memory are queued; a copy from or to the program's other (pageable) host memory is done by the call. */
static int known_memory(const void *p, size_t size) {
    const char *c = p;
    int known = 0;
    pthread_mutex_lock(&allocations_lock);
    for (struct allocation *a = allocations; a && !known; a = a->next)
        known = c >= a->start && size <= a->size && (size_t)(c - a->start) <= a->size - size;
    pthread_mutex_unlock(&allocations_lock);
    return known;
}

/* ---- faults: out-of-bounds accesses reported with the GPU thread -------------------------------------- */

static void describe_fault(char *out, size_t size, const char *address) {
    for (struct allocation *a = allocations; a; a = a->next)
        if (a->map && address >= a->map && address < a->map + a->map_size) {
            if (address >= a->start)
                snprintf(out, size, "address %p is %zu bytes past the end of a %zu-byte device buffer at %p", (void *)address,
                         (size_t)(address - a->start) - a->size, a->size, (void *)a->start);
            else
                snprintf(out, size, "address %p is %zu bytes before a %zu-byte device buffer at %p", (void *)address,
                         (size_t)(a->start - address), a->size, (void *)a->start);
            return;
        }
    struct worker *w = this_worker;
    if (w && w->shared_map && address >= w->shared_map && address < w->shared_map + w->shared_map_size && current_block) {
        uint64_t bytes = current_block->launch->shared_bytes;
        const char *segment = current_block->shared;
        if (address >= segment)
            snprintf(out, size, "workgroup (shared) memory offset %zu is past the end of the block's %" PRIu64 " bytes",
                     (size_t)(address - segment), bytes);
        else
            snprintf(out, size, "workgroup (shared) memory offset -%zu is before the block's %" PRIu64 " bytes",
                     (size_t)(segment - address), bytes);
        return;
    }
    if (w && w->stacks && address >= w->stacks && address < w->stacks + (size_t)w->stack_count * (FIBER_STACK + page_size)) {
        snprintf(out, size, "the thread's stack overflowed (%d KiB per GPU thread)", FIBER_STACK / 1024);
        return;
    }
    snprintf(out, size, "invalid address %p", (void *)address);
}

static void on_fault(int signal, siginfo_t *info, void *context) {
    (void)context;
    if (!current_block) {  /* not in a kernel: the program's own crash */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(signal, &dfl, NULL);
        return;  /* the faulting instruction runs again and kills the process as it would have */
    }
    char what[256], at[256];
    describe_fault(what, sizeof what, (const char *)info->si_addr);
    where(at, sizeof at, current);
    fail("out-of-bounds access in %s: %s", at, what);
}

__attribute__((constructor)) static void runtime_loaded(void) {
    init_page_size();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* ---- streams and events ----------------------------------------------------------------------------
 *
 * A stream is a queue of operations; while it holds any, an executor thread (from a pool of idle ones)
 * runs them in order and leaves when the queue is empty. Ordering between streams is by dependencies an
 * operation carries, each "stream S has completed N operations" or "event E has completed record N":
 * an operation on the legacy default stream depends on every blocking stream's queued work, and one on
 * a blocking stream on the legacy stream's queued work (CUDA's and HIP's legacy stream rule); a stream
 * wait for an event is an empty operation depending on the event's last record. Every dependency points
 * at work queued earlier, so there are no cycles. One lock guards all of it. */

enum { STREAM_NON_BLOCKING = 1 };
#define STREAM_LEGACY_HANDLE ((void *)1)      /* cudaStreamLegacy */
#define STREAM_PER_THREAD_HANDLE ((void *)2)  /* cudaStreamPerThread, hipStreamPerThread */

struct stream;
struct event;

struct dependency {
    struct stream *stream;  /* or */
    struct event *event;
    uint64_t target;        /* operations completed, or the record number */
};

enum operation_kind { OPERATION_LAUNCH, OPERATION_COPY, OPERATION_SET, OPERATION_RECORD, OPERATION_NOTHING };

struct operation {
    struct operation *next;
    enum operation_kind kind;
    struct dependency *dependencies;
    unsigned dependency_count, dependency_capacity;
    struct launch launch;  /* LAUNCH: its arguments in `arguments` */
    void *arguments;
    void *destination;     /* COPY, SET */
    const void *source;
    size_t bytes;
    int value;
    struct event *event;   /* RECORD */
    uint64_t record;
};

struct executor {
    pthread_cond_t wake;
    struct stream *stream;
    struct executor *next_idle;
};

struct stream {
    unsigned flags;
    int legacy, destroyed;
    unsigned references;       /* dependencies on it that queued or waiting operations hold */
    uint64_t issued, completed;
    struct operation *head, *tail;
    struct executor *executor;
    struct stream *next;       /* all streams */
};

struct event {
    uint64_t recorded, completed;  /* records issued and the latest one done */
    uint64_t time;                 /* when the latest record was done */
    int destroyed;
    unsigned references;
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_progress = PTHREAD_COND_INITIALIZER;  /* an operation completed */
static struct stream legacy_stream = {.legacy = 1};
static struct stream per_thread_stream;
static int per_thread_stream_listed;
static struct stream *streams = &legacy_stream;
static struct executor *idle_executors;

static struct stream *stream_of(void *handle) {  /* under queue_lock */
    if (!handle || handle == STREAM_LEGACY_HANDLE) return &legacy_stream;
    if (handle == STREAM_PER_THREAD_HANDLE) {
        if (!per_thread_stream_listed) {
            per_thread_stream_listed = 1;
            per_thread_stream.next = streams;
            streams = &per_thread_stream;
        }
        return &per_thread_stream;
    }
    return handle;
}

static int is_builtin_stream(const struct stream *s) { return s == &legacy_stream || s == &per_thread_stream; }

static void maybe_free_stream(struct stream *s) {  /* under queue_lock */
    if (!s->destroyed || s->head || s->executor || s->references || is_builtin_stream(s)) return;
    for (struct stream **link = &streams; *link; link = &(*link)->next)
        if (*link == s) {
            *link = s->next;
            break;
        }
    free(s);
}

static void maybe_free_event(struct event *e) {  /* under queue_lock */
    if (e->destroyed && !e->references) free(e);
}

static struct operation *new_operation(enum operation_kind kind) {
    struct operation *op = calloc(1, sizeof *op);
    if (!op) fail("out of memory for a queued operation");
    op->kind = kind;
    return op;
}

static void add_dependency(struct operation *op, struct stream *s, struct event *e, uint64_t target) {
    if (op->dependency_count == op->dependency_capacity) {
        op->dependency_capacity = op->dependency_capacity ? 2 * op->dependency_capacity : 4;
        op->dependencies = realloc(op->dependencies, op->dependency_capacity * sizeof *op->dependencies);
        if (!op->dependencies) fail("out of memory for a queued operation");
    }
    op->dependencies[op->dependency_count++] = (struct dependency){s, e, target};
    if (s) s->references++;
    if (e) e->references++;
}

static int satisfied(const struct operation *op) {  /* under queue_lock */
    for (unsigned i = 0; i < op->dependency_count; ++i) {
        const struct dependency *d = &op->dependencies[i];
        if (d->stream ? d->stream->completed < d->target : d->event->completed < d->target) return 0;
    }
    return 1;
}

static void release_operation(struct operation *op) {  /* under queue_lock */
    for (unsigned i = 0; i < op->dependency_count; ++i) {
        struct dependency *d = &op->dependencies[i];
        if (d->stream) {
            d->stream->references--;
            maybe_free_stream(d->stream);
        } else {
            d->event->references--;
            maybe_free_event(d->event);
        }
    }
    if (op->event) {
        op->event->references--;
        maybe_free_event(op->event);
    }
    free(op->dependencies);
    free(op->arguments);
    free(op);
}

/* The legacy stream's rule: what `op` on `s` must wait for on the other streams. */
static void add_legacy_dependencies(struct operation *op, struct stream *s) {  /* under queue_lock */
    if (s->flags & STREAM_NON_BLOCKING) return;
    if (s->legacy) {
        for (struct stream *other = streams; other; other = other->next)
            if (other != s && !(other->flags & STREAM_NON_BLOCKING) && other->completed < other->issued)
                add_dependency(op, other, NULL, other->issued);
    } else if (legacy_stream.completed < legacy_stream.issued) {
        add_dependency(op, &legacy_stream, NULL, legacy_stream.issued);
    }
}

static void perform(struct operation *op) {
    switch (op->kind) {
    case OPERATION_LAUNCH: run_launch(&op->launch); break;
    case OPERATION_COPY: memmove(op->destination, op->source, op->bytes); break;
    case OPERATION_SET: memset(op->destination, op->value, op->bytes); break;
    case OPERATION_RECORD: case OPERATION_NOTHING: break;
    }
}

static void *executor_main(void *argument) {
    struct executor *x = argument;
    pthread_mutex_lock(&queue_lock);
    for (;;) {
        while (!x->stream) pthread_cond_wait(&x->wake, &queue_lock);
        struct stream *s = x->stream;
        while (s->head) {
            struct operation *op = s->head;
            while (!satisfied(op)) pthread_cond_wait(&queue_progress, &queue_lock);
            pthread_mutex_unlock(&queue_lock);
            if (!atomic_load(&device_trapped)) perform(op);  /* after a trap, queued work is dropped */
            uint64_t now = nanoseconds();
            pthread_mutex_lock(&queue_lock);
            if (op->kind == OPERATION_RECORD && op->record > op->event->completed) {
                op->event->completed = op->record;
                op->event->time = now;
            }
            s->head = op->next;
            if (!s->head) s->tail = NULL;
            s->completed++;
            release_operation(op);
            pthread_cond_broadcast(&queue_progress);
        }
        s->executor = NULL;
        x->stream = NULL;
        maybe_free_stream(s);
        x->next_idle = idle_executors;
        idle_executors = x;
    }
    return NULL;
}

/* Queues `op` on `s`; returns the number of operations `s` will have completed once `op` is done. */
static uint64_t enqueue(struct stream *s, struct operation *op) {  /* under queue_lock */
    add_legacy_dependencies(op, s);
    op->next = NULL;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    s->issued++;
    if (!s->executor) {
        struct executor *x = idle_executors;
        if (x) {
            idle_executors = x->next_idle;
        } else {
            x = calloc(1, sizeof *x);
            if (!x) fail("out of memory for a stream's thread");
            pthread_cond_init(&x->wake, NULL);
            if (!start_thread(executor_main, x)) fail("cannot start a thread for a stream");
        }
        x->stream = s;
        s->executor = x;
        pthread_cond_signal(&x->wake);
    }
    return s->issued;
}

static void wait_until(struct stream *s, uint64_t completed) {  /* under queue_lock */
    while (s->completed < completed) pthread_cond_wait(&queue_progress, &queue_lock);
}

/* Waits, on the calling thread, for what an operation queued on `s` now would wait for. */
static void wait_for_stream(struct stream *s) {  /* under queue_lock */
    wait_until(s, enqueue(s, new_operation(OPERATION_NOTHING)));
}

static int trapped_status(void) { return atomic_load(&device_trapped) ? status(ERROR_ASSERT) : SUCCESS; }

static void device_synchronize(void) {
    pthread_mutex_lock(&queue_lock);
    struct operation *all = new_operation(OPERATION_NOTHING);  /* never queued: its dependencies only */
    for (struct stream *s = streams; s; s = s->next)
        if (s->completed < s->issued) add_dependency(all, s, NULL, s->issued);
    while (!satisfied(all)) pthread_cond_wait(&queue_progress, &queue_lock);
    release_operation(all);
    pthread_mutex_unlock(&queue_lock);
}

static int synchronize_device(void) {
    device_synchronize();
    fflush(stdout);
    return trapped_status();
}

static int stream_create(void **out, unsigned flags) {
    if (!out) return status(ERROR_INVALID_VALUE);
    struct stream *s = calloc(1, sizeof *s);
    if (!s) return status(ERROR_MEMORY_ALLOCATION);
    s->flags = flags & STREAM_NON_BLOCKING;
    pthread_mutex_lock(&queue_lock);
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&queue_lock);
    *out = s;
    return SUCCESS;
}

/* A stream destroyed with work queued finishes that work first (the call does not wait), as on a GPU. */
static int stream_destroy(void *handle) {
    if (!handle || handle == STREAM_LEGACY_HANDLE || handle == STREAM_PER_THREAD_HANDLE)
        return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct stream *s = handle;
    s->destroyed = 1;
    maybe_free_stream(s);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int stream_synchronize(void *handle) {
    pthread_mutex_lock(&queue_lock);
    wait_for_stream(stream_of(handle));
    pthread_mutex_unlock(&queue_lock);
    fflush(stdout);
    return trapped_status();
}

static int stream_query(void *handle) {
    pthread_mutex_lock(&queue_lock);
    struct stream *s = stream_of(handle);
    int done = s->completed == s->issued;
    pthread_mutex_unlock(&queue_lock);
    return done ? trapped_status() : ERROR_NOT_READY;
}

/* Work queued on `handle` from now on waits for the event's latest record (none: nothing to wait for). */
static int stream_wait_event(void *handle, void *event) {
    if (!event) return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct event *e = event;
    if (e->completed < e->recorded) {
        struct operation *op = new_operation(OPERATION_NOTHING);
        add_dependency(op, NULL, e, e->recorded);
        enqueue(stream_of(handle), op);
    }
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int event_create(void **out) {
    if (!out) return status(ERROR_INVALID_VALUE);
    struct event *e = calloc(1, sizeof *e);
    if (!e) return status(ERROR_MEMORY_ALLOCATION);
    *out = e;
    return SUCCESS;
}

static int event_destroy(void *event) {
    if (!event) return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct event *e = event;
    e->destroyed = 1;
    maybe_free_event(e);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int event_record(void *event, void *stream) {
    if (!event) return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct event *e = event;
    struct operation *op = new_operation(OPERATION_RECORD);
    op->event = e;
    op->record = ++e->recorded;
    e->references++;
    enqueue(stream_of(stream), op);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int event_synchronize(void *event) {
    if (!event) return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct event *e = event;
    uint64_t target = e->recorded;
    while (e->completed < target) pthread_cond_wait(&queue_progress, &queue_lock);
    pthread_mutex_unlock(&queue_lock);
    fflush(stdout);
    return trapped_status();
}

static int event_query(void *event) {
    if (!event) return status(ERROR_INVALID_RESOURCE_HANDLE);
    pthread_mutex_lock(&queue_lock);
    struct event *e = event;
    int done = e->completed == e->recorded;
    pthread_mutex_unlock(&queue_lock);
    return done ? SUCCESS : ERROR_NOT_READY;
}

static int event_elapsed(float *ms, void *start, void *end) {
    if (!ms || !start || !end) return status(ERROR_INVALID_VALUE);
    pthread_mutex_lock(&queue_lock);
    struct event *a = start, *b = end;
    int code = !a->recorded || !b->recorded                                           ? ERROR_INVALID_RESOURCE_HANDLE
               : a->completed < a->recorded || b->completed < b->recorded ? ERROR_NOT_READY
                                                                                      : SUCCESS;
    if (code == SUCCESS) *ms = (float)((double)((int64_t)(b->time - a->time)) / 1e6);
    pthread_mutex_unlock(&queue_lock);
    return status(code);
}

/* ---- launches, copies and sets -------------------------------------------------------------------------- */

typedef struct { unsigned x, y, z; } dim3;

/* Queues a launch with its own copy of the arguments (the caller's array lives only until we return). */
static int launch_clusters(const void *handle, dim3 grid, dim3 block, void **args, size_t dynamic_shared,
                           void *stream, dim3 cluster, int explicit_cluster) {
    init_page_size();
    if (atomic_load(&device_trapped)) return status(ERROR_ASSERT);
    struct kernel *k = kernel_of(handle);
    if (!k) return status(ERROR_INVALID_DEVICE_FUNCTION);
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    const struct arch_limits *limit = k->limits;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z) return status(ERROR_INVALID_CONFIGURATION);
    if (threads > limit->threads_per_block)
        return refuse(ERROR_INVALID_CONFIGURATION, "kernel '%s' launched with %" PRIu64 " threads per block; %s allows %u",
                      k->name, threads, limit->arch, limit->threads_per_block);
    const unsigned blocks[3] = {block.x, block.y, block.z}, grids[3] = {grid.x, grid.y, grid.z};
    for (int d = 0; d < 3; ++d) {
        if (blocks[d] > limit->block[d])
            return refuse(ERROR_INVALID_CONFIGURATION, "kernel '%s' launched with blocks of %u threads in %c; %s allows %u",
                          k->name, blocks[d], "xyz"[d], limit->arch, limit->block[d]);
        if (grids[d] > limit->grid[d])
            return refuse(ERROR_INVALID_CONFIGURATION, "kernel '%s' launched with a grid of %u blocks in %c; %s allows %u",
                          k->name, grids[d], "xyz"[d], limit->arch, limit->grid[d]);
        if (limit->grid_items && (uint64_t)grids[d] * blocks[d] > limit->grid_items)
            return refuse(ERROR_INVALID_CONFIGURATION, "kernel '%s' launched with %" PRIu64 " work-items in %c; %s "
                          "allows %" PRIu64, k->name, (uint64_t)grids[d] * blocks[d], "xyz"[d], limit->arch,
                          limit->grid_items);
    }
    if (k->static_shared + dynamic_shared > limit->shared_per_block)
        return refuse(ERROR_INVALID_VALUE, "kernel '%s' launched with %" PRIu64 " bytes of shared memory per block (%"
                      PRIu64 " static, %zu dynamic); %s allows %" PRIu64 " (%" PRIu64 " KiB)", k->name,
                      k->static_shared + dynamic_shared, k->static_shared, dynamic_shared, limit->arch,
                      limit->shared_per_block, limit->shared_per_block / 1024);
    if (dynamic_shared > k->max_dynamic_shared)
        return refuse(ERROR_INVALID_VALUE, "kernel '%s' launched with %zu bytes of dynamic shared memory, above its "
                      "maximum of %" PRIu64 " (cudaFuncSetAttribute's MaxDynamicSharedMemorySize raises it)", k->name,
                      dynamic_shared, k->max_dynamic_shared);
    uint64_t cluster_size = (uint64_t)cluster.x * cluster.y * cluster.z;
    if (!cluster_size || cluster_size > MAX_CLUSTER_BLOCKS || grid.x % cluster.x || grid.y % cluster.y ||
        grid.z % cluster.z)
        return status(ERROR_INVALID_CONFIGURATION);
    if (k->parameter_count && !args) return status(ERROR_INVALID_VALUE);
    size_t bytes = round_up(k->parameter_count * sizeof(void *), 16);
    for (unsigned i = 0; i < k->parameter_count; ++i) bytes += round_up(k->parameter_sizes[i], 16);
    struct operation *op = new_operation(OPERATION_LAUNCH);
    char *arguments = NULL;
    if (bytes && posix_memalign((void **)&arguments, 16, bytes) != 0) fail("out of memory for a launch's arguments");
    op->arguments = arguments;
    void **slots = (void **)arguments;
    char *data = arguments + round_up(k->parameter_count * sizeof(void *), 16);
    for (unsigned i = 0; i < k->parameter_count; ++i) {
        memcpy(data, args[i], k->parameter_sizes[i]);
        slots[i] = data;
        data += round_up(k->parameter_sizes[i], 16);
    }
    struct launch *l = &op->launch;
    l->kernel = k;
    l->args = slots;
    l->grid[0] = grid.x, l->grid[1] = grid.y, l->grid[2] = grid.z;
    l->block[0] = block.x, l->block[1] = block.y, l->block[2] = block.z;
    l->shared_bytes = k->static_shared + round_up(dynamic_shared, 16);
    l->warp_size = (k->flags >> WARP_SIZE_SHIFT) & 0xff;
    if (!l->warp_size) l->warp_size = 32;
    l->threads_per_block = (unsigned)threads;
    l->block_count = (uint64_t)grid.x * grid.y * grid.z;
    l->cluster[0] = cluster.x, l->cluster[1] = cluster.y, l->cluster[2] = cluster.z;
    l->cluster_size = (unsigned)cluster_size;
    l->explicit_cluster = explicit_cluster;
    l->unit_count = l->block_count / cluster_size;
    fflush(stdout);  /* the host's output so far comes before the kernels' */
    pthread_mutex_lock(&queue_lock);
    enqueue(stream_of(stream), op);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int launch(const void *handle, dim3 grid, dim3 block, void **args, size_t dynamic_shared, void *stream) {
    return launch_clusters(handle, grid, block, args, dynamic_shared, stream, (dim3){1, 1, 1}, 0);
}

/* A copy between memory the runtime knows is queued; one that involves the program's pageable host
 * memory waits for the stream's earlier work and is done by the call (the source is read, the
 * destination written, before it returns), one of the behaviours CUDA and HIP document for pageable
 * memory. A synchronous copy is the same on the legacy stream, always done by the call. */
static int copy(void *destination, const void *source, size_t bytes, void *stream, int synchronous) {
    if (atomic_load(&device_trapped)) return status(ERROR_ASSERT);
    if (!bytes) return SUCCESS;
    if (!destination || !source) return status(ERROR_INVALID_VALUE);
#ifdef EMU_SANITIZE
    if (!san_copy(destination, source, bytes)) return SUCCESS;  /* reported (--sanitize-keep-going): not done */
#endif
    pthread_mutex_lock(&queue_lock);
    struct stream *s = stream_of(stream);
    if (synchronous || !known_memory(destination, bytes) || !known_memory(source, bytes)) {
        wait_for_stream(s);
        pthread_mutex_unlock(&queue_lock);
        memmove(destination, source, bytes);
        return trapped_status();
    }
    struct operation *op = new_operation(OPERATION_COPY);
    op->destination = destination, op->source = source, op->bytes = bytes;
    enqueue(s, op);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int set(void *destination, int value, size_t bytes, void *stream, int synchronous) {
    if (atomic_load(&device_trapped)) return status(ERROR_ASSERT);
    if (!bytes) return SUCCESS;
    if (!destination) return status(ERROR_INVALID_VALUE);
#ifdef EMU_SANITIZE
    if (!san_set(destination, bytes)) return SUCCESS;
#endif
    pthread_mutex_lock(&queue_lock);
    struct stream *s = stream_of(stream);
    if (synchronous) {
        wait_for_stream(s);
        pthread_mutex_unlock(&queue_lock);
        memset(destination, value, bytes);
        return trapped_status();
    }
    struct operation *op = new_operation(OPERATION_SET);
    op->destination = destination, op->value = value, op->bytes = bytes;
    enqueue(s, op);
    pthread_mutex_unlock(&queue_lock);
    return SUCCESS;
}

static int set_attribute(const void *handle, int attribute, int value) {
    struct kernel *k = kernel_of(handle);
    if (!k) return status(ERROR_INVALID_DEVICE_FUNCTION);
    if (attribute == 8 /* MaxDynamicSharedMemorySize */) {
        if (value < 0) return status(ERROR_INVALID_VALUE);
        if ((uint64_t)value + k->static_shared > k->limits->shared_per_block)
            return refuse(ERROR_INVALID_VALUE, "kernel '%s' asks for %d bytes of dynamic shared memory (%" PRIu64
                          " static besides); %s allows %" PRIu64 " (%" PRIu64 " KiB) per block", k->name, value,
                          k->static_shared, k->limits->arch, k->limits->shared_per_block,
                          k->limits->shared_per_block / 1024);
        k->max_dynamic_shared = (uint64_t)value;
    }
    return SUCCESS;
}

/* ---- the API, once per vendor prefix -------------------------------------------------------------------- */

#define API_SET(P)                                                                                                   \
    EXPORT int P##Malloc(void **p, size_t n) { return device_alloc(p, n); }                                          \
    EXPORT int P##MallocManaged(void **p, size_t n, unsigned f) { (void)f; return host_visible_alloc(p, n); }        \
    EXPORT int P##Free(void *p) { return device_free(p); }                                                           \
    EXPORT int P##Memcpy(void *d, const void *s, size_t n, int k) { (void)k; return copy(d, s, n, NULL, 1); }        \
    EXPORT int P##MemcpyAsync(void *d, const void *s, size_t n, int k, void *st) { (void)k; return copy(d, s, n, st, 0); } \
    EXPORT int P##Memset(void *d, int v, size_t n) { return set(d, v, n, NULL, 1); }                                 \
    EXPORT int P##MemsetAsync(void *d, int v, size_t n, void *st) { return set(d, v, n, st, 0); }                    \
    EXPORT int P##StreamCreate(void **s) { return stream_create(s, 0); }                                             \
    EXPORT int P##StreamCreateWithFlags(void **s, unsigned f) { return stream_create(s, f); }                        \
    EXPORT int P##StreamDestroy(void *s) { return stream_destroy(s); }                                               \
    EXPORT int P##StreamSynchronize(void *s) { return stream_synchronize(s); }                                       \
    EXPORT int P##StreamQuery(void *s) { return stream_query(s); }                                                   \
    EXPORT int P##StreamWaitEvent(void *s, void *e, unsigned f) { (void)f; return stream_wait_event(s, e); }         \
    EXPORT int P##EventCreate(void **e) { return event_create(e); }                                                  \
    EXPORT int P##EventCreateWithFlags(void **e, unsigned f) { (void)f; return event_create(e); }                    \
    EXPORT int P##EventDestroy(void *e) { return event_destroy(e); }                                                 \
    EXPORT int P##EventRecord(void *e, void *s) { return event_record(e, s); }                                       \
    EXPORT int P##EventSynchronize(void *e) { return event_synchronize(e); }                                         \
    EXPORT int P##EventQuery(void *e) { return event_query(e); }                                                     \
    EXPORT int P##EventElapsedTime(float *ms, void *a, void *b) { return event_elapsed(ms, a, b); }                  \
    EXPORT int P##HostRegister(void *p, size_t n, unsigned f) { (void)f; return host_register(p, n); }               \
    EXPORT int P##HostUnregister(void *p) { return host_unregister(p); }                                             \
    EXPORT int P##HostGetDevicePointer(void **d, void *h, unsigned f) { (void)f; if (!d) return status(ERROR_INVALID_VALUE); *d = h; return SUCCESS; } \
    EXPORT int P##MallocHost(void **p, size_t n) { return host_visible_alloc(p, n); }                                \
    EXPORT int P##HostAlloc(void **p, size_t n, unsigned f) { (void)f; return host_visible_alloc(p, n); }            \
    EXPORT int P##FreeHost(void *p) { return device_free(p); }                                                       \
    EXPORT int P##SetDevice(int d) { return d == 0 ? SUCCESS : status(ERROR_INVALID_DEVICE); }                       \
    EXPORT int P##GetDevice(int *d) { if (d) *d = 0; return SUCCESS; }                                               \
    EXPORT int P##GetDeviceCount(int *n) { if (n) *n = 1; return SUCCESS; }                                          \
    EXPORT int P##DeviceSynchronize(void) { return synchronize_device(); }                                           \
    EXPORT int P##DeviceReset(void) { return synchronize_device(); }                                                 \
    EXPORT int P##GetLastError(void) { int e = last_error; last_error = 0; return e; }                               \
    EXPORT int P##PeekAtLastError(void) { return last_error; }                                                       \
    EXPORT const char *P##GetErrorString(int e) { return error_text(e); }                                            \
    EXPORT const char *P##GetErrorName(int e) { return error_name(e); }                                              \
    EXPORT int P##FuncSetAttribute(const void *f, int a, int v) { return set_attribute(f, a, v); }                   \
    EXPORT int P##LaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared, void *st) {                \
        return launch(f, g, b, args, shared, st); }

API_SET(cuda)
API_SET(hip)

/* cudaLaunchKernelExC: the config by pointer; a cluster-dimension attribute (cluster.h) makes the blocks
 * of each cluster run together. cudaLaunchAttribute: {id, 4 bytes of padding, a 64-byte value}. */
enum { LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

typedef struct {
    dim3 grid, block;
    size_t shared;
    void *stream;
    void *attributes;
    unsigned attribute_count;
} launch_config;

EXPORT int cudaLaunchKernelExC(const launch_config *config, const void *f, void **args) {
    if (!config || (config->attribute_count && !config->attributes)) return status(ERROR_INVALID_VALUE);
    dim3 cluster = {1, 1, 1};
    int explicit_cluster = 0;
    for (unsigned i = 0; i < config->attribute_count; ++i) {
        const char *attribute = (const char *)config->attributes + 72 * (size_t)i;
        int id;
        memcpy(&id, attribute, sizeof id);
        if (id == LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            memcpy(&cluster, attribute + 8, sizeof cluster);
            explicit_cluster = 1;
        }
    }
    return launch_clusters(f, config->grid, config->block, args, config->shared, config->stream, cluster,
                           explicit_cluster);
}

/* ---- CUDA C++ and HIP objects of clang's offload driver: `kernel<<<grid, block, shared, stream>>>(...)` ----
 * The call site pushes its configuration, then calls the kernel's stub (__device_stub__NAME), which pops it
 * and calls cudaLaunchKernel/hipLaunchKernel with the stub (or HIP's handle) as the kernel: the offload
 * entries name the kernel for kernel_of, as for a bundle's stubs. Per host thread, nested as the calls are. */
#define CALL_CONFIGURATION_DEPTH 64
struct call_configuration { dim3 grid, block; size_t shared; void *stream; };
static _Thread_local struct call_configuration call_configurations[CALL_CONFIGURATION_DEPTH];
static _Thread_local unsigned call_configuration_depth;

static int push_call_configuration(dim3 grid, dim3 block, size_t shared, void *stream) {
    if (call_configuration_depth == CALL_CONFIGURATION_DEPTH) return status(ERROR_INVALID_VALUE);
    call_configurations[call_configuration_depth++] = (struct call_configuration){grid, block, shared, stream};
    return SUCCESS;
}

static int pop_call_configuration(dim3 *grid, dim3 *block, size_t *shared, void **stream) {
    if (call_configuration_depth == 0) return status(ERROR_INVALID_VALUE);
    struct call_configuration *c = &call_configurations[--call_configuration_depth];
    if (grid) *grid = c->grid;
    if (block) *block = c->block;
    if (shared) *shared = c->shared;
    if (stream) *stream = c->stream;
    return SUCCESS;
}

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream) {
    return (unsigned)push_call_configuration(grid, block, shared, stream);
}
EXPORT int __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void **stream) {
    return pop_call_configuration(grid, block, shared, stream);
}
EXPORT int __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream) {
    return push_call_configuration(grid, block, shared, stream);
}
EXPORT int __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void **stream) {
    return pop_call_configuration(grid, block, shared, stream);
}

EXPORT int cudaGetDriverEntryPointByVersion(const char *symbol, void **function, unsigned version, uint64_t flags,
                                            int *found) {
    (void)version; (void)flags;
    void *entry = driver_entry_point(symbol);
    if (function) *function = entry;
    if (found) *found = entry ? 0 : 1;  /* cudaDriverEntryPointSuccess, cudaDriverEntryPointSymbolNotFound */
    return entry ? SUCCESS : status(ERROR_NOT_SUPPORTED);
}

#include "device_printf.h"
#include "device_math.h"

/* ---- AMD buffer resources (llvm.amdgcn.make.buffer.rsrc, raw.ptr.buffer.*) -------------------------- */

/* A resource is a struct buffer_resource (emu_abi.h). */

/* The hardware checks a raw buffer access against num_records per dword (an access of 1 or 2 bytes as a
 * whole): a dword is in range when voffset + its offset + its size <= num_records. soffset is not part
 * of the check, only of the address (base + soffset + voffset). Out-of-range dwords load as 0 and are not
 * stored; an atomic is in range or not as a whole, and does nothing out of range (returning 0). */
static int buffer_in_range(const struct buffer_resource *r, uint32_t voffset, uint32_t at, uint32_t bytes) {
    return !r->checked || (uint64_t)voffset + at + bytes <= r->records;
}

static char *buffer_address(const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t at) {
    return r->base + (uint64_t)soffset + (uint64_t)voffset + at;
}

EXPORT void __emu_buffer_load(const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t bytes,
                              void *out) {
    for (uint32_t at = 0; at < bytes; at += 4) {
        uint32_t n = bytes - at < 4 ? bytes - at : 4;
        if (buffer_in_range(r, voffset, at, n))
            memcpy((char *)out + at, OP_ACCESS(buffer_address(r, voffset, soffset, at), r->base, n, 0), n);
        else memset((char *)out + at, 0, n);
    }
}

EXPORT void __emu_buffer_store(const struct buffer_resource *r, uint32_t voffset, uint32_t soffset, uint32_t bytes,
                               const void *in) {
    for (uint32_t at = 0; at < bytes; at += 4) {
        uint32_t n = bytes - at < 4 ? bytes - at : 4;
        if (buffer_in_range(r, voffset, at, n))
            memcpy(OP_ACCESS(buffer_address(r, voffset, soffset, at), r->base, n, 1), (const char *)in + at, n);
    }
}


/* The new value of one atomic read-modify-write on 4- or 8-byte integers or floats (as bits). */
static uint64_t buffer_atomic_apply(uint32_t op, uint64_t old, uint64_t value, uint32_t bytes, int is_float) {
    int wide = bytes == 8;
    int64_t sold = wide ? (int64_t)old : (int32_t)old, svalue = wide ? (int64_t)value : (int32_t)value;
    uint64_t uold = wide ? old : (uint32_t)old, uvalue = wide ? value : (uint32_t)value;
    if (is_float) {
        double a, b;
        if (wide) memcpy(&a, &old, 8), memcpy(&b, &value, 8);
        else {
            float fa, fb;
            uint32_t ia = (uint32_t)old, ib = (uint32_t)value;
            memcpy(&fa, &ia, 4), memcpy(&fb, &ib, 4);
            a = fa, b = fb;
        }
        double r = op == BA_FADD ? a + b : op == BA_FMIN ? fmin(a, b) : op == BA_FMAX ? fmax(a, b) : b;
        if (wide) { uint64_t bits; memcpy(&bits, &r, 8); return bits; }
        float f = (float)r;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return bits;
    }
    switch (op) {
    case BA_ADD: return uold + uvalue;
    case BA_SUB: return uold - uvalue;
    case BA_SMIN: return (uint64_t)(svalue < sold ? svalue : sold);
    case BA_UMIN: return uvalue < uold ? uvalue : uold;
    case BA_SMAX: return (uint64_t)(svalue > sold ? svalue : sold);
    case BA_UMAX: return uvalue > uold ? uvalue : uold;
    case BA_AND: return uold & uvalue;
    case BA_OR: return uold | uvalue;
    case BA_XOR: return uold ^ uvalue;
    default: return uvalue;  /* swap */
    }
}

/* slots[0]: the operand (and, on return, the old value), slots[1]: cmpswap's compare value. */
EXPORT void __emu_buffer_atomic(uint32_t op, const struct buffer_resource *r, uint32_t voffset, uint32_t soffset,
                                uint32_t bytes, uint32_t is_float, uint64_t *slots) {
    if ((bytes != 4 && bytes != 8) || !buffer_in_range(r, voffset, 0, bytes)) {
        slots[0] = 0;
        return;
    }
    char *address = OP_ACCESS(buffer_address(r, voffset, soffset, 0), r->base, bytes, 3 /* an atomic write */);
    uint64_t mask = bytes == 8 ? ~(uint64_t)0 : 0xffffffffu, value = slots[0] & mask, compare = slots[1] & mask;
    if (bytes == 4) {
        _Atomic uint32_t *p = (_Atomic uint32_t *)address;
        uint32_t old = atomic_load(p);
        for (;;) {
            uint32_t next = op == BA_CMPSWAP ? (old == (uint32_t)compare ? (uint32_t)value : old)
                                             : (uint32_t)buffer_atomic_apply(op, old, value, 4, (int)is_float);
            if (atomic_compare_exchange_weak(p, &old, next)) break;
        }
        slots[0] = old;
    } else {
        _Atomic uint64_t *p = (_Atomic uint64_t *)address;
        uint64_t old = atomic_load(p);
        for (;;) {
            uint64_t next = op == BA_CMPSWAP ? (old == compare ? value : old)
                                             : buffer_atomic_apply(op, old, value, 8, (int)is_float);
            if (atomic_compare_exchange_weak(p, &old, next)) break;
        }
        slots[0] = old;
    }
}

/* ---- AMD WMMA (gfx11, wave32: llvm.amdgcn.wmma.*) ------------------------------------------------------ */


EXPORT void __emu_amd_wmma(uint32_t flags, const void *operands, void *results) {
    (void)matrix_call(COLLECTIVE_AMD_WMMA + (int)flags, operands, results);
}

static double bf16_value(uint16_t bits) {
    uint32_t word = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &word, 4);
    return f;
}

static uint16_t bf16_bits(double v) {  /* round to nearest even, as the hardware's conversion */
    float f = (float)v;
    uint32_t word;
    memcpy(&word, &f, 4);
    if (isnan(f)) return (uint16_t)((word >> 16) | 0x40);
    word += 0x7fffu + ((word >> 16) & 1);
    return (uint16_t)(word >> 16);
}

/* Element k (of 16) of a lane's A row or B column. */
static double amd_wmma_input(unsigned kind, const unsigned char *slots, unsigned k, int is_signed) {
    switch (kind) {
    case AMD_WMMA_F32_F16: case AMD_WMMA_F16_F16: {
        _Float16 h;
        memcpy(&h, slots + 2 * k, 2);
        return (double)h;
    }
    case AMD_WMMA_I32_IU8: return is_signed ? (double)(int8_t)slots[k] : (double)slots[k];
    case AMD_WMMA_I32_IU4: {
        unsigned nibble = (slots[k / 2] >> (4 * (k % 2))) & 15;
        return is_signed && nibble >= 8 ? (double)nibble - 16 : (double)nibble;
    }
    default: {
        uint16_t bits;
        memcpy(&bits, slots + 2 * k, 2);
        return bf16_value(bits);
    }
    }
}

/* gfx11's wave32 fragments (RDNA3 ISA, WMMA): lane l holds row l % 16 of A and column l % 16 of B, K
 * along the vector (lanes 16..31 repeat lanes 0..15; the hardware reads 0..15); element v of C and D
 * (v < 8) is D[2v + l / 16][l % 16], as a 32-bit value, or the low (opsel 0) or high (opsel 1) half of
 * 32-bit word v for 16-bit types, the other half keeping C's bits. The products are summed two at a time
 * into the accumulator, which is rounded to its type after each pair: with 16-bit accumulators this is
 * what the hardware returns (not the exactly rounded sum). Integers: exact, saturated with clamp. */
static void amd_wmma_collective(unsigned flags, struct emu_thread *lanes, unsigned count, lane_set group) {
    unsigned kind = flags & AMD_WMMA_KIND;
    if (count != 32 || (group & 0xffffffffu) != 0xffffffffu) {
        char at[256];
        where(at, sizeof at, &lanes[0]);
        fail("WMMA in %s with %u of 32 lanes: it needs the whole wavefront", at, (unsigned)__builtin_popcountll(group));
    }
    int sixteen_bit = kind == AMD_WMMA_F16_F16 || kind == AMD_WMMA_BF16_BF16;
    unsigned half = (flags & AMD_WMMA_OPSEL) ? 1 : 0;
    double a[16][16], b[16][16];
    for (unsigned l = 0; l < 16; ++l)
        for (unsigned k = 0; k < 16; ++k) {
            a[l][k] = amd_wmma_input(kind, (const unsigned char *)lanes[l].operands + AMD_WMMA_A, k,
                                     (flags & AMD_WMMA_SIGNED_A) != 0);
            b[k][l] = amd_wmma_input(kind, (const unsigned char *)lanes[l].operands + AMD_WMMA_B, k,
                                     (flags & AMD_WMMA_SIGNED_B) != 0);
        }
    for (unsigned l = 0; l < 32; ++l) {
        const unsigned char *c = (const unsigned char *)lanes[l].operands + AMD_WMMA_C;
        unsigned char *d = lanes[l].results;
        memcpy(d, c, 32);
        for (unsigned v = 0; v < 8; ++v) {
            unsigned row = 2 * v + l / 16, col = l % 16;
            if (kind == AMD_WMMA_I32_IU8 || kind == AMD_WMMA_I32_IU4) {
                int32_t c32;
                memcpy(&c32, c + 4 * v, 4);
                int64_t sum = c32;
                for (unsigned k = 0; k < 16; ++k) sum += (int64_t)a[row][k] * (int64_t)b[k][col];
                if (flags & AMD_WMMA_CLAMP) sum = sum > INT32_MAX ? INT32_MAX : sum < INT32_MIN ? INT32_MIN : sum;
                int32_t out = (int32_t)(uint32_t)sum;
                memcpy(d + 4 * v, &out, 4);
                continue;
            }
            size_t at = sixteen_bit ? 4 * v + 2 * half : 4 * v;
            double acc;
            if (kind == AMD_WMMA_F16_F16) {
                _Float16 h;
                memcpy(&h, c + at, 2);
                acc = h;
            } else if (kind == AMD_WMMA_BF16_BF16) {
                uint16_t bits;
                memcpy(&bits, c + at, 2);
                acc = bf16_value(bits);
            } else {
                float f;
                memcpy(&f, c + at, 4);
                acc = f;
            }
            for (unsigned k = 0; k < 16; k += 2) {
                acc += a[row][k] * b[k][col] + a[row][k + 1] * b[k + 1][col];
                if (kind == AMD_WMMA_F16_F16) acc = (double)(_Float16)acc;
                else if (kind == AMD_WMMA_BF16_BF16) acc = bf16_value(bf16_bits(acc));
                else acc = (double)(float)acc;
            }
            if (kind == AMD_WMMA_F16_F16) {
                _Float16 h = (_Float16)acc;
                memcpy(d + at, &h, 2);
            } else if (kind == AMD_WMMA_BF16_BF16) {
                uint16_t bits = bf16_bits(acc);
                memcpy(d + at, &bits, 2);
            } else {
                float f = (float)acc;
                memcpy(d + at, &f, 4);
            }
        }
    }
}

#ifdef EMU_SANITIZE
#include "sanitizer.c"
#endif
