/* A fake CUDA runtime (libcudart.so.13) or, built with -DFAKE_HIP, a fake HIP runtime
 * (libamdhip64.so): the registration entry points clang's linker wrapper calls, the launch call and
 * the memory / stream / event / device calls, all on host memory. No kernel runs.
 *
 * Every call is logged as one JSON object per line to the file named by $FAKE_RT_LOG (append, flushed
 * per line), so tests can assert what an executable registered and launched.
 *
 * Environment:
 *   FAKE_RT_LOG=path            where the log goes (no log when unset)
 *   FAKE_RT_FAIL=api[:N][,...]  make `api` fail (every call, or only its Nth call) with its real error
 *   FAKE_RT_ARG_SIZES=k:4,8;k2:8  argument sizes per kernel, for kernels whose sizes the fatbin does
 *                               not give (HIP always; CUDA when the cubin is compressed)
 *   FAKE_RT_DEVICE_COUNT=N      devices reported (default 1)
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned x, y, z; } dim3;
typedef int rt_error;

#ifdef FAKE_HIP
#define RUNTIME "hip"
#define API(name) hip##name
#define REG(name) __hip##name
#define ERR(name) hipError##name
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorOutOfMemory = 2, hipErrorNotInitialized = 3,
       hipErrorInvalidDevicePointer = 17, hipErrorInvalidMemcpyDirection = 21,
       hipErrorInvalidDeviceFunction = 98, hipErrorNoDevice = 100, hipErrorInvalidDevice = 101,
       hipErrorInvalidHandle = 400, hipErrorNotReady = 600, hipErrorHostMemoryAlreadyRegistered = 712,
       hipErrorHostMemoryNotRegistered = 713, hipErrorLaunchFailure = 719 };
#define ERR_NOMEM hipErrorOutOfMemory
#define ERR_HANDLE hipErrorInvalidHandle
#define ERR_INIT hipErrorNotInitialized
#define NO_DEVICE_TEXT "no ROCm-capable device is detected"
#define FATBIN_WRAPPER_MAGIC 0x48495046u /* "HIPF" */
#else
#define RUNTIME "cuda"
#define API(name) cuda##name
#define REG(name) __cuda##name
#define ERR(name) cudaError##name
/* Values and texts from CUDA 13's driver_types.h and libcudart.so.13's cudaGetErrorString. */
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
       cudaErrorInitializationError = 3, cudaErrorInvalidDevicePointer = 17,
       cudaErrorInvalidMemcpyDirection = 21, cudaErrorInvalidDeviceFunction = 98,
       cudaErrorNoDevice = 100, cudaErrorInvalidDevice = 101, cudaErrorInvalidResourceHandle = 400,
       cudaErrorNotReady = 600, cudaErrorHostMemoryAlreadyRegistered = 712,
       cudaErrorHostMemoryNotRegistered = 713, cudaErrorLaunchFailure = 719 };
#define ERR_NOMEM cudaErrorMemoryAllocation
#define ERR_HANDLE cudaErrorInvalidResourceHandle
#define ERR_INIT cudaErrorInitializationError
#define NO_DEVICE_TEXT "no CUDA-capable device is detected"
#define FATBIN_WRAPPER_MAGIC 0x466243b1u
#endif
#define SUCCESS 0
#define EXPORT __attribute__((visibility("default")))

struct error_info { int code; const char *suffix; const char *text; };
static const struct error_info error_table[] = {
    {0, NULL, "no error"},
    {1, "InvalidValue", "invalid argument"},
#ifdef FAKE_HIP
    {2, "OutOfMemory", "out of memory"},
    {3, "NotInitialized", "initialization error"},
    {400, "InvalidHandle", "invalid resource handle"},
#else
    {2, "MemoryAllocation", "out of memory"},
    {3, "InitializationError", "initialization error"},
    {400, "InvalidResourceHandle", "invalid resource handle"},
#endif
    {17, "InvalidDevicePointer", "invalid device pointer"},
    {21, "InvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {98, "InvalidDeviceFunction", "invalid device function"},
    {100, "NoDevice", NO_DEVICE_TEXT},
    {101, "InvalidDevice", "invalid device ordinal"},
    {600, "NotReady", "device not ready"},
    {712, "HostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {713, "HostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {719, "LaunchFailure", "unspecified launch failure"},
};

/* ------------------------------------------------------------------------------------------------
 * JSON log: one object per line. */
static FILE *log_file;
static char line[1 << 16];
static size_t line_len;

static void put(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (line_len < sizeof line) {
        int n = vsnprintf(line + line_len, sizeof line - line_len, fmt, ap);
        if (n > 0) line_len += (size_t)n;
        if (line_len > sizeof line - 1) line_len = sizeof line - 1;
    }
    va_end(ap);
}
static void put_escaped(const char *s) {
    put("\"");
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put("\\%c", c);
        else if (c < 0x20) put("\\u%04x", c);
        else put("%c", c);
    }
    put("\"");
}
static void log_begin(const char *api) { line_len = 0; put("{\"api\":"); put_escaped(api); }
static void log_str(const char *key, const char *value) {
    put(",\"%s\":", key);
    if (value) put_escaped(value); else put("null");
}
static void log_int(const char *key, long long value) { put(",\"%s\":%lld", key, value); }
static void log_ptr(const char *key, const void *p) { put(",\"%s\":\"0x%llx\"", key, (unsigned long long)(uintptr_t)p); }
static void log_hex(const void *data, size_t size) {
    put("\"");
    for (size_t i = 0; i < size; ++i) put("%02x", ((const unsigned char *)data)[i]);
    put("\"");
}
static void log_end(void) {
    put("}\n");
    if (log_file) { fwrite(line, 1, line_len, log_file); fflush(log_file); }
}

/* ------------------------------------------------------------------------------------------------
 * Failure injection: FAKE_RT_FAIL=api[:N],... */
#define MAX_FAILS 32
static struct { char name[64]; long nth; long calls; } fails[MAX_FAILS];
static int num_fails;
static rt_error last_error;

static void parse_fail_spec(void) {
    const char *spec = getenv("FAKE_RT_FAIL");
    if (!spec) return;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item && num_fails < MAX_FAILS;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        long nth = 0;
        if (colon) { *colon = 0; nth = strtol(colon + 1, NULL, 10); }
        snprintf(fails[num_fails].name, sizeof fails[num_fails].name, "%s", item);
        fails[num_fails].nth = nth;
        num_fails++;
    }
}
/* True when this call of `api` must fail (counts the calls of each listed api). */
static int injected_failure(const char *api) {
    int fail = 0;
    for (int i = 0; i < num_fails; ++i) {
        if (strcmp(fails[i].name, api) != 0) continue;
        fails[i].calls++;
        if (fails[i].nth == 0 || fails[i].nth == fails[i].calls) fail = 1;
    }
    return fail;
}
static const char *error_name(int code);
static rt_error finish(rt_error err) {
    log_int("ret", err);
    if (err != SUCCESS) { log_str("error", error_name(err)); last_error = err; }
    log_end();
    return err;
}
/* Starts the log line of `api`; returns nonzero when the call is to fail with `code`. */
#define BEGIN(code_if_injected)                                                                      \
    log_begin(__func__);                                                                             \
    if (injected_failure(__func__)) { log_int("injected", 1); return finish(code_if_injected); }

/* ------------------------------------------------------------------------------------------------
 * Memory: every allocation the fake hands out, so copies and frees can be checked. */
enum mem_kind { MEM_DEVICE, MEM_MANAGED, MEM_HOST, MEM_REGISTERED, MEM_SYMBOL };
struct allocation { char *ptr; size_t size; enum mem_kind kind; const void *host_var; };
static struct allocation *allocations;
static size_t num_allocations, cap_allocations;

static void add_allocation(void *ptr, size_t size, enum mem_kind kind, const void *host_var) {
    if (num_allocations == cap_allocations) {
        cap_allocations = cap_allocations ? 2 * cap_allocations : 64;
        allocations = realloc(allocations, cap_allocations * sizeof *allocations);
    }
    allocations[num_allocations++] = (struct allocation){ptr, size, kind, host_var};
}
static struct allocation *find_allocation(const void *p, size_t size) {
    const char *c = p;
    for (size_t i = 0; i < num_allocations; ++i) {
        struct allocation *a = &allocations[i];
        if (c >= a->ptr && c + size <= a->ptr + (a->size ? a->size : 1)) return a;
    }
    return NULL;
}
static int is_device_accessible(const void *p, size_t size) {
    struct allocation *a = find_allocation(p, size);
    return a && (a->kind == MEM_DEVICE || a->kind == MEM_MANAGED || a->kind == MEM_SYMBOL ||
                 a->kind == MEM_HOST || a->kind == MEM_REGISTERED);
}
static int remove_allocation(const void *p, enum mem_kind kind) {
    for (size_t i = 0; i < num_allocations; ++i)
        if (allocations[i].ptr == p && allocations[i].kind == kind) {
            allocations[i] = allocations[--num_allocations];
            return 1;
        }
    return 0;
}
static rt_error alloc_common(void **out, size_t size, enum mem_kind kind) {
    if (!out) return finish(ERR(InvalidValue));
    void *p = calloc(1, size ? size : 1);
    if (!p) return finish(ERR_NOMEM);
    add_allocation(p, size, kind, NULL);
    *out = p;
    log_ptr("ptr", p);
    return finish(SUCCESS);
}
static rt_error free_common(void *p, enum mem_kind kind) {
    log_ptr("ptr", p);
    if (!p) return finish(SUCCESS);
    if (!remove_allocation(p, kind)) return finish(kind == MEM_HOST ? ERR(InvalidValue) : ERR(InvalidDevicePointer));
    free(p);
    return finish(SUCCESS);
}

/* ------------------------------------------------------------------------------------------------
 * Streams and events are small objects with an id (0 is the default stream). */
struct handle { int id; unsigned flags; int is_event; };
#define MAX_HANDLES 1024
static struct handle *handles[MAX_HANDLES];
static int next_stream_id = 1, next_event_id = 1;

static int handle_id(const void *h, int is_event, int *ok) {
    *ok = 1;
    if (!h) return 0;
    /* CUDA's cudaStreamLegacy (1) and cudaStreamPerThread (2) are valid special handles. */
    if (!is_event && (uintptr_t)h <= 2) return -(int)(uintptr_t)h;
    for (int i = 0; i < MAX_HANDLES; ++i)
        if (handles[i] == h && handles[i]->is_event == is_event) return handles[i]->id;
    *ok = 0;
    return -1000;
}
static struct handle *new_handle(int is_event, unsigned flags) {
    for (int i = 0; i < MAX_HANDLES; ++i)
        if (!handles[i]) {
            struct handle *h = calloc(1, sizeof *h);
            h->id = is_event ? next_event_id++ : next_stream_id++;
            h->flags = flags;
            h->is_event = is_event;
            handles[i] = h;
            return h;
        }
    return NULL;
}
static int delete_handle(void *h, int is_event) {
    for (int i = 0; i < MAX_HANDLES; ++i)
        if (handles[i] && handles[i] == h && handles[i]->is_event == is_event) {
            free(handles[i]);
            handles[i] = NULL;
            return 1;
        }
    return 0;
}
/* Logs `key` as the stream/event id; returns 0 for an unknown handle. */
static int log_handle(const char *key, const void *h, int is_event) {
    int ok;
    int id = handle_id(h, is_event, &ok);
    if (ok) log_int(key, id); else log_ptr(key, h);
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * Kernels: host handle -> device name, and each kernel's argument sizes. */
#define MAX_KERNELS 4096
#define MAX_ARGS 256
/* max_dynamic_shared / non_portable_cluster: what cudaFuncSetAttribute set (the real runtime refuses a
 * launch over 48 KiB of dynamic shared memory, or a cluster over 8 blocks, without them). */
static struct kernel {
    const void *handle;
    char *name;
    long long max_dynamic_shared;
    int non_portable_cluster;
} kernels[MAX_KERNELS];
static int num_kernels;

/* Images found in registered fatbins (CUDA: uncompressed ELF cubins). */
#define MAX_IMAGES 256
static struct { const unsigned char *data; size_t size; } cubins[MAX_IMAGES];
static int num_cubins;

static struct kernel *kernel_record(const void *handle) {
    for (int i = 0; i < num_kernels; ++i)
        if (kernels[i].handle == handle) return &kernels[i];
    return NULL;
}

static const char *kernel_name(const void *handle) {
    const struct kernel *k = kernel_record(handle);
    return k ? k->name : NULL;
}

/* FAKE_RT_ARG_SIZES="kernel:4,8,8;kernel2:8" -> sizes of `name`'s arguments; -1 when not listed. */
static int arg_sizes_from_env(const char *name, size_t *sizes) {
    const char *spec = getenv("FAKE_RT_ARG_SIZES");
    if (!spec) return -1;
    size_t name_len = strlen(name);
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ';');
        if (!end) end = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon && (size_t)(colon - p) == name_len && memcmp(p, name, name_len) == 0) {
            int n = 0;
            for (const char *q = colon + 1; q < end && n < MAX_ARGS;) {
                char *next;
                long v = strtol(q, &next, 10);
                if (next == q) break;
                sizes[n++] = (size_t)v;
                q = (*next == ',') ? next + 1 : next;
            }
            return n;
        }
        p = *end ? end + 1 : end;
    }
    return -1;
}

/* The cubin's `.nv.info.<kernel>` section lists EIATTR_KPARAM_INFO (0x17) records:
 * {u32 index, u16 ordinal, u16 offset, u32 flags (size in bytes = flags >> 18)}. Records are
 * {u8 format, u8 attribute, ...}: format 4 (EIFMT_SVAL) carries a u16 size and that many bytes,
 * formats 1..3 are 4 bytes in all. Returns the number of arguments, -1 when not found. */
static int arg_sizes_from_cubin(const unsigned char *elf, size_t elf_size, const char *name, size_t *sizes) {
    if (elf_size < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2) return -1;
    uint64_t shoff; uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    memcpy(&shstrndx, elf + 0x3e, 2);
    if (shentsize < 64 || shoff + (uint64_t)shnum * shentsize > elf_size || shstrndx >= shnum) return -1;
    uint64_t strtab_off;
    memcpy(&strtab_off, elf + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
    char wanted[512];
    snprintf(wanted, sizeof wanted, ".nv.info.%s", name);
    for (unsigned i = 0; i < shnum; ++i) {
        const unsigned char *sh = elf + shoff + (uint64_t)i * shentsize;
        uint32_t name_off; uint64_t off, size;
        memcpy(&name_off, sh, 4);
        memcpy(&off, sh + 0x18, 8);
        memcpy(&size, sh + 0x20, 8);
        if (strtab_off + name_off >= elf_size || off + size > elf_size) continue;
        const char *sec_name = (const char *)elf + strtab_off + name_off;
        if (strnlen(sec_name, elf_size - strtab_off - name_off) == elf_size - strtab_off - name_off) continue;
        if (strcmp(sec_name, wanted) != 0) continue;
        int count = 0;
        for (uint64_t p = off; p + 4 <= off + size;) {
            unsigned format = elf[p], attribute = elf[p + 1];
            if (format == 4) {
                uint16_t len;
                memcpy(&len, elf + p + 2, 2);
                if (attribute == 0x17 && len >= 12 && p + 4 + 12 <= off + size) {
                    uint16_t ordinal; uint32_t flags;
                    memcpy(&ordinal, elf + p + 4 + 4, 2);
                    memcpy(&flags, elf + p + 4 + 8, 4);
                    if (ordinal < MAX_ARGS) {
                        sizes[ordinal] = flags >> 18;
                        if (ordinal + 1 > count) count = ordinal + 1;
                    }
                }
                p += 4 + (uint64_t)len;
            } else {
                p += 4;
            }
        }
        return count;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------------
 * Registration. */
struct fatbin_wrapper { uint32_t magic; uint32_t version; const void *data; const void *unused; };
static struct registration { const struct fatbin_wrapper *wrapper; int id; } registrations[64];
static int num_registrations;

static void __attribute__((constructor)) fake_runtime_loaded(void) {
    const char *path = getenv("FAKE_RT_LOG");
    if (path) log_file = fopen(path, "a");
    parse_fail_spec();
    log_begin("loaded");
    log_str("runtime", RUNTIME);
    log_int("pid", getpid());
    log_end();
}

#ifndef FAKE_HIP
/* CUDA fatbin: header {u32 magic 0xBA55ED50, u16 version, u16 header size, u64 payload size}, then
 * entries {u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload size, u32 compressed
 * size, u32 ?, u16 minor, u16 major, u32 sm, u32 name offset, u32 name size, u64 flags (0x2000:
 * compressed; 0x8000: zstd-compressed, CUDA 13), u64 0, u64 uncompressed size}, each followed by its payload. */
static void log_cuda_fatbin(const unsigned char *fb) {
    uint32_t magic; uint16_t version, header_size; uint64_t fat_size;
    memcpy(&magic, fb, 4);
    log_int("fatbin_magic", magic);
    if (magic != 0xBA55ED50u) return;
    memcpy(&version, fb + 4, 2);
    memcpy(&header_size, fb + 6, 2);
    memcpy(&fat_size, fb + 8, 8);
    log_int("fatbin_size", (long long)fat_size);
    put(",\"images\":[");
    int first = 1;
    for (uint64_t p = header_size; p + 64 <= header_size + fat_size;) {
        const unsigned char *e = fb + p;
        uint16_t kind; uint32_t entry_header; uint64_t payload, flags; uint32_t sm;
        memcpy(&kind, e, 2);
        memcpy(&entry_header, e + 4, 4);
        memcpy(&payload, e + 8, 8);
        memcpy(&sm, e + 0x1c, 4);
        memcpy(&flags, e + 0x28, 8);
        int compressed = (flags & (0x2000 | 0x8000)) != 0;
        put("%s{\"kind\":\"%s\",\"sm\":%u,\"size\":%llu,\"compressed\":%s}", first ? "" : ",",
            kind == 2 ? "elf" : kind == 1 ? "ptx" : "other", sm, (unsigned long long)payload,
            compressed ? "true" : "false");
        first = 0;
        if (kind == 2 && !compressed && num_cubins < MAX_IMAGES) {
            cubins[num_cubins].data = e + entry_header;
            cubins[num_cubins].size = payload;
            num_cubins++;
        }
        if (entry_header == 0) break;
        p += entry_header + payload;
    }
    put("]");
}
#else
/* HIP fatbin: a clang offload bundle "__CLANG_OFFLOAD_BUNDLE__", u64 count, then per entry
 * {u64 offset, u64 size, u64 id length, id}; or a compressed bundle "CCOB". */
static void log_hip_fatbin(const unsigned char *fb) {
    if (memcmp(fb, "CCOB", 4) == 0) { log_str("bundle", "compressed"); return; }
    if (memcmp(fb, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0) { log_str("bundle", "unknown"); return; }
    log_str("bundle", "clang-offload-bundle");
    uint64_t count;
    memcpy(&count, fb + 24, 8);
    put(",\"images\":[");
    const unsigned char *p = fb + 32;
    for (uint64_t i = 0; i < count && i < 256; ++i) {
        uint64_t offset, size, id_len;
        memcpy(&offset, p, 8);
        memcpy(&size, p + 8, 8);
        memcpy(&id_len, p + 16, 8);
        char id[512];
        size_t n = id_len < sizeof id - 1 ? id_len : sizeof id - 1;
        memcpy(id, p + 24, n);
        id[n] = 0;
        put("%s{\"id\":", i ? "," : "");
        put_escaped(id);
        put(",\"size\":%llu}", (unsigned long long)size);
        p += 24 + id_len;
    }
    put("]");
}
#endif

EXPORT void **REG(RegisterFatBinary)(const void *fatbin_wrapper) {
    const struct fatbin_wrapper *w = fatbin_wrapper;
    log_begin(__func__);
    log_int("wrapper_magic", w ? w->magic : 0);
    log_int("wrapper_version", w ? w->version : 0);
    if (w && w->magic == FATBIN_WRAPPER_MAGIC && w->data) {
#ifdef FAKE_HIP
        log_hip_fatbin(w->data);
#else
        log_cuda_fatbin(w->data);
#endif
    }
    struct registration *r = &registrations[num_registrations % 64];
    r->wrapper = w;
    r->id = ++num_registrations;
    log_int("handle", r->id);
    log_end();
    return (void **)r;
}

#ifndef FAKE_HIP
EXPORT void __cudaRegisterFatBinaryEnd(void **handle) {
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_end();
}
#endif

EXPORT void REG(UnregisterFatBinary)(void **handle) {
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_end();
}

EXPORT void REG(RegisterFunction)(void **handle, const char *host_fun, char *device_fun,
                                  const char *device_name, int thread_limit, void *tid, void *bid,
                                  dim3 *block_dim, dim3 *grid_dim, int *warp_size) {
    (void)tid; (void)bid; (void)block_dim; (void)grid_dim; (void)warp_size;
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_str("name", device_name);
    log_str("device_fun", device_fun);
    log_int("thread_limit", thread_limit);
    if (num_kernels < MAX_KERNELS) {
        kernels[num_kernels].handle = host_fun;
        kernels[num_kernels].name = strdup(device_name ? device_name : "");
        kernels[num_kernels].max_dynamic_shared = 48 * 1024;
        kernels[num_kernels].non_portable_cluster = 0;
        num_kernels++;
    }
    log_end();
}

EXPORT void REG(RegisterVar)(void **handle, char *host_var, char *device_address, const char *device_name,
                             int ext, size_t size, int constant, int global) {
    (void)device_address;
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_str("name", device_name);
    log_int("size", (long long)size);
    log_int("constant", constant);
    log_int("extern", ext);
    log_int("global", global);
    /* The variable's device storage: host memory, initialized from the host shadow. */
    void *storage = calloc(1, size ? size : 1);
    if (host_var && size) memcpy(storage, host_var, size);
    add_allocation(storage, size, MEM_SYMBOL, host_var);
    log_end();
}

EXPORT void REG(RegisterManagedVar)(void *handle, void **host_var_ptr, void *init_value, const char *name,
                                    size_t size, unsigned align) {
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_str("name", name);
    log_int("size", (long long)size);
    log_int("align", align);
    void *storage = calloc(1, size ? size : 1);
    if (init_value && size) memcpy(storage, init_value, size);
    add_allocation(storage, size, MEM_MANAGED, host_var_ptr);
    if (host_var_ptr) *host_var_ptr = storage;
    log_end();
}

EXPORT void REG(RegisterSurface)(void **handle, const void *host_var, const void **device_address,
                                 const char *device_name, int dim, int ext) {
    (void)host_var; (void)device_address;
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_str("name", device_name);
    log_int("dim", dim);
    log_int("extern", ext);
    log_end();
}

EXPORT void REG(RegisterTexture)(void **handle, const void *host_var, const void **device_address,
                                 const char *device_name, int dim, int norm, int ext) {
    (void)host_var; (void)device_address;
    log_begin(__func__);
    log_int("handle", handle ? ((struct registration *)handle)->id : 0);
    log_str("name", device_name);
    log_int("dim", dim);
    log_int("normalized", norm);
    log_int("extern", ext);
    log_end();
}

/* ------------------------------------------------------------------------------------------------
 * Launch. */
static struct { dim3 grid, block; size_t shmem; void *stream; int valid; } call_config[64];
static int call_config_depth;

EXPORT rt_error REG(PushCallConfiguration)(dim3 grid, dim3 block, size_t shmem, void *stream) {
    BEGIN(ERR(InvalidValue));
    put(",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", grid.x, grid.y, grid.z, block.x, block.y, block.z);
    log_int("shared_mem", (long long)shmem);
    log_handle("stream", stream, 0);
    if (call_config_depth >= 64) return finish(ERR(InvalidValue));
    call_config[call_config_depth].grid = grid;
    call_config[call_config_depth].block = block;
    call_config[call_config_depth].shmem = shmem;
    call_config[call_config_depth].stream = stream;
    call_config_depth++;
    return finish(SUCCESS);
}

EXPORT rt_error REG(PopCallConfiguration)(dim3 *grid, dim3 *block, size_t *shmem, void **stream) {
    BEGIN(ERR(InvalidValue));
    if (call_config_depth == 0) return finish(ERR(InvalidValue));
    call_config_depth--;
    if (grid) *grid = call_config[call_config_depth].grid;
    if (block) *block = call_config[call_config_depth].block;
    if (shmem) *shmem = call_config[call_config_depth].shmem;
    if (stream) *stream = call_config[call_config_depth].stream;
    return finish(SUCCESS);
}

static rt_error launch_common(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                              void *stream);

EXPORT rt_error API(LaunchKernel)(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                  void *stream) {
    BEGIN(ERR(LaunchFailure));
    return launch_common(func, grid, block, args, shmem, stream);
}

#ifndef FAKE_HIP
/* cudaLaunchKernelExC: the launch config by pointer (CUDA 13 driver_types.h layout); the cluster
 * dimension attribute (id 4) is logged as "cluster", any other attribute id as "attrs". */
typedef struct { int id; char pad[4]; union { char bytes[64]; dim3 cluster; } val; } fake_launch_attribute;
typedef struct {
    dim3 grid, block;
    size_t shmem;
    void *stream;
    fake_launch_attribute *attrs;
    unsigned num_attrs;
} fake_launch_config;
enum { FAKE_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

EXPORT rt_error cudaLaunchKernelExC(const fake_launch_config *config, const void *func, void **args) {
    BEGIN(ERR(LaunchFailure));
    if (!config || (config->num_attrs && !config->attrs)) return finish(ERR(InvalidValue));
    put(",\"attrs\":[");
    for (unsigned i = 0; i < config->num_attrs; ++i) put("%s%d", i ? "," : "", config->attrs[i].id);
    put("]");
    for (unsigned i = 0; i < config->num_attrs; ++i) {
        const fake_launch_attribute *a = &config->attrs[i];
        if (a->id != FAKE_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
        put(",\"cluster\":[%u,%u,%u]", a->val.cluster.x, a->val.cluster.y, a->val.cluster.z);
        dim3 c = a->val.cluster, g = config->grid;
        /* The real runtime refuses a grid that is not a whole number of clusters, and a cluster of more than
         * 8 blocks unless the kernel allows non-portable sizes (16 at most on sm_90). */
        if (!c.x || !c.y || !c.z || g.x % c.x || g.y % c.y || g.z % c.z) return finish(ERR(InvalidValue));
        const struct kernel *k = kernel_record(func);
        unsigned long long blocks = (unsigned long long)c.x * c.y * c.z;
        if (blocks > 16 || (blocks > 8 && !(k && k->non_portable_cluster))) return finish(ERR(InvalidValue));
    }
    return launch_common(func, config->grid, config->block, args, config->shmem, config->stream);
}

/* cudaFuncAttributeMaxDynamicSharedMemorySize (8) and cudaFuncAttributeNonPortableClusterSizeAllowed (14). */
EXPORT rt_error cudaFuncSetAttribute(const void *func, int attr, int value) {
    BEGIN(ERR(InvalidValue));
    struct kernel *k = kernel_record(func);
    log_str("kernel", k ? k->name : NULL);
    log_int("attr", attr);
    log_int("value", value);
    if (!k) return finish(ERR(InvalidDeviceFunction));
    if (attr == 8 && value >= 0 && value <= 227 * 1024) k->max_dynamic_shared = value;
    else if (attr == 14) k->non_portable_cluster = value != 0;
    else return finish(ERR(InvalidValue));
    return finish(SUCCESS);
}

/* cuTensorMapEncodeTiled as cudaGetDriverEntryPointByVersion hands it out: logs its arguments (the
 * dimension arrays up to the rank) and fills the 128-byte map with a recognizable pattern. */
static int fake_tensor_map_encode_tiled(void *map, int data_type, unsigned rank, void *address,
                                        const unsigned long long *global_dim,
                                        const unsigned long long *global_strides, const unsigned *box_dim,
                                        const unsigned *element_strides, int interleave, int swizzle,
                                        int l2_promotion, int oob_fill) {
    log_begin("cuTensorMapEncodeTiled");
    log_int("data_type", data_type);
    log_int("rank", rank);
    log_ptr("address", address);
    if (rank < 1 || rank > 5 || !map) { log_int("ret", 1); log_end(); return 1; /* CUDA_ERROR_INVALID_VALUE */ }
    put(",\"global_dim\":[");
    for (unsigned i = 0; i < rank; ++i) put("%s%llu", i ? "," : "", global_dim[i]);
    put("],\"global_strides\":[");
    for (unsigned i = 0; i + 1 < rank; ++i) put("%s%llu", i ? "," : "", global_strides[i]);
    put("],\"box_dim\":[");
    for (unsigned i = 0; i < rank; ++i) put("%s%u", i ? "," : "", box_dim[i]);
    put("],\"element_strides\":[");
    for (unsigned i = 0; i < rank; ++i) put("%s%u", i ? "," : "", element_strides[i]);
    put("]");
    log_int("interleave", interleave);
    log_int("swizzle", swizzle);
    log_int("l2_promotion", l2_promotion);
    log_int("oob_fill", oob_fill);
    log_ptr("map", map);
    memset(map, 0xA5, 128);
    log_int("ret", 0);
    log_end();
    return 0;
}

EXPORT rt_error cudaGetDriverEntryPointByVersion(const char *symbol, void **func, unsigned version,
                                                 unsigned long long flags, int *status) {
    BEGIN(ERR(InvalidValue));
    log_str("symbol", symbol);
    log_int("version", version);
    log_int("flags", (long long)flags);
    if (!symbol || !func) return finish(ERR(InvalidValue));
    int found = strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
    *func = found ? (void *)fake_tensor_map_encode_tiled : NULL;
    if (status) *status = found ? 0 : 1; /* cudaDriverEntryPointSuccess / SymbolNotFound */
    return finish(SUCCESS);
}

EXPORT rt_error cudaGetDriverEntryPoint(const char *symbol, void **func, unsigned long long flags,
                                        int *status) {
    return cudaGetDriverEntryPointByVersion(symbol, func, 12000, flags, status);
}
#endif

static rt_error launch_common(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                              void *stream) {
    const char *name = kernel_name(func);
    log_str("kernel", name);
    log_ptr("handle", func);
    put(",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", grid.x, grid.y, grid.z, block.x, block.y, block.z);
    log_int("shared_mem", (long long)shmem);
    int stream_ok = log_handle("stream", stream, 0);
    if (!name) return finish(ERR(InvalidDeviceFunction));
    if (!stream_ok) return finish(ERR_HANDLE);
    size_t sizes[MAX_ARGS] = {0};
    const char *source = "env";
    int n = arg_sizes_from_env(name, sizes);
    for (int i = 0; n < 0 && i < num_cubins; ++i) {
        n = arg_sizes_from_cubin(cubins[i].data, cubins[i].size, name, sizes);
        source = "cubin";
    }
    if (n < 0) {
        log_str("arg_sizes_from", NULL);
        put(",\"args\":null");
    } else {
        log_str("arg_sizes_from", source);
        put(",\"args\":[");
        for (int i = 0; i < n; ++i) {
            if (i) put(",");
            if (args && args[i]) log_hex(args[i], sizes[i]); else put("null");
        }
        put("]");
    }
#ifndef FAKE_HIP
    if ((long long)shmem > kernel_record(func)->max_dynamic_shared) return finish(ERR(InvalidValue));
#endif
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0 ||
        (unsigned long long)block.x * block.y * block.z > 1024)
        return finish(ERR(InvalidValue));
    return finish(SUCCESS);
}

/* ------------------------------------------------------------------------------------------------
 * Memory. */
EXPORT rt_error API(Malloc)(void **ptr, size_t size) {
    BEGIN(ERR_NOMEM);
    log_int("size", (long long)size);
    return alloc_common(ptr, size, MEM_DEVICE);
}
EXPORT rt_error API(MallocManaged)(void **ptr, size_t size, unsigned flags) {
    BEGIN(ERR_NOMEM);
    log_int("size", (long long)size);
    log_int("flags", flags);
    return alloc_common(ptr, size, MEM_MANAGED);
}
EXPORT rt_error API(MallocAsync)(void **ptr, size_t size, void *stream) {
    BEGIN(ERR_NOMEM);
    log_int("size", (long long)size);
    if (!log_handle("stream", stream, 0)) return finish(ERR_HANDLE);
    return alloc_common(ptr, size, MEM_DEVICE);
}
EXPORT rt_error API(Free)(void *ptr) {
    BEGIN(ERR(InvalidValue));
    /* The real cudaFree/hipFree also free managed (cudaMallocManaged) memory. */
    if (ptr && remove_allocation(ptr, MEM_MANAGED)) { log_ptr("ptr", ptr); free(ptr); return finish(SUCCESS); }
    return free_common(ptr, MEM_DEVICE);
}
EXPORT rt_error API(FreeAsync)(void *ptr, void *stream) {
    BEGIN(ERR(InvalidValue));
    if (!log_handle("stream", stream, 0)) return finish(ERR_HANDLE);
    return free_common(ptr, MEM_DEVICE);
}

static rt_error malloc_host(void **ptr, size_t size, unsigned flags) {
    log_int("size", (long long)size);
    log_int("flags", flags);
    return alloc_common(ptr, size, MEM_HOST);
}
static rt_error free_host(void *ptr) { return free_common(ptr, MEM_HOST); }
#ifdef FAKE_HIP
EXPORT rt_error hipHostMalloc(void **ptr, size_t size, unsigned flags) { BEGIN(ERR_NOMEM); return malloc_host(ptr, size, flags); }
EXPORT rt_error hipMallocHost(void **ptr, size_t size) { BEGIN(ERR_NOMEM); return malloc_host(ptr, size, 0); }
EXPORT rt_error hipHostFree(void *ptr) { BEGIN(ERR(InvalidValue)); return free_host(ptr); }
EXPORT rt_error hipFreeHost(void *ptr) { BEGIN(ERR(InvalidValue)); return free_host(ptr); }
#else
EXPORT rt_error cudaMallocHost(void **ptr, size_t size) { BEGIN(ERR_NOMEM); return malloc_host(ptr, size, 0); }
EXPORT rt_error cudaHostAlloc(void **ptr, size_t size, unsigned flags) { BEGIN(ERR_NOMEM); return malloc_host(ptr, size, flags); }
EXPORT rt_error cudaFreeHost(void *ptr) { BEGIN(ERR(InvalidValue)); return free_host(ptr); }
#endif

EXPORT rt_error API(HostRegister)(void *ptr, size_t size, unsigned flags) {
    BEGIN(ERR(InvalidValue));
    log_ptr("ptr", ptr);
    log_int("size", (long long)size);
    log_int("flags", flags);
    if (!ptr || !size) return finish(ERR(InvalidValue));
    if (find_allocation(ptr, 1)) return finish(ERR(HostMemoryAlreadyRegistered));
    add_allocation(ptr, size, MEM_REGISTERED, NULL);
    return finish(SUCCESS);
}
/* Registered host memory has the same address on the device (unified addressing). */
EXPORT rt_error API(HostGetDevicePointer)(void **device, void *host, unsigned flags) {
    BEGIN(ERR(InvalidValue));
    log_ptr("host", host);
    log_int("flags", flags);
    struct allocation *a = find_allocation(host, 1);
    if (!device || !a || a->kind != MEM_REGISTERED) return finish(ERR(InvalidValue));
    *device = host;
    log_ptr("ptr", host);
    return finish(SUCCESS);
}
EXPORT rt_error API(HostUnregister)(void *ptr) {
    BEGIN(ERR(InvalidValue));
    log_ptr("ptr", ptr);
    if (!remove_allocation(ptr, MEM_REGISTERED)) return finish(ERR(HostMemoryNotRegistered));
    return finish(SUCCESS);
}

/* cudaMemcpyKind / hipMemcpyKind: 0 HostToHost, 1 HostToDevice, 2 DeviceToHost, 3 DeviceToDevice,
 * 4 Default. A device side must lie inside memory this runtime handed out. */
static const char *memcpy_kind_names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice", "Default"};
static rt_error memcpy_common(void *dst, const void *src, size_t size, int kind) {
    log_ptr("dst", dst);
    log_ptr("src", src);
    log_int("size", (long long)size);
    log_int("kind", kind);
    if (kind < 0 || kind > 4) return finish(ERR(InvalidMemcpyDirection));
    log_str("kind_name", memcpy_kind_names[kind]);
    if (size == 0) return finish(SUCCESS);
    if (!dst || !src) return finish(ERR(InvalidValue));
    int dst_device = kind == 1 || kind == 3, src_device = kind == 2 || kind == 3;
    if ((dst_device && !is_device_accessible(dst, size)) || (src_device && !is_device_accessible(src, size)))
        return finish(ERR(InvalidValue));
    memmove(dst, src, size);
    return finish(SUCCESS);
}
EXPORT rt_error API(Memcpy)(void *dst, const void *src, size_t size, int kind) {
    BEGIN(ERR(InvalidValue));
    return memcpy_common(dst, src, size, kind);
}
EXPORT rt_error API(MemcpyAsync)(void *dst, const void *src, size_t size, int kind, void *stream) {
    BEGIN(ERR(InvalidValue));
    if (!log_handle("stream", stream, 0)) return finish(ERR_HANDLE);
    return memcpy_common(dst, src, size, kind);
}
static rt_error memset_common(void *dst, int value, size_t size) {
    log_ptr("dst", dst);
    log_int("value", value);
    log_int("size", (long long)size);
    if (size && !is_device_accessible(dst, size)) return finish(ERR(InvalidValue));
    if (size) memset(dst, value, size);
    return finish(SUCCESS);
}
EXPORT rt_error API(Memset)(void *dst, int value, size_t size) {
    BEGIN(ERR(InvalidValue));
    return memset_common(dst, value, size);
}
EXPORT rt_error API(MemsetAsync)(void *dst, int value, size_t size, void *stream) {
    BEGIN(ERR(InvalidValue));
    if (!log_handle("stream", stream, 0)) return finish(ERR_HANDLE);
    return memset_common(dst, value, size);
}

/* Registered variables: their storage is found through the host shadow's address. */
static struct allocation *symbol_storage(const void *symbol) {
    for (size_t i = 0; i < num_allocations; ++i)
        if (allocations[i].kind == MEM_SYMBOL && allocations[i].host_var == symbol) return &allocations[i];
    return NULL;
}
EXPORT rt_error API(GetSymbolAddress)(void **dev_ptr, const void *symbol) {
    BEGIN(ERR(InvalidValue));
    struct allocation *a = symbol_storage(symbol);
    if (!a || !dev_ptr) return finish(ERR(InvalidValue));
    *dev_ptr = a->ptr;
    log_ptr("ptr", a->ptr);
    return finish(SUCCESS);
}
EXPORT rt_error API(MemcpyToSymbol)(const void *symbol, const void *src, size_t count, size_t offset, int kind) {
    BEGIN(ERR(InvalidValue));
    struct allocation *a = symbol_storage(symbol);
    log_int("size", (long long)count);
    log_int("offset", (long long)offset);
    if (!a || offset + count > a->size) return finish(ERR(InvalidValue));
    memcpy(a->ptr + offset, src, count);
    (void)kind;
    return finish(SUCCESS);
}
EXPORT rt_error API(MemcpyFromSymbol)(void *dst, const void *symbol, size_t count, size_t offset, int kind) {
    BEGIN(ERR(InvalidValue));
    struct allocation *a = symbol_storage(symbol);
    log_int("size", (long long)count);
    log_int("offset", (long long)offset);
    if (!a || offset + count > a->size) return finish(ERR(InvalidValue));
    memcpy(dst, a->ptr + offset, count);
    (void)kind;
    return finish(SUCCESS);
}

/* ------------------------------------------------------------------------------------------------
 * Streams and events. */
static rt_error create_handle(void **out, int is_event, unsigned flags) {
    log_int("flags", flags);
    if (!out) return finish(ERR(InvalidValue));
    struct handle *h = new_handle(is_event, flags);
    if (!h) return finish(ERR_NOMEM);
    *out = h;
    log_int(is_event ? "event" : "stream", h->id);
    return finish(SUCCESS);
}
EXPORT rt_error API(StreamCreate)(void **stream) { BEGIN(ERR(InvalidValue)); return create_handle(stream, 0, 0); }
EXPORT rt_error API(StreamCreateWithFlags)(void **stream, unsigned flags) { BEGIN(ERR(InvalidValue)); return create_handle(stream, 0, flags); }
EXPORT rt_error API(StreamDestroy)(void *stream) {
    BEGIN(ERR_HANDLE);
    if (!log_handle("stream", stream, 0) || !stream) return finish(ERR_HANDLE);
    delete_handle(stream, 0);
    return finish(SUCCESS);
}
EXPORT rt_error API(StreamSynchronize)(void *stream) {
    BEGIN(ERR_HANDLE);
    return finish(log_handle("stream", stream, 0) ? SUCCESS : ERR_HANDLE);
}
EXPORT rt_error API(StreamWaitEvent)(void *stream, void *event, unsigned flags) {
    BEGIN(ERR_HANDLE);
    int ok = log_handle("stream", stream, 0);
    ok &= log_handle("event", event, 1) && event;
    log_int("flags", flags);
    return finish(ok ? SUCCESS : ERR_HANDLE);
}
EXPORT rt_error API(EventCreate)(void **event) { BEGIN(ERR(InvalidValue)); return create_handle(event, 1, 0); }
EXPORT rt_error API(EventCreateWithFlags)(void **event, unsigned flags) { BEGIN(ERR(InvalidValue)); return create_handle(event, 1, flags); }
EXPORT rt_error API(EventRecord)(void *event, void *stream) {
    BEGIN(ERR_HANDLE);
    int ok = log_handle("event", event, 1) && event;
    ok &= log_handle("stream", stream, 0);
    return finish(ok ? SUCCESS : ERR_HANDLE);
}
EXPORT rt_error API(EventSynchronize)(void *event) {
    BEGIN(ERR_HANDLE);
    return finish(log_handle("event", event, 1) && event ? SUCCESS : ERR_HANDLE);
}
EXPORT rt_error API(EventDestroy)(void *event) {
    BEGIN(ERR_HANDLE);
    if (!log_handle("event", event, 1) || !event) return finish(ERR_HANDLE);
    delete_handle(event, 1);
    return finish(SUCCESS);
}

/* ------------------------------------------------------------------------------------------------
 * Devices and errors. */
static int current_device;
static int device_count(void) {
    const char *s = getenv("FAKE_RT_DEVICE_COUNT");
    return s ? atoi(s) : 1;
}
EXPORT rt_error API(GetDeviceCount)(int *count) {
    BEGIN(ERR(NoDevice));
    if (!count) return finish(ERR(InvalidValue));
    *count = device_count();
    log_int("count", *count);
    return finish(*count > 0 ? SUCCESS : ERR(NoDevice));
}
EXPORT rt_error API(SetDevice)(int device) {
    BEGIN(ERR(InvalidDevice));
    log_int("device", device);
    if (device < 0 || device >= device_count()) return finish(ERR(InvalidDevice));
    current_device = device;
    return finish(SUCCESS);
}
EXPORT rt_error API(GetDevice)(int *device) {
    BEGIN(ERR(InvalidValue));
    if (!device) return finish(ERR(InvalidValue));
    *device = current_device;
    log_int("device", current_device);
    return finish(SUCCESS);
}
EXPORT rt_error API(DeviceSynchronize)(void) { BEGIN(ERR(LaunchFailure)); return finish(SUCCESS); }
EXPORT rt_error API(DeviceReset)(void) { BEGIN(ERR(InvalidValue)); return finish(SUCCESS); }
EXPORT rt_error API(GetLastError)(void) {
    rt_error e = last_error;
    last_error = SUCCESS;
    log_begin(__func__);
    log_int("ret", e);
    log_end();
    return e;
}
EXPORT rt_error API(PeekAtLastError)(void) {
    log_begin(__func__);
    log_int("ret", last_error);
    log_end();
    return last_error;
}
static const struct error_info *error_lookup(int code) {
    for (size_t i = 0; i < sizeof error_table / sizeof *error_table; ++i)
        if (error_table[i].code == code) return &error_table[i];
    return NULL;
}
EXPORT const char *API(GetErrorString)(rt_error code) {
    const struct error_info *e = error_lookup(code);
    log_begin(__func__);
    log_int("code", code);
    log_end();
    return e ? e->text : "unrecognized error code";
}
static const char *error_name(int code) {
    static char names[sizeof error_table / sizeof *error_table][64];
    const struct error_info *e = error_lookup(code);
    if (!e) return "unrecognized error code";
    char *name = names[e - error_table];
    if (!e->suffix) snprintf(name, 64, RUNTIME "Success");
    else snprintf(name, 64, RUNTIME "Error%s", e->suffix);
    return name;
}
EXPORT const char *API(GetErrorName)(rt_error code) {
    log_begin(__func__);
    log_int("code", code);
    log_end();
    return error_name(code);
}
