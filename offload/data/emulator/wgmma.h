/* wgmma (sm_90a warpgroup MMA) and stmatrix for the emulation runtime, included by runtime.c after cluster.h: a
 * collective of the 128 threads of a warpgroup (4 consecutive warps). A (64 x 16) and B (N x 16) are read
 * from shared memory through their matrix descriptors, as the PTX ISA defines them: start address, leading
 * and stride byte offsets (bits 0-13, 16-29, 32-45, each >> 4) and the swizzle mode (bits 62-63: 1 = 128B,
 * 2 = 64B, 3 = 32B). K-major: without swizzle, 8x8 core matrices of 16-byte rows lie SBO apart along
 * M/N and LBO apart along K; with a swizzle, 8-row atoms of 32/64/128-byte rows lie SBO apart. MN-major
 * (the transpose flags): rows of k, M/N contiguous, LBO along M/N and SBO along K. The address bits 4..
 * are XORed with bits 7.. as TMA writes them. D is m64nN in the PTX ISA's fragment layout
 * (warp w holds rows 16w..16w+15 as mma.sync's m16n8 accumulator, repeated over N / 8 column blocks).
 * The swizzle's row (address bits 7..) counts from the start address plus the descriptor's base offset
 * (bits 49-51), which a start not on a 1024/512/256-byte pattern boundary needs: (start >> 7) & 7. */

struct warpgroup_state { unsigned arrived, generation; };
static _Thread_local struct warpgroup_state warpgroup_states[MAX_CLUSTER_BLOCKS][8];

static int wgmma_wait_over(const struct emu_thread *t) {
    return ((const struct warpgroup_state *)t->wait_on)->generation != t->wait_parity;
}

/* The shared-memory offset a descriptor's 14-bit start address (address bits 4..17) names in the block. */
static uint64_t descriptor_start(uint64_t descriptor) {
    uint64_t low = (descriptor & 0x3fff) << 4, base = (uint64_t)(uintptr_t)current_block->shared & 0x3ffff;
    return (low - base) & 0x3ffff;
}

/* Element (row of M or N, k) of an operand; `mn_major`: stored with M/N contiguous (transposed), where the
 * leading byte offset steps along M/N (between 8-element core matrices, or between atoms of W/2 elements
 * with a swizzle) and the stride byte offset along K (between groups of 8 rows of k). */
static float wgmma_element(uint64_t descriptor, unsigned row, unsigned k, int bf16, int mn_major) {
    uint64_t start = descriptor_start(descriptor), lbo = ((descriptor >> 16) & 0x3fff) << 4;
    uint64_t sbo = ((descriptor >> 32) & 0x3fff) << 4;
    unsigned mode = (unsigned)(descriptor >> 62);
    uint64_t offset;
    unsigned swizzle = 0;
    unsigned width = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 16;
    if (mode) swizzle = mode == 1 ? TMAP_SWIZZLE_128B : mode == 2 ? TMAP_SWIZZLE_64B : TMAP_SWIZZLE_32B;
    if (mn_major)
        offset = start + row / (width / 2) * lbo + k / 8 * sbo + k % 8 * width + row % (width / 2) * 2;
    else if (mode == 0)
        offset = start + row / 8 * sbo + k / 8 * lbo + row % 8 * 16 + k % 8 * 2;
    else
        offset = start + row / 8 * sbo + row % 8 * width + k * 2;
    if (swizzle) {  /* the pattern's row: address bits 7.. counted from the start, plus the base offset */
        uint64_t phase = (((offset - start) >> 7) + ((descriptor >> 49) & 7)) & ((UINT64_C(1) << swizzle) - 1);
        offset ^= phase << 4;
    }
    const char *p = OP_SHARED_ACCESS(current_block->shared + offset, 2, OP_ASYNC);
    shared_offset_of(p, 2, "wgmma operand");
    if (bf16) {
        uint16_t bits;
        memcpy(&bits, p, 2);
        uint32_t wide = (uint32_t)bits << 16;
        float f;
        memcpy(&f, &wide, 4);
        return f;
    }
    _Float16 h;
    memcpy(&h, p, 2);
    return (float)h;
}

/* Operand slots (8 bytes each): the accumulator registers (N/2 f32, or N/4 f16 pairs), descriptor A,
 * descriptor B, scale-d, scale-a, scale-b, transpose-a, transpose-b. */
static void wgmma_compute(unsigned flags, struct emu_thread *lanes) {
    unsigned n = flags & WGMMA_N_MASK, regs = flags & WGMMA_ACC_F16 ? n / 4 : n / 2;
    const char *first = lanes[0].operands;
    uint64_t desc_a, desc_b;
    int32_t scale_d, scale_a, scale_b, trans_a, trans_b;
    memcpy(&desc_a, first + 8 * regs, 8);
    memcpy(&desc_b, first + 8 * (regs + 1), 8);
    memcpy(&scale_d, first + 8 * (regs + 2), 4);
    memcpy(&scale_a, first + 8 * (regs + 3), 4);
    memcpy(&scale_b, first + 8 * (regs + 4), 4);
    memcpy(&trans_a, first + 8 * (regs + 5), 4);
    memcpy(&trans_b, first + 8 * (regs + 6), 4);
    int bf16 = (flags & WGMMA_BF16) != 0;
    static _Thread_local float a[64][16], b[256][16];
    for (unsigned m = 0; m < 64; ++m)
        for (unsigned k = 0; k < 16; ++k) a[m][k] = wgmma_element(desc_a, m, k, bf16, trans_a) * (float)scale_a;
    for (unsigned c = 0; c < n; ++c)
        for (unsigned k = 0; k < 16; ++k) b[c][k] = wgmma_element(desc_b, c, k, bf16, trans_b) * (float)scale_b;
    for (unsigned l = 0; l < 128; ++l) {
        unsigned w = l / 32, g = l % 32 / 4, t = l % 4;
        for (unsigned e = 0; e < n / 2; ++e) {  /* accumulator element e of this thread */
            unsigned j = e / 4, r = e % 4, row = 16 * w + g + 8 * (r / 2), col = 8 * j + 2 * t + r % 2;
            float d = 0;
            if (scale_d) d = flags & WGMMA_ACC_F16 ? half_at(lanes[l].operands, e / 2, e % 2) : float_at(lanes[l].operands, e);
            for (unsigned k = 0; k < 16; ++k) d = fmaf(a[row][k], b[col][k], d);
            if (flags & WGMMA_ACC_F16) put_half(lanes[l].results, e / 2, e % 2, d);
            else memcpy((char *)lanes[l].results + 8 * e, &d, 4);
        }
    }
}

/* wgmma.mma_async: done when the warpgroup's last thread arrives (fence, commit and wait have nothing
 * left to order). */
EXPORT void __emu_wgmma(uint32_t flags, const void *operands, void *results) {
    struct emu_thread *t = current;
    struct block *b = current_block;
    unsigned group = t->linear / 128;
    if (!b->threads || b->launch->threads_per_block < 128 * (group + 1)) {
        char at[256];
        where(at, sizeof at, t);
        fail("wgmma in %s: the block's threads do not form whole warpgroups of 128", at);
    }
    struct warpgroup_state *s = &warpgroup_states[b->cluster_rank][group];
    t->operands = operands;
    t->results = results;
    t->wait_parity = s->generation;
    if (++s->arrived == 128) {
        wgmma_compute(flags, &b->threads[128 * group]);
        s->arrived = 0;
        s->generation++;
        return;
    }
    t->wait_on = s;
    t->wait_over = wgmma_wait_over;
    t->state = AT_WAIT;
    yield_to_scheduler();
}

NORETURN static void report_wgmma_deadlock(const struct emu_thread *t, const struct block *b) {
    current = (struct emu_thread *)t;
    current_block = (struct block *)b;
    char at[256];
    where(at, sizeof at, t);
    fail("deadlock in %s: it waits at a wgmma for its warpgroup, where %u of 128 threads arrived and no other "
         "thread can arrive", at, ((const struct warpgroup_state *)t->wait_on)->arrived);
}

/* ---- stmatrix.sync.aligned.m8n8.xN[.trans].b16 (PTX ISA): a warp collective storing N 8x8 matrices of
 * 16-bit values to shared memory; lane l holds, in its register i, elements (l / 4, 2 (l % 4) + {0, 1}) of
 * matrix i, and lanes 8i..8i+7 give the addresses of matrix i's rows (of its columns with .trans). Each
 * lane's operand slots: its row address, then its N registers. ---------------------------------------- */

static void stmatrix_collective(unsigned code, struct emu_thread *lanes) {
    unsigned n = code / 2, transposed = code % 2;
    for (unsigned l = 0; l < 32; ++l) {
        unsigned row = l / 4, col = 2 * (l % 4);
        for (unsigned i = 0; i < n; ++i) {
            uint16_t pair[2];
            memcpy(pair, (const char *)lanes[l].operands + 8 * (1 + i), 4);
            for (unsigned j = 0; j < 2; ++j) {
                char *line;
                memcpy(&line, lanes[8 * i + (transposed ? col + j : row)].operands, sizeof line);
                char *at = line + 2 * (transposed ? row : col + j);
                if ((uintptr_t)line % 16) {
                    char where_at[256];
                    where(where_at, sizeof where_at, &lanes[8 * i + (transposed ? col + j : row)]);
                    fail("misaligned address in %s: an stmatrix row address %p is not 16-byte aligned", where_at,
                         (void *)line);
                }
                shared_offset_of(at, 2, "stmatrix row");
                memcpy(at, &pair[j], 2);
            }
        }
    }
}

EXPORT void __emu_stmatrix(uint32_t count, uint32_t transposed, const void *slots) {
#ifdef EMU_SANITIZE
    /* this lane's row (column with .trans) of 8 halves, checked as its store; the collective writes there */
    uint64_t checked[5];
    memcpy(checked, slots, 8 * (1 + (count < 4 ? count : 4)));
    char *line;
    memcpy(&line, checked, sizeof line);
    if (current->lane % 32 < 8 * count && (uintptr_t)line % 16 == 0) {
        line = OP_SHARED_ACCESS(line, 16, OP_WRITE);
        memcpy(checked, &line, sizeof line);
    }
    slots = checked;
#endif
    current->operands = slots;
    current->results = NULL;
    (void)warp_collective(COLLECTIVE_STMATRIX + (int)(count * 2 + (transposed != 0)), 0, 0, 0, 0, 0);
}
