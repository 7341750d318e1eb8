/* The emulator's cuSPARSE: the generic API's functions that mlir-offload's sparse shims call
 * (offload/host/sparse_runtime.py), computed on the CPU with the library's documented meaning:
 *   SpMV   y = alpha op(A) x + beta y
 *   SpMM   C = alpha op(A) op(B) + beta C
 *   SDDMM  C = alpha (op(A) op(B)) at C's nonzeros + beta C
 *   SpGEMM C = alpha op(A) op(B) (CSR; work estimation, compute, then copy into the arrays the program
 *          allocated after cusparseSpMatGetSize and handed over with cusparseCsrSetPointers)
 * for COO, CSR, CSC and BSR matrices, f32 and f64 values (accumulated in double), 32- and 64-bit indices,
 * row- and column-major dense matrices. Device memory is host memory under emulation; each computing call
 * first waits for the handle's stream (cudaStreamSynchronize), so it runs after the work queued before
 * it and before any queued after. Linked only into executables whose bundle uses the sparse library. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { SUCCESS = 0, NOT_INITIALIZED = 1, ALLOC_FAILED = 2, INVALID_VALUE = 3, NOT_SUPPORTED = 10 };
enum { R_32F = 0, R_64F = 1 };                 /* cudaDataType */
enum { INDEX_32I = 2, INDEX_64I = 3 };         /* cusparseIndexType_t */
enum { ORDER_COL = 1, ORDER_ROW = 2 };         /* cusparseOrder_t */
enum { NON_TRANSPOSE = 0, TRANSPOSE = 1, CONJUGATE_TRANSPOSE = 2 };
enum { COO, CSR, CSC, BSR };

extern int cudaStreamSynchronize(void *stream);

struct handle { void *stream; };
struct dense { int64_t rows, cols, ld; void *values; int type, order; };
struct sparse {
    int format;
    int64_t rows, cols, nnz;          /* BSR: block rows, block columns, nonzero blocks */
    int64_t block_rows, block_cols;   /* BSR's block size */
    void *offsets, *indices, *values; /* COO: row indices, column indices; CSR/CSC/BSR: positions, coordinates */
    int offset_type, index_type, type, order;
};
struct spgemm { int64_t rows, cols, nnz; int64_t *offsets, *indices; double *values; };

EXPORT const char *cusparseGetErrorString(int status) {
    switch (status) {
    case SUCCESS: return "success";
    case NOT_INITIALIZED: return "initialization error";
    case ALLOC_FAILED: return "out of memory";
    case INVALID_VALUE: return "invalid value";
    case NOT_SUPPORTED: return "operation not supported (by mlir-offload's emulation)";
    default: return "unknown error";
    }
}

static int value_type_ok(int type) { return type == R_32F || type == R_64F; }
static int index_type_ok(int type) { return type == INDEX_32I || type == INDEX_64I; }

static double load_value(const void *base, int type, int64_t i) {
    return type == R_32F ? (double)((const float *)base)[i] : ((const double *)base)[i];
}
static void store_value(void *base, int type, int64_t i, double v) {
    if (type == R_32F) ((float *)base)[i] = (float)v;
    else ((double *)base)[i] = v;
}
static int64_t load_index(const void *base, int type, int64_t i) {
    return type == INDEX_32I ? (int64_t)((const int32_t *)base)[i] : ((const int64_t *)base)[i];
}
static void store_index(void *base, int type, int64_t i, int64_t v) {
    if (type == INDEX_32I) ((int32_t *)base)[i] = (int32_t)v;
    else ((int64_t *)base)[i] = v;
}
static double scalar(const void *p, int compute_type) { return load_value(p, compute_type, 0); }

/* The (row, column) of a dense matrix's element, by its order and leading dimension. */
static int64_t dense_at(const struct dense *d, int64_t row, int64_t col) {
    return d->order == ORDER_ROW ? row * d->ld + col : col * d->ld + row;
}

EXPORT int cusparseCreate(struct handle **out) {
    if (!out) return INVALID_VALUE;
    *out = calloc(1, sizeof(struct handle));
    return *out ? SUCCESS : ALLOC_FAILED;
}
EXPORT int cusparseDestroy(struct handle *h) {
    if (!h) return NOT_INITIALIZED;
    free(h);
    return SUCCESS;
}
EXPORT int cusparseSetStream(struct handle *h, void *stream) {
    if (!h) return NOT_INITIALIZED;
    h->stream = stream;
    return SUCCESS;
}
static int wait_for(const struct handle *h) {
    if (!h) return NOT_INITIALIZED;
    return cudaStreamSynchronize(h->stream) == 0 ? SUCCESS : 6; /* CUSPARSE_STATUS_EXECUTION_FAILED */
}

static int new_dense(struct dense **out, int64_t rows, int64_t cols, int64_t ld, void *values, int type, int order) {
    if (!out || rows < 0 || cols < 0 || !value_type_ok(type)) return !out || rows < 0 || cols < 0 ? INVALID_VALUE : NOT_SUPPORTED;
    if ((order == ORDER_ROW && ld < cols) || (order == ORDER_COL && ld < rows) || (order != ORDER_ROW && order != ORDER_COL))
        return INVALID_VALUE;
    struct dense *d = calloc(1, sizeof *d);
    if (!d) return ALLOC_FAILED;
    *d = (struct dense){rows, cols, ld, values, type, order};
    *out = d;
    return SUCCESS;
}
EXPORT int cusparseCreateDnVec(struct dense **out, int64_t size, void *values, int type) {
    return new_dense(out, size, 1, 1, values, type, ORDER_ROW);
}
EXPORT int cusparseCreateDnMat(struct dense **out, int64_t rows, int64_t cols, int64_t ld, void *values, int type,
                               int order) {
    return new_dense(out, rows, cols, ld, values, type, order);
}
EXPORT int cusparseDestroyDnVec(struct dense *d) { free(d); return SUCCESS; }
EXPORT int cusparseDestroyDnMat(struct dense *d) { free(d); return SUCCESS; }

static int new_sparse(struct sparse **out, struct sparse s, int base) {
    if (!out || s.rows < 0 || s.cols < 0 || s.nnz < 0 || base != 0) return INVALID_VALUE;
    if (!value_type_ok(s.type) || !index_type_ok(s.index_type) || (s.format != COO && !index_type_ok(s.offset_type)))
        return NOT_SUPPORTED;
    struct sparse *m = calloc(1, sizeof *m);
    if (!m) return ALLOC_FAILED;
    *m = s;
    *out = m;
    return SUCCESS;
}
EXPORT int cusparseCreateCoo(struct sparse **out, int64_t rows, int64_t cols, int64_t nnz, void *row_indices,
                             void *col_indices, void *values, int index_type, int base, int type) {
    struct sparse s = {COO, rows, cols, nnz, 1, 1, row_indices, col_indices, values, index_type, index_type, type, ORDER_ROW};
    return new_sparse(out, s, base);
}
EXPORT int cusparseCreateCsr(struct sparse **out, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *indices,
                             void *values, int offset_type, int index_type, int base, int type) {
    struct sparse s = {CSR, rows, cols, nnz, 1, 1, offsets, indices, values, offset_type, index_type, type, ORDER_ROW};
    return new_sparse(out, s, base);
}
EXPORT int cusparseCreateCsc(struct sparse **out, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *indices,
                             void *values, int offset_type, int index_type, int base, int type) {
    struct sparse s = {CSC, rows, cols, nnz, 1, 1, offsets, indices, values, offset_type, index_type, type, ORDER_ROW};
    return new_sparse(out, s, base);
}
EXPORT int cusparseCreateBsr(struct sparse **out, int64_t brows, int64_t bcols, int64_t bnnz, int64_t block_rows,
                             int64_t block_cols, void *offsets, void *indices, void *values, int offset_type,
                             int index_type, int base, int type, int order) {
    if (block_rows <= 0 || block_cols <= 0 || (order != ORDER_ROW && order != ORDER_COL)) return INVALID_VALUE;
    struct sparse s = {BSR, brows, bcols, bnnz, block_rows, block_cols, offsets, indices, values,
                       offset_type, index_type, type, order};
    return new_sparse(out, s, base);
}
EXPORT int cusparseDestroySpMat(struct sparse *m) { free(m); return SUCCESS; }

EXPORT int cusparseSpMatGetSize(const struct sparse *m, int64_t *rows, int64_t *cols, int64_t *nnz) {
    if (!m || !rows || !cols || !nnz) return INVALID_VALUE;
    *rows = m->rows, *cols = m->cols, *nnz = m->nnz;
    return SUCCESS;
}
EXPORT int cusparseCsrSetPointers(struct sparse *m, void *offsets, void *indices, void *values) {
    if (!m || m->format != CSR) return INVALID_VALUE;
    m->offsets = offsets, m->indices = indices, m->values = values;
    return SUCCESS;
}

/* Every stored element of `m` as (row, column, position in its values), in storage order. */
typedef void (*visit_element)(void *state, int64_t row, int64_t col, int64_t at);
static void for_each_element(const struct sparse *m, visit_element visit, void *state) {
    if (m->format == COO) {
        for (int64_t k = 0; k < m->nnz; k++)
            visit(state, load_index(m->offsets, m->index_type, k), load_index(m->indices, m->index_type, k), k);
        return;
    }
    int64_t outer = m->format == CSC ? m->cols : m->rows;
    for (int64_t i = 0; i < outer; i++) {
        int64_t begin = load_index(m->offsets, m->offset_type, i), end = load_index(m->offsets, m->offset_type, i + 1);
        for (int64_t k = begin; k < end; k++) {
            int64_t j = load_index(m->indices, m->index_type, k);
            if (m->format == CSR) visit(state, i, j, k);
            else if (m->format == CSC) visit(state, j, i, k);
            else
                for (int64_t r = 0; r < m->block_rows; r++)
                    for (int64_t c = 0; c < m->block_cols; c++) {
                        int64_t inside = m->order == ORDER_ROW ? r * m->block_cols + c : c * m->block_rows + r;
                        visit(state, i * m->block_rows + r, j * m->block_cols + c,
                              k * m->block_rows * m->block_cols + inside);
                    }
        }
    }
}
static int64_t element_rows(const struct sparse *m) { return m->format == BSR ? m->rows * m->block_rows : m->rows; }
static int64_t element_cols(const struct sparse *m) { return m->format == BSR ? m->cols * m->block_cols : m->cols; }

static int operation_ok(int op) { return op == NON_TRANSPOSE || op == TRANSPOSE || op == CONJUGATE_TRANSPOSE; }

/* SpMV */
struct spmv { const struct sparse *a; const struct dense *x; double *y; double alpha; int transposed; };
static void spmv_element(void *state, int64_t row, int64_t col, int64_t at) {
    struct spmv *s = state;
    double v = s->alpha * load_value(s->a->values, s->a->type, at);
    if (s->transposed) s->y[col] += v * load_value(s->x->values, s->x->type, row);
    else s->y[row] += v * load_value(s->x->values, s->x->type, col);
}
static int spmv_check(int op, const struct sparse *a, const struct dense *x, const struct dense *y) {
    if (!a || !x || !y || !operation_ok(op)) return INVALID_VALUE;
    int64_t rows = op == NON_TRANSPOSE ? element_rows(a) : element_cols(a);
    int64_t cols = op == NON_TRANSPOSE ? element_cols(a) : element_rows(a);
    return x->rows == cols && y->rows == rows ? SUCCESS : INVALID_VALUE;
}
EXPORT int cusparseSpMV_bufferSize(struct handle *h, int op, const void *alpha, const struct sparse *a,
                                   const struct dense *x, const void *beta, struct dense *y, int compute_type,
                                   int algorithm, size_t *size) {
    (void)alpha, (void)beta, (void)compute_type, (void)algorithm;
    if (!h) return NOT_INITIALIZED;
    if (!size) return INVALID_VALUE;
    *size = 0;
    return spmv_check(op, a, x, y);
}
EXPORT int cusparseSpMV(struct handle *h, int op, const void *alpha, const struct sparse *a, const struct dense *x,
                        const void *beta, struct dense *y, int compute_type, int algorithm, void *buffer) {
    (void)algorithm, (void)buffer;
    int status = spmv_check(op, a, x, y);
    if (status == SUCCESS) status = value_type_ok(compute_type) ? wait_for(h) : NOT_SUPPORTED;
    if (status != SUCCESS) return status;
    double *result = calloc((size_t)y->rows + 1, sizeof(double));
    if (!result) return ALLOC_FAILED;
    double b = scalar(beta, compute_type);
    for (int64_t i = 0; i < y->rows; i++) result[i] = b == 0.0 ? 0.0 : b * load_value(y->values, y->type, i);
    struct spmv s = {a, x, result, scalar(alpha, compute_type), op != NON_TRANSPOSE};
    for_each_element(a, spmv_element, &s);
    for (int64_t i = 0; i < y->rows; i++) store_value(y->values, y->type, i, result[i]);
    free(result);
    return SUCCESS;
}

/* SpMM */
struct spmm { const struct sparse *a; const struct dense *b; double *c; int64_t n; double alpha; int ta, tb; };
static double op_dense(const struct dense *d, int transposed, int64_t row, int64_t col) {
    return transposed ? load_value(d->values, d->type, dense_at(d, col, row))
                      : load_value(d->values, d->type, dense_at(d, row, col));
}
static void spmm_element(void *state, int64_t row, int64_t col, int64_t at) {
    struct spmm *s = state;
    double v = s->alpha * load_value(s->a->values, s->a->type, at);
    int64_t i = s->ta ? col : row, k = s->ta ? row : col;
    for (int64_t j = 0; j < s->n; j++) s->c[i * s->n + j] += v * op_dense(s->b, s->tb, k, j);
}
static int spmm_check(int op_a, int op_b, const struct sparse *a, const struct dense *b, const struct dense *c) {
    if (!a || !b || !c || !operation_ok(op_a) || !operation_ok(op_b)) return INVALID_VALUE;
    int64_t m = op_a == NON_TRANSPOSE ? element_rows(a) : element_cols(a);
    int64_t k = op_a == NON_TRANSPOSE ? element_cols(a) : element_rows(a);
    int64_t bk = op_b == NON_TRANSPOSE ? b->rows : b->cols, n = op_b == NON_TRANSPOSE ? b->cols : b->rows;
    return bk == k && c->rows == m && c->cols == n ? SUCCESS : INVALID_VALUE;
}
EXPORT int cusparseSpMM_bufferSize(struct handle *h, int op_a, int op_b, const void *alpha, const struct sparse *a,
                                   const struct dense *b, const void *beta, struct dense *c, int compute_type,
                                   int algorithm, size_t *size) {
    (void)alpha, (void)beta, (void)compute_type, (void)algorithm;
    if (!h) return NOT_INITIALIZED;
    if (!size) return INVALID_VALUE;
    *size = 0;
    return spmm_check(op_a, op_b, a, b, c);
}
EXPORT int cusparseSpMM(struct handle *h, int op_a, int op_b, const void *alpha, const struct sparse *a,
                        const struct dense *b, const void *beta, struct dense *c, int compute_type, int algorithm,
                        void *buffer) {
    (void)algorithm, (void)buffer;
    int status = spmm_check(op_a, op_b, a, b, c);
    if (status == SUCCESS) status = value_type_ok(compute_type) ? wait_for(h) : NOT_SUPPORTED;
    if (status != SUCCESS) return status;
    int64_t m = c->rows, n = c->cols;
    double *result = calloc((size_t)(m * n) + 1, sizeof(double));
    if (!result) return ALLOC_FAILED;
    double be = scalar(beta, compute_type);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            result[i * n + j] = be == 0.0 ? 0.0 : be * load_value(c->values, c->type, dense_at(c, i, j));
    struct spmm s = {a, b, result, n, scalar(alpha, compute_type), op_a != NON_TRANSPOSE, op_b != NON_TRANSPOSE};
    for_each_element(a, spmm_element, &s);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) store_value(c->values, c->type, dense_at(c, i, j), result[i * n + j]);
    free(result);
    return SUCCESS;
}

/* SDDMM */
struct sddmm { const struct dense *a, *b; struct sparse *c; int64_t k; double alpha, beta; int ta, tb; };
static void sddmm_element(void *state, int64_t row, int64_t col, int64_t at) {
    struct sddmm *s = state;
    double dot = 0.0;
    for (int64_t l = 0; l < s->k; l++) dot += op_dense(s->a, s->ta, row, l) * op_dense(s->b, s->tb, l, col);
    double old = s->beta == 0.0 ? 0.0 : s->beta * load_value(s->c->values, s->c->type, at);
    store_value(s->c->values, s->c->type, at, s->alpha * dot + old);
}
static int sddmm_check(int op_a, int op_b, const struct dense *a, const struct dense *b, const struct sparse *c) {
    if (!a || !b || !c || !operation_ok(op_a) || !operation_ok(op_b)) return INVALID_VALUE;
    if (c->format != CSR && c->format != COO && c->format != BSR) return NOT_SUPPORTED;
    int64_t m = op_a == NON_TRANSPOSE ? a->rows : a->cols, k = op_a == NON_TRANSPOSE ? a->cols : a->rows;
    int64_t bk = op_b == NON_TRANSPOSE ? b->rows : b->cols, n = op_b == NON_TRANSPOSE ? b->cols : b->rows;
    return bk == k && element_rows(c) == m && element_cols(c) == n ? SUCCESS : INVALID_VALUE;
}
EXPORT int cusparseSDDMM_bufferSize(struct handle *h, int op_a, int op_b, const void *alpha, const struct dense *a,
                                    const struct dense *b, const void *beta, struct sparse *c, int compute_type,
                                    int algorithm, size_t *size) {
    (void)alpha, (void)beta, (void)compute_type, (void)algorithm;
    if (!h) return NOT_INITIALIZED;
    if (!size) return INVALID_VALUE;
    *size = 0;
    return sddmm_check(op_a, op_b, a, b, c);
}
EXPORT int cusparseSDDMM(struct handle *h, int op_a, int op_b, const void *alpha, const struct dense *a,
                         const struct dense *b, const void *beta, struct sparse *c, int compute_type, int algorithm,
                         void *buffer) {
    (void)algorithm, (void)buffer;
    int status = sddmm_check(op_a, op_b, a, b, c);
    if (status == SUCCESS) status = value_type_ok(compute_type) ? wait_for(h) : NOT_SUPPORTED;
    if (status != SUCCESS) return status;
    struct sddmm s = {a, b, c, op_a == NON_TRANSPOSE ? a->cols : a->rows, scalar(alpha, compute_type),
                      scalar(beta, compute_type), op_a != NON_TRANSPOSE, op_b != NON_TRANSPOSE};
    for_each_element(c, sddmm_element, &s);
    return SUCCESS;
}

/* SpGEMM (CSR only, no transposes: as the library) */
#define SPGEMM_BUFFER_BYTES 64 /* what each phase asks the program to allocate (nothing is kept there) */
/* A phase called without a buffer asks for its size. A zero-byte buffer is none: cudaMalloc of 0 bytes gives
 * a null pointer on a GPU, where the emulator's allocation is a real (empty) one. */
static int spgemm_query(const size_t *size, const void *buffer) { return !buffer || *size == 0; }
EXPORT int cusparseSpGEMM_createDescr(struct spgemm **out) {
    if (!out) return INVALID_VALUE;
    *out = calloc(1, sizeof(struct spgemm));
    return *out ? SUCCESS : ALLOC_FAILED;
}
static void spgemm_release(struct spgemm *d) {
    free(d->offsets), free(d->indices), free(d->values);
    d->offsets = NULL, d->indices = NULL, d->values = NULL;
}
EXPORT int cusparseSpGEMM_destroyDescr(struct spgemm *d) {
    if (!d) return INVALID_VALUE;
    spgemm_release(d);
    free(d);
    return SUCCESS;
}
static int spgemm_check(int op_a, int op_b, const struct sparse *a, const struct sparse *b, const struct sparse *c) {
    if (!a || !b || !c) return INVALID_VALUE;
    if (op_a != NON_TRANSPOSE || op_b != NON_TRANSPOSE || a->format != CSR || b->format != CSR || c->format != CSR)
        return NOT_SUPPORTED;
    return a->cols == b->rows && c->rows == a->rows && c->cols == b->cols ? SUCCESS : INVALID_VALUE;
}
EXPORT int cusparseSpGEMM_workEstimation(struct handle *h, int op_a, int op_b, const void *alpha,
                                         const struct sparse *a, const struct sparse *b, const void *beta,
                                         struct sparse *c, int compute_type, int algorithm, struct spgemm *d,
                                         size_t *size, void *buffer) {
    (void)alpha, (void)beta, (void)algorithm;
    if (!h) return NOT_INITIALIZED;
    if (!d || !size) return INVALID_VALUE;
    int status = spgemm_check(op_a, op_b, a, b, c);
    if (status != SUCCESS) return status;
    if (!value_type_ok(compute_type)) return NOT_SUPPORTED;
    if (spgemm_query(size, buffer)) *size = SPGEMM_BUFFER_BYTES;
    else if (*size < SPGEMM_BUFFER_BYTES) return INVALID_VALUE;
    return SUCCESS;
}
EXPORT int cusparseSpGEMM_compute(struct handle *h, int op_a, int op_b, const void *alpha, const struct sparse *a,
                                  const struct sparse *b, const void *beta, struct sparse *c, int compute_type,
                                  int algorithm, struct spgemm *d, size_t *size, void *buffer) {
    (void)beta, (void)algorithm;
    if (!h) return NOT_INITIALIZED;
    if (!d || !size) return INVALID_VALUE;
    int status = spgemm_check(op_a, op_b, a, b, c);
    if (status != SUCCESS) return status;
    if (!value_type_ok(compute_type)) return NOT_SUPPORTED;
    if (spgemm_query(size, buffer)) {
        *size = SPGEMM_BUFFER_BYTES;
        return SUCCESS;
    }
    if (*size < SPGEMM_BUFFER_BYTES) return INVALID_VALUE;
    if ((status = wait_for(h)) != SUCCESS) return status;
    int64_t m = a->rows, n = b->cols;
    double *row = calloc((size_t)n + 1, sizeof(double));
    char *seen = calloc((size_t)n + 1, 1);
    int64_t capacity = 16, nnz = 0;
    spgemm_release(d);
    d->offsets = calloc((size_t)m + 1, sizeof(int64_t));
    d->indices = malloc((size_t)capacity * sizeof(int64_t));
    d->values = malloc((size_t)capacity * sizeof(double));
    if (!row || !seen || !d->offsets || !d->indices || !d->values) {
        free(row), free(seen), spgemm_release(d);
        return ALLOC_FAILED;
    }
    double al = scalar(alpha, compute_type);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t ka = load_index(a->offsets, a->offset_type, i); ka < load_index(a->offsets, a->offset_type, i + 1); ka++) {
            int64_t k = load_index(a->indices, a->index_type, ka);
            double av = load_value(a->values, a->type, ka);
            for (int64_t kb = load_index(b->offsets, b->offset_type, k); kb < load_index(b->offsets, b->offset_type, k + 1); kb++) {
                int64_t j = load_index(b->indices, b->index_type, kb);
                row[j] += al * av * load_value(b->values, b->type, kb);
                seen[j] = 1;
            }
        }
        for (int64_t j = 0; j < n; j++) {
            if (!seen[j]) continue;
            if (nnz == capacity) {
                capacity *= 2;
                int64_t *indices = realloc(d->indices, (size_t)capacity * sizeof(int64_t));
                if (indices) d->indices = indices;
                double *values = realloc(d->values, (size_t)capacity * sizeof(double));
                if (values) d->values = values;
                if (!indices || !values) {
                    free(row), free(seen), spgemm_release(d);
                    return ALLOC_FAILED;
                }
            }
            d->indices[nnz] = j, d->values[nnz] = row[j], nnz++;
            row[j] = 0.0, seen[j] = 0;
        }
        d->offsets[i + 1] = nnz;
    }
    free(row), free(seen);
    d->rows = m, d->cols = n, d->nnz = nnz;
    c->nnz = nnz; /* cusparseSpMatGetSize(C) now reports the product's size */
    return SUCCESS;
}
EXPORT int cusparseSpGEMM_copy(struct handle *h, int op_a, int op_b, const void *alpha, const struct sparse *a,
                               const struct sparse *b, const void *beta, struct sparse *c, int compute_type,
                               int algorithm, struct spgemm *d) {
    (void)alpha, (void)beta, (void)compute_type, (void)algorithm;
    if (!d) return INVALID_VALUE;
    int status = spgemm_check(op_a, op_b, a, b, c);
    if (status != SUCCESS) return status;
    if (!d->offsets || d->rows != c->rows || d->cols != c->cols) return INVALID_VALUE; /* no compute before */
    if (!c->offsets || (d->nnz && (!c->indices || !c->values))) return INVALID_VALUE;
    if ((status = wait_for(h)) != SUCCESS) return status;
    for (int64_t i = 0; i <= d->rows; i++) store_index(c->offsets, c->offset_type, i, d->offsets[i]);
    for (int64_t k = 0; k < d->nnz; k++) {
        store_index(c->indices, c->index_type, k, d->indices[k]);
        store_value(c->values, c->type, k, d->values[k]);
    }
    c->nnz = d->nnz;
    return SUCCESS;
}

/* hipSPARSE's generic API is cuSPARSE's under another prefix, with the same enum values and statuses; the
 * emulator's streams are one set under both runtimes' names. */
#define HIPSPARSE(name) extern __typeof__(cusparse##name) hipsparse##name __attribute__((alias("cusparse" #name), visibility("default")))
HIPSPARSE(GetErrorString);
HIPSPARSE(Create);
HIPSPARSE(Destroy);
HIPSPARSE(SetStream);
HIPSPARSE(CreateDnVec);
HIPSPARSE(CreateDnMat);
HIPSPARSE(DestroyDnVec);
HIPSPARSE(DestroyDnMat);
HIPSPARSE(CreateCoo);
HIPSPARSE(CreateCsr);
HIPSPARSE(CreateCsc);
HIPSPARSE(CreateBsr);
HIPSPARSE(DestroySpMat);
HIPSPARSE(SpMatGetSize);
HIPSPARSE(CsrSetPointers);
HIPSPARSE(SpMV_bufferSize);
HIPSPARSE(SpMV);
HIPSPARSE(SpMM_bufferSize);
HIPSPARSE(SpMM);
HIPSPARSE(SDDMM_bufferSize);
HIPSPARSE(SDDMM);
HIPSPARSE(SpGEMM_createDescr);
HIPSPARSE(SpGEMM_destroyDescr);
HIPSPARSE(SpGEMM_workEstimation);
HIPSPARSE(SpGEMM_compute);
HIPSPARSE(SpGEMM_copy);
