/* A fake cuSPARSE (libcusparse.so.12) beside the fake CUDA runtime or, built with -DFAKE_HIP, a fake
 * hipSPARSE (libhipsparse.so.1, the same API under its prefix) beside the fake HIP runtime: the generic API's functions that
 * mlir-offload's sparse shims call, logged one JSON object per line to $FAKE_RT_LOG (the runtime's log),
 * with their arguments; descriptors remember their sizes (cusparseSpMatGetSize), nothing is computed.
 * FAKE_RT_FAIL=api[:N] makes `api` fail (every call, or its Nth) with CUSPARSE_STATUS_INVALID_VALUE. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#ifdef FAKE_HIP
#define NAME(name) hipsparse##name
#define TEXT(name) "hipsparse" #name
#else
#define NAME(name) cusparse##name
#define TEXT(name) "cusparse" #name
#endif
#define INVALID_VALUE 3

static FILE *log_file;
static char fail_spec[2048];
static long calls_of[64];
static const char *names_of[64];

static void __attribute__((constructor)) loaded(void) {
    const char *path = getenv("FAKE_RT_LOG");
    if (path) log_file = fopen(path, "a");
    const char *spec = getenv("FAKE_RT_FAIL");
    if (spec) snprintf(fail_spec, sizeof fail_spec, "%s", spec);
}

/* Whether this call of `api` fails: FAKE_RT_FAIL lists it, for every call or for its Nth. */
static int injected(const char *api) {
    unsigned slot = 0;
    while (slot < 64 && names_of[slot] && strcmp(names_of[slot], api) != 0) slot++;
    if (slot == 64) return 0;
    names_of[slot] = api;
    long call = ++calls_of[slot];
    char buf[sizeof fail_spec];
    memcpy(buf, fail_spec, sizeof buf);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        long nth = 0;
        if (colon) *colon = 0, nth = strtol(colon + 1, NULL, 10);
        if (strcmp(item, api) == 0 && (nth == 0 || nth == call)) return 1;
    }
    return 0;
}

/* {"api":"NAME", fields..., "ret":STATUS}: the fields as preformatted JSON members. */
static int logged(const char *api, const char *fields) {
    int status = injected(api) ? INVALID_VALUE : 0;
    if (log_file) {
        fprintf(log_file, "{\"api\":\"%s\"%s%s,\"ret\":%d}\n", api, *fields ? "," : "", fields, status);
        fflush(log_file);
    }
    return status;
}

static long long p(const void *pointer) { return (long long)(uintptr_t)pointer; }

struct descriptor { int64_t rows, cols, nnz; void *offsets; int offset_type; };
static struct descriptor *descriptor(int64_t rows, int64_t cols, int64_t nnz) {
    struct descriptor *d = malloc(sizeof *d);
    if (d) *d = (struct descriptor){rows, cols, nnz, NULL, 0};
    return d;
}

EXPORT const char *NAME(GetErrorString)(int status) { return status == INVALID_VALUE ? "invalid value" : "fake"; }

EXPORT int NAME(Create)(void **handle) {
    char f[64];
    *handle = descriptor(0, 0, 0);
    snprintf(f, sizeof f, "\"handle\":%lld", p(*handle));
    return logged(TEXT(Create), f);
}
EXPORT int NAME(Destroy)(void *handle) {
    char f[64];
    snprintf(f, sizeof f, "\"handle\":%lld", p(handle));
    free(handle);
    return logged(TEXT(Destroy), f);
}
EXPORT int NAME(SetStream)(void *handle, void *stream) {
    char f[96];
    snprintf(f, sizeof f, "\"handle\":%lld,\"stream\":%lld", p(handle), p(stream));
    return logged(TEXT(SetStream), f);
}
EXPORT int NAME(CreateDnVec)(void **out, int64_t size, void *values, int type) {
    char f[128];
    *out = descriptor(size, 1, size);
    snprintf(f, sizeof f, "\"size\":%lld,\"values\":%lld,\"type\":%d", (long long)size, p(values), type);
    return logged(TEXT(CreateDnVec), f);
}
EXPORT int NAME(CreateDnMat)(void **out, int64_t rows, int64_t cols, int64_t ld, void *values, int type, int order) {
    char f[160];
    *out = descriptor(rows, cols, rows * cols);
    snprintf(f, sizeof f, "\"rows\":%lld,\"cols\":%lld,\"ld\":%lld,\"type\":%d,\"order\":%d", (long long)rows,
             (long long)cols, (long long)ld, type, order);
    return logged(TEXT(CreateDnMat), f);
}
static int sparse(const char *api, void **out, int64_t rows, int64_t cols, int64_t nnz, int offset_type, int index_type,
                  int base, int type) {
    char f[192];
    *out = descriptor(rows, cols, nnz);
    snprintf(f, sizeof f, "\"rows\":%lld,\"cols\":%lld,\"nnz\":%lld,\"offset_type\":%d,\"index_type\":%d,\"base\":%d,"
             "\"type\":%d", (long long)rows, (long long)cols, (long long)nnz, offset_type, index_type, base, type);
    return logged(api, f);
}
EXPORT int NAME(CreateCoo)(void **out, int64_t rows, int64_t cols, int64_t nnz, void *r, void *c, void *v,
                             int index_type, int base, int type) {
    (void)r, (void)c, (void)v;
    return sparse(TEXT(CreateCoo), out, rows, cols, nnz, index_type, index_type, base, type);
}
EXPORT int NAME(CreateCsr)(void **out, int64_t rows, int64_t cols, int64_t nnz, void *o, void *i, void *v,
                             int offset_type, int index_type, int base, int type) {
    (void)i, (void)v;
    int status = sparse(TEXT(CreateCsr), out, rows, cols, nnz, offset_type, index_type, base, type);
    ((struct descriptor *)*out)->offsets = o, ((struct descriptor *)*out)->offset_type = offset_type;
    return status;
}
EXPORT int NAME(CreateCsc)(void **out, int64_t rows, int64_t cols, int64_t nnz, void *o, void *i, void *v,
                             int offset_type, int index_type, int base, int type) {
    (void)o, (void)i, (void)v;
    return sparse(TEXT(CreateCsc), out, rows, cols, nnz, offset_type, index_type, base, type);
}
static int destroy(const char *api, void *d) {
    char f[64];
    snprintf(f, sizeof f, "\"descriptor\":%lld", p(d));
    free(d);
    return logged(api, f);
}
EXPORT int NAME(DestroyDnVec)(void *d) { return destroy(TEXT(DestroyDnVec), d); }
EXPORT int NAME(DestroyDnMat)(void *d) { return destroy(TEXT(DestroyDnMat), d); }
EXPORT int NAME(DestroySpMat)(void *d) { return destroy(TEXT(DestroySpMat), d); }
EXPORT int NAME(SpMatGetSize)(const struct descriptor *d, int64_t *rows, int64_t *cols, int64_t *nnz) {
    *rows = d->rows, *cols = d->cols, *nnz = d->nnz;
    return logged(TEXT(SpMatGetSize), "");
}

/* alpha and beta as the f32 and f64 they are for those compute types (1: upstream's). */
static void scalars(char *f, size_t size, int op_a, int op_b, const void *alpha, const void *beta, int type) {
    double a = type == 0 ? *(const float *)alpha : *(const double *)alpha;
    double b = type == 0 ? *(const float *)beta : *(const double *)beta;
    snprintf(f, size, "\"op_a\":%d,\"op_b\":%d,\"alpha\":%g,\"beta\":%g,\"compute_type\":%d", op_a, op_b, a, b, type);
}
EXPORT int NAME(SpMV_bufferSize)(void *h, int op, const void *alpha, void *a, void *x, const void *beta, void *y,
                                   int type, int alg, size_t *size) {
    char f[192];
    (void)h, (void)a, (void)x, (void)y, (void)alg;
    scalars(f, sizeof f, op, -1, alpha, beta, type);
    *size = 256;
    return logged(TEXT(SpMV_bufferSize), f);
}
EXPORT int NAME(SpMV)(void *h, int op, const void *alpha, void *a, void *x, const void *beta, void *y, int type,
                        int alg, void *buffer) {
    char f[192];
    (void)h, (void)a, (void)x, (void)y, (void)alg, (void)buffer;
    scalars(f, sizeof f, op, -1, alpha, beta, type);
    return logged(TEXT(SpMV), f);
}
EXPORT int NAME(SpMM_bufferSize)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta,
                                   void *c, int type, int alg, size_t *size) {
    char f[192];
    (void)h, (void)a, (void)b, (void)c, (void)alg;
    scalars(f, sizeof f, op_a, op_b, alpha, beta, type);
    *size = 0; /* a zero-byte answer: the shim asks for 1 (upstream's) */
    return logged(TEXT(SpMM_bufferSize), f);
}
EXPORT int NAME(SpMM)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta, void *c,
                        int type, int alg, void *buffer) {
    char f[192];
    (void)h, (void)a, (void)b, (void)c, (void)alg, (void)buffer;
    scalars(f, sizeof f, op_a, op_b, alpha, beta, type);
    return logged(TEXT(SpMM), f);
}
EXPORT int NAME(CsrSetPointers)(struct descriptor *m, void *offsets, void *indices, void *values) {
    (void)indices, (void)values;
    m->offsets = offsets;
    return logged(TEXT(CsrSetPointers), "");
}
EXPORT int NAME(SDDMM_bufferSize)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta,
                                  void *c, int type, int alg, size_t *size) {
    char f[192];
    (void)h, (void)a, (void)b, (void)c, (void)alg;
    scalars(f, sizeof f, op_a, op_b, alpha, beta, type);
    *size = 128;
    return logged(TEXT(SDDMM_bufferSize), f);
}
EXPORT int NAME(SDDMM)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta, void *c,
                       int type, int alg, void *buffer) {
    char f[192];
    (void)h, (void)a, (void)b, (void)c, (void)alg, (void)buffer;
    scalars(f, sizeof f, op_a, op_b, alpha, beta, type);
    return logged(TEXT(SDDMM), f);
}

/* SpGEMM: a query (no buffer) answers 64 bytes; the product is empty (C's nnz 0, its offsets zeroed by copy),
 * so that a program reading C back reads a valid matrix. */
EXPORT int NAME(SpGEMM_createDescr)(void **out) {
    *out = descriptor(0, 0, 0);
    return logged(TEXT(SpGEMM_createDescr), "");
}
EXPORT int NAME(SpGEMM_destroyDescr)(void *d) { return destroy(TEXT(SpGEMM_destroyDescr), d); }
static int spgemm_phase(const char *api, struct descriptor *c, size_t *size, void *buffer) {
    char f[64];
    snprintf(f, sizeof f, "\"query\":%d", buffer == NULL);
    if (!buffer) *size = 64;
    else c->nnz = 0;
    return logged(api, f);
}
EXPORT int NAME(SpGEMM_workEstimation)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b,
                                       const void *beta, struct descriptor *c, int type, int alg, void *d,
                                       size_t *size, void *buffer) {
    (void)h, (void)op_a, (void)op_b, (void)alpha, (void)a, (void)b, (void)beta, (void)type, (void)alg, (void)d;
    return spgemm_phase(TEXT(SpGEMM_workEstimation), c, size, buffer);
}
EXPORT int NAME(SpGEMM_compute)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta,
                                struct descriptor *c, int type, int alg, void *d, size_t *size, void *buffer) {
    (void)h, (void)op_a, (void)op_b, (void)alpha, (void)a, (void)b, (void)beta, (void)type, (void)alg, (void)d;
    return spgemm_phase(TEXT(SpGEMM_compute), c, size, buffer);
}
EXPORT int NAME(SpGEMM_copy)(void *h, int op_a, int op_b, const void *alpha, void *a, void *b, const void *beta,
                             struct descriptor *c, int type, int alg, void *d) {
    (void)h, (void)op_a, (void)op_b, (void)alpha, (void)a, (void)b, (void)beta, (void)type, (void)alg, (void)d;
    if (c->offsets) memset(c->offsets, 0, (size_t)(c->rows + 1) * (c->offset_type == 2 ? 4 : 8));
    return logged(TEXT(SpGEMM_copy), "");
}
