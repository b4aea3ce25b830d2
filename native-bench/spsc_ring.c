// native-bench/spsc_ring.c: the physical-limit reference for src/ring's SPSC ring on this machine.
//
// The same protocol and layout as src/ring/spsc_ring.ts (ring_layout.ts): a shared header whose
// producer sequence, consumer sequence and flags sit on their own 64-byte cache lines, then
// power-of-two slots; the producer claims up to BATCH_MAX free slots, writes them, and publishes
// them with one release store of its sequence; the consumer acquires the producer sequence,
// reads every available record, and releases them with one store of its sequence. The ring lives
// in shared memory (an anonymous MAP_SHARED mapping) between two threads. Each record gets what
// bench/ring.ts writes: word 0 the index, word 1 index ^ 0x5a5a5a5a, f64 at word 2 index *
// 1000003; the consumer checks word 0 of every record (order and loss).
//
// Waiting, as the JS ring does it: spin RING_SPIN iterations, then announce in the waiters word
// (atomic add), re-check, and sleep on the peer's sequence word with a futex (Atomics.wait is a
// futex wait in V8); a side that publishes wakes the other only when its waiters word is non-zero.
//
//   build/spsc_ring RECORDS CAPACITY_SLOTS SLOT_BYTES BATCH_MAX
//
// Prints one JSON line: {"bench":"native_spsc_ring","records":..,"slot_bytes":..,"records_per_s":..}
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HEADER_WORDS 64
#define H_PRODUCER_SEQUENCE 16
#define H_CONSUMER_SEQUENCE 32
#define H_CONSUMER_WAITERS 48
#define H_PRODUCER_WAITERS 49
#define H_CLOSED 50
#define RING_SPIN 200
#define CAPACITY_SLOTS_MAX (1u << 20)
#define SLOT_BYTES_MAX 1024u
#define RECORDS_MAX 1000000000ull

typedef struct {
  int32_t *words;
  uint32_t capacity, mask, slot_words;
  uint64_t records;
  uint32_t batch_max;
} Ring;

static void die(const char *what) {
  fprintf(stderr, "spsc_ring: %s\n", what);
  exit(1);
}

static inline int32_t load_acquire(const int32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_release(int32_t *p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static void futex_wait(int32_t *word, int32_t observed) {
  struct timespec timeout = {0, 10 * 1000 * 1000}; // bounded: re-check every 10 ms
  syscall(SYS_futex, word, FUTEX_WAIT, observed, &timeout, NULL, 0);
}
static void futex_wake(int32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0); }

/**
 * Waits until *seq differs from `observed`: spin, then announce in *waiters, re-check, sleep.
 * Returns the new value.
 */
static int32_t wait_change(int32_t *seq, int32_t *waiters, int32_t observed) {
  for (unsigned i = 0; i < RING_SPIN; i++) {
    int32_t v = load_acquire(seq);
    if (v != observed) return v;
  }
  for (;;) {
    __atomic_add_fetch(waiters, 1, __ATOMIC_SEQ_CST);
    int32_t v = __atomic_load_n(seq, __ATOMIC_SEQ_CST);
    if (v == observed) futex_wait(seq, observed);
    __atomic_sub_fetch(waiters, 1, __ATOMIC_SEQ_CST);
    v = load_acquire(seq);
    if (v != observed) return v;
  }
}

/** Publishes `value` in *seq and wakes the peer if it announced that it sleeps. */
static inline void publish(int32_t *seq, int32_t *peer_waiters, int32_t value) {
  __atomic_store_n(seq, value, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(peer_waiters, __ATOMIC_SEQ_CST) != 0) futex_wake(seq);
}

static inline int32_t *slot(const Ring *r, uint32_t seq) {
  return r->words + HEADER_WORDS + (size_t)(seq & r->mask) * r->slot_words;
}

static void *producer(void *arg) {
  Ring *r = arg;
  int32_t *pseq = r->words + H_PRODUCER_SEQUENCE;
  int32_t *cseq = r->words + H_CONSUMER_SEQUENCE;
  uint32_t seq = 0;
  uint64_t index = 0;
  while (index < r->records) {
    uint32_t used = seq - (uint32_t)load_acquire(cseq);
    uint32_t free_slots = r->capacity - used;
    if (free_slots == 0) {
      wait_change(cseq, r->words + H_PRODUCER_WAITERS, (int32_t)(seq - r->capacity));
      continue;
    }
    uint64_t left = r->records - index;
    uint32_t n = free_slots < r->batch_max ? free_slots : r->batch_max;
    if (n > left) n = (uint32_t)left;
    for (uint32_t i = 0; i < n; i++) {
      int32_t *w = slot(r, seq + i);
      w[0] = (int32_t)index;
      w[1] = (int32_t)index ^ 0x5a5a5a5a;
      double v = (double)index * 1000003.0;
      memcpy(w + 2, &v, sizeof v);
      index++;
    }
    seq += n;
    publish(pseq, r->words + H_CONSUMER_WAITERS, (int32_t)seq);
  }
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t arg_u64(const char *s, uint64_t lo, uint64_t hi, const char *what) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*s == 0 || *end != 0 || v < lo || v > hi) {
    fprintf(stderr, "spsc_ring: %s must be an integer in [%llu, %llu]\n", what, (unsigned long long)lo, (unsigned long long)hi);
    exit(1);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc != 5) die("usage: spsc_ring RECORDS CAPACITY_SLOTS SLOT_BYTES BATCH_MAX");
  Ring r;
  r.records = arg_u64(argv[1], 1, RECORDS_MAX, "RECORDS");
  r.capacity = (uint32_t)arg_u64(argv[2], 2, CAPACITY_SLOTS_MAX, "CAPACITY_SLOTS");
  uint32_t slot_bytes = (uint32_t)arg_u64(argv[3], 16, SLOT_BYTES_MAX, "SLOT_BYTES");
  r.batch_max = (uint32_t)arg_u64(argv[4], 1, CAPACITY_SLOTS_MAX, "BATCH_MAX");
  if ((r.capacity & (r.capacity - 1)) != 0) die("CAPACITY_SLOTS must be a power of two");
  if (slot_bytes % 8 != 0) die("SLOT_BYTES must be a multiple of 8 (8-byte aligned slots)");
  r.mask = r.capacity - 1;
  r.slot_words = slot_bytes / 4;
  size_t bytes = (size_t)HEADER_WORDS * 4 + (size_t)r.capacity * slot_bytes;
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) die("cannot map the shared ring");
  r.words = mem;
  memset(mem, 0, bytes);

  int32_t *pseq = r.words + H_PRODUCER_SEQUENCE;
  int32_t *cseq = r.words + H_CONSUMER_SEQUENCE;
  double t0 = now_s();
  pthread_t thread;
  if (pthread_create(&thread, NULL, producer, &r) != 0) die("cannot start the producer thread");
  uint32_t seq = 0;
  uint64_t index = 0;
  while (index < r.records) {
    uint32_t n = (uint32_t)load_acquire(pseq) - seq;
    if (n == 0) {
      wait_change(pseq, r.words + H_CONSUMER_WAITERS, (int32_t)seq);
      continue;
    }
    for (uint32_t i = 0; i < n; i++) {
      if (slot(&r, seq + i)[0] != (int32_t)index) {
        fprintf(stderr, "spsc_ring: record %llu out of order\n", (unsigned long long)index);
        return 1;
      }
      index++;
    }
    seq += n;
    publish(cseq, r.words + H_PRODUCER_WAITERS, (int32_t)seq);
  }
  double dt = now_s() - t0;
  store_release(r.words + H_CLOSED, 1);
  pthread_join(thread, NULL);
  munmap(mem, bytes);
  printf("{\"bench\":\"native_spsc_ring\",\"records\":%llu,\"capacity_slots\":%u,\"slot_bytes\":%u,\"batch_max\":%u,"
         "\"seconds\":%.6f,\"records_per_s\":%.0f}\n",
         (unsigned long long)r.records, r.capacity, slot_bytes, r.batch_max, dt, (double)r.records / dt);
  return 0;
}
