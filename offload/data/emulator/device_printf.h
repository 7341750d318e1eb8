/* Device printf, assertions and traps for the emulation runtime, included by runtime.c after its thread,
 * block and report helpers: CUDA's vprintf (a format and a packed argument buffer), __assertfail and
 * llvm.trap, and AMD's printf as ockl's hostcall packets. */

/* ---- device printf ------------------------------------------------------------------------------------ */

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

struct text { char *data; size_t length, capacity; };

static void text_add(struct text *t, const char *s, size_t n) {
    if (t->length + n + 1 > t->capacity) {
        t->capacity = (t->length + n + 1) * 2;
        t->data = realloc(t->data, t->capacity);
        if (!t->data) abort();
    }
    memcpy(t->data + t->length, s, n);
    t->length += n;
    t->data[t->length] = 0;
}

static void text_format(struct text *t, const char *spec, ...) {
    char small[512];
    va_list ap, again;
    va_start(ap, spec);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, spec, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof small) {
        text_add(t, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) abort();
        vsnprintf(big, (size_t)n + 1, spec, again);
        text_add(t, big, (size_t)n);
        free(big);
    }
    va_end(again);
}

static void text_emit(struct text *t) {
    pthread_mutex_lock(&print_lock);
    fwrite(t->data ? t->data : "", 1, t->length, stdout);
    pthread_mutex_unlock(&print_lock);
    free(t->data);
}

/* The arguments of a conversion: next(state, size, kind) reads one argument as 64 bits (a string's
 * address for ARGUMENT_STRING). */
enum { ARGUMENT_INTEGER, ARGUMENT_FLOAT, ARGUMENT_STRING };
typedef uint64_t (*next_argument)(void *state, unsigned size, int kind);

static void format_all(struct text *out, const char *fmt, next_argument next, void *state) {
    const char *p = fmt;
    while (*p) {
        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t n = q ? (size_t)(q - p) : strlen(p);
            text_add(out, p, n);
            p += n;
            continue;
        }
        if (p[1] == '%') {
            text_add(out, "%", 1);
            p += 2;
            continue;
        }
        char spec[64];
        size_t s = 0;
        spec[s++] = *p++;
        while (*p && strchr("-+ #0", *p) && s < 40) spec[s++] = *p++;
        int star_width = 0, star_precision = 0;
        if (*p == '*') { star_width = 1; spec[s++] = *p++; }
        while (*p >= '0' && *p <= '9' && s < 40) spec[s++] = *p++;
        if (*p == '.') {
            spec[s++] = *p++;
            if (*p == '*') { star_precision = 1; spec[s++] = *p++; }
            while (*p >= '0' && *p <= '9' && s < 40) spec[s++] = *p++;
        }
        unsigned size = 4;
        while (*p && strchr("hlLqjzt", *p)) {
            if (*p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't') size = 8;
            p++;
        }
        char conversion = *p ? *p++ : 0;
        int width = star_width ? (int)next(state, 4, 0) : 0;
        int precision = star_precision ? (int)next(state, 4, 0) : 0;
        spec[s] = 0;
        /* The spec without the length modifiers, re-spelled with the host's. */
        char host[80];
        switch (conversion) {
        case 'd': case 'i': {
            int64_t v = size == 8 ? (int64_t)next(state, 8, 0) : (int64_t)(int32_t)next(state, 4, 0);
            snprintf(host, sizeof host, "%sll%c", spec, conversion);
            if (star_width && star_precision) text_format(out, host, width, precision, (long long)v);
            else if (star_width || star_precision) text_format(out, host, star_width ? width : precision, (long long)v);
            else text_format(out, host, (long long)v);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': case 'c': {
            uint64_t v = size == 8 ? next(state, 8, 0) : (uint32_t)next(state, 4, 0);
            if (conversion == 'c') snprintf(host, sizeof host, "%sc", spec);
            else snprintf(host, sizeof host, "%sll%c", spec, conversion);
            if (conversion == 'c') text_format(out, host, (int)v);
            else if (star_width && star_precision) text_format(out, host, width, precision, (unsigned long long)v);
            else if (star_width || star_precision) text_format(out, host, star_width ? width : precision, (unsigned long long)v);
            else text_format(out, host, (unsigned long long)v);
            break;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
            uint64_t bits = next(state, 8, ARGUMENT_FLOAT);
            double v;
            memcpy(&v, &bits, 8);
            snprintf(host, sizeof host, "%s%c", spec, conversion);
            if (star_width && star_precision) text_format(out, host, width, precision, v);
            else if (star_width || star_precision) text_format(out, host, star_width ? width : precision, v);
            else text_format(out, host, v);
            break;
        }
        case 's': {
            const char *str = (const char *)(uintptr_t)next(state, 8, ARGUMENT_STRING);
            snprintf(host, sizeof host, "%ss", spec);
            text_format(out, host, str ? str : "(null)");
            break;
        }
        case 'p': {
            void *ptr = (void *)(uintptr_t)next(state, 8, 0);
            text_format(out, "%p", ptr);
            break;
        }
        default:
            text_add(out, spec, s);
            if (conversion) text_add(out, &conversion, 1);
            break;
        }
    }
}

/* CUDA's vprintf buffer: each argument at the next multiple of its size (float promoted to double). */
struct packed_arguments { const char *base; size_t offset; };

static uint64_t next_packed(void *state, unsigned size, int kind) {
    (void)kind;
    struct packed_arguments *a = state;
    if (!a->base) return 0;
    a->offset = round_up(a->offset, size);
    uint64_t v = 0;
    memcpy(&v, a->base + a->offset, size);
    a->offset += size;
    return v;
}

EXPORT int __emu_vprintf(const char *fmt, const char *args) {
    struct text out = {0};
    struct packed_arguments a = {args, 0};
    format_all(&out, fmt ? fmt : "", next_packed, &a);
    int n = (int)out.length;
    text_emit(&out);
    return n;
}

/* The GPU thread stops (the hardware traps): a fiber exits, a plain-loop thread leaves to its block. */
NORETURN static void trap_thread(void) {
    atomic_store(&device_trapped, 1);
    if (current_block->threads) {
        thread_exited();
    }
    _longjmp(current_block->escape, 1);
}

/* CUDA's device assert: its message as the CUDA runtime prints it, then a trap; later calls report
 * "device-side assert triggered". */
EXPORT void __emu_assertfail(const char *message, const char *file, unsigned line, const char *function, size_t size) {
    (void)size;
    const struct emu_thread *t = current;
    const struct block *b = current_block;
    /* MLIR's lowering passes "(unknown)" for the function: the running kernel's name is what CUDA shows. */
    if (!function || !strcmp(function, "(unknown)")) {
        function = b->launch->kernel->name;
    }
    pthread_mutex_lock(&print_lock);
    fflush(stdout);
    fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file ? file : "?",
            line, function, b->ctaid[0], b->ctaid[1], b->ctaid[2], t->tid[0], t->tid[1], t->tid[2],
            message ? message : "?");
    fflush(stderr);
    pthread_mutex_unlock(&print_lock);
    trap_thread();
}

EXPORT void __emu_trap(void) {
    char at[256];
    where(at, sizeof at, current);
    pthread_mutex_lock(&print_lock);
    fflush(stdout);
    fprintf(stderr, "mlir-offload emulator: trap in %s\n", at);
    pthread_mutex_unlock(&print_lock);
    trap_thread();
}


/* AMD's printf (ockl) as hostcall packets: a descriptor (bit 0 begins a message, bit 1 ends it, bits
 * 5..7 count the words that follow, bits 8.. the message id the host returned) and up to 7 words. A
 * printf message is a control word, the format (NUL-terminated, padded to words), then one word per
 * argument, a %s argument's string inline like the format. A GPU thread's packets follow each other
 * without a switch in between, so one message per OS thread is under way at a time. */
struct hostcall_message { uint64_t *words; size_t count, capacity; };
static _Thread_local struct hostcall_message hostcall_message;

struct inline_arguments { const uint64_t *words; size_t at, count; };

static uint64_t next_inline(void *state, unsigned size, int kind) {
    (void)size;
    struct inline_arguments *a = state;
    if (a->at >= a->count) return 0;
    if (kind == ARGUMENT_STRING) {
        const char *text = (const char *)(a->words + a->at);
        size_t limit = (a->count - a->at) * 8, length = strnlen(text, limit);
        a->at += (length + 8) / 8;
        return (uint64_t)(uintptr_t)text;
    }
    return a->words[a->at++];
}

static void print_hostcall_message(struct hostcall_message *m) {
    if (m->count < 2) return;
    const char *format = (const char *)(m->words + 1);
    size_t limit = (m->count - 1) * 8, length = strnlen(format, limit);
    if (length == limit) return;  /* no terminating NUL: not a printf message */
    struct inline_arguments a = {m->words, 1 + (length + 8) / 8, m->count};
    struct text out = {0};
    format_all(&out, format, next_inline, &a);
    text_emit(&out);
}

EXPORT uint64_t __emu_hostcall(const uint64_t *packet, uint32_t count) {
    struct hostcall_message *m = &hostcall_message;
    uint64_t descriptor = count ? packet[0] : 0;
    unsigned words = (unsigned)(descriptor >> 5) & 7;
    if (descriptor & 1) m->count = 0;
    for (unsigned i = 0; i < words; ++i) {
        if (m->count == m->capacity) {
            m->capacity = m->capacity ? 2 * m->capacity : 64;
            m->words = realloc(m->words, m->capacity * sizeof *m->words);
            if (!m->words) abort();
        }
        m->words[m->count++] = 1 + i < count ? packet[1 + i] : 0;
    }
    if (descriptor & 2) {
        print_hostcall_message(m);
        m->count = 0;
    }
    return (uint64_t)1 << 8;  /* message id 1, no flags */
}
