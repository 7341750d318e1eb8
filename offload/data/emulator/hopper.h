/* Hopper (sm_90) units for the emulation runtime, included by runtime.c after its thread and block types:
 * mbarriers (phases, pending arrivals, transaction counts), TMA tensor copies (cp.async.bulk.tensor, tiled,
 * with the tensor map that cuTensorMapEncodeTiled makes: box, strides, element types, out-of-bounds
 * fill, 32/64/128-byte swizzles), following the PTX ISA. Copies are done when issued, so a TMA load
 * completes its transaction bytes on the mbarrier at once; waits switch to the block's other fibers. */

/* ---- mbarrier: a 64-bit object in shared memory, in the emulator's own encoding (the hardware's is
 * opaque): pending arrivals (bits 0..20), expected arrivals (21..41), signed tx-count (42..62), phase
 * parity (63). The PTX ISA bounds both counts by 2^20 - 1 and the tx-count by +-(2^20 - 1). ------------ */

/* MBAR_FIELD (the low 21 bits): emu_abi.h. */
#define MBAR_PHASE (UINT64_C(1) << 63)
enum { MBAR_EXPECTED_SHIFT = 21, MBAR_TX_SHIFT = 42 };

static uint32_t mbar_pending(uint64_t s) { return (uint32_t)(s & MBAR_FIELD); }
static uint32_t mbar_expected(uint64_t s) { return (uint32_t)((s >> MBAR_EXPECTED_SHIFT) & MBAR_FIELD); }
static int32_t mbar_tx(uint64_t s) {
    int32_t raw = (int32_t)((s >> MBAR_TX_SHIFT) & MBAR_FIELD);
    return raw & (1 << 20) ? raw - (1 << 21) : raw;
}
static unsigned mbar_parity(uint64_t s) { return (unsigned)(s >> 63); }
static uint64_t mbar_pack(uint32_t pending, uint32_t expected, int32_t tx, unsigned parity) {
    return (uint64_t)pending | (uint64_t)expected << MBAR_EXPECTED_SHIFT |
           ((uint64_t)(uint32_t)tx & MBAR_FIELD) << MBAR_TX_SHIFT | (parity ? MBAR_PHASE : 0);
}

static struct block *cluster_block_of(const void *p, size_t size);

/* The offset of a shared-memory address in its block's segment (the GPU's shared window): the current
 * block's, or another block's of its cluster (an mbarrier reached through mapa). */
static uint64_t shared_offset_of(const void *p, size_t size, const char *what) {
    const struct block *b = cluster_block_of(p, size);
    const char *c = p;
    if (!b) {
        b = current_block;
        char at[256];
        where(at, sizeof at, current);
        fail("%s in %s: address %p is not in the shared memory of the block or its cluster (%" PRIu64 " bytes "
             "each)", what, at, p, b ? b->launch->shared_bytes : 0);
    }
    return (uint64_t)(c - b->shared);
}

NORETURN static void mbar_fail(const void *p, const char *problem, uint64_t s) {
    char at[256];
    where(at, sizeof at, current);
    fail("mbarrier misuse in %s: the mbarrier at shared offset %" PRIu64 " %s (pending arrivals %u of %u, "
         "tx-count %d)", at, shared_offset_of(p, 8, "mbarrier"), problem, mbar_pending(s), mbar_expected(s),
         mbar_tx(s));
}

/* Apply `arrivals` arrivals and `tx` transaction bytes (expect_tx adds, complete_tx subtracts); the phase
 * completes when both the pending arrivals and the tx-count reach zero (unless `no_complete`). Returns
 * the state before, whose parity is the token of the phase arrived at. */
static uint64_t mbar_update(void *p, uint32_t arrivals, int64_t tx, int no_complete) {
    _Atomic uint64_t *word = p;
    shared_offset_of(p, 8, "mbarrier");
    if ((uintptr_t)p % 8) mbar_fail(p, "is not 8-byte aligned", 0);
    uint64_t old = atomic_load(word), next;
    do {
        uint32_t pending = mbar_pending(old), expected = mbar_expected(old);
        if (expected == 0) mbar_fail(p, "is used before mbarrier.init", old);
        if (arrivals > pending) mbar_fail(p, "receives more arrivals than its phase expects", old);
        int64_t count = (int64_t)mbar_tx(old) + tx;
        if (count > (1 << 20) - 1 || count < -((1 << 20) - 1)) mbar_fail(p, "overflows its tx-count", old);
        pending -= arrivals;
        unsigned parity = mbar_parity(old);
        if (pending == 0 && count == 0 && !no_complete) {
            pending = expected;
            parity ^= 1;
        }
        next = mbar_pack(pending, expected, (int32_t)count, parity);
    } while (!atomic_compare_exchange_weak(word, &old, next));
    return old;
}

EXPORT void __emu_mbarrier_init(void *p, uint32_t count) {
    shared_offset_of(p, 8, "mbarrier.init");
    if (count == 0 || count > MBAR_FIELD) mbar_fail(p, "is initialized with a count outside 1 .. 2^20-1", 0);
    atomic_store((_Atomic uint64_t *)p, mbar_pack(count, count, 0, 0));
    /* The other lanes and warps run their own init (programs often have every thread init) before this
     * thread goes on to arrive, as the warps issuing the same instruction do on the GPU. */
    if (current_block->threads) {
        current->state = RUNNABLE;
        yield_to_scheduler();
    }
}
EXPORT void __emu_mbarrier_inval(void *p) { atomic_store((_Atomic uint64_t *)p, 0); }
EXPORT uint64_t __emu_mbarrier_arrive(void *p, uint32_t count) { return mbar_update(p, count, 0, 0); }
EXPORT uint64_t __emu_mbarrier_arrive_nocomplete(void *p, uint32_t count) { return mbar_update(p, count, 0, 1); }
EXPORT uint64_t __emu_mbarrier_arrive_expect_tx(void *p, uint32_t bytes) { return mbar_update(p, 1, bytes, 0); }
EXPORT void __emu_mbarrier_expect_tx(void *p, uint32_t bytes) { (void)mbar_update(p, 0, bytes, 0); }
EXPORT void __emu_mbarrier_complete_tx(void *p, uint32_t bytes) { (void)mbar_update(p, 0, -(int64_t)bytes, 0); }
EXPORT uint32_t __emu_mbarrier_pending_count(uint64_t state) { return mbar_pending(state); }

/* ---- asynchronous copies' transaction bytes: a bulk or TMA copy moves its data when issued, but its bytes
 * reach the mbarrier (complete_tx) only once no fiber of the cluster can run, as the bytes of a real copy
 * land after the issuing threads went on to arrive. They land one at a time: a phase whose arrivals are
 * all in completes as the tx-count passes zero, and the bytes left count against the next phase (a
 * program that expects fewer bytes than it copies works on the GPU that way). -------------------------- */

struct bulk_transaction { void *mbar; uint64_t bytes; struct emu_thread *by; struct block *in; };
static _Thread_local struct bulk_transaction *bulk_queue;
static _Thread_local size_t bulk_count, bulk_capacity;

static void mbar_land(void *mbar, uint64_t bytes) {
    while (bytes) {
        uint64_t s = atomic_load((_Atomic uint64_t *)mbar), step = bytes;
        if (mbar_pending(s) == 0 && mbar_tx(s) > 0 && (uint64_t)mbar_tx(s) < bytes) step = (uint64_t)mbar_tx(s);
        (void)mbar_update(mbar, 0, -(int64_t)step, 0);
        bytes -= step;
    }
}

static void bulk_complete_tx(void *mbar, uint64_t bytes) {
    shared_offset_of(mbar, 8, "mbarrier");
    if (!current_block->threads) {  /* a plain-loop block runs one thread at a time: nothing to wait for */
        mbar_land(mbar, bytes);
        return;
    }
    if (bulk_count == bulk_capacity) {
        bulk_capacity = bulk_capacity ? 2 * bulk_capacity : 64;
        bulk_queue = realloc(bulk_queue, bulk_capacity * sizeof *bulk_queue);
        if (!bulk_queue) fail("out of memory");
    }
    bulk_queue[bulk_count++] = (struct bulk_transaction){mbar, bytes, current, current_block};
}

/* The scheduler found no fiber to run: the queued bytes land, in issue order. Returns whether any did. */
static int deliver_bulk_transactions(void) {
    if (!bulk_count) return 0;
    for (size_t i = 0; i < bulk_count; ++i) {
        current = bulk_queue[i].by;
        current_block = bulk_queue[i].in;
        mbar_land(bulk_queue[i].mbar, bulk_queue[i].bytes);
    }
    bulk_count = 0;
    return 1;
}

static void drop_bulk_transactions(void) { bulk_count = 0; }

/* Whether the phase of parity `parity` has completed: the mbarrier is in a later phase. */
static int mbar_phase_done(const void *p, unsigned parity) {
    return mbar_parity(atomic_load((_Atomic uint64_t *)p)) != parity;
}

/* The scheduler's question for a fiber waiting on an mbarrier. */
static int mbar_wait_over(const struct emu_thread *t) { return mbar_phase_done(t->wait_on, t->wait_parity); }

/* A fiber that waits for another thread: it runs again when the scheduler finds the phase completed. */
static void mbar_wait(void *p, unsigned parity) {
    if (mbar_phase_done(p, parity)) return;
    struct emu_thread *t = current;
    if (!current_block->threads) {  /* a plain-loop block: nothing else can complete it */
        uint64_t s = atomic_load((_Atomic uint64_t *)p);
        mbar_fail(p, "is waited on by the only thread of its block, and its phase cannot complete", s);
    }
    t->wait_on = p;
    t->wait_parity = parity;
    t->wait_over = mbar_wait_over;
    t->state = AT_WAIT;
    yield_to_scheduler();
}

/* try_wait's answer, true: the emulation waits until the phase completes. */
EXPORT uint32_t __emu_mbarrier_wait_parity(void *p, uint32_t parity) {
    mbar_wait(p, parity & 1);
    return 1;
}
EXPORT uint32_t __emu_mbarrier_wait_token(void *p, uint64_t token) {
    mbar_wait(p, mbar_parity(token));
    return 1;
}
/* The non-blocking tests: false lets the other fibers run first, so a loop around them progresses. */
static uint32_t mbar_test(void *p, unsigned parity) {
    if (mbar_phase_done(p, parity)) return 1;
    if (current_block->threads) {  /* a poll that fails is no progress: a loop that can never end is reported */
        current->state = RUNNABLE;
        current->polling = 1;
        current->wait_on = p;
        current->wait_parity = parity;
        yield_to_scheduler();
        current->polling = 0;
    }
    return mbar_phase_done(p, parity);
}
EXPORT uint32_t __emu_mbarrier_test_wait(void *p, uint64_t token) { return mbar_test(p, mbar_parity(token)); }
EXPORT uint32_t __emu_mbarrier_test_wait_parity(void *p, uint32_t parity) { return mbar_test(p, parity & 1); }


/* No fiber of the cluster can run and `one` (of block `b`) waits on an mbarrier: its phase can never complete. */
NORETURN static void report_mbarrier_deadlock(const struct emu_thread *one, const struct block *b) {
    unsigned waiting = 0;
    for (unsigned r = 0; r < b->launch->cluster_size; ++r)
        for (unsigned i = 0; i < b->launch->threads_per_block; ++i) {
            const struct emu_thread *t = &b->cluster_blocks[r].threads[i];
            if (((t->state == AT_WAIT && t->wait_over == mbar_wait_over) || (t->state == RUNNABLE && t->polling)) &&
                t->wait_on == one->wait_on)
                waiting++;
        }
    current = (struct emu_thread *)one;
    current_block = (struct block *)b;
    char what[160];
    snprintf(what, sizeof what, "is waited on for its phase of parity %u by %u thread(s), which no thread or copy "
             "of the block can complete", one->wait_parity, waiting);
    mbar_fail(one->wait_on, what, atomic_load((_Atomic uint64_t *)one->wait_on));
}

/* ---- tensor maps: cuTensorMapEncodeTiled, in the emulator's own encoding of the 128-byte CUtensorMap ---- */

enum { TMAP_MAX_RANK = 5, TMAP_MAGIC = 0x50414d5426554d45 /* "EMU&TMAP" */ };
enum { TMAP_SWIZZLE_NONE = 0, TMAP_SWIZZLE_32B = 1, TMAP_SWIZZLE_64B = 2, TMAP_SWIZZLE_128B = 3 };
enum { TMAP_OOB_ZERO = 0, TMAP_OOB_NAN = 1 };

struct tensor_map {
    uint64_t magic;
    const char *address;
    uint64_t dims[TMAP_MAX_RANK];
    uint64_t strides[TMAP_MAX_RANK];  /* bytes; strides[0] is the element size */
    uint16_t box[TMAP_MAX_RANK];
    uint8_t element_strides[TMAP_MAX_RANK];
    uint8_t type, rank, element_bytes, swizzle, oob_fill, is_float;
};
_Static_assert(sizeof(struct tensor_map) <= 128, "a CUtensorMap is 128 bytes");

/* CUtensorMapDataType -> element bytes, and whether it is a floating-point type (NaN fill allowed). */
static const struct { uint8_t bytes, is_float; } tmap_types[] = {
    {1, 0}, {2, 0}, {4, 0}, {4, 0}, {8, 0}, {8, 0},   /* UINT8 UINT16 UINT32 INT32 UINT64 INT64 */
    {2, 1}, {4, 1}, {8, 1}, {2, 1}, {4, 1}, {4, 1}, {4, 1},  /* FLOAT16 FLOAT32 FLOAT64 BFLOAT16 FLOAT32_FTZ TF32 TF32_FTZ */
};

/* The checks the driver documents for cuTensorMapEncodeTiled; interleaved layouts are not emulated. */
static int emu_tensor_map_encode_tiled(void *out, unsigned type, unsigned rank, void *address, const uint64_t *dims,
                                       const uint64_t *strides, const uint32_t *box, const uint32_t *element_strides,
                                       unsigned interleave, unsigned swizzle, unsigned l2_promotion, unsigned oob_fill) {
    (void)l2_promotion;
    if (!out || type >= sizeof tmap_types / sizeof *tmap_types || rank < 1 || rank > TMAP_MAX_RANK || !dims ||
        !box || !element_strides || (rank > 1 && !strides) || swizzle > TMAP_SWIZZLE_128B || oob_fill > TMAP_OOB_NAN)
        return ERROR_INVALID_VALUE;
    if (interleave != 0) return ERROR_NOT_SUPPORTED;
    struct tensor_map m = {.magic = TMAP_MAGIC, .address = address, .type = (uint8_t)type, .rank = (uint8_t)rank,
                           .element_bytes = tmap_types[type].bytes, .swizzle = (uint8_t)swizzle,
                           .oob_fill = (uint8_t)oob_fill, .is_float = tmap_types[type].is_float};
    if ((uintptr_t)address % 16 || (oob_fill == TMAP_OOB_NAN && !m.is_float)) return ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < rank; ++i) {
        if (dims[i] == 0 || dims[i] > (UINT64_C(1) << 32) || box[i] == 0 || box[i] > 256 || element_strides[i] == 0 ||
            element_strides[i] > 8)
            return ERROR_INVALID_VALUE;
        m.dims[i] = dims[i];
        m.box[i] = (uint16_t)box[i];
        m.element_strides[i] = (uint8_t)element_strides[i];
        m.strides[i] = i == 0 ? m.element_bytes : strides[i - 1];
        if (i > 0 && (m.strides[i] % 16 || m.strides[i] >= (UINT64_C(1) << 40))) return ERROR_INVALID_VALUE;
    }
    uint64_t inner = (uint64_t)box[0] * m.element_bytes;
    if (inner % 16) return ERROR_INVALID_VALUE;
    if (swizzle != TMAP_SWIZZLE_NONE && inner > (UINT64_C(16) << swizzle)) return ERROR_INVALID_VALUE;
    memset(out, 0, 128);
    memcpy(out, &m, sizeof m);
    return SUCCESS;
}

/* The map as cuTensorMapEncodeTiled wrote it (copied to device memory, which the emulator aligns to 16
 * bytes only, where the GPU's 64 bytes would be required). */
static struct tensor_map tensor_map_at(const void *p) {
    struct tensor_map m;
    if (p) memcpy(&m, p, sizeof m);
    if (!p || (uintptr_t)p % 16 || m.magic != TMAP_MAGIC) {
        char at[256];
        where(at, sizeof at, current);
        fail("TMA in %s: %p is not a tensor map made by cuTensorMapEncodeTiled", at, p);
    }
    return m;
}

/* A shared-memory byte offset after the swizzle: the 16-byte chunk bits 4.. XOR the row bits 7.. (32B: one
 * bit, 64B: two, 128B: three; the pattern repeats every 256, 512, 1024 bytes). */
static uint64_t swizzled(uint64_t offset, unsigned swizzle) {
    if (swizzle == TMAP_SWIZZLE_NONE) return offset;
    uint64_t mask = (UINT64_C(1) << swizzle) - 1;
    return offset ^ (((offset >> 7) & mask) << 4);
}

static void tma_fill(void *element, const struct tensor_map *m) {
    memset(element, 0, m->element_bytes);
    if (m->oob_fill != TMAP_OOB_NAN) return;
    static const uint16_t nan16 = 0x7fff;
    static const uint32_t nan32 = 0x7fffffff;
    static const uint64_t nan64 = UINT64_C(0x7fffffffffffffff);
    memcpy(element, m->element_bytes == 2 ? (const void *)&nan16 : m->element_bytes == 4 ? (const void *)&nan32 : (const void *)&nan64,
           m->element_bytes);
}

/* One tiled copy between global memory and the box at `shared`: every element of the box in order
 * (dimension 0 fastest), global coordinate coords[d] + i[d] * element_strides[d]; out-of-bounds elements
 * load as the fill and are not stored. Returns the bytes the box occupies in shared memory. */
static uint64_t tma_tile(const struct tensor_map *m, char *shared, const int32_t *coords, int to_shared,
                         unsigned rank) {
    if (rank != m->rank) {
        char at[256];
        where(at, sizeof at, current);
        fail("TMA in %s: a %u-D copy with a %u-D tensor map", at, rank, (unsigned)m->rank);
    }
    uint64_t base = shared_offset_of(shared, 1, "TMA shared-memory operand");
    char *segment = cluster_block_of(shared, 1)->shared;  /* this block's, or another's of the cluster */
    if (base % 128) {
        char at[256];
        where(at, sizeof at, current);
        fail("misaligned address in %s: the TMA shared-memory operand at offset %" PRIu64 " is not 128-byte aligned",
             at, base);
    }
    uint64_t counts[TMAP_MAX_RANK], total = 1;
    for (unsigned d = 0; d < rank; ++d) {
        counts[d] = (m->box[d] + m->element_strides[d] - 1) / m->element_strides[d];
        total *= counts[d];
    }
#ifndef EMU_SANITIZE
    shared_offset_of(shared, total * m->element_bytes, "TMA box");  /* --sanitize checks each element instead */
#endif
    uint64_t index[TMAP_MAX_RANK] = {0};
    for (uint64_t e = 0; e < total; ++e) {
        int inside = 1;
        uint64_t global = 0;
        for (unsigned d = 0; d < rank; ++d) {
            int64_t g = (int64_t)coords[d] + (int64_t)index[d] * m->element_strides[d];
            if (g < 0 || (uint64_t)g >= m->dims[d]) inside = 0;
            else global += (uint64_t)g * m->strides[d];
        }
        char *s = OP_SHARED_ACCESS(segment + swizzled(base + e * m->element_bytes, m->swizzle), m->element_bytes,
                                   OP_ASYNC | (to_shared ? OP_WRITE : 0));
        if (to_shared) {
            if (inside) memcpy(s, OP_ACCESS(m->address + global, m->address, m->element_bytes, OP_ASYNC), m->element_bytes);
            else tma_fill(s, m);
        } else if (inside) {
            memcpy(OP_ACCESS(m->address + global, m->address, m->element_bytes, OP_ASYNC | OP_WRITE), s, m->element_bytes);
        }
        for (unsigned d = 0; d < rank && ++index[d] == counts[d]; ++d) index[d] = 0;
    }
    return total * m->element_bytes;
}

static void *mapa_rank(void *p, unsigned rank);

/* A TMA load into `shared`; multicast: into the same offset of each block of the cluster whose rank is set
 * in `mask`, the bytes completed on the mbarrier at the same offset in each of them (PTX ISA,
 * .multicast::cluster). */
EXPORT void __emu_tma_load(void *shared, void *mbar, const void *map, uint32_t rank, const int32_t *coords,
                           uint32_t mask, uint32_t multicast) {
    struct tensor_map m = tensor_map_at(map);
    if (!multicast) {
        bulk_complete_tx(mbar, tma_tile(&m, shared, coords, 1, rank));
        return;
    }
    for (unsigned r = 0; r < 16; ++r)
        if (mask & (1u << r)) bulk_complete_tx(mapa_rank(mbar, r), tma_tile(&m, mapa_rank(shared, r), coords, 1, rank));
}

EXPORT void __emu_tma_store(void *shared, const void *map, uint32_t rank, const int32_t *coords) {
    struct tensor_map m = tensor_map_at(map);
    (void)tma_tile(&m, shared, coords, 0, rank);
}

/* cudaGetDriverEntryPointByVersion's table: the driver functions the emulator provides. */
static void *driver_entry_point(const char *symbol) {
    if (symbol && strcmp(symbol, "cuTensorMapEncodeTiled") == 0) return (void *)emu_tensor_map_encode_tiled;
    return NULL;
}

/* ---- cp.async.bulk without a tensor map (PTX ISA): `size` bytes (a multiple of 16, both addresses
 * 16-byte aligned), copied at issue. Into shared memory (from global memory, or from this block's shared
 * memory into another block's of the cluster), the bytes complete on the mbarrier of the destination
 * block, as a TMA load's do; multicast: into the same offset of each block of the mask. To global memory:
 * done at issue, so bulk groups and their waits have nothing left. ---------------------------------- */

static void bulk_check(const void *dst, const void *src, uint32_t size) {
    if (size % 16 || (uintptr_t)dst % 16 || (uintptr_t)src % 16) {
        char at[256];
        where(at, sizeof at, current);
        fail("misaligned address in %s: cp.async.bulk of %u bytes from %p to %p (size and addresses must be "
             "multiples of 16)", at, size, src, dst);
    }
}

EXPORT void __emu_bulk_to_shared(void *dst, void *mbar, const void *src, uint32_t size, uint32_t mask,
                                 uint32_t multicast) {
    bulk_check(dst, src, size);
    for (unsigned r = 0; r < (multicast ? 16u : 1u); ++r) {
        if (multicast && !(mask & (1u << r))) continue;
        char *to = multicast ? mapa_rank(dst, r) : dst;
        to = OP_SHARED_ACCESS(to, size, OP_ASYNC | OP_WRITE);
        shared_offset_of(to, size, "cp.async.bulk destination");
        memcpy(to, OP_ACCESS(src, src, size, OP_ASYNC), size);
        bulk_complete_tx(multicast ? mapa_rank(mbar, r) : mbar, size);
    }
}

EXPORT void __emu_bulk_to_global(void *dst, const void *src, uint32_t size) {
    bulk_check(dst, src, size);
    src = OP_SHARED_ACCESS(src, size, OP_ASYNC);
    shared_offset_of(src, size, "cp.async.bulk source");
    memcpy(OP_ACCESS(dst, dst, size, OP_ASYNC | OP_WRITE), src, size);
}
