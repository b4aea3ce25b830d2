// loadgen's latency histograms and their JSON.
#ifndef LOADGEN_HIST_H
#define LOADGEN_HIST_H
#include <math.h>
#include "loadgen_common.h"

// ---- latency histogram: HDR-like log buckets, 128 sub-buckets per power of two (< 0.8% error) ----
#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
/** Values are clamped to 2^40 us (12 days). */
#define HIST_GROUPS 35
#define HIST_BUCKETS (HIST_GROUPS * SUB)

typedef struct {
  uint64_t counts[HIST_BUCKETS];
  uint64_t total;
  uint64_t max;
} hist_t;

static unsigned hist_index(uint64_t v) {
  if (v < SUB) return (unsigned)v;
  if (v >= (1ULL << 40)) v = (1ULL << 40) - 1;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); // v in [2^e, 2^(e+1)), e >= SUB_BITS
  uint64_t m = v >> (e - SUB_BITS);                 // top 8 bits: [128, 256)
  return (e - SUB_BITS + 1) * SUB + (unsigned)(m - SUB);
}

/** Highest value that falls into bucket `i` (what percentiles report, like HDR's highest equivalent value). */
static uint64_t hist_upper(unsigned i) {
  if (i < SUB) return i;
  unsigned g = i / SUB;
  uint64_t m = (i % SUB) + SUB;
  return ((m + 1) << (g - 1)) - 1;
}

static void hist_record(hist_t *h, int64_t v_ns) {
  uint64_t v = v_ns <= 0 ? 0 : (uint64_t)((v_ns + 500) / 1000);
  h->counts[hist_index(v)]++;
  h->total++;
  if (v > h->max) h->max = v;
}

static uint64_t hist_percentile(const hist_t *h, double p) {
  if (h->total == 0) return 0;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    seen += h->counts[i];
    if (seen >= rank) {
      uint64_t u = hist_upper(i);
      return u < h->max ? u : h->max;
    }
  }
  return h->max;
}

static void hist_json(FILE *o, const char *name, const hist_t *h) {
  fprintf(o, "\"%s\":{\"count\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu}", name,
          (unsigned long long)h->total, (unsigned long long)hist_percentile(h, 50), (unsigned long long)hist_percentile(h, 90),
          (unsigned long long)hist_percentile(h, 99), (unsigned long long)hist_percentile(h, 99.9), (unsigned long long)h->max);
}

/** Non-empty buckets as [upper value us, count] pairs, for a caller that rebuilds the histogram. */
static void hist_buckets_json(FILE *o, const char *name, const hist_t *h) {
  fprintf(o, "\"%s\":[", name);
  int first = 1;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    if (h->counts[i] == 0) continue;
    uint64_t u = hist_upper(i);
    fprintf(o, "%s[%llu,%llu]", first ? "" : ",", (unsigned long long)(u < h->max ? u : h->max), (unsigned long long)h->counts[i]);
    first = 0;
  }
  fputc(']', o);
}

#endif
