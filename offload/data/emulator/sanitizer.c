/* mlir-offload's emulator sanitizer (--sanitize; docs/emulator.md): the checks the retargeting pass calls
 * before each device memory access (retarget.cpp, SanitizerInstrumentation), and the runtime's hooks into
 * allocation, copies, barriers and exit. Included at the end of runtime.c when EMU_SANITIZE (the mask of
 * checks) is defined: the sanitizer variant of the runtime, built apart from the plain one.
 *
 * - memcheck: every access against its object (a device buffer's exact size, a workgroup variable, the
 *   dynamic workgroup array, a private array, a device global); freed buffers stay mapped and listed
 *   (quarantined: never reused) so a later access names them; double and invalid frees; accesses below
 *   their natural alignment; integer division by zero; host copies and sets past a device buffer.
 * - initcheck: a bit per byte of each device buffer, set by copies, sets and kernel stores; a kernel load
 *   of a byte never written is reported. Workgroup memory: written in this block's lifetime.
 * - racecheck: per byte of workgroup memory, the last writer and readers with their barrier interval;
 *   two threads' accesses (at least one a plain write) in the same interval are a hazard, except lanes of
 *   one warp at the same instruction. Blocks run one at a time, in order, so reports are deterministic.
 * - synccheck: threads of a block at different barriers; a thread that exits while others wait.
 * - leakcheck: device buffers still allocated at exit.
 *
 * One line per error, starting with the MLIR location of the access when the device code carries line
 * information; exit status 1 at the first error, or with EMU_SANITIZE_KEEP_GOING at exit after each
 * distinct error once (at most 100). */

enum { SAN_MEMCHECK = 1, SAN_RACECHECK = 2, SAN_INITCHECK = 4, SAN_SYNCCHECK = 8, SAN_LEAKCHECK = 16 };
/* __emu_san_access's flags and kinds (SAN_WRITE ..., SAN_GLOBAL ...) and struct san_site: emu_abi.h. */
/* An asynchronous op's access (TMA, bulk copies, wgmma operands: ordered by mbarriers and wgmma waits, not
 * barriers): memcheck and initcheck see it, racecheck does not (runtime.c's op accesses only). */
enum { SAN_ASYNC = 1 << 7 };
enum { SAN_MAX_REPORTS = 100 };
#define SAN_COLD __attribute__((noinline, cold))

/* racecheck's record of 4 bytes of a device buffer (the last plain writer and reader in a launch). */
struct san_word {
    uint32_t launch;                       /* launch serial << 8 | write mask << 4 | read mask */
    uint32_t writer, reader;               /* grid-linear thread id + 1 */
    uint16_t writer_interval, reader_interval;  /* their block's barrier interval (low bits) */
    uint32_t writer_site;                  /* the writing op (its site's address, low bits) */
};

/* ---- reports ---------------------------------------------------------------------------------------- */

static pthread_mutex_t san_report_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned san_reported;
static struct {
    const void *site;
    const char *tool;
    const char *what;
} san_seen[SAN_MAX_REPORTS];

/* One error line, `what` naming its kind (keep-going reports a (site, kind) once). */
static void san_report(const struct san_site *site, const char *tool, const char *what, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&san_report_lock);
    for (unsigned i = 0; i < san_reported && i < SAN_MAX_REPORTS; ++i)
        if (san_seen[i].site == site && san_seen[i].tool == tool && san_seen[i].what == what) {
            pthread_mutex_unlock(&san_report_lock);
            return;
        }
    if (san_reported < SAN_MAX_REPORTS) {
        san_seen[san_reported].site = site, san_seen[san_reported].tool = tool, san_seen[san_reported].what = what;
        fflush(stdout);
        const char *at = site && site->location ? site->location : "mlir-offload emulator";
        dprintf(2, "%s: error: %s: %s %s\n", at, tool, what, text);
    }
    san_reported++;
    if (!EMU_SANITIZE_KEEP_GOING) _exit(1);
    pthread_mutex_unlock(&san_report_lock);
}

/* "in kernel 'K', block (x,y,z), thread (x,y,z)" */
static const char *san_where(char *out, size_t size) {
    char at[256];
    where(at, sizeof at, current);
    snprintf(out, size, "in %s", at);
    return out;
}

/* ---- device buffers ---------------------------------------------------------------------------------- */

static unsigned san_allocation_count;
enum { SAN_RECENT = 4 };
static _Thread_local struct allocation *san_recent[SAN_RECENT];  /* the buffers this thread used last */
static _Thread_local unsigned san_recent_next;

/* The host GPU operation calling the runtime now (offload/annotations/host_sites.py: compile --sanitize puts
 * a call before each gpu.alloc, dealloc, memcpy and memset), and its memrefs' bytes (UINT64_MAX: unknown).
 * The runtime call it makes takes them (san_host_op): a call of other host code finds none. */
static _Thread_local const struct san_site *san_host_site;
static _Thread_local uint64_t san_host_bytes[2] = {UINT64_MAX, UINT64_MAX};  /* destination, source */

EXPORT void __emu_san_host_op(const struct san_site *site, uint64_t destination_bytes, uint64_t source_bytes) {
    san_host_site = site;
    san_host_bytes[0] = destination_bytes, san_host_bytes[1] = source_bytes;
}

static const struct san_site *san_host_op(uint64_t bytes[2]) {
    const struct san_site *site = san_host_site;
    if (bytes) bytes[0] = san_host_bytes[0], bytes[1] = san_host_bytes[1];
    san_host_site = NULL;
    san_host_bytes[0] = san_host_bytes[1] = UINT64_MAX;
    return site;
}

static const char *san_located(const struct san_site *site) { return site && site->location ? site->location : NULL; }

static void san_allocated(struct allocation *a, int host_visible) {
    a->serial = __atomic_add_fetch(&san_allocation_count, 1, __ATOMIC_RELAXED);
    a->allocated_at = san_host_op(NULL);
    a->freed_at = NULL;
    a->freed = 0;
    a->written = NULL;
    a->race = NULL;
    if (EMU_SANITIZE & SAN_RACECHECK) {
        a->race = calloc(a->size / 4 + 1, sizeof *a->race);
        if (!a->race) fail("out of memory for the sanitizer's shadow of a %zu-byte buffer", a->size);
    }
    if ((EMU_SANITIZE & SAN_INITCHECK) && !host_visible) {
        a->written = calloc(a->size / 8 + 1, 1);
        if (!a->written) fail("out of memory for the sanitizer's shadow of a %zu-byte buffer", a->size);
    }
}

/* "device buffer #3 (4004 bytes, allocated at prog.mlir:12:10, freed at prog.mlir:20:5)" */
static void san_describe(char *out, size_t size, const struct allocation *a) {
    int n = snprintf(out, size, "%s #%u (%zu bytes", a->map ? "device buffer" : "registered host buffer", a->serial,
                     a->size);
    if (san_located(a->allocated_at) && n >= 0 && (size_t)n < size)
        n += snprintf(out + n, size - (size_t)n, ", allocated at %s", san_located(a->allocated_at));
    if (a->freed && n >= 0 && (size_t)n < size)
        n += snprintf(out + n, size - (size_t)n, san_located(a->freed_at) ? ", freed at %s" : ", freed",
                      san_located(a->freed_at));
    if (n >= 0 && (size_t)n < size) snprintf(out + n, size - (size_t)n, ")");
}

/* The buffer holding p (freed ones too: they stay listed), or NULL; `slack`: also its guard pages. */
static struct allocation *san_allocation_of(const char *p, int slack) {
    struct allocation *a;
    for (unsigned i = 0; i < SAN_RECENT; ++i)
        if ((a = san_recent[i]) && p >= a->start && (size_t)(p - a->start) < (a->size ? a->size : 1)) return a;
    pthread_mutex_lock(&allocations_lock);
    struct allocation *found = NULL;
    for (a = allocations; a && !found; a = a->next)
        if (p >= a->start && (size_t)(p - a->start) < (a->size ? a->size : 1)) found = a;
    for (a = allocations; a && !found && slack; a = a->next)
        if (a->map && p >= a->map && p < a->map + a->map_size) found = a;
    pthread_mutex_unlock(&allocations_lock);
    if (found && !slack) san_recent[san_recent_next++ % SAN_RECENT] = found;
    return found;
}

static int san_free(void *p) {
    const struct san_site *site = san_host_op(NULL);
    pthread_mutex_lock(&allocations_lock);
    struct allocation *a = allocations;
    while (a && !(a->start == p && a->map)) a = a->next;
    pthread_mutex_unlock(&allocations_lock);
    char what[320];
    if (!a) {
        if (EMU_SANITIZE & SAN_MEMCHECK)
            san_report(site, "memcheck", "invalid free:", "%p is not the start of a device buffer", p);
        return status(ERROR_INVALID_DEVICE_POINTER);
    }
    if (a->freed) {
        san_describe(what, sizeof what, a);
        if (EMU_SANITIZE & SAN_MEMCHECK) san_report(site, "memcheck", "double free", "of %s", what);
        return status(ERROR_INVALID_DEVICE_POINTER);
    }
    a->freed = 1;  /* quarantined: stays mapped (inaccessible) and listed, never reused */
    a->freed_at = site;
    mprotect(a->map, a->map_size, PROT_NONE);
    return SUCCESS;
}

static void san_mark_written(struct allocation *a, size_t offset, size_t bytes) {
    if (!a->written) return;
    size_t first = (offset + 7) / 8, last = (offset + bytes) / 8;  /* whole shadow bytes: first .. last - 1 */
    if (first < last) {
        memset(a->written + first, 0xff, last - first);
        san_mark_written(a, offset, first * 8 - offset);
        san_mark_written(a, last * 8, offset + bytes - last * 8);
        return;
    }
    for (size_t i = offset; i < offset + bytes; ++i) {
        unsigned char bit = (unsigned char)(1u << (i & 7));
        if (!(a->written[i >> 3] & bit)) __atomic_fetch_or(&a->written[i >> 3], bit, __ATOMIC_RELAXED);
    }
}

static size_t san_first_unwritten(const struct allocation *a, size_t offset, size_t bytes) {
    for (size_t i = offset; i < offset + bytes; ++i)
        if (!(__atomic_load_n(&a->written[i >> 3], __ATOMIC_RELAXED) & (1u << (i & 7)))) return i;
    return (size_t)-1;
}

/* A host copy or set of `bytes` at p: within the buffer it starts in (memory the runtime does not know,
 * the program's own host memory, is checked against its memref where the host op said its size).
 * 0 where reported (the transfer is then not done). */
static int san_transfer(const struct san_site *site, const char *operation, const char *side, const void *p,
                        size_t bytes, uint64_t memref_bytes, int writes) {
    if (!(EMU_SANITIZE & SAN_MEMCHECK)) memref_bytes = UINT64_MAX;
    struct allocation *a = san_allocation_of(p, 1);
    char what[320];
    if (!a) {
        if (memref_bytes == UINT64_MAX || bytes <= memref_bytes) return 1;
        san_report(site, "memcheck", "out-of-bounds host transfer:", "%s of %zu bytes overflows its %s memref (%" PRIu64
                   " bytes)", operation, bytes, side, memref_bytes);
        return 0;
    }
    san_describe(what, sizeof what, a);
    const char *c = p;
    if (a->freed || c < a->start) {
        if (!(EMU_SANITIZE & SAN_MEMCHECK) && !a->freed) return 1;
        san_report(site, "memcheck", a->freed ? "use after free:" : "out-of-bounds host transfer:",
                   "%s of %zu bytes, %s %s", operation, bytes, side, what);
        return 0;
    }
    size_t offset = (size_t)(c - a->start);
    if (offset > a->size || bytes > a->size - offset) {
        if (!(EMU_SANITIZE & SAN_MEMCHECK)) return 1;
        san_report(site, "memcheck", "out-of-bounds host transfer:",
                   "%s of %zu bytes at offset %zu overflows its %s %s", operation, bytes, offset, side, what);
        return 0;
    }
    if (memref_bytes != UINT64_MAX && bytes > memref_bytes) {
        san_report(site, "memcheck", "out-of-bounds host transfer:", "%s of %zu bytes overflows its %s memref (%" PRIu64
                   " bytes)", operation, bytes, side, memref_bytes);
        return 0;
    }
    if (writes) san_mark_written(a, offset, bytes);
    return 1;
}

static int san_copy(void *destination, const void *source, size_t bytes) {
    uint64_t memref_bytes[2];
    const struct san_site *site = san_host_op(memref_bytes);
    return san_transfer(site, "copy", "source", source, bytes, memref_bytes[1], 0) &&
           san_transfer(site, "copy", "destination", destination, bytes, memref_bytes[0], 1);
}

static int san_set(void *destination, size_t bytes) {
    uint64_t memref_bytes[2];
    const struct san_site *site = san_host_op(memref_bytes);
    return san_transfer(site, "set", "destination", destination, bytes, memref_bytes[0], 1);
}

__attribute__((destructor)) static void san_at_exit(void) {
    if (EMU_SANITIZE & SAN_LEAKCHECK) {
        unsigned leaks = 0;
        for (struct allocation *a = allocations; a; a = a->next) leaks += a->map && !a->freed;
        /* oldest first: the list is newest first */
        for (unsigned n = leaks; n; --n) {
            struct allocation *a = allocations;
            unsigned seen = 0;
            for (; a; a = a->next)
                if (a->map && !a->freed && ++seen == n) break;
            char what[320];
            const struct san_site *site = a->allocated_at;
            a->allocated_at = NULL;  /* the line names it: "allocated here" */
            san_describe(what, sizeof what, a);
            pthread_mutex_lock(&san_report_lock);
            fflush(stdout);
            if (san_located(site))
                dprintf(2, "%s: error: leakcheck: %s allocated here was never freed\n", san_located(site), what);
            else
                dprintf(2, "mlir-offload emulator: error: leakcheck: %s was never freed\n", what);
            san_reported++;
            pthread_mutex_unlock(&san_report_lock);
        }
    }
    if (san_reported) {
        fflush(stdout);
        _exit(1);
    }
}

/* ---- workgroup memory: racecheck and initcheck shadow, a cell per 4-byte word of the block's segment ------- */

struct san_cell {
    uint64_t write_epoch, read_epoch;   /* block serial << 24 | barrier interval; 0: none */
    const struct san_site *write_site, *read_site;
    uint16_t writer, first_reader, last_reader;  /* linear thread id + 1 (0: none, or an atomic write) */
    uint8_t write_mask, read_mask;      /* the word's bytes the last write and this interval's reads touched */
    uint8_t written;                    /* bytes written in this block's lifetime (with write_epoch's block) */
};
static uint64_t san_block_counter;

/* The grid-linear id + 1 of the block's thread 0 (racecheck names threads of a launch by it). */
static void san_block_numbered(struct block *b) {
    const struct launch *l = b->launch;
    uint32_t linear = b->ctaid[0] + l->grid[0] * (b->ctaid[1] + l->grid[1] * b->ctaid[2]);
    b->san_first_thread = linear * l->threads_per_block + 1;
}

static void san_block_started(struct block *b) {
    b->barrier_generation = 0;
    b->barrier_site = NULL;
    b->san_serial = __atomic_add_fetch(&san_block_counter, 1, __ATOMIC_RELAXED);
    san_block_numbered(b);
    b->san_epoch = b->san_serial << 24;
    size_t need = (b->launch->shared_bytes + 3) / 4;
    if (need > b->san_cell_count) {
        free(b->san_cells);
        b->san_cells = calloc(need, sizeof *b->san_cells);
        if (!b->san_cells) fail("out of memory for the sanitizer's workgroup shadow");
        b->san_cell_count = need;
    }
}

static void san_thread_name(char *out, size_t size, uint32_t linear) {
    const struct launch *l = current_block->launch;
    snprintf(out, size, "(%u,%u,%u)", linear % l->block[0], linear / l->block[0] % l->block[1],
             linear / l->block[0] / l->block[1]);
}

/* Lanes of one warp at the same op are one instruction (converged lanes' stores, as MLIR's all-reduce has). */
static int san_same_instruction(uint32_t other, const struct san_site *other_site, const struct san_site *site) {
    unsigned warp = current_block->launch->warp_size;
    return other_site == site && (other - 1) / warp == current->linear / warp;
}

static SAN_COLD void san_hazard(const char *kind, const char *object, size_t offset, uint32_t other,
                                const struct san_site *other_site, const struct san_site *site) {
    char at[300], them[48], there[200];
    san_thread_name(them, sizeof them, other - 1);
    snprintf(there, sizeof there, "%s", other_site && other_site->location ? other_site->location : "an unknown line");
    san_report(site, "racecheck", kind, "on %s at offset %zu %s: thread %s accessed it at %s with no barrier between",
               object, offset, san_where(at, sizeof at), them, there);
}

static SAN_COLD void san_shared_unwritten(const struct san_site *site, const char *object, size_t bytes, size_t offset) {
    char at[300];
    san_report(site, "initcheck", "uninitialized read", "of %zu bytes of %s at offset %zu %s: never written in this block",
               bytes, object, offset, san_where(at, sizeof at));
}

static size_t san_first_byte(unsigned mask) { return (size_t)__builtin_ctz(mask); }

/* `b`: the block whose workgroup memory it is (another block of the cluster through distributed shared
 * memory: initcheck only, as SAN_ASYNC). */
static inline __attribute__((always_inline)) void san_workgroup(struct block *b, char *address, size_t bytes,
                                                                uint32_t flags, const char *object,
                                                                const struct san_site *site) {
    size_t start = (size_t)(address - b->shared), end = start + bytes;
    if ((end + 3) / 4 > b->san_cell_count) return;
    if (b != current_block) flags |= SAN_ASYNC;
    uint64_t epoch = b->san_epoch;
    uint32_t me = current->linear + 1;
    int write = flags & SAN_WRITE, atomic = flags & (SAN_ATOMIC | SAN_ASYNC);
    for (size_t word = start / 4; word * 4 < end; ++word) {
        size_t low = word * 4 > start ? word * 4 : start, high = word * 4 + 4 < end ? word * 4 + 4 : end;
        unsigned mask = ((1u << (high - low)) - 1) << (low - word * 4);
        struct san_cell *c = &b->san_cells[word];
        int this_block = (c->write_epoch >> 24) == b->san_serial;
        if ((EMU_SANITIZE & SAN_INITCHECK) && !write && (!this_block || (c->written & mask) != mask))
            san_shared_unwritten(site, object, bytes, word * 4 + san_first_byte(mask & ~(this_block ? c->written : 0)));
        if ((EMU_SANITIZE & SAN_RACECHECK) && !atomic) {
            if (c->write_epoch == epoch && c->writer && c->writer != me && (c->write_mask & mask) &&
                !san_same_instruction(c->writer, c->write_site, site))
                san_hazard(write ? "write-after-write hazard" : "read-after-write hazard", object,
                           word * 4 + san_first_byte(c->write_mask & mask), c->writer, c->write_site, site);
            if (write && c->read_epoch == epoch && (c->read_mask & mask)) {
                uint32_t other = c->first_reader != me ? c->first_reader : c->last_reader != me ? c->last_reader : 0;
                if (other && !san_same_instruction(other, c->read_site, site))
                    san_hazard("write-after-read hazard", object, word * 4 + san_first_byte(c->read_mask & mask), other,
                               c->read_site, site);
            }
        }
        if (write) {
            c->written = (uint8_t)((this_block ? c->written : 0) | mask);
            c->write_epoch = epoch, c->write_site = site, c->write_mask = (uint8_t)mask;
            c->writer = atomic ? 0 : (uint16_t)me;
        } else if (!atomic) {
            if (c->read_epoch != epoch) c->read_epoch = epoch, c->first_reader = (uint16_t)me, c->read_mask = 0;
            c->last_reader = (uint16_t)me, c->read_site = site, c->read_mask |= (uint8_t)mask;
        }
    }
}

/* ---- device buffers: racecheck between the threads of a launch, a word per 4 bytes ---------------------------- */

/* Threads of one launch race on a byte when both access it without an atomic, one writes, and they are in
 * different blocks or in one block's same barrier interval. Only the last writer and reader are kept: a
 * hazard with an earlier one may go unseen, never a false one. */

static uint32_t san_launch_counter;

static void san_launch_started(struct launch *l) {
    l->san_serial = __atomic_add_fetch(&san_launch_counter, 1, __ATOMIC_RELAXED) & 0xffffff;
}


/* Whether grid thread `other` (id + 1) is unordered with this thread: another block, or this block's interval. */
static int san_unordered(uint32_t other, uint16_t interval) {
    uint32_t threads = current_block->launch->threads_per_block;
    return (other - 1) / threads != (current_block->san_first_thread - 1) / threads ||
           interval == (uint16_t)current_block->barrier_generation;
}

static SAN_COLD void san_global_hazard(const char *kind, const struct allocation *a, size_t offset, uint32_t other,
                                       const struct san_site *site) {
    char object[320], at[300], them[48], block[48];
    const struct launch *l = current_block->launch;
    uint32_t threads = l->threads_per_block, b = (other - 1) / threads;
    san_describe(object, sizeof object, a);
    san_thread_name(them, sizeof them, (other - 1) % threads);
    snprintf(block, sizeof block, "(%u,%u,%u)", b % l->grid[0], b / l->grid[0] % l->grid[1], b / l->grid[0] / l->grid[1]);
    san_report(site, "racecheck", kind, "on %s at offset %zu %s: thread %s of block %s accessed it earlier in this "
               "launch, unordered (another block, or no barrier between)", object, offset, san_where(at, sizeof at),
               them, block);
}

/* Lanes of one warp storing at the same op are one instruction (as on workgroup memory): MLIR's own
 * lowerings have every thread of a block store one result to the same element. */
static int san_same_global_instruction(uint32_t other, uint32_t other_site, const struct san_site *site) {
    uint32_t threads = current_block->launch->threads_per_block, warp = current_block->launch->warp_size;
    uint32_t first = current_block->san_first_thread;
    return other_site == (uint32_t)(uintptr_t)site && other >= first && other - first < threads &&
           (other - first) / warp == current->linear / warp;
}

static void san_global_race(const struct san_site *site, struct allocation *a, size_t offset, uint64_t bytes,
                            uint32_t flags) {
    if (!current_block || (flags & (SAN_ATOMIC | SAN_ASYNC))) return;
    uint32_t serial = current_block->launch->san_serial;
    uint32_t me = current_block->san_first_thread + current->linear;
    uint16_t interval = (uint16_t)current_block->barrier_generation;
    int write = flags & SAN_WRITE;
    for (size_t word = offset / 4; word * 4 < offset + bytes; ++word) {
        size_t low = word * 4 > offset ? word * 4 : offset, high = word * 4 + 4 < offset + bytes ? word * 4 + 4 : offset + bytes;
        unsigned mask = ((1u << (high - low)) - 1) << (low - word * 4);
        struct san_word *w = &a->race[word];
        if (w->launch >> 8 != serial) w->launch = serial << 8, w->writer = w->reader = 0;
        unsigned written = w->launch >> 4 & 15, read = w->launch & 15;
        if (w->writer && w->writer != me && (written & mask) && san_unordered(w->writer, w->writer_interval) &&
            !(write && san_same_global_instruction(w->writer, w->writer_site, site)))
            san_global_hazard(write ? "write-after-write hazard" : "read-after-write hazard", a,
                              word * 4 + san_first_byte(written & mask), w->writer, site);
        if (write && w->reader && w->reader != me && (read & mask) && san_unordered(w->reader, w->reader_interval))
            san_global_hazard("write-after-read hazard", a, word * 4 + san_first_byte(read & mask), w->reader, site);
        if (write) {
            w->writer = me, w->writer_interval = interval, w->writer_site = (uint32_t)(uintptr_t)site;
            w->launch = serial << 8 | mask << 4 | read;
        } else if (w->reader != me || w->reader_interval != interval) {
            w->reader = me, w->reader_interval = interval;
            w->launch = serial << 8 | written << 4 | mask;
        } else {
            w->launch |= mask;
        }
    }
}

/* ---- the checks the instrumented kernels call -------------------------------------------------------- */

static _Thread_local char *san_scratch;
static _Thread_local size_t san_scratch_size;

/* Under keep-going, a reported access goes to a zeroed scratch slot instead. */
static void *san_diverted(uint64_t bytes) {
    if (bytes > san_scratch_size) {
        free(san_scratch);
        san_scratch_size = bytes < 64 ? 64 : bytes;
        san_scratch = aligned_alloc(64, round_up(san_scratch_size, 64));
        if (!san_scratch) fail("out of memory");
    }
    memset(san_scratch, 0, bytes);
    return san_scratch;
}

static SAN_COLD void *san_out_of_bounds(const struct san_site *site, uint32_t flags, uint64_t bytes, int64_t offset,
                                        const char *object) {
    char at[300];
    san_report(site, "memcheck", "out-of-bounds access:", "%s of %" PRIu64 " bytes %s: offset %" PRId64 " of %s",
               flags & SAN_WRITE ? "write" : "read", bytes, san_where(at, sizeof at), offset, object);
    return san_diverted(bytes);
}

static SAN_COLD void *san_bad_object(const struct san_site *site, uint32_t flags, uint64_t bytes, int64_t offset,
                                     const char *name, uint64_t size) {
    char object[320];
    snprintf(object, sizeof object, "%s (%" PRIu64 " bytes)", name, size);
    return san_out_of_bounds(site, flags, bytes, offset, object);
}

static SAN_COLD void *san_bad_buffer(const struct san_site *site, uint32_t flags, uint64_t bytes, int64_t offset,
                                     const struct allocation *a) {
    char object[320], at[300];
    san_describe(object, sizeof object, a);
    if (!a->freed) return san_out_of_bounds(site, flags, bytes, offset, object);
    san_report(site, "memcheck", "use after free:", "%s of %" PRIu64 " bytes %s: offset %" PRId64 " of %s",
               flags & SAN_WRITE ? "write" : "read", bytes, san_where(at, sizeof at), offset, object);
    return san_diverted(bytes);
}

static SAN_COLD void *san_misaligned(const struct san_site *site, uint32_t flags, uint64_t bytes, const char *address,
                                     uint64_t alignment) {
    char at[300];
    san_report(site, "memcheck", "misaligned access:", "%s of %" PRIu64 " bytes %s: address %% %" PRIu64 " is %" PRIu64
               " (needs %" PRIu64 "-byte alignment)", flags & SAN_WRITE ? "write" : "read", bytes,
               san_where(at, sizeof at), alignment, (uint64_t)((uintptr_t)address & (alignment - 1)), alignment);
    return san_diverted(bytes);
}

static SAN_COLD void san_unwritten(const struct san_site *site, const struct allocation *a, size_t offset, uint64_t bytes) {
    size_t unwritten = san_first_unwritten(a, offset, bytes);
    if (unwritten == (size_t)-1) return;
    char object[320], at[300];
    san_describe(object, sizeof object, a);
    san_report(site, "initcheck", "uninitialized read", "of %" PRIu64 " bytes %s: offset %zu of %s was never written",
               bytes, san_where(at, sizeof at), unwritten, object);
}

/* initcheck's bits of an access: one shadow byte holds them when it lies within 8 aligned bytes. */
static inline void san_initcheck(const struct san_site *site, struct allocation *a, size_t offset, uint64_t bytes,
                                 uint32_t flags) {
    if ((offset & 7) + bytes <= 8) {
        unsigned char mask = (unsigned char)(((1u << bytes) - 1) << (offset & 7));
        unsigned char *shadow = &a->written[offset >> 3];
        unsigned char now = __atomic_load_n(shadow, __ATOMIC_RELAXED);
        if (flags & SAN_WRITE) {
            if ((now & mask) != mask) __atomic_fetch_or(shadow, mask, __ATOMIC_RELAXED);
        } else if ((now & mask) != mask && !(flags & SAN_ATOMIC))
            san_unwritten(site, a, offset, bytes);
        return;
    }
    if (flags & SAN_WRITE)
        san_mark_written(a, offset, bytes);
    else if (!(flags & SAN_ATOMIC))
        san_unwritten(site, a, offset, bytes);
}

static void *san_remote_shared(char *address, uint64_t bytes, uint32_t flags, const struct san_site *site);

EXPORT void *__emu_san_access(char *address, char *base, uint64_t base_size, uint64_t bytes, uint32_t flags,
                              const struct san_site *site) {
    if (!bytes) return address;
    unsigned kind = flags >> SAN_KIND_SHIFT & 7;
    uint64_t alignment = 1ull << (flags >> SAN_ALIGN_SHIFT & 63);
    if ((EMU_SANITIZE & SAN_MEMCHECK) && ((uintptr_t)address & (alignment - 1)))
        return san_misaligned(site, flags, bytes, address, alignment);
    if (kind == SAN_GLOBAL) {
        struct allocation *a = san_allocation_of(base, 0);
        if (!a && current_block && current_block->launch->cluster_size > 1 && cluster_block_of(address, 1) &&
            cluster_block_of(address, 1) != current_block)
            return san_remote_shared(address, bytes, flags, site);
        if (!a && current_block && address >= current_block->shared &&
            address < current_block->shared + current_block->launch->shared_bytes + GUARD_BYTES) {
            base = current_block->shared;  /* a generic pointer into workgroup memory: the whole segment */
            base_size = current_block->launch->shared_bytes;
            kind = SAN_SHARED;
        } else {
            if (!a) a = san_allocation_of(address, 1);
            if (!a) return san_remote_shared(address, bytes, flags, site);
            int64_t offset = (int64_t)(address - a->start);
            if (a->freed || offset < 0 || (uint64_t)offset > a->size || bytes > a->size - (uint64_t)offset) {
                if ((EMU_SANITIZE & SAN_MEMCHECK) || a->freed) return san_bad_buffer(site, flags, bytes, offset, a);
                return address;
            }
            if ((EMU_SANITIZE & SAN_INITCHECK) && a->written) san_initcheck(site, a, (size_t)offset, bytes, flags);
            if ((EMU_SANITIZE & SAN_RACECHECK) && a->race) san_global_race(site, a, (size_t)offset, bytes, flags);
            return address;
        }
    }
    if (kind == SAN_DYNAMIC_SHARED && current_block) {
        base_size = current_block->launch->shared_bytes - (uint64_t)(base - current_block->shared);
        kind = SAN_SHARED;
    }
    const char *name = site && site->object ? site->object : "workgroup memory";
    int64_t offset = (int64_t)(address - base);
    if ((EMU_SANITIZE & SAN_MEMCHECK) && (offset < 0 || (uint64_t)offset > base_size || bytes > base_size - (uint64_t)offset))
        return san_bad_object(site, flags, bytes, offset, name, base_size);
    if (kind == SAN_SHARED && (EMU_SANITIZE & (SAN_RACECHECK | SAN_INITCHECK)) != 0 && current_block)
        san_workgroup(current_block, address, bytes, flags, name, site);
    return address;
}

/* An access to another block's shared memory in the cluster (mapa, multicast): checked against that block's
 * segment, its bytes marked written or checked for initcheck in that block's shadow; other memory the runtime
 * does not know (the stack, a hardware record) is not checked. */
static void *san_remote_shared(char *address, uint64_t bytes, uint32_t flags, const struct san_site *site) {
    struct block *home = current_block ? cluster_block_of(address, 1) : NULL;
    if (!home || home == current_block) return address;
    int64_t offset = (int64_t)(address - home->shared);
    uint64_t size = home->launch->shared_bytes;
    if ((EMU_SANITIZE & SAN_MEMCHECK) && bytes > size - (uint64_t)offset)
        return san_bad_object(site, flags, bytes, offset, "distributed shared memory of another block", size);
    if (EMU_SANITIZE & SAN_INITCHECK)
        san_workgroup(home, address, bytes, flags, site && site->object ? site->object : "workgroup memory", site);
    return address;
}

static void *san_op_access(const void *address, const void *base, uint64_t bytes, uint32_t flags) {
    return __emu_san_access((char *)address, (char *)base, 0, bytes, flags & (SAN_WRITE | SAN_ATOMIC | SAN_ASYNC),
                            current ? current->op_site : NULL);
}

/* An op's access to the shared memory of the current block (an address past its end included), checked
 * against the whole segment; another block's of the cluster (multicast) as san_remote_shared does. */
static void *san_op_shared(const void *address, uint64_t bytes, uint32_t flags) {
    struct block *home = current_block ? cluster_block_of(address, 1) : NULL;
    if (!current_block || !current) return (void *)address;
    if (home && home != current_block) return san_remote_shared((char *)address, bytes, flags, current->op_site);
    return __emu_san_access((char *)address, current_block->shared, current_block->launch->shared_bytes, bytes,
                            (flags & (SAN_WRITE | SAN_ATOMIC | SAN_ASYNC)) | SAN_SHARED << SAN_KIND_SHIFT,
                            current->op_site);
}

/* A workgroup access of a constant size (bits 16.. of flags): __emu_san_access's shared path alone. */
EXPORT void *__emu_san_shared(char *address, char *base, uint64_t base_size, uint32_t flags,
                              const struct san_site *site) {
    uint64_t bytes = flags >> SAN_BYTES_SHIFT;
    uint64_t alignment = 1ull << (flags >> SAN_ALIGN_SHIFT & 31);
    if ((EMU_SANITIZE & SAN_MEMCHECK) && ((uintptr_t)address & (alignment - 1)))
        return san_misaligned(site, flags, bytes, address, alignment);
    if (!current_block || !bytes) return address;
    if ((flags >> SAN_KIND_SHIFT & 7) == SAN_DYNAMIC_SHARED)
        base_size = current_block->launch->shared_bytes - (uint64_t)(base - current_block->shared);
    int64_t offset = (int64_t)(address - base);
    if ((EMU_SANITIZE & SAN_MEMCHECK) && (offset < 0 || (uint64_t)offset > base_size || bytes > base_size - (uint64_t)offset))
        return san_bad_object(site, flags, bytes, offset, site->object ? site->object : "workgroup memory", base_size);
    if (EMU_SANITIZE & (SAN_RACECHECK | SAN_INITCHECK))
        san_workgroup(current_block, address, bytes, flags, site->object ? site->object : "workgroup memory", site);
    return address;
}

EXPORT void __emu_san_divide_by_zero(const struct san_site *site) {
    char at[300];
    if (EMU_SANITIZE & SAN_MEMCHECK)
        san_report(site, "memcheck", "integer division by zero", "%s", san_where(at, sizeof at));
}

/* ---- barriers ----------------------------------------------------------------------------------------- */

EXPORT void __emu_san_barrier_site(const struct san_site *site) {
    if (current) current->barrier_site = site;
}

static void san_barrier_arrive(struct block *b, struct emu_thread *t) {
    if (!(EMU_SANITIZE & SAN_SYNCCHECK)) return;
    if (b->arrived == 0) {
        b->barrier_site = t->barrier_site;
        b->barrier_thread = t->linear;
        return;
    }
    if (t->barrier_site != b->barrier_site) {
        const struct san_site *first = b->barrier_site;
        char at[300], them[48];
        san_thread_name(them, sizeof them, b->barrier_thread);
        san_report(t->barrier_site, "synccheck", "divergent barriers", "%s waits here while thread %s waits at %s",
                   san_where(at, sizeof at), them, first && first->location ? first->location : "another barrier");
    }
}

static void san_barrier_released(struct block *b) {
    b->barrier_generation++;
    b->san_epoch = b->san_serial << 24 | (b->barrier_generation & 0xffffff);
}

static void san_barrier_skipped(const struct emu_thread *exited) {
    char at[300];
    const struct emu_thread *saved = current;
    current = (struct emu_thread *)exited;
    const struct san_site *site = current_block->barrier_site;
    san_report(site, "synccheck", "barrier skipped", "%s exited while %u other thread(s) of its block wait at this barrier",
               san_where(at, sizeof at), current_block->arrived);
    current = (struct emu_thread *)saved;
}

/* ---- warp operations: masks and source lanes ----------------------------------------------------------- */

EXPORT void __emu_san_op_site(const struct san_site *site) {
    if (current) current->op_site = site;
}

/* Why lane `source` of the warp gives no value to this warp operation. */
static const char *san_inactive_because(const struct emu_thread *lanes, unsigned count, unsigned source) {
    if (source >= count) return "which its warp does not have (the block ends before it)";
    switch (lanes[source].state) {
    case EXITED: return "which has exited";
    case AT_BARRIER: return "which waits at a barrier";
    default: return "which does not execute this warp operation";
    }
}

static SAN_COLD void san_warp_report(const struct emu_thread *t, const char *what, const char *fmt, ...) {
    char text[400], at[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    where(at, sizeof at, t);
    san_report(t->op_site, "synccheck", what, "in %s: %s", at, text);
}

/* Before a shuffle (shfl.sync, ds_bpermute, ds_swizzle) completes for `group`: each lane that reads another
 * lane must read one that executes it, named in the reader's CUDA mask. (A reader left out of its own mask
 * is not reported: MLIR's width-limited gpu.shuffle gives lanes past the width such a mask, and GPUs and
 * compute-sanitizer accept it.) */
static void san_warp_sources(int kind, const struct emu_thread *lanes, unsigned count, lane_set group) {
    if (!(EMU_SANITIZE & SAN_SYNCCHECK)) return;
    int shuffle = kind >= COLLECTIVE_SHUFFLE_IDX && kind <= COLLECTIVE_SHUFFLE_BFLY;
    if (!shuffle && kind != COLLECTIVE_BPERMUTE && kind != COLLECTIVE_SWIZZLE) return;
    char them[48];
    for (unsigned l = 0; l < count; ++l) {
        if (!(group & LANE(l))) continue;
        const struct emu_thread *t = &lanes[l];
        int valid = 1;
        unsigned source = shuffle ? shuffle_source(kind, t, l, &valid)
                          : kind == COLLECTIVE_BPERMUTE ? (t->operand_b / 4) % count : swizzle_source(t->operand_b, l);
        if (!valid || source == l) continue;
        if (shuffle && t->mask_given && source < count && (group & LANE(source)) &&
            !(t->mask & (1u << (source & 31)))) {
            san_thread_name(them, sizeof them, lanes[source].linear);
            san_warp_report(t, "shuffle mask leaves out an executing lane",
                            "its mask 0x%08x leaves out thread %s, which executes this shuffle and whose value it reads",
                            t->mask, them);
            continue;
        }
        if (source >= count || !(group & LANE(source))) {
            if (source < count) san_thread_name(them, sizeof them, lanes[source].linear);
            else snprintf(them, sizeof them, "lane %u of its warp", source);
            san_warp_report(t, "inactive source lane", "it reads %s%s, %s", source < count ? "thread " : "", them,
                            san_inactive_because(lanes, count, source));
        }
    }
}
