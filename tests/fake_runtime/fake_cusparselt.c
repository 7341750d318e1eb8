/* A fake cuSPARSELt (libcusparseLt.so.0) beside the fake CUDA runtime: the functions mlir-offload's 2:4
 * shims call, logged one JSON object per line to $FAKE_RT_LOG with their scalar arguments; nothing is
 * computed. FAKE_RT_FAIL=api makes `api` fail with CUSPARSE_STATUS_INVALID_VALUE; FAKE_LT_NOT_2TO4=1 makes
 * cusparseLtSpMMAPruneCheck report the matrix as not 2:4. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define INVALID_VALUE 3

typedef struct { _Alignas(16) uint8_t data[512]; } opaque;

static FILE *log_file;
static void __attribute__((constructor)) loaded(void) {
    const char *path = getenv("FAKE_RT_LOG");
    if (path) log_file = fopen(path, "a");
}

static int failing(const char *api) {
    const char *spec = getenv("FAKE_RT_FAIL");
    if (!spec) return 0;
    size_t n = strlen(api);
    for (const char *p = strstr(spec, api); p; p = strstr(p + 1, api))
        if ((p == spec || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}
static int logged(const char *api, const char *fields) {
    int status = failing(api) ? INVALID_VALUE : 0;
    if (log_file) {
        fprintf(log_file, "{\"api\":\"%s\"%s%s,\"ret\":%d}\n", api, *fields ? "," : "", fields, status);
        fflush(log_file);
    }
    return status;
}

EXPORT const char *cusparseLtGetErrorString(int status) { return status == INVALID_VALUE ? "invalid value" : "fake"; }
EXPORT int cusparseLtInit(opaque *h) { (void)h; return logged("cusparseLtInit", ""); }
EXPORT int cusparseLtDestroy(const opaque *h) { (void)h; return logged("cusparseLtDestroy", ""); }
static int matrix(const char *api, int64_t rows, int64_t cols, int64_t ld, uint32_t alignment, int type, int order) {
    char f[160];
    snprintf(f, sizeof f, "\"rows\":%lld,\"cols\":%lld,\"ld\":%lld,\"alignment\":%u,\"type\":%d,\"order\":%d",
             (long long)rows, (long long)cols, (long long)ld, alignment, type, order);
    return logged(api, f);
}
EXPORT int cusparseLtDenseDescriptorInit(const opaque *h, opaque *m, int64_t rows, int64_t cols, int64_t ld,
                                         uint32_t alignment, int type, int order) {
    (void)h, (void)m;
    return matrix("cusparseLtDenseDescriptorInit", rows, cols, ld, alignment, type, order);
}
EXPORT int cusparseLtStructuredDescriptorInit(const opaque *h, opaque *m, int64_t rows, int64_t cols, int64_t ld,
                                              uint32_t alignment, int type, int order, int sparsity) {
    (void)h, (void)m, (void)sparsity;
    return matrix("cusparseLtStructuredDescriptorInit", rows, cols, ld, alignment, type, order);
}
EXPORT int cusparseLtMatDescriptorDestroy(const opaque *m) { (void)m; return logged("cusparseLtMatDescriptorDestroy", ""); }
EXPORT int cusparseLtMatmulDescriptorInit(const opaque *h, opaque *mm, int op_a, int op_b, const opaque *a,
                                          const opaque *b, const opaque *c, const opaque *d, int compute) {
    char f[96];
    (void)h, (void)mm, (void)a, (void)b, (void)c, (void)d;
    snprintf(f, sizeof f, "\"op_a\":%d,\"op_b\":%d,\"compute\":%d", op_a, op_b, compute);
    return logged("cusparseLtMatmulDescriptorInit", f);
}
EXPORT int cusparseLtMatmulAlgSelectionInit(const opaque *h, opaque *s, const opaque *mm, int alg) {
    char f[32];
    (void)h, (void)s, (void)mm;
    snprintf(f, sizeof f, "\"algorithm\":%d", alg);
    return logged("cusparseLtMatmulAlgSelectionInit", f);
}
EXPORT int cusparseLtMatmulAlgSelectionDestroy(const opaque *s) { (void)s; return logged("cusparseLtMatmulAlgSelectionDestroy", ""); }
EXPORT int cusparseLtMatmulPlanInit(const opaque *h, opaque *p, const opaque *mm, const opaque *s) {
    (void)h, (void)p, (void)mm, (void)s;
    return logged("cusparseLtMatmulPlanInit", "");
}
EXPORT int cusparseLtMatmulPlanDestroy(const opaque *p) { (void)p; return logged("cusparseLtMatmulPlanDestroy", ""); }
EXPORT int cusparseLtMatmulGetWorkspace(const opaque *h, const opaque *p, size_t *size) {
    (void)h, (void)p;
    *size = 4096;
    return logged("cusparseLtMatmulGetWorkspace", "");
}
EXPORT int cusparseLtSpMMACompressedSize(const opaque *h, const opaque *p, size_t *size, size_t *buffer) {
    (void)h, (void)p;
    *size = 1024, *buffer = 0;
    return logged("cusparseLtSpMMACompressedSize", "");
}
EXPORT int cusparseLtSpMMAPrune(const opaque *h, const opaque *mm, const void *in, void *out, int alg, void *stream) {
    char f[96];
    (void)h, (void)mm;
    snprintf(f, sizeof f, "\"in_place\":%d,\"algorithm\":%d,\"stream\":%lld", in == out, alg, (long long)(uintptr_t)stream);
    return logged("cusparseLtSpMMAPrune", f);
}
EXPORT int cusparseLtSpMMAPruneCheck(const opaque *h, const opaque *mm, const void *in, int *valid, void *stream) {
    (void)h, (void)mm, (void)in, (void)stream;
    *valid = getenv("FAKE_LT_NOT_2TO4") ? 1 : 0;
    return logged("cusparseLtSpMMAPruneCheck", "");
}
EXPORT int cusparseLtSpMMACompress(const opaque *h, const opaque *p, const void *dense, void *compressed, void *buffer,
                                   void *stream) {
    (void)h, (void)p, (void)dense, (void)compressed, (void)buffer, (void)stream;
    return logged("cusparseLtSpMMACompress", "");
}
EXPORT int cusparseLtMatmul(const opaque *h, const opaque *p, const void *alpha, const void *a, const void *b,
                            const void *beta, const void *c, void *d, void *workspace, void **streams, int count) {
    char f[128];
    (void)h, (void)p, (void)a, (void)b, (void)workspace, (void)streams;
    snprintf(f, sizeof f, "\"alpha\":%g,\"beta\":%g,\"c_is_d\":%d,\"streams\":%d", *(const float *)alpha,
             *(const float *)beta, c == d, count);
    return logged("cusparseLtMatmul", f);
}
