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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_options.h"

#define PAGE 4096
#define HEADER_BYTES 40          /* wal.ts WAL_HEADER_BYTES */
#define MAX_BATCH_PAGES 16       /* a batch stops growing at 64 KB (the journal's are larger, rarer) */
#define MAX_MODES 6
#define MAX_DEPTH 8
#define MAX_ROUNDS 20
#define MAX_REQUESTS 2000000L    /* rate x seconds per phase */
#define WARM_REQUESTS 200
enum { F_REQ50, F_REQ99, F_REQ999, F_APP50, F_APP99, F_APP999, F_SLOW_PM, F_BEHIND_N, F_BEHIND50,
       F_BEHIND90, F_SECOND50, F_SECOND_N, F_HANDOFF50, F_PAGES, F_FLUSHES, F_FLUSH_MS, F_WRITE_MS, F_LOAD, N_F };
static const char *f_name[N_F] = {"request_p50_us", "request_p99_us", "request_p999_us", "append_p50_us",
  "append_p99_us", "append_p999_us", "slow_appends_per_mille", "behind_slow_requests", "behind_p50_us",
  "behind_p90_us", "second_after_first_p50_us", "second_after_slow_first", "handoff_p50_us",
  "pages_per_append", "disk_flushes_per_append", "disk_flush_ms_mean", "disk_write_ms_mean", "loadavg_1m"};

typedef struct { char name[16]; int depth; } mode_desc;

/* One phase's state: per request (sched, bytes, batch) and per batch (stamps, place). */
static struct {
  int64_t *sched, *handoff, *issue, *done, *ack, *offset;
  int32_t *bytes, *batch, *first, *count, *pages, *tid;
  int fd;
  FILE *records;
  pthread_mutex_t mu;
  pthread_cond_t work, freed;
  int queue_head, queue_tail, inflight, stop;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .freed = PTHREAD_COND_INITIALIZER};

static char zeros[PAGE];

static void die(const char *what) {
  perror(what);
  exit(1);
}


static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* per-mille percentile in µs of n ns values (sorts them); NaN when none */
static double pct_us(int64_t *v, long n, int per_mille) {
  if (n <= 0) return 0.0 / 0.0;
  qsort(v, (size_t)n, sizeof *v, cmp64);
  long i = n * per_mille / 1000;
  return v[i < n ? i : n - 1] / 1e3;
}
/* a JSON number, or null for a figure with no sample (NaN) */
static void jnum(const char *before, double v) {
  if (v != v) printf("%snull", before);
  else printf("%s%.3f", before, v);
}
/* median of the figures that have a value (NaN: a phase without a sample); NaN when none has */
static double median(double *v, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) if (v[i] == v[i]) v[k++] = v[i];
  if ((n = k) == 0) return 0.0 / 0.0;
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One batch written as wal.ts writes a record: header, body, zeros to the page, one pwritev. */
static void write_batch(int b, char *buf) {
  long body = 0;
  for (int r = S.first[b]; r < S.first[b] + S.count[b]; r++) body += S.bytes[r];
  size_t whole = (size_t)S.pages[b] * PAGE, pad = whole - HEADER_BYTES - (size_t)body;
  memset(buf, (char)b, HEADER_BYTES + (size_t)body);
  struct iovec iov[3] = {{buf, HEADER_BYTES}, {buf + HEADER_BYTES, (size_t)body}, {zeros, pad}};
  S.tid[b] = (int32_t)gettid();
  S.issue[b] = now_ns();
  ssize_t w = pwritev(S.fd, iov, pad ? 3 : 2, S.offset[b]);
  S.done[b] = now_ns();
  if (w != (ssize_t)whole) die("pwritev");
}

static void *writer(void *arg) {
  char *buf = arg;
  pthread_mutex_lock(&S.mu);
  for (;;) {
    while (S.queue_head == S.queue_tail && !S.stop) pthread_cond_wait(&S.work, &S.mu);
    if (S.queue_head == S.queue_tail) break;
    int b = S.queue_head++;
    pthread_mutex_unlock(&S.mu);
    write_batch(b, buf);
    pthread_mutex_lock(&S.mu);
    S.inflight--;
    pthread_cond_signal(&S.freed);
  }
  pthread_mutex_unlock(&S.mu);
  return NULL;
}

/* The device's completed flushes and ms flushing (fields 16, 17 of /proc/diskstats), writes and
 * ms writing (fields 5, 8): d[0..3]. */
static void disk_flushes(dev_t dev, double *d) {
  FILE *f = fopen("/proc/diskstats", "r");
  char line[512];
  d[0] = d[1] = d[2] = d[3] = 0.0 / 0.0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned maj, min;
    double v[17];
    int n = sscanf(line, "%u %u %*s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &maj, &min,
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
                   &v[13], &v[14], &v[15], &v[16]);
    if (n == 19 && maj == major(dev) && min == minor(dev)) {
      d[0] = v[15];
      d[1] = v[16];
      d[2] = v[4];
      d[3] = v[7];
    }
  }
  if (f) fclose(f);
}

static double loadavg(void) {
  double l = 0.0 / 0.0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f && fscanf(f, "%lf", &l) != 1) l = 0.0 / 0.0;
  if (f) fclose(f);
  return l;
}

/* Runs one phase of n requests at `rate` in `mode`, fills fig[N_F]; appends behind_us samples. */
static void run_phase(const mode_desc *mode, long n, long rate, long file_bytes, long slow_ns, dev_t dev,
                      char **bufs, double *fig, int64_t *pool, long *pooled) {
  double d0[4], d1[4];
  fig[F_LOAD] = loadavg();
  disk_flushes(dev, d0);
  S.queue_head = S.queue_tail = S.inflight = S.stop = 0;
  pthread_t th[MAX_DEPTH];
  for (int k = 0; k < mode->depth; k++)
    if (pthread_create(&th[k], NULL, writer, bufs[k]) != 0) die("pthread_create");
  int64_t t0 = now_ns() + 20000000LL, interval = 1000000000LL / rate;
  for (long i = 0; i < n; i++) S.sched[i] = t0 + i * interval;
  long next = 0, arrived = 0, offset = 0;
  int nb = 0;
  while (next < n) {
    int64_t now = now_ns();
    while (arrived < n && S.sched[arrived] <= now) arrived++;
    if (arrived == next) {
      struct timespec due = {S.sched[arrived] / 1000000000LL, S.sched[arrived] % 1000000000LL};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR) {}
      continue;
    }
    if (mode->depth > 0) {
      pthread_mutex_lock(&S.mu);
      if (S.inflight >= mode->depth) { /* every writer busy: wait for one, then take all arrived */
        pthread_cond_wait(&S.freed, &S.mu);
        pthread_mutex_unlock(&S.mu);
        continue;
      }
      pthread_mutex_unlock(&S.mu);
    }
    int b = nb++;
    long body = 0, r = next;
    while (r < arrived && (HEADER_BYTES + body + S.bytes[r] + PAGE - 1) / PAGE <= MAX_BATCH_PAGES) {
      body += S.bytes[r];
      S.batch[r++] = b;
    }
    S.first[b] = (int32_t)next;
    S.count[b] = (int32_t)(r - next);
    S.pages[b] = (int32_t)((HEADER_BYTES + body + PAGE - 1) / PAGE);
    if (offset + (long)S.pages[b] * PAGE > file_bytes) offset = 0;
    S.offset[b] = offset;
    offset += (long)S.pages[b] * PAGE;
    next = r;
    S.handoff[b] = now_ns(); /* after the check for a free writer: the previous may have finished since `now` */
    if (mode->depth == 0) {
      write_batch(b, bufs[0]);
    } else {
      pthread_mutex_lock(&S.mu);
      S.inflight++;
      S.queue_tail++;
      pthread_cond_signal(&S.work);
      pthread_mutex_unlock(&S.mu);
    }
  }
  pthread_mutex_lock(&S.mu);
  S.stop = 1;
  pthread_cond_broadcast(&S.work);
  pthread_mutex_unlock(&S.mu);
  for (int k = 0; k < mode->depth; k++) pthread_join(th[k], NULL);
  disk_flushes(dev, d1);

  int64_t *tmp = malloc(sizeof(int64_t) * (size_t)n), *tmp2 = malloc(sizeof(int64_t) * (size_t)n);
  int64_t *tmp3 = malloc(sizeof(int64_t) * (size_t)n), *tmp4 = malloc(sizeof(int64_t) * (size_t)n);
  if (!tmp || !tmp2 || !tmp3 || !tmp4) die("malloc");
  for (int b = 0; b < nb; b++) S.ack[b] = b && S.ack[b - 1] > S.done[b] ? S.ack[b - 1] : S.done[b];
  for (int b = 0; S.records && b < nb; b++)
    fprintf(S.records, "%s %d %lld %lld %lld %d %d %d\n", mode->name, b, (long long)S.handoff[b], (long long)S.issue[b],
            (long long)S.done[b], S.pages[b], S.count[b], S.tid[b]);
  long nr = 0, na = 0, slow = 0, nbehind = 0, nsecond = 0, nhand = 0;
  double pages = 0;
  for (int b = 0; b < nb; b++) {
    if (S.first[b] < WARM_REQUESTS) continue;
    int64_t t = S.done[b] - S.issue[b];
    tmp2[na++] = t;
    slow += t > slow_ns;
    pages += S.pages[b];
    tmp4[nhand++] = S.issue[b] - S.handoff[b];
    if (S.handoff[b] < S.done[b - 1] && S.handoff[b] - S.issue[b - 1] > slow_ns) tmp3[nsecond++] = S.done[b] - S.done[b - 1];
  }
  fig[F_APP50] = pct_us(tmp2, na, 500);
  fig[F_APP99] = pct_us(tmp2, na, 990);
  fig[F_APP999] = pct_us(tmp2, na, 999);
  fig[F_SLOW_PM] = 1000.0 * slow / (na ? na : 1);
  fig[F_PAGES] = pages / (na ? na : 1);
  fig[F_SECOND_N] = (double)nsecond;
  fig[F_SECOND50] = pct_us(tmp3, nsecond, 500);
  fig[F_HANDOFF50] = pct_us(tmp4, nhand, 500);
  int p = -1;
  for (long i = WARM_REQUESTS; i < n; i++) {
    tmp[nr++] = S.ack[S.batch[i]] - S.sched[i];
    while (p + 1 < nb && S.handoff[p + 1] <= S.sched[i]) p++;
    if (p >= 0 && S.batch[i] != p && S.done[p] > S.sched[i] && S.sched[i] - S.issue[p] > slow_ns) {
      int64_t d = S.ack[S.batch[i]] - S.done[p];
      tmp2[nbehind++] = d;
      pool[(*pooled)++] = d;
    }
  }
  fig[F_REQ50] = pct_us(tmp, nr, 500);
  fig[F_REQ99] = pct_us(tmp, nr, 990);
  fig[F_REQ999] = pct_us(tmp, nr, 999);
  fig[F_BEHIND_N] = (double)nbehind;
  fig[F_BEHIND50] = pct_us(tmp2, nbehind, 500);
  fig[F_BEHIND90] = pct_us(tmp2, nbehind, 900);
  fig[F_FLUSHES] = (d1[0] - d0[0]) / nb;
  fig[F_FLUSH_MS] = (d1[1] - d0[1]) / (d1[0] - d0[0] > 0 ? d1[0] - d0[0] : 1);
  fig[F_WRITE_MS] = (d1[3] - d0[3]) / (d1[2] - d0[2] > 0 ? d1[2] - d0[2] : 1);
  free(tmp);
  free(tmp2);
  free(tmp3);
  free(tmp4);
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
