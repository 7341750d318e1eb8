/* mma.sp (2:4 structured sparsity, sm_80+) for the emulation runtime, included by runtime.c after its
 * tensor-core helpers: a warp collective over the PTX ISA's fragment layouts. A is stored compressed
 * (two of each four k values, in the m16n8k16/m16n8k8 A layout over the compressed 16 x K/2 matrix); the
 * metadata says where each kept value sits in its group of four (2 bits each, low bits first): for row
 * groupID, threads tig == selector (m16n8k16) or tig == 2 * selector + h (m16n8k32, h selecting
 * k 0..15 or 16..31) hold the row's indices in bits 0..15 and row groupID + 8's in bits 16..31. B and
 * C/D are laid out as for mma.sync m16n8k16 (B rows k = 2 tig + j + 8 i). */

enum { COLLECTIVE_MMA_SP = 512 /* + MMA_SP_* flags */ };

EXPORT void __emu_mma_sp(uint32_t flags, const void *operands, void *results) {
    (void)matrix_call(COLLECTIVE_MMA_SP + (int)flags, operands, results);
}

static void mma_sp_collective(unsigned flags, struct emu_thread *lanes) {
    unsigned K = flags & MMA_SP_K32 ? 32 : 16, selector = flags >> MMA_SP_SELECTOR_SHIFT;
    unsigned a_regs = K / 8, b_regs = K / 8;  /* 2-half registers per thread */
    float a[16][32] = {{0}}, b[32][8], c[16][8];
    float packed[16][16];
    uint32_t metadata[32];
    for (unsigned l = 0; l < 32; ++l) {
        const void *o = lanes[l].operands;
        unsigned g = l / 4, t = l % 4;
        for (unsigned r = 0; r < a_regs; ++r)  /* a0: (g, 2t..), a1: (g + 8, 2t..), a2: (g, 2t + 8..), a3 */
            for (unsigned j = 0; j < 2; ++j) packed[g + 8 * (r % 2)][2 * t + 8 * (r / 2) + j] = half_at(o, r, j);
        for (unsigned r = 0; r < b_regs; ++r)
            for (unsigned j = 0; j < 2; ++j) b[2 * t + 8 * r + j][g] = half_at(o, a_regs + r, j);
        unsigned slot = a_regs + b_regs;
        if (flags & MMA_SP_C_F16) {
            for (unsigned r = 0; r < 2; ++r)
                for (unsigned j = 0; j < 2; ++j) c[g + 8 * r][2 * t + j] = half_at(o, slot + r, j);
            slot += 2;
        } else {
            for (unsigned r = 0; r < 4; ++r) c[g + 8 * (r / 2)][2 * t + r % 2] = float_at(o, slot + r);
            slot += 4;
        }
        memcpy(&metadata[l], (const char *)o + 8 * slot, 4);
    }
    /* Expand A: row `row`, kept value p (0 .. K/2-1) of group p / 2 goes to k = 4 (p / 2) + index. */
    for (unsigned row = 0; row < 16; ++row)
        for (unsigned half = 0; half < K / 16; ++half) {
            unsigned lane = 4 * (row % 8) + (K == 32 ? 2 * selector + half : selector);
            uint32_t bits = metadata[lane] >> (row < 8 ? 0 : 16);
            for (unsigned p = 0; p < 8; ++p) {
                unsigned index = (bits >> (2 * p)) & 3, group = 4 * half + p / 2;
                a[row][4 * group + index] += packed[row][8 * half + p];
            }
        }
    for (unsigned l = 0; l < 32; ++l) {
        unsigned g = l / 4, t = l % 4;
        for (unsigned r = 0; r < 4; ++r) {
            unsigned row = g + 8 * (r / 2), col = 2 * t + r % 2;
            float d = c[row][col];
            for (unsigned k = 0; k < K; ++k) d = fmaf(a[row][k], b[k][col], d);
            if (flags & MMA_SP_D_F16) put_half(lanes[l].results, r / 2, r % 2, d);
            else memcpy((char *)lanes[l].results + 8 * r, &d, 4);
        }
    }
}
