/*
 * durable_append: what one durable append of a 4 KB record costs on this disk, by the way it is
 * made durable (issue 11: the journal's write-ahead file, src/journal/wal.ts; docs/benchmarks.md
 * section "h16s").
 *
 *   native-bench/build/durable_append [--rounds R] [--appends N] [--file-mb M] [--dir DIR]
 *                                     [--variants a,b,...] [--pace-us P]
 *
 * Every variant and page count (1 or 2 pages) has its own file of M MB (default 4, the
 * write-ahead file's size), preallocated and written (then fdatasync) like `journal/wal.log`;
 * each append writes whole 4 KB pages at the file's next sequential offset, wrapping at its end,
 * so no append changes a file's size or its block map. The variants are interleaved append by
 * append: each step appends once with every variant, in a fresh random order, so the other
 * helpers' I/O on the shared machine (it moves a flush from ~0.1 to ~4 ms within seconds) hits
 * them alike. A round is N steps (default 200); the figures are the medians over R rounds
 * (default 5) of each round's p50 / p99, and the median of the rounds' ratios of a variant's p50
 * to the p50 of `dsync` with one page (the write-ahead file today; of the first variant kept
 * when --variants drops `dsync`).
 *
 *   dsync          pwrite through an O_DSYNC descriptor (what wal.ts does today, 'dsync')
 *   rwf_dsync      pwritev2(RWF_DSYNC) through a plain descriptor
 *   fdatasync      pwrite, then fdatasync (wal.ts 'fdatasync')
 *   direct_dsync   O_DIRECT|O_DSYNC, a 4096-aligned buffer: no page cache; a FUA write where the
 *                  device takes FUA, else the write then a cache flush
 *   direct_rwf     O_DIRECT descriptor, pwritev2(RWF_DSYNC)
 *   direct_fdsync  O_DIRECT pwrite, then fdatasync
 * and two floors that are NOT durable appends, to split the cost:
 *   direct_nosync  O_DIRECT pwrite alone (into the device's volatile cache: not durable)
 *   flush_only     fdatasync with nothing written (the device's cache flush alone)
 *
 * --variants keeps only the named variants (fewer cells: each step is shorter, closer to the
 * journal's one append per batch); --pace-us sleeps P µs after each step (default 0), so that an
 * append meets what the journal's append meets at a light load: a thread back from sleep, and a
 * file whose mtime moved since the last append (ext4 then writes the inode block too).
 *
 * CPU (issue 11, section "h23m2"): besides the mean, each append's own CPU is read with
 * CLOCK_THREAD_CPUTIME_ID (the scheduler's ns runtime of this thread, not tick-sampled), so the
 * report also gives the median per append (cpu_p50_us, median over rounds of each round's p50)
 * and the thread's voluntary context switches per append (sleeps: one per device request waited).
 *
 * Output: a table on stderr, then one JSON line {"bench":"durable_append", ...} with, per
 * variant and page count, p50_us / p99_us (medians over rounds), cpu_us_per_append (this
 * thread's user + system time per append, median over rounds: the syscall path's own work, which
 * the load of others changes little) and every round's figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "bench_options.h"

#define PAGE 4096
#define MAX_PAGES 2
#define MAX_ROUNDS 50
#define MAX_APPENDS 20000

enum how { DSYNC, RWF, FDATASYNC, DIRECT_DSYNC, DIRECT_RWF, DIRECT_FDSYNC, DIRECT_NOSYNC, FLUSH_ONLY, N_HOW };
static const char *how_name[N_HOW] = {"dsync", "rwf_dsync", "fdatasync", "direct_dsync", "direct_rwf", "direct_fdsync", "direct_nosync", "flush_only"};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* This thread's CPU time in µs from the scheduler's runtime (ns, exact: not tick-sampled). */
static double thread_cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long voluntary_switches(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw;
}

/* This thread's CPU time (user + system) in µs: the syscall's own work, whatever the load. */
static double cpu_us(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, int n, int per_mille) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  int i = (int)((long)n * per_mille / 1000);
  return v[i < n ? i : n - 1];
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static int open_for(enum how h, const char *path) {
  int flags = O_RDWR;
  if (h == DSYNC || h == DIRECT_DSYNC) flags |= O_DSYNC;
  if (h >= DIRECT_DSYNC && h <= DIRECT_NOSYNC) flags |= O_DIRECT;
  int fd = open(path, flags);
  if (fd < 0) die(path);
  return fd;
}

/* One durable append of `pages` pages at `offset`; returns its time in µs. */
static double append(enum how h, int fd, char *buf, int pages, off_t offset) {
  size_t bytes = (size_t)pages * PAGE;
  struct iovec iov = {buf, bytes};
  double t0 = now_us();
  ssize_t w = (ssize_t)bytes;
  switch (h) {
  case DSYNC: case DIRECT_DSYNC: case DIRECT_NOSYNC:
    w = pwrite(fd, buf, bytes, offset);
    break;
  case FDATASYNC: case DIRECT_FDSYNC:
    w = pwrite(fd, buf, bytes, offset);
    if (w == (ssize_t)bytes && fdatasync(fd) != 0) die("fdatasync");
    break;
  case RWF: case DIRECT_RWF:
    w = pwritev2(fd, &iov, 1, offset, RWF_DSYNC);
    break;
  case FLUSH_ONLY:
    if (fdatasync(fd) != 0) die("fdatasync");
    break;
  default:
    break;
  }
  double t = now_us() - t0;
  if (w != (ssize_t)bytes) die("write");
  return t;
}


/** Longest pause between appends (us): one second, far past any light load's gap. */
#define PACE_US_MAX 1000000L

int main(int argc, char **argv) {
  int rounds = 5, appends = 200, file_mb = 4;
  const char *dir = ".";
  const char *variants = NULL;
  long pace_us = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rounds")) rounds = (int)option_number("--rounds", argv[i + 1], 1, MAX_ROUNDS);
    else if (!strcmp(argv[i], "--appends")) appends = (int)option_number("--appends", argv[i + 1], 10, MAX_APPENDS);
    else if (!strcmp(argv[i], "--file-mb")) file_mb = (int)option_number("--file-mb", argv[i + 1], 1, 64);
    else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
    else if (!strcmp(argv[i], "--variants")) variants = argv[i + 1];
    else if (!strcmp(argv[i], "--pace-us")) pace_us = option_number("--pace-us", argv[i + 1], 0, PACE_US_MAX);
    else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (rounds < 1 || rounds > MAX_ROUNDS || appends < 10 || appends > MAX_APPENDS || file_mb < 1 || file_mb > 64) {
    fprintf(stderr, "--rounds 1..%d, --appends 10..%d, --file-mb 1..64\n", MAX_ROUNDS, MAX_APPENDS);
    return 2;
  }
  off_t file_bytes = (off_t)file_mb << 20;
  char *buf;
  if (posix_memalign((void **)&buf, PAGE, MAX_PAGES * PAGE) != 0) die("posix_memalign");
  memset(buf, 7, MAX_PAGES * PAGE);

  /* One file per cell (variant x page count), preallocated and written like wal.log, so the
   * page cache of the buffered variants and the O_DIRECT ones never share pages. */
  enum { CELLS = N_HOW * MAX_PAGES };
  char paths[CELLS][4096];
  int fds[CELLS];
  off_t offsets[CELLS];
  /* the cells kept by --variants (all by default), in cell order */
  int kept[CELLS], n_kept = 0;
  for (int c = 0; c < CELLS; c++) {
    const char *name = how_name[c / MAX_PAGES];
    size_t len = strlen(name);
    int keep = variants == NULL;
    for (const char *v = variants; v && *v && !keep;) {
      const char *end = strchr(v, ',');
      size_t vlen = end ? (size_t)(end - v) : strlen(v);
      keep = vlen == len && !strncmp(v, name, len);
      v = end ? end + 1 : v + vlen;
    }
    fds[c] = -1;
    if (keep) kept[n_kept++] = c;
  }
  if (n_kept == 0) {
    fprintf(stderr, "--variants names none of the variants\n");
    return 2;
  }
  for (int kk = 0; kk < n_kept; kk++) {
    int c = kept[kk];
    snprintf(paths[c], sizeof paths[c], "%s/durable_append.%d.%d.dat", dir, (int)getpid(), c);
    int fd0 = open(paths[c], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd0 < 0) die(paths[c]);
    for (off_t at = 0; at < file_bytes; at += PAGE)
      if (pwrite(fd0, buf, PAGE, at) != PAGE) die("prewrite");
    if (fdatasync(fd0) != 0) die("fdatasync");
    close(fd0);
    fds[c] = open_for((enum how)(c / MAX_PAGES), paths[c]);
    offsets[c] = 0;
  }

  /* [cell][round] */
  static double p50[CELLS][MAX_ROUNDS], p99[CELLS][MAX_ROUNDS], cpu[CELLS][MAX_ROUNDS];
  static double cpu50[CELLS][MAX_ROUNDS], sleeps[CELLS][MAX_ROUNDS];
  double *t[CELLS], *tc[CELLS], cpu_sum[CELLS], sleep_sum[CELLS];
  for (int c = 0; c < CELLS; c++)
    if (!(t[c] = malloc(sizeof(double) * (size_t)appends)) || !(tc[c] = malloc(sizeof(double) * (size_t)appends))) die("malloc");
  uint32_t rng = 0x9e3779b9u;
  int order[CELLS];
  for (int r = 0; r < rounds; r++) {
    for (int c = 0; c < CELLS; c++) cpu_sum[c] = sleep_sum[c] = 0;
    /* Every step appends once with every cell, in a fresh random order: all variants meet the
     * disk in the same state (the other helpers' I/O moves the flush from ~0.1 to ~4 ms within
     * seconds), and none always follows the same one. A few untimed steps first. */
    for (int i = -3; i < appends; i++) {
      for (int c = 0; c < n_kept; c++) order[c] = kept[c];
      for (int c = n_kept - 1; c > 0; c--) {
        rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
        int j = (int)(rng % (uint32_t)(c + 1)), x = order[c];
        order[c] = order[j];
        order[j] = x;
      }
      for (int k = 0; k < n_kept; k++) {
        int c = order[k], pages = c % MAX_PAGES + 1;
        enum how h = (enum how)(c / MAX_PAGES);
        if (offsets[c] + pages * PAGE > file_bytes) offsets[c] = 0;
        buf[0] = (char)i;
        long sw0 = voluntary_switches();
        double cpu0 = cpu_us(), tcpu0 = thread_cpu_us();
        double us = append(h, fds[c], buf, pages, offsets[c]);
        double tcpu1 = thread_cpu_us(), cpu1 = cpu_us();
        long sw1 = voluntary_switches();
        /* direct_nosync leaves its write in the device's cache: flushed here, untimed, so the
         * next cell's flush does not pay for it */
        if (h == DIRECT_NOSYNC && fdatasync(fds[c]) != 0) die("fdatasync");
        offsets[c] += (off_t)pages * PAGE;
        if (i >= 0) {
          t[c][i] = us;
          tc[c][i] = tcpu1 - tcpu0;
          cpu_sum[c] += cpu1 - cpu0;
          sleep_sum[c] += (double)(sw1 - sw0);
        }
      }
      if (pace_us > 0) {
        struct timespec pause = {pace_us / 1000000, (pace_us % 1000000) * 1000};
        nanosleep(&pause, NULL);
      }
    }
    for (int kk = 0; kk < n_kept; kk++) {
      int c = kept[kk];
      cpu[c][r] = cpu_sum[c] / appends;
      cpu50[c][r] = pct(tc[c], appends, 500);
      sleeps[c][r] = sleep_sum[c] / appends;
      p99[c][r] = pct(t[c], appends, 990);
      p50[c][r] = pct(t[c], appends, 500);
    }
  }

  /* ratios are to the first kept cell (dsync 1 page unless --variants drops it) */
  int base = kept[0];
  fprintf(stderr, "durable_append: %d rounds x %d appends per variant, interleaved, pace %ld us, files of %d MB in %s\n"
                  "(medians over rounds of each round's p50 / p99, mean CPU, median CPU and sleeps per append, us;\n"
                  " ratio = median of the rounds' p50 / %s %d page's)\n",
          rounds, appends, pace_us, file_mb, dir, how_name[base / MAX_PAGES], base % MAX_PAGES + 1);
  printf("{\"bench\":\"durable_append\",\"rounds\":%d,\"appends\":%d,\"file_mb\":%d,\"pace_us\":%ld,\"variants\":{", rounds, appends, file_mb, pace_us);
  for (int kk = 0; kk < n_kept; kk++) {
    int c = kept[kk];
    int h = c / MAX_PAGES, pages = c % MAX_PAGES + 1;
    double a[MAX_ROUNDS], b[MAX_ROUNDS], d[MAX_ROUNDS], q[MAX_ROUNDS], e[MAX_ROUNDS], f[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
      a[r] = p50[c][r];
      b[r] = p99[c][r];
      d[r] = cpu[c][r];
      e[r] = cpu50[c][r];
      f[r] = sleeps[c][r];
      q[r] = p50[c][r] / p50[base][r];
    }
    double m50 = pct(a, rounds, 500), m99 = pct(b, rounds, 500), mcpu = pct(d, rounds, 500), ratio = pct(q, rounds, 500);
    double mcpu50 = pct(e, rounds, 500), msleeps = pct(f, rounds, 500);
    fprintf(stderr, "  %-14s %d page%s p50 %6.0f  p99 %6.0f  cpu %5.1f  cpu p50 %5.1f  sleeps %4.2f  p50 ratio %.2f\n", how_name[h], pages,
            pages > 1 ? "s" : " ", m50, m99, mcpu, mcpu50, msleeps, ratio);
    printf("%s\"%s_%dp\":{\"p50_us\":%.1f,\"p99_us\":%.1f,\"cpu_us_per_append\":%.1f,\"cpu_p50_us\":%.1f,\"sleeps_per_append\":%.2f,"
           "\"p50_ratio_to_first\":%.3f,\"rounds_cpu_p50_us\":[",
           kk ? "," : "", how_name[h], pages, m50, m99, mcpu, mcpu50, msleeps, ratio);
    for (int r = 0; r < rounds; r++) printf("%s%.1f", r ? "," : "", cpu50[c][r]);
    printf("],\"rounds_p50_us\":[");
    for (int r = 0; r < rounds; r++) printf("%s%.1f", r ? "," : "", p50[c][r]);
    printf("],\"rounds_p99_us\":[");
    for (int r = 0; r < rounds; r++) printf("%s%.1f", r ? "," : "", p99[c][r]);
    printf("]}");
  }
  printf("}}\n");
  for (int kk = 0; kk < n_kept; kk++) {
    close(fds[kept[kk]]);
    unlink(paths[kept[kk]]);
  }
  for (int c = 0; c < CELLS; c++) {
    free(t[c]);
    free(tc[c]);
  }
  free(buf);
  return 0;
}
