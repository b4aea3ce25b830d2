/*
 * pipelined_append: would a second durable append in flight during a slow one shorten the wait
 * of the requests behind it? (issue 11, docs/benchmarks.md section "h30j").
 *
 *   native-bench/build/pipelined_append [--rounds R] [--seconds S] [--rate N] [--modes a,b,...]
 *       [--dir DIR] [--file-mb M] [--min-bytes B] [--max-bytes B] [--slow-us U] [--records FILE]
 *
 * Models the matcher's journal at a steady request rate (default 1,000/s): request i arrives at
 * t0 + i/rate with a body of min..max bytes (uniform, fixed seed). A batch is every request that
 * has arrived and is not yet in a batch; it is written like src/journal/wal.ts writes a record:
 * one pwritev (a 40-byte header, the body, zeros to the page) of whole 4 KB pages at the next
 * sequential offset of a preallocated file written and fdatasynced beforehand (wrapping at its
 * end), through an O_DSYNC descriptor. A request is acknowledgeable when its batch and every
 * earlier batch are durable (ack[b] = max(done[b], ack[b-1])); its latency runs from its arrival.
 *
 *   serial   the matcher thread writes each batch itself, one in flight (wal.ts today): requests
 *            arriving during a write form the next batch, written when it returns
 *   pipeK    up to K batches in flight, each written by one of K writer threads; the matcher
 *            (this thread) hands a batch off as soon as a request arrives and fewer than K are in
 *            flight, else when a writer is free. pipe1 is serial plus the hand-off's wake-up.
 *
 * "Behind a slow append": a request that arrives while the last batch issued before it has been
 * in flight for more than --slow-us (1,000 µs) and is not durable yet. For those, the figure that
 * answers the question is behind_us = its acknowledgeable time - that batch's completion: serial
 * makes it one whole append after the slow one (its batch is only written then); pipelining makes
 * it ~0 if the device completes the second write with the first, one flush if it serialises.
 * Also for pipeK: for each batch handed off while the previous had been in flight > --slow-us,
 * second_after_first_us = its completion - the previous one's completion (negative: it finished
 * first).
 *
 * Modes alternate within each round, their order rotated each round; each phase lasts S seconds
 * (default 20) with its own file (default 4 MB, wal.log's size) and skips its first 200 requests.
 * The machine's block-device flush and write counts and times (/proc/diskstats of the file's
 * device: every process on it, not only ours) are read around each phase. Output: a table on stderr, then one
 * JSON line {"bench":"pipelined_append", ...}: per mode, medians over rounds of each phase's
 * figures, and behind_us pooled over all rounds. --records FILE writes one text line per append
 * (mode, batch, hand-off, issue and completion ns on CLOCK_MONOTONIC, pages, requests, writer
 * tid), to lay beside a block trace taken with trace_clock "mono".
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_options.h"
#include "pipelined_append_figures.h"
#include "pipelined_append_run.h"

#define MAX_MODES 6
#define MAX_ROUNDS 20
#define MAX_REQUESTS 2000000L    /* rate x seconds per phase */

/* Runs one phase of n requests at `rate` in `mode`, fills fig[N_F]; appends behind_us samples. */
static void run_phase(const mode_desc *mode, long n, long rate, long file_bytes, long slow_ns, dev_t dev,
                      char **bufs, double *fig, int64_t *pool, long *pooled) {
  double d0[4], d1[4];
  fig[F_LOAD] = loadavg();
  disk_flushes(dev, d0);
  int nb = run_batches(mode, n, rate, file_bytes, bufs);
  disk_flushes(dev, d1);
  phase_figures(mode, n, nb, slow_ns, d0, d1, fig, pool, pooled);
}

int main(int argc, char **argv) {
  long rounds = 5, seconds = 20, rate = 1000, file_mb = 4, min_bytes = 300, max_bytes = 1000, slow_us = 1000;
  const char *dir = ".", *modes_arg = "serial,pipe1,pipe2,pipe4";
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", argv[i]); return 2; }
    const char *o = argv[i], *v = argv[i + 1];
    if (!strcmp(o, "--rounds")) rounds = option_number(o, v, 1, MAX_ROUNDS);
    else if (!strcmp(o, "--seconds")) seconds = option_number(o, v, 1, 600);
    else if (!strcmp(o, "--rate")) rate = option_number(o, v, 10, 100000);
    else if (!strcmp(o, "--file-mb")) file_mb = option_number(o, v, 1, 64);
    else if (!strcmp(o, "--min-bytes")) min_bytes = option_number(o, v, 1, 16384);
    else if (!strcmp(o, "--max-bytes")) max_bytes = option_number(o, v, 1, 16384);
    else if (!strcmp(o, "--slow-us")) slow_us = option_number(o, v, 100, 100000);
    else if (!strcmp(o, "--dir")) dir = v;
    else if (!strcmp(o, "--modes")) modes_arg = v;
    else if (!strcmp(o, "--records")) { if (!(S.records = fopen(v, "w"))) die(v); }
    else { fprintf(stderr, "unknown option %s\n", o); return 2; }
  }
  if (min_bytes > max_bytes) { fprintf(stderr, "--min-bytes must not exceed --max-bytes\n"); return 2; }
  long n = rate * seconds;
  if (n > MAX_REQUESTS || n <= WARM_REQUESTS) { fprintf(stderr, "--rate x --seconds must be in %d..%ld\n", WARM_REQUESTS + 1, MAX_REQUESTS); return 2; }
  mode_desc modes[MAX_MODES];
  int nm = 0;
  for (const char *m = modes_arg; *m;) {
    const char *end = strchr(m, ',');
    size_t len = end ? (size_t)(end - m) : strlen(m);
    char name[16] = {0};
    if (nm == MAX_MODES || len == 0 || len >= sizeof name) { fprintf(stderr, "--modes: at most %d of serial,pipe1..pipe%d\n", MAX_MODES, MAX_DEPTH); return 2; }
    memcpy(name, m, len);
    int depth = -1;
    if (!strcmp(name, "serial")) depth = 0;
    else if (!strncmp(name, "pipe", 4) && len == 5 && name[4] >= '1' && name[4] <= '0' + MAX_DEPTH) depth = name[4] - '0';
    if (depth < 0) { fprintf(stderr, "--modes: unknown mode '%s' (serial, pipe1..pipe%d)\n", name, MAX_DEPTH); return 2; }
    memcpy(modes[nm].name, name, sizeof name);
    modes[nm++].depth = depth;
    m = end ? end + 1 : m + len;
  }

  /* per request and per batch arrays (a batch holds at least one request) */
  int64_t **i64[] = {&S.sched, &S.handoff, &S.issue, &S.done, &S.ack, &S.offset};
  int32_t **i32[] = {&S.bytes, &S.batch, &S.first, &S.count, &S.pages, &S.tid};
  for (size_t k = 0; k < sizeof i64 / sizeof *i64; k++) if (!(*i64[k] = calloc((size_t)n, sizeof(int64_t)))) die("calloc");
  for (size_t k = 0; k < sizeof i32 / sizeof *i32; k++) if (!(*i32[k] = calloc((size_t)n, sizeof(int32_t)))) die("calloc");
  uint32_t rng = 0x2545f491u;
  for (long i = 0; i < n; i++) {
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    S.bytes[i] = (int32_t)(min_bytes + (long)(rng % (uint32_t)(max_bytes - min_bytes + 1)));
  }
  char *bufs[MAX_DEPTH];
  for (int k = 0; k < MAX_DEPTH; k++)
    if (posix_memalign((void **)&bufs[k], PAGE, MAX_BATCH_PAGES * PAGE) != 0) die("posix_memalign");

  /* one file per mode, preallocated and written like wal.log, then opened O_DSYNC (wal.ts 'dsync') */
  long file_bytes = file_mb << 20;
  char paths[MAX_MODES][4096];
  int fds[MAX_MODES];
  struct stat st;
  for (int m = 0; m < nm; m++) {
    snprintf(paths[m], sizeof paths[m], "%s/pipelined_append.%d.%d.dat", dir, (int)getpid(), m);
    int fd0 = open(paths[m], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd0 < 0) die(paths[m]);
    memset(bufs[0], 0, MAX_BATCH_PAGES * PAGE);
    for (long at = 0; at < file_bytes; at += PAGE) if (pwrite(fd0, bufs[0], PAGE, at) != PAGE) die("prewrite");
    if (fdatasync(fd0) != 0) die("fdatasync");
    if (fstat(fd0, &st) != 0) die("fstat");
    close(fd0);
    if ((fds[m] = open(paths[m], O_RDWR | O_DSYNC)) < 0) die(paths[m]);
  }
  /* the whole disk's device (diskstats names it, not a partition of it when st_dev is one) */
  dev_t dev = st.st_dev;

  static double figs[MAX_MODES][MAX_ROUNDS][N_F];
  int64_t *pool[MAX_MODES];
  long pooled[MAX_MODES] = {0};
  for (int m = 0; m < nm; m++) if (!(pool[m] = malloc(sizeof(int64_t) * (size_t)n * (size_t)rounds))) die("malloc");
  for (long r = 0; r < rounds; r++)
    for (int k = 0; k < nm; k++) {
      int m = (int)((k + r) % nm);
      S.fd = fds[m];
      run_phase(&modes[m], n, rate, file_bytes, slow_us * 1000, dev, bufs, figs[m][r], pool[m], &pooled[m]);
      fprintf(stderr, "round %ld %-6s load %.2f: request p50/p99/p999 %.0f/%.0f/%.0f us, append p50/p99 %.0f/%.0f, "
              "slow %.1f/1000, behind %d p50 %.0f\n", r + 1, modes[m].name, figs[m][r][F_LOAD], figs[m][r][F_REQ50],
              figs[m][r][F_REQ99], figs[m][r][F_REQ999], figs[m][r][F_APP50], figs[m][r][F_APP99],
              figs[m][r][F_SLOW_PM], (int)figs[m][r][F_BEHIND_N], figs[m][r][F_BEHIND50]);
    }

  fprintf(stderr, "pipelined_append: %ld rounds x %ld s per mode at %ld appends/s, %ld..%ld bytes per request, slow > %ld us, in %s\n"
                  "(medians over rounds; behind = ack - the slow append's completion, pooled over rounds)\n",
          rounds, seconds, rate, min_bytes, max_bytes, slow_us, dir);
  printf("{\"bench\":\"pipelined_append\",\"rounds\":%ld,\"seconds\":%ld,\"rate\":%ld,\"min_bytes\":%ld,\"max_bytes\":%ld,"
         "\"slow_us\":%ld,\"modes\":{", rounds, seconds, rate, min_bytes, max_bytes, slow_us);
  for (int m = 0; m < nm; m++) {
    double med[N_F], col[MAX_ROUNDS];
    for (int f = 0; f < N_F; f++) {
      for (long r = 0; r < rounds; r++) col[r] = figs[m][r][f];
      med[f] = median(col, (int)rounds);
    }
    double b50 = pct_us(pool[m], pooled[m], 500), b90 = pct_us(pool[m], pooled[m], 900), b99 = pct_us(pool[m], pooled[m], 990);
    fprintf(stderr, "  %-6s request p50/p99/p999 %5.0f %6.0f %6.0f | append p50/p99/p999 %5.0f %6.0f %6.0f slow %4.1f/1000 | "
            "behind slow: %ld, ack - its completion p50/p90/p99 %5.0f %5.0f %5.0f | 2nd - 1st p50 %5.0f (%.0f) | "
            "flushes/append %.2f, %.2f ms, write %.2f ms | load %.1f\n", modes[m].name, med[F_REQ50], med[F_REQ99], med[F_REQ999],
            med[F_APP50], med[F_APP99], med[F_APP999], med[F_SLOW_PM], pooled[m], b50, b90, b99, med[F_SECOND50],
            med[F_SECOND_N], med[F_FLUSHES], med[F_FLUSH_MS], med[F_WRITE_MS], med[F_LOAD]);
    printf("%s\"%s\":{\"depth\":%d,\"behind_pooled\":{\"count\":%ld", m ? "," : "", modes[m].name, modes[m].depth, pooled[m]);
    jnum(",\"p50_us\":", b50);
    jnum(",\"p90_us\":", b90);
    jnum(",\"p99_us\":", b99);
    printf("}");
    for (int f = 0; f < N_F; f++) {
      printf(",\"%s\":", f_name[f]);
      jnum("", med[f]);
      printf(",\"rounds_%s\":[", f_name[f]);
      for (long r = 0; r < rounds; r++) jnum(r ? "," : "", figs[m][r][f]);
      printf("]");
    }
    printf("}");
  }
  printf("}}\n");
  if (S.records) fclose(S.records);
  for (int m = 0; m < nm; m++) {
    close(fds[m]);
    unlink(paths[m]);
    free(pool[m]);
  }
  return 0;
}
