/* The emulation runtime's streams and events, called as a bundle's host code calls them, with kernels
 * written in C and registered as the retargeted device code registers its kernels. Built twice by
 * tests/emulator/test_emulator_streams.py: -DAPI=cuda and -DAPI=hip (the same rules under both names).
 *
 * Kernels that must wait for the host poll a flag with a deadline: a runtime that ran work too early or
 * in the wrong order makes a check fail, one that serialized streams makes a kernel give up, and
 * nothing hangs. Prints "ok NAME" per check, or "FAIL NAME: why" and exits 1. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JOIN2(a, b) a##b
#define JOIN(a, b) JOIN2(a, b)
#define F(name) JOIN(API, name)

int F(Malloc)(void **, size_t);
int F(Free)(void *);
int F(Memcpy)(void *, const void *, size_t, int);
int F(MemcpyAsync)(void *, const void *, size_t, int, void *);
int F(MemsetAsync)(void *, int, size_t, void *);
int F(StreamCreate)(void **);
int F(StreamCreateWithFlags)(void **, unsigned);
int F(StreamDestroy)(void *);
int F(StreamSynchronize)(void *);
int F(StreamQuery)(void *);
int F(StreamWaitEvent)(void *, void *, unsigned);
int F(EventCreate)(void **);
int F(EventDestroy)(void *);
int F(EventRecord)(void *, void *);
int F(EventSynchronize)(void *);
int F(EventQuery)(void *);
int F(EventElapsedTime)(float *, void *, void *);
int F(DeviceSynchronize)(void);
typedef struct { unsigned x, y, z; } dim3;
int F(LaunchKernel)(const void *, dim3, dim3, void **, size_t, void *);

enum { NOT_READY = 600, INVALID_HANDLE = 400, NON_BLOCKING = 1, WARP_32 = 32 << 8 };

void __emu_register_kernel(const char *name, void (*entry)(void **), unsigned flags, uint64_t static_shared,
                           unsigned parameter_count, const uint64_t *parameter_sizes);

/* ---- kernels (one thread each) ---- */

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* wait_for(flag, outcome): polls *flag for up to 20 s; *outcome = 1 if it was set, 2 if it gave up. */
static void wait_for(void **args) {
    _Atomic int *flag = *(_Atomic int **)args[0];
    _Atomic int *outcome = *(_Atomic int **)args[1];
    double deadline = seconds() + 20.0;
    while (!atomic_load(flag) && seconds() < deadline) {
    }
    atomic_store(outcome, atomic_load(flag) ? 1 : 2);
}

/* store(target, value): *target = value. */
static void store(void **args) {
    _Atomic int *target = *(_Atomic int **)args[0];
    atomic_store(target, *(int *)args[1]);
}

static const uint64_t TWO_POINTERS[] = {8, 8}, POINTER_AND_INT[] = {8, 4};
static char wait_for_handle, store_handle;

struct offload_entry {
    uint64_t reserved;
    uint16_t version, kind;
    uint32_t flags;
    void *address;
    const char *name;
    uint64_t size, data;
    void *aux;
};
__attribute__((section("llvm_offload_entries"), used)) static struct offload_entry entries[] = {
    {0, 1, 2, 0, &wait_for_handle, "wait_for", 0, 0, NULL},
    {0, 1, 2, 0, &store_handle, "store", 0, 0, NULL},
};

__attribute__((constructor)) static void register_kernels(void) {
    __emu_register_kernel("wait_for", wait_for, WARP_32, 0, 2, TWO_POINTERS);
    __emu_register_kernel("store", store, WARP_32, 0, 2, POINTER_AND_INT);
}

/* ---- checks ---- */

static int failures;
static void check(int ok, const char *name, const char *why) {
    if (ok) {
        printf("ok %s\n", name);
    } else {
        printf("FAIL %s: %s\n", name, why);
        failures++;
    }
    fflush(stdout);
}

static void call(int status, const char *what) {
    if (status != 0) {
        printf("FAIL %s returned %d\n", what, status);
        exit(1);
    }
}

static const dim3 ONE = {1, 1, 1};

static void launch_wait_for(_Atomic int *flag, _Atomic int *outcome, void *stream) {
    void *args[] = {&flag, &outcome};
    call(F(LaunchKernel)(&wait_for_handle, ONE, ONE, args, 0, stream), "launch wait_for");
}

static void launch_store(_Atomic int *target, int value, void *stream) {
    void *args[] = {&target, &value};
    call(F(LaunchKernel)(&store_handle, ONE, ONE, args, 0, stream), "launch store");
}

static void pause_a_little(void) {
    struct timespec t = {0, 100 * 1000 * 1000};
    nanosleep(&t, NULL);
}

static _Atomic int *cell(void) {  /* device memory the host may read, as on a system with unified memory */
    void *p;
    call(F(Malloc)(&p, sizeof(_Atomic int)), "malloc");
    atomic_store((_Atomic int *)p, 0);
    return p;
}

int main(void) {
    void *blocking, *other, *non_blocking;
    call(F(StreamCreate)(&blocking), "stream create");
    call(F(StreamCreate)(&other), "stream create");
    call(F(StreamCreateWithFlags)(&non_blocking, NON_BLOCKING), "stream create non-blocking");

    /* A launch returns before its kernel ran; two streams' kernels run at the same time. */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *done = cell();
        launch_wait_for(flag, outcome, blocking);
        launch_store(done, 7, blocking);
        check(F(StreamQuery)(blocking) == NOT_READY, "launch-is-queued", "the stream was idle after the launch");
        launch_store(flag, 1, other);
        call(F(StreamSynchronize)(blocking), "stream synchronize");
        check(atomic_load(outcome) == 1 && atomic_load(done) == 7, "streams-overlap",
              "the kernel on the first stream never saw the second stream's store");
        check(F(StreamQuery)(blocking) == 0, "synchronized-stream-is-idle", "StreamQuery is not success");
    }
    /* The legacy stream waits for blocking streams' earlier work... */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *after = cell();
        launch_wait_for(flag, outcome, blocking);
        launch_store(after, 1, NULL);
        pause_a_little();
        check(atomic_load(after) == 0, "legacy-waits-for-blocking", "the legacy stream's kernel ran first");
        atomic_store(flag, 1);
        call(F(DeviceSynchronize)(), "device synchronize");
        check(atomic_load(after) == 1 && atomic_load(outcome) == 1, "legacy-runs-after", "wrong outcome");
    }
    /* ...and blocking streams wait for the legacy stream's earlier work, */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *after = cell();
        launch_wait_for(flag, outcome, NULL);
        launch_store(after, 1, blocking);
        pause_a_little();
        check(atomic_load(after) == 0 && F(StreamQuery)(blocking) == NOT_READY, "blocking-waits-for-legacy",
              "the blocking stream's kernel ran first");
        atomic_store(flag, 1);
        call(F(StreamSynchronize)(blocking), "stream synchronize");
        check(atomic_load(after) == 1 && atomic_load(outcome) == 1, "blocking-runs-after", "wrong outcome");
    }
    /* but a non-blocking stream waits for nothing. */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *after = cell();
        launch_wait_for(flag, outcome, NULL);
        launch_store(after, 1, non_blocking);
        call(F(StreamSynchronize)(non_blocking), "stream synchronize");
        check(atomic_load(after) == 1 && atomic_load(outcome) == 0, "non-blocking-ignores-legacy",
              "the non-blocking stream waited for the legacy stream");
        atomic_store(flag, 1);
        call(F(DeviceSynchronize)(), "device synchronize");
        check(atomic_load(outcome) == 1, "legacy-kernel-finished", "wrong outcome");
    }
    /* Events: a stream waits for another stream's record; queries and elapsed time before completion. */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *after = cell();
        void *start, *event, *never;
        call(F(EventCreate)(&start), "event create");
        call(F(EventCreate)(&event), "event create");
        call(F(EventCreate)(&never), "event create");
        call(F(EventRecord)(start, blocking), "event record");
        launch_wait_for(flag, outcome, blocking);
        call(F(EventRecord)(event, blocking), "event record");
        call(F(StreamWaitEvent)(non_blocking, event, 0), "stream wait event");
        call(F(StreamWaitEvent)(non_blocking, never, 0), "stream wait event (never recorded)");
        launch_store(after, 1, non_blocking);
        float ms = -1;
        check(F(EventQuery)(event) == NOT_READY && F(EventElapsedTime)(&ms, start, event) == NOT_READY,
              "event-pending", "the event was complete before its stream's kernel");
        check(F(EventElapsedTime)(&ms, start, never) == INVALID_HANDLE, "event-never-recorded",
              "elapsed time to an event never recorded was not an invalid handle");
        pause_a_little();
        check(atomic_load(after) == 0, "stream-waits-for-event", "the waiting stream's kernel ran first");
        atomic_store(flag, 1);
        call(F(EventSynchronize)(event), "event synchronize");
        check(F(EventQuery)(event) == 0 && atomic_load(outcome) == 1, "event-complete", "wrong outcome");
        call(F(StreamSynchronize)(non_blocking), "stream synchronize");
        check(atomic_load(after) == 1, "waiting-stream-ran", "wrong outcome");
        check(F(EventElapsedTime)(&ms, start, event) == 0 && ms >= 100.0f, "elapsed-time",
              "the elapsed time does not cover the pause");
        call(F(EventDestroy)(start), "event destroy");
        call(F(EventDestroy)(event), "event destroy");
        call(F(EventDestroy)(never), "event destroy");
    }
    /* A launch copies its arguments; copies and sets are queued in order unless pageable memory is
     * involved, which the call copies itself after the stream's earlier work. */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *target = cell();
        int *device, *copy;
        call(F(Malloc)((void **)&device, 4 * sizeof(int)), "malloc");
        call(F(Malloc)((void **)&copy, 4 * sizeof(int)), "malloc");
        launch_wait_for(flag, outcome, blocking);
        int value = 41;
        void *args[] = {&target, &value};
        call(F(LaunchKernel)(&store_handle, ONE, ONE, args, 0, blocking), "launch store");
        value = 99;  /* too late for the launch, which took its own copy */
        call(F(MemsetAsync)(device, 0x11, 4 * sizeof(int), blocking), "memset async");
        call(F(MemcpyAsync)(copy, device, 4 * sizeof(int), 3, blocking), "memcpy async device to device");
        check(copy[0] == 0 && device[0] == 0, "device-copy-is-queued", "the set or copy ran before the kernel");
        atomic_store(flag, 1);
        int host[4] = {0};
        call(F(MemcpyAsync)(host, copy, sizeof host, 2, blocking), "memcpy async to pageable memory");
        check(host[0] == 0x11111111 && host[3] == 0x11111111 && atomic_load(target) == 41, "pageable-copy-after-stream",
              "the copy to pageable memory did not wait for the stream's work, or the launch read its argument late");
        int source[4] = {5, 6, 7, 8};
        call(F(MemcpyAsync)(device, source, sizeof source, 1, blocking), "memcpy async from pageable memory");
        source[0] = -1;
        call(F(StreamSynchronize)(blocking), "stream synchronize");
        check(device[0] == 5 && device[3] == 8, "pageable-source-read-by-the-call", "the copy read the source late");
        call(F(Free)(device), "free");
        call(F(Free)(copy), "free");
    }
    /* A stream destroyed with work queued finishes it; DeviceSynchronize waits for it. */
    {
        _Atomic int *flag = cell(), *outcome = cell(), *after = cell();
        void *doomed;
        call(F(StreamCreate)(&doomed), "stream create");
        launch_wait_for(flag, outcome, doomed);
        launch_store(after, 3, doomed);
        call(F(StreamDestroy)(doomed), "stream destroy");
        atomic_store(flag, 1);
        call(F(DeviceSynchronize)(), "device synchronize");
        check(atomic_load(after) == 3, "destroyed-stream-finishes", "the destroyed stream's work was lost");
    }
    call(F(StreamDestroy)(blocking), "stream destroy");
    call(F(StreamDestroy)(other), "stream destroy");
    call(F(StreamDestroy)(non_blocking), "stream destroy");
    return failures ? 1 : 0;
}
