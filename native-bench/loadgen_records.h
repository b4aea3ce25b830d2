// loadgen's per-request records (--records FILE): for each answer, when it was scheduled,
// written and read (CLOCK_MONOTONIC ns) and the number in the server's X-Request-Id, so the load
// bench can join a slow request with the server's own stage stamps of that request
// (bench/load/tail.ts). Only kept when asked: the plain run keeps histograms only.
//
// File (little-endian): "RBLR0001", i64 realtime - monotonic (ns, at the start), u64 count, then
// count records of 40 bytes: i64 scheduled, i64 written, i64 read, u64 request number (0: no
// header), u32 lane, u16 HTTP status, u16 kind.
#ifndef LOADGEN_RECORDS_H
#define LOADGEN_RECORDS_H
#include "loadgen_common.h"

typedef struct {
  int64_t sched_ns, sent_ns, done_ns;
  uint64_t request_no;
  uint32_t lane;
  uint16_t status;
  uint16_t kind;
} answer_record_t;

_Static_assert(sizeof(answer_record_t) == 40, "record layout is part of the file format");

typedef struct {
  answer_record_t *r;
  uint64_t n, cap;
} records_t;

static void records_add(records_t *rs, answer_record_t rec) {
  if (rs->n == rs->cap) {
    // Bounded by the requests a run may send (REQUESTS_MAX): at most one record per answer.
    uint64_t nc = rs->cap ? rs->cap * 2 : 16384;
    answer_record_t *p = realloc(rs->r, nc * sizeof *p);
    if (p == NULL) die("out of memory (records)");
    rs->r = p;
    rs->cap = nc;
  }
  rs->r[rs->n++] = rec;
}

/**
 * CLOCK_REALTIME - CLOCK_MONOTONIC in ns, read between two monotonic reads (the tightest of 16
 * tries), so monotonic stamps can be set beside the server's epoch stamps (Node's
 * performance.timeOrigin + performance.now() is the wall clock at its start plus a monotonic delta).
 */
static int64_t realtime_minus_monotonic_ns(void) {
  int64_t best_gap = INT64_MAX, best = 0;
  for (int i = 0; i < 16; i++) {
    struct timespec rt;
    int64_t a = now_ns();
    clock_gettime(CLOCK_REALTIME, &rt);
    int64_t b = now_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      best = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec - (a + (b - a) / 2);
    }
  }
  return best;
}

/** The number after the '-' of `X-Request-Id: <hex>-<base 36>` in [v, end); 0 when malformed. */
static uint64_t request_number(const uint8_t *v, const uint8_t *end) {
  const uint8_t *dash = memchr(v, '-', (size_t)(end - v));
  if (dash == NULL) return 0;
  uint64_t n = 0;
  int digits = 0;
  for (const uint8_t *p = dash + 1; p < end && digits < 12; p++, digits++) {
    int d;
    if (*p >= '0' && *p <= '9') d = *p - '0';
    else if (*p >= 'a' && *p <= 'z') d = *p - 'a' + 10;
    else break;
    n = n * 36 + (uint64_t)d;
  }
  return digits > 0 ? n : 0;
}

static void write_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

static void records_write(const records_t *rs, const char *path, int64_t clock_offset_ns) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) die("cannot write %s: %s", path, strerror(errno));
  uint8_t head[24];
  memcpy(head, "RBLR0001", 8);
  write_u64(head + 8, (uint64_t)clock_offset_ns);
  write_u64(head + 16, rs->n);
  // The records are written as the struct lays them out: x86-64 and arm64 are little-endian.
  if (fwrite(head, 1, sizeof head, f) != sizeof head || (rs->n > 0 && fwrite(rs->r, sizeof *rs->r, rs->n, f) != rs->n) || fclose(f) != 0)
    die("cannot write %s: %s", path, strerror(errno));
}

#endif
