/* pipelined_append's figures: a phase's stamps (pipelined_append_run.h) made into its figures
 * (percentiles of request and append latencies, the requests behind a slow append, the device's
 * flushes from /proc/diskstats, the load average), and the medians over rounds and JSON numbers
 * the report prints. */
#ifndef PIPELINED_APPEND_FIGURES_H
#define PIPELINED_APPEND_FIGURES_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "pipelined_append_run.h"

enum { F_REQ50, F_REQ99, F_REQ999, F_APP50, F_APP99, F_APP999, F_SLOW_PM, F_BEHIND_N, F_BEHIND50,
       F_BEHIND90, F_SECOND50, F_SECOND_N, F_HANDOFF50, F_PAGES, F_FLUSHES, F_FLUSH_MS, F_WRITE_MS, F_LOAD, N_F };
static const char *f_name[N_F] = {"request_p50_us", "request_p99_us", "request_p999_us", "append_p50_us",
  "append_p99_us", "append_p999_us", "slow_appends_per_mille", "behind_slow_requests", "behind_p50_us",
  "behind_p90_us", "second_after_first_p50_us", "second_after_slow_first", "handoff_p50_us",
  "pages_per_append", "disk_flushes_per_append", "disk_flush_ms_mean", "disk_write_ms_mean", "loadavg_1m"};

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

/* Fills fig[N_F] (all but F_LOAD) from the phase's n requests and nb batches and the device's
 * readings d0 before and d1 after it; appends behind_us samples to pool. */
static void phase_figures(const mode_desc *mode, long n, int nb, long slow_ns, const double *d0, const double *d1,
                          double *fig, int64_t *pool, long *pooled) {
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

#endif
