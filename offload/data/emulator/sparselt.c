/* The emulator's cuSPARSELt: the functions mlir-offload's 2:4 shims call (offload/host/sparse_runtime.py),
 * on the CPU with the library's documented meaning:
 *   prune     each group of 4 consecutive elements along a row of A (opA non-transposed, row-major) keeps
 *             its 2 largest magnitudes (the earlier of equal ones), the others become 0
 *   check     *valid = 0 when every group has at most 2 nonzeros, else 1
 *   compress  A's values in the emulator's own layout (a dense copy with the 2:4 structure enforced)
 *   matmul    D = alpha op(A) op(B) + beta C, alpha and beta floats, f16, bf16 or f32 values accumulated
 *             in float (i8 and the integer compute type are not emulated: NOT_SUPPORTED)
 * The opaque descriptors (512 bytes each, as cuSPARSELt 0.10's) hold the emulator's records. Each call that
 * touches memory first waits for its stream, as sparse.c's calls do. */
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 3, NOT_SUPPORTED = 10 };
enum { R_32F = 0, R_16F = 2, R_16BF = 14 };
enum { ORDER_COL = 1, ORDER_ROW = 2 };
enum { NON_TRANSPOSE = 0 };
enum { DENSE = 0x44454e53, STRUCTURED = 0x32544f34 }; /* the record kinds, as a check that Init ran */
enum { HANDLE_READY = 0x4c54454d };

extern int cudaStreamSynchronize(void *stream);

typedef struct { _Alignas(16) uint8_t data[512]; } opaque;
struct matrix { int kind; int64_t rows, cols, ld; int type, order; };
struct matmul { int op_a, op_b, compute; const struct matrix *a, *b, *c, *d; };
struct plan { const struct matmul *matmul; };

_Static_assert(sizeof(struct matrix) <= sizeof(opaque), "a matrix record fits its descriptor");
_Static_assert(sizeof(struct matmul) <= sizeof(opaque), "a matmul record fits its descriptor");

EXPORT const char *cusparseLtGetErrorString(int status) {
    switch (status) {
    case SUCCESS: return "success";
    case NOT_INITIALIZED: return "the library was not initialized";
    case INVALID_VALUE: return "invalid value";
    case NOT_SUPPORTED: return "operation not supported (by mlir-offload's emulation)";
    default: return "unknown error";
    }
}

static int ready(const opaque *handle) { return handle && *(const int *)handle->data == HANDLE_READY; }

EXPORT int cusparseLtInit(opaque *handle) {
    if (!handle) return INVALID_VALUE;
    memset(handle, 0, sizeof *handle);
    *(int *)handle->data = HANDLE_READY;
    return SUCCESS;
}
EXPORT int cusparseLtDestroy(opaque *handle) {
    if (!ready(handle)) return NOT_INITIALIZED;
    memset(handle, 0, sizeof *handle);
    return SUCCESS;
}

static int describe(const opaque *handle, opaque *out, int kind, int64_t rows, int64_t cols, int64_t ld, int type,
                    int order) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!out || rows <= 0 || cols <= 0 || (order != ORDER_ROW && order != ORDER_COL)) return INVALID_VALUE;
    if ((order == ORDER_ROW && ld < cols) || (order == ORDER_COL && ld < rows)) return INVALID_VALUE;
    if (type != R_16F && type != R_16BF && type != R_32F) return NOT_SUPPORTED;
    struct matrix m = {kind, rows, cols, ld, type, order};
    memcpy(out->data, &m, sizeof m);
    return SUCCESS;
}
EXPORT int cusparseLtDenseDescriptorInit(const opaque *handle, opaque *out, int64_t rows, int64_t cols, int64_t ld,
                                         uint32_t alignment, int type, int order) {
    (void)alignment;
    return describe(handle, out, DENSE, rows, cols, ld, type, order);
}
EXPORT int cusparseLtStructuredDescriptorInit(const opaque *handle, opaque *out, int64_t rows, int64_t cols,
                                              int64_t ld, uint32_t alignment, int type, int order, int sparsity) {
    (void)alignment;
    if (sparsity != 0) return INVALID_VALUE;
    return describe(handle, out, STRUCTURED, rows, cols, ld, type, order);
}
static const struct matrix *matrix_of(const opaque *o) { return (const struct matrix *)o->data; }
EXPORT int cusparseLtMatDescriptorDestroy(const opaque *m) { return m ? SUCCESS : INVALID_VALUE; }

EXPORT int cusparseLtMatmulDescriptorInit(const opaque *handle, opaque *out, int op_a, int op_b, const opaque *a,
                                          const opaque *b, const opaque *c, const opaque *d, int compute) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!out || !a || !b || !c || !d) return INVALID_VALUE;
    if (matrix_of(a)->kind != STRUCTURED || matrix_of(b)->kind != DENSE || matrix_of(c)->kind != DENSE) return INVALID_VALUE;
    if (op_a != NON_TRANSPOSE || matrix_of(a)->order != ORDER_ROW) return NOT_SUPPORTED;
    if (compute != 1 && compute != 2) return NOT_SUPPORTED; /* CUSPARSE_COMPUTE_16F, _32F */
    int64_t k = matrix_of(a)->cols, bk = op_b == NON_TRANSPOSE ? matrix_of(b)->rows : matrix_of(b)->cols;
    int64_t n = op_b == NON_TRANSPOSE ? matrix_of(b)->cols : matrix_of(b)->rows;
    if (bk != k || matrix_of(c)->rows != matrix_of(a)->rows || matrix_of(c)->cols != n || k % 4) return INVALID_VALUE;
    struct matmul mm = {op_a, op_b, compute, matrix_of(a), matrix_of(b), matrix_of(c), matrix_of(d)};
    memcpy(out->data, &mm, sizeof mm);
    return SUCCESS;
}
EXPORT int cusparseLtMatmulAlgSelectionInit(const opaque *handle, opaque *out, const opaque *matmul, int algorithm) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!out || !matmul || algorithm != 0) return INVALID_VALUE;
    struct plan p = {(const struct matmul *)matmul->data};
    memcpy(out->data, &p, sizeof p);
    return SUCCESS;
}
EXPORT int cusparseLtMatmulAlgSelectionDestroy(const opaque *selection) { return selection ? SUCCESS : INVALID_VALUE; }
EXPORT int cusparseLtMatmulPlanInit(const opaque *handle, opaque *out, const opaque *matmul, const opaque *selection) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!out || !matmul || !selection) return INVALID_VALUE;
    struct plan p = {(const struct matmul *)matmul->data};
    memcpy(out->data, &p, sizeof p);
    return SUCCESS;
}
EXPORT int cusparseLtMatmulPlanDestroy(const opaque *plan) { return plan ? SUCCESS : INVALID_VALUE; }
static const struct matmul *matmul_of(const opaque *plan) { return ((const struct plan *)plan->data)->matmul; }

EXPORT int cusparseLtMatmulGetWorkspace(const opaque *handle, const opaque *plan, size_t *size) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!plan || !size) return INVALID_VALUE;
    *size = 0;
    return SUCCESS;
}

static size_t element_bytes(int type) { return type == R_32F ? 4 : 2; }
static float load(const void *base, int type, int64_t i) {
    if (type == R_32F) return ((const float *)base)[i];
    if (type == R_16F) return (float)((const _Float16 *)base)[i];
    uint32_t bits = (uint32_t)((const uint16_t *)base)[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static void store(void *base, int type, int64_t i, float v) {
    if (type == R_32F) ((float *)base)[i] = v;
    else if (type == R_16F) ((_Float16 *)base)[i] = (_Float16)v;
    else {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        bits += 0x7FFF + ((bits >> 16) & 1); /* round to nearest even */
        ((uint16_t *)base)[i] = (uint16_t)(bits >> 16);
    }
}
static int64_t at(const struct matrix *m, int64_t row, int64_t col) {
    return m->order == ORDER_ROW ? row * m->ld + col : col * m->ld + row;
}
static float magnitude(float v) { return v < 0 ? -v : v; }

EXPORT int cusparseLtSpMMACompressedSize(const opaque *handle, const opaque *plan, size_t *size, size_t *buffer_size) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!plan || !size || !buffer_size) return INVALID_VALUE;
    const struct matrix *a = matmul_of(plan)->a;
    *size = (size_t)(a->rows * a->cols) * element_bytes(a->type);
    *buffer_size = 0;
    return SUCCESS;
}

/* A's row-major group of 4 at (row, col0) with its 2 largest magnitudes kept, from `in` into `out`. */
static void keep_two(const struct matrix *a, const void *in, void *out, int64_t row, int64_t col0, int64_t out_ld) {
    float v[4];
    for (int j = 0; j < 4; j++) v[j] = load(in, a->type, row * a->ld + col0 + j);
    int first = 0;
    for (int j = 1; j < 4; j++)
        if (magnitude(v[j]) > magnitude(v[first])) first = j;
    int second = first == 0 ? 1 : 0;
    for (int j = 0; j < 4; j++)
        if (j != first && magnitude(v[j]) > magnitude(v[second])) second = j;
    for (int j = 0; j < 4; j++) store(out, a->type, row * out_ld + col0 + j, j == first || j == second ? v[j] : 0.0f);
}

static int wait_for(void *stream) { return cudaStreamSynchronize(stream) == 0 ? SUCCESS : 6; }

EXPORT int cusparseLtSpMMAPrune(const opaque *handle, const opaque *matmul, const void *in, void *out, int algorithm,
                                void *stream) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!matmul || !in || !out || (algorithm != 0 && algorithm != 1)) return INVALID_VALUE;
    int status = wait_for(stream);
    if (status != SUCCESS) return status;
    const struct matrix *a = ((const struct matmul *)matmul->data)->a;
    for (int64_t row = 0; row < a->rows; row++)
        for (int64_t col = 0; col < a->cols; col += 4) keep_two(a, in, out, row, col, a->ld);
    return SUCCESS;
}
EXPORT int cusparseLtSpMMAPruneCheck(const opaque *handle, const opaque *matmul, const void *in, int *valid,
                                     void *stream) {
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!matmul || !in || !valid) return INVALID_VALUE;
    int status = wait_for(stream);
    if (status != SUCCESS) return status;
    const struct matrix *a = ((const struct matmul *)matmul->data)->a;
    int wrong = 0;
    for (int64_t row = 0; row < a->rows; row++)
        for (int64_t col = 0; col < a->cols; col += 4) {
            int nonzero = 0;
            for (int j = 0; j < 4; j++) nonzero += load(in, a->type, row * a->ld + col + j) != 0.0f;
            wrong |= nonzero > 2;
        }
    *valid = wrong;
    return SUCCESS;
}
EXPORT int cusparseLtSpMMACompress(const opaque *handle, const opaque *plan, const void *dense, void *compressed,
                                   void *buffer, void *stream) {
    (void)buffer;
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!plan || !dense || !compressed) return INVALID_VALUE;
    int status = wait_for(stream);
    if (status != SUCCESS) return status;
    const struct matrix *a = matmul_of(plan)->a;
    for (int64_t row = 0; row < a->rows; row++)
        for (int64_t col = 0; col < a->cols; col += 4) keep_two(a, dense, compressed, row, col, a->cols);
    return SUCCESS;
}
EXPORT int cusparseLtMatmul(const opaque *handle, const opaque *plan, const void *alpha, const void *compressed,
                            const void *b_values, const void *beta, const void *c_values, void *d_values,
                            void *workspace, void **streams, int stream_count) {
    (void)workspace;
    if (!ready(handle)) return NOT_INITIALIZED;
    if (!plan || !alpha || !beta || !compressed || !b_values || !c_values || !d_values) return INVALID_VALUE;
    int status = wait_for(stream_count > 0 && streams ? streams[0] : 0);
    if (status != SUCCESS) return status;
    const struct matmul *mm = matmul_of(plan);
    const struct matrix *a = mm->a, *b = mm->b, *c = mm->c, *d = mm->d;
    float al = *(const float *)alpha, be = *(const float *)beta;
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t j = 0; j < c->cols; j++) {
            float sum = 0.0f;
            for (int64_t k = 0; k < a->cols; k++) {
                float bv = mm->op_b == NON_TRANSPOSE ? load(b_values, b->type, at(b, k, j)) : load(b_values, b->type, at(b, j, k));
                sum += load(compressed, a->type, i * a->cols + k) * bv;
            }
            float old = be == 0.0f ? 0.0f : be * load(c_values, c->type, at(c, i, j));
            store(d_values, d->type, at(d, i, j), al * sum + old);
        }
    return SUCCESS;
}
