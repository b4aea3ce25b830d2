/*
 * sync_floor: what "durable, then the meta page durable" costs on this disk without LMDB, to
 * compare with a journal commit (docs/benchmarks.md, "Issue 11, the journal commit").
 *
 *   native-bench/build/sync_floor PAGES COMMITS MODE [FILE]
 *
 * Each commit writes PAGES 4 KB pages with pwrite, fdatasync()s, then writes 128 bytes through a
 * second O_DSYNC descriptor (what LMDB does with its meta page). MODE 0: the pages are scattered
 * inside a region written and synced beforehand (LMDB rewriting pages inside its file); 1: as 0
 * without the O_DSYNC write; 2: contiguous pages inside the region; 3: pages appended at the
 * file's end (the file grows every commit). Prints the p50 / p90 / p99 of one commit in µs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: sync_floor PAGES COMMITS MODE(0-3) [FILE]\n");
    return 2;
  }
  int pages = atoi(argv[1]), n = atoi(argv[2]), mode = atoi(argv[3]);
  const char *path = argc > 4 ? argv[4] : "sync_floor.dat";
  if (pages < 1 || pages > 64 || n < 1 || mode < 0 || mode > 3) {
    fprintf(stderr, "PAGES in 1..64, COMMITS >= 1, MODE in 0..3\n");
    return 2;
  }
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  int mfd = open(path, O_WRONLY | O_DSYNC);
  if (fd < 0 || mfd < 0) {
    perror(path);
    return 1;
  }
  char buf[4096];
  memset(buf, 7, sizeof buf);
  const int region = 1024; /* pages written and synced before timing */
  for (int i = 0; i < region; i++)
    if (pwrite(fd, buf, 4096, (off_t)i * 4096) != 4096) { perror("pwrite"); return 1; }
  fdatasync(fd);
  double *t = malloc(sizeof(double) * (size_t)n);
  for (int c = 0; c < n; c++) {
    double t0 = now_us();
    for (int p = 0; p < pages; p++) {
      off_t page = mode == 2 ? 100 + p : mode == 3 ? region + (off_t)c * pages + p : 100 + p * 37 + (c % 5) * 3;
      buf[0] = (char)c;
      if (pwrite(fd, buf, 4096, page * 4096) != 4096) { perror("pwrite"); return 1; }
    }
    if (fdatasync(fd) != 0) { perror("fdatasync"); return 1; }
    if (mode != 1 && pwrite(mfd, buf, 128, (c & 1) * 4096 + 16) != 128) { perror("pwrite meta"); return 1; }
    t[c] = now_us() - t0;
  }
  qsort(t, (size_t)n, sizeof(double), cmp);
  printf("pages %d mode %d commits %d: p50 %.0f p90 %.0f p99 %.0f us\n", pages, mode, n, t[n / 2], t[n * 9 / 10], t[n * 99 / 100]);
  close(fd);
  close(mfd);
  unlink(path);
  free(t);
  return 0;
}
