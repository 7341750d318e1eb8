/* Thread-block clusters (sm_90) for the emulation runtime, included by runtime.c after hopper.h: the blocks
 * of a cluster run together on one worker, their threads as fibers of one scheduler, so distributed shared
 * memory (mapa: the same offset in another block's segment), cluster barriers and remote mbarrier
 * arrivals behave as on the GPU, and a wait that can never complete is reported. Without a cluster launch
 * every block is a cluster of one, as the hardware treats it. */

enum { MAX_CLUSTER_BLOCKS = 16 };  /* non-portable cluster size limit */

struct cluster_barrier { unsigned expected, arrived, phase; };

static void cluster_barrier_init(struct cluster_barrier *c, unsigned threads) {
    c->expected = threads;
    c->arrived = 0;
    c->phase = 0;
}

static uint32_t cluster_count(unsigned d) { return current_block->launch->grid[d] / current_block->launch->cluster[d]; }

#define CLUSTER_SREG(name, expr) \
    EXPORT uint32_t __emu_##name##_x(void) { unsigned d = 0; return (expr); } \
    EXPORT uint32_t __emu_##name##_y(void) { unsigned d = 1; return (expr); } \
    EXPORT uint32_t __emu_##name##_z(void) { unsigned d = 2; return (expr); }
CLUSTER_SREG(clusterid, current_block->ctaid[d] / current_block->launch->cluster[d])
CLUSTER_SREG(nclusterid, cluster_count(d))
CLUSTER_SREG(cluster_ctaid, current_block->cluster_position[d])
CLUSTER_SREG(cluster_nctaid, current_block->launch->cluster[d])
EXPORT uint32_t __emu_cluster_ctarank(void) { return current_block->cluster_rank; }
EXPORT uint32_t __emu_cluster_nctarank(void) { return current_block->launch->cluster_size; }
EXPORT uint32_t __emu_is_explicit_cluster(void) { return current_block->launch->explicit_cluster; }

/* The block of the current cluster whose workgroup segment holds `p` (NULL: none). */
static struct block *cluster_block_of(const void *p, size_t size) {
    const struct block *b = current_block;
    if (!b) return NULL;
    for (unsigned r = 0; r < b->launch->cluster_size; ++r) {
        struct block *other = &b->cluster_blocks[r];
        const char *c = p;
        if (c >= other->shared && c + size <= other->shared + b->launch->shared_bytes) return other;
    }
    return NULL;
}

NORETURN static void cluster_fail(const char *what, const void *p, unsigned rank) {
    char at[256];
    where(at, sizeof at, current);
    fail("distributed shared memory in %s: %s (address %p, rank %u of a %u-block cluster)", at, what, p, rank,
         current_block->launch->cluster_size);
}

/* mapa: the address at the same offset in the workgroup segment of block `rank` of the cluster. */
EXPORT void *__emu_mapa(void *p, uint32_t rank) {
    struct block *home = cluster_block_of(p, 1);
    if (!home) cluster_fail("mapa of an address outside the cluster's shared memory", p, rank);
    if (rank >= current_block->launch->cluster_size) cluster_fail("mapa to a rank outside the cluster", p, rank);
    return current_block->cluster_blocks[rank].shared + ((char *)p - home->shared);
}

static void *mapa_rank(void *p, unsigned rank) { return __emu_mapa(p, rank); }

EXPORT uint32_t __emu_getctarank(void *p) {
    struct block *home = cluster_block_of(p, 1);
    if (!home) cluster_fail("getctarank of an address outside the cluster's shared memory", p, 0);
    return home->cluster_rank;
}

/* barrier.cluster.arrive / wait: a phase completes when every thread of the cluster has arrived. */
EXPORT void __emu_cluster_arrive(void) {
    struct cluster_barrier *c = current_block->cluster_barrier;
    current->cluster_phase = c->phase;
    if (++c->arrived == c->expected) {
        c->arrived = 0;
        c->phase++;
    }
}

static int cluster_wait_over(const struct emu_thread *t) {
    return ((const struct cluster_barrier *)t->wait_on)->phase != t->cluster_phase;
}

EXPORT void __emu_cluster_wait(void) {
    struct emu_thread *t = current;
    struct cluster_barrier *c = current_block->cluster_barrier;
    if (c->phase != t->cluster_phase) return;
    if (!current_block->threads) {  /* a plain-loop block: only a one-thread, one-block cluster gets here */
        if (c->expected == 1) return;
        fail("internal error: cluster barrier in a kernel registered without contexts");
    }
    t->wait_on = c;
    t->wait_over = cluster_wait_over;
    t->state = AT_WAIT;
    yield_to_scheduler();
}

/* No fiber of the cluster can run and `t` waits at the cluster barrier. */
NORETURN static void report_cluster_deadlock(const struct emu_thread *t, const struct block *b) {
    const struct cluster_barrier *c = b->cluster_barrier;
    current = (struct emu_thread *)t;
    current_block = (struct block *)b;
    char at[256];
    where(at, sizeof at, t);
    fail("deadlock in %s: it waits at the cluster barrier, where %u of the cluster's %u threads arrived and no "
         "other thread can arrive", at, c->arrived, c->expected);
}
