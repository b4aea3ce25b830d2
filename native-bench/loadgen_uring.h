// loadgen's io_uring primitives over the raw syscalls (no liburing: nothing to install): the ring,
// its submission and completion queues, registered files and one provided-buffer ring for the
// multishot receives. loadgen.c's io_uring backend (uring_* there) uses them; when any step here
// fails (old kernel, seccomp, io_uring_disabled), loadgen falls back to epoll.
// Why io_uring (docs/benchmarks.md, section h22g): one io_uring_enter submits the sends of every
// lane that got its answer in a batch and reaps the next batch of answers, instead of one send
// and one recv syscall per request (plus the epoll layer and the fd lookups).
// No SQPOLL: a kernel thread polling the ring would take the server's core.
#ifndef LOADGEN_URING_H
#define LOADGEN_URING_H
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "loadgen_common.h"

/** Bytes of one provided receive buffer: an answer is ~200-600 bytes; a longer one spans buffers. */
#define URING_BUF_BYTES 2048u

typedef struct {
  int fd;
  // submission queue
  uint32_t *sq_head, *sq_tail, *sq_mask, *sq_array;
  uint32_t sq_entries, sq_local_tail, sq_pending;
  struct io_uring_sqe *sqes;
  // completion queue
  uint32_t *cq_head, *cq_tail, *cq_mask;
  struct io_uring_cqe *cqes;
  void *sq_map, *cq_map;
  size_t sq_map_bytes, cq_map_bytes, sqes_bytes;
  // the provided-buffer ring (group 0)
  struct io_uring_buf_ring *br;
  uint8_t *bufs;
  uint32_t nbufs, br_tail;
  uint64_t enters; // io_uring_enter calls
  // Called right before an io_uring_enter that submits: loadgen stamps its queued sends there,
  // immediately before the syscall that sends them (whichever enter that is: the loop's, or
  // uring_sqe's when the queue is full).
  void (*before_submit)(void *ctx);
  void *submit_ctx;
} uring_t;

static int uring_sys_setup(uint32_t entries, struct io_uring_params *p) { return (int)syscall(__NR_io_uring_setup, entries, p); }
static int uring_sys_enter(int fd, uint32_t submit, uint32_t min_complete, uint32_t flags) {
  return (int)syscall(__NR_io_uring_enter, fd, submit, min_complete, flags, NULL, 0);
}
static int uring_sys_register(int fd, unsigned op, const void *arg, unsigned n) { return (int)syscall(__NR_io_uring_register, fd, op, arg, n); }

static uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/**
 * Sets the ring up for `sq_entries` submissions in flight; returns 0, or -errno with *why naming
 * the step. SINGLE_ISSUER + DEFER_TASKRUN: completions run only inside our own io_uring_enter
 * (no interrupt of this task when an answer lands, no task work between our own steps).
 */
static int uring_init(uring_t *u, uint32_t sq_entries, const char **why) {
  memset(u, 0, sizeof *u);
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  p.cq_entries = sq_entries * 4; // every lane's send and recv completions, with room for split answers
  int fd = uring_sys_setup(sq_entries, &p);
  if (fd < 0 && errno == EINVAL) {
    // Kernels before 6.1 lack DEFER_TASKRUN: COOP_TASKRUN (5.19) still avoids the interrupts.
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN;
    p.cq_entries = sq_entries * 4;
    fd = uring_sys_setup(sq_entries, &p);
  }
  if (fd < 0) { *why = "io_uring_setup"; return -errno; }
  u->fd = fd;
  if (!(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP)) { *why = "io_uring features (kernel < 5.5)"; close(fd); return -ENOSYS; }
  u->sq_map_bytes = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
  size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (cq_bytes > u->sq_map_bytes) u->sq_map_bytes = cq_bytes;
  u->sq_map = mmap(NULL, u->sq_map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  if (u->sq_map == MAP_FAILED) { *why = "mmap of the rings"; close(fd); return -errno; }
  u->cq_map = u->sq_map; // IORING_FEAT_SINGLE_MMAP
  u->sqes_bytes = p.sq_entries * sizeof(struct io_uring_sqe);
  u->sqes = mmap(NULL, u->sqes_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
  if (u->sqes == MAP_FAILED) { *why = "mmap of the sqes"; close(fd); return -errno; }
  uint8_t *sq = u->sq_map, *cq = u->cq_map;
  u->sq_head = (uint32_t *)(sq + p.sq_off.head);
  u->sq_tail = (uint32_t *)(sq + p.sq_off.tail);
  u->sq_mask = (uint32_t *)(sq + p.sq_off.ring_mask);
  u->sq_array = (uint32_t *)(sq + p.sq_off.array);
  u->sq_entries = p.sq_entries;
  u->sq_local_tail = *u->sq_tail;
  u->cq_head = (uint32_t *)(cq + p.cq_off.head);
  u->cq_tail = (uint32_t *)(cq + p.cq_off.tail);
  u->cq_mask = (uint32_t *)(cq + p.cq_off.ring_mask);
  u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  // The SQ array maps slot i to sqe i once and for all.
  for (uint32_t i = 0; i < u->sq_entries; i++) u->sq_array[i] = i;
  return 0;
}

/** Registers the sockets as fixed files (no fd lookup and reference per operation); 0 or -errno. */
static int uring_register_files(uring_t *u, const int *fds, uint32_t n) {
  return uring_sys_register(u->fd, IORING_REGISTER_FILES, fds, n) < 0 ? -errno : 0;
}

/** Replaces fixed file `slot` with -1 (a closed lane). */
static void uring_unregister_file(uring_t *u, uint32_t slot) {
  int minus_one = -1;
  struct io_uring_files_update up = {.offset = slot, .fds = (uint64_t)(uintptr_t)&minus_one};
  uring_sys_register(u->fd, IORING_REGISTER_FILES_UPDATE, &up, 1);
}

/** Hands buffer `bid` back to the kernel (visible at the next uring_buf_publish). */
static void uring_buf_recycle(uring_t *u, uint16_t bid) {
  struct io_uring_buf *b = &u->br->bufs[u->br_tail & (u->nbufs - 1)];
  b->addr = (uint64_t)(uintptr_t)(u->bufs + (size_t)bid * URING_BUF_BYTES);
  b->len = URING_BUF_BYTES;
  b->bid = bid;
  u->br_tail++;
}

static void uring_buf_publish(uring_t *u) { atomic_store_explicit((_Atomic uint16_t *)&u->br->tail, (uint16_t)u->br_tail, memory_order_release); }

/** Registers `nbufs` (a power of two) provided buffers as group 0; 0 or -errno (kernel < 5.19). */
static int uring_setup_buffers(uring_t *u, uint32_t nbufs) {
  size_t ring_bytes = nbufs * sizeof(struct io_uring_buf);
  void *ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (ring == MAP_FAILED) return -errno;
  u->bufs = malloc((size_t)nbufs * URING_BUF_BYTES);
  if (u->bufs == NULL) die("out of memory");
  u->br = ring;
  u->nbufs = nbufs;
  struct io_uring_buf_reg reg = {.ring_addr = (uint64_t)(uintptr_t)ring, .ring_entries = nbufs, .bgid = 0};
  if (uring_sys_register(u->fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0) return -errno;
  for (uint32_t i = 0; i < nbufs; i++) uring_buf_recycle(u, (uint16_t)i);
  uring_buf_publish(u);
  return 0;
}

/** Submits what is queued; with `wait`, also waits for at least one completion. Returns -errno on failure. */
static int uring_enter(uring_t *u, int wait) {
  uint32_t n = u->sq_pending;
  if (n > 0) atomic_store_explicit((_Atomic uint32_t *)u->sq_tail, u->sq_local_tail, memory_order_release);
  if (n == 0 && !wait) return 0;
  if (n > 0 && u->before_submit != NULL) u->before_submit(u->submit_ctx);
  u->enters++;
  int ret = uring_sys_enter(u->fd, n, wait ? 1 : 0, wait ? IORING_ENTER_GETEVENTS : 0);
  if (ret < 0) return -errno;
  // The kernel consumes every sqe of a call unless one fails to be read (then it stops there):
  // what it did not take stays pending for the next call.
  u->sq_pending -= (uint32_t)ret < n ? (uint32_t)ret : n;
  return 0;
}

/** A zeroed sqe to fill; submits the queue first when it is full. */
static struct io_uring_sqe *uring_sqe(uring_t *u) {
  while (u->sq_local_tail - atomic_load_explicit((_Atomic uint32_t *)u->sq_head, memory_order_acquire) >= u->sq_entries) {
    int e = uring_enter(u, 0);
    if (e < 0 && e != -EINTR && e != -EAGAIN && e != -EBUSY) die("io_uring_enter: %s", strerror(-e));
  }
  struct io_uring_sqe *s = &u->sqes[u->sq_local_tail & *u->sq_mask];
  memset(s, 0, sizeof *s);
  u->sq_local_tail++;
  u->sq_pending++;
  return s;
}

#endif
