// slice_wake: what a short EEVDF slice does to a thread that sleeps, is woken ~1,000 times a
// second, works ~12 µs and sleeps again (the matcher at 1,000 requests/s), while other threads
// compete for the cores (the front and a verify worker in CPU bursts at nice 0, the DA worker at
// nice 10 SCHED_BATCH). docs/benchmarks.md "h17s". Linux >= 6.12 (a per-thread slice through
// sched_setattr's sched_runtime, as native/thread_slice.c sets the matcher's).
//
// One process, phases alternated A B B A ...: A the sleeper at the kernel's default slice, B at
// --slice-us; the competitors are the same threads throughout, so both ways see the same machine
// in the same minutes. Per way: the wake-up delay (the waker's clock stamp just before its
// FUTEX_WAKE -> the sleeper running), p50/p99/p999 over all its phases and the median of the
// phases' p99s, and what the competitors pay: per burst, wall time minus the burst's own CPU time
// (time spent waiting for a core), p50/p99 for the nice-0 ones.
//
//   make -C native-bench && native-bench/build/slice_wake [--slice-us 100] [--rounds 6]
//     [--seconds 3] [--rate 1000] [--work-us 12] [--hogs 2] [--hog-burst-us 200] [--hog-duty 0.4]
//     [--background-duty 0.3]
// Prints one JSON line {"bench":"slice_wake",...}. Bounded: every wait has a timeout, every loop
// ends with its phase.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

#define HOGS_MAX 8
#define SAMPLES_MAX (1u << 18) /* a phase of 60 s: 60,000 wakes, ~120,000 competitor bursts */
#define ROUNDS_MAX 40

static void die(const char *fmt, const char *a) {
  fprintf(stderr, "slice_wake: ");
  fprintf(stderr, fmt, a);
  fputc('\n', stderr);
  exit(2);
}

/* include/uapi/linux/sched/types.h (clashes with glibc's <sched.h>). */
struct sw_sched_attr {
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
  uint32_t sched_util_min, sched_util_max;
};

/* The calling thread's slice request (0: the kernel's default), policy and nice given; returns the slice the kernel reports (ns). */
static uint64_t set_self(uint32_t policy, int nice, uint64_t runtime_ns) {
  struct sw_sched_attr a;
  memset(&a, 0, sizeof a);
  a.size = 48;
  a.sched_policy = policy;
  a.sched_nice = nice;
  a.sched_runtime = runtime_ns;
  if (syscall(SYS_sched_setattr, 0, &a, 0u) != 0) die("sched_setattr: %s", strerror(errno));
  memset(&a, 0, sizeof a);
  if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0u) != 0) die("sched_getattr: %s", strerror(errno));
  return a.sched_runtime;
}

static void spin_until_cpu(int64_t cpu_target_ns) {
  while (cpu_ns() < cpu_target_ns) {
  }
}

/* ---- shared state ---- */
static _Atomic int running = 1;   /* the whole run */
static _Atomic int phase = -1;    /* current phase index, -1 between phases */
static _Atomic int32_t bell = 0;  /* the sleeper's futex word */
static _Atomic int64_t stamp_ns = 0;

typedef struct {
  int64_t *v;
  uint32_t n, cap;
} samples_t;

static void add(samples_t *s, int64_t x) {
  if (s->n < s->cap) s->v[s->n++] = x;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static double pct(samples_t *s, double p) {
  if (s->n == 0) return 0;
  qsort(s->v, s->n, sizeof *s->v, cmp64);
  size_t i = (size_t)ceil(p / 100.0 * s->n);
  if (i > 0) i--;
  if (i >= s->n) i = s->n - 1;
  return (double)s->v[i] / 1000.0;
}

/* Per phase: the sleeper's wake delays and the nice-0 competitors' waits. */
static samples_t wake[ROUNDS_MAX * 2], hog_wait[ROUNDS_MAX * 2];
static pthread_mutex_t hog_mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
  double slice_us, seconds, rate, work_us, hog_burst_us, hog_duty, background_duty;
  int rounds, hogs;
} o = {100, 3, 1000, 12, 200, 0.4, 0.3, 6, 2};

static double exp_draw(uint64_t *st, double mean) {
  *st ^= *st << 13;
  *st ^= *st >> 7;
  *st ^= *st << 17;
  double u = ((*st >> 11) + 1.0) / 9007199254740993.0;
  return -log(u) * mean;
}

typedef struct {
  int nice, batch;
  double duty;
  uint64_t seed;
} hog_t;

/* A competitor: CPU bursts (exponential, mean --hog-burst-us) then sleeps, `duty` of the time busy. */
static void *hog(void *arg) {
  hog_t *h = arg;
  set_self(h->batch ? 3 : 0, h->nice, 0);
  uint64_t st = h->seed;
  while (atomic_load(&running)) {
    double burst_us = exp_draw(&st, o.hog_burst_us);
    int64_t w0 = now_ns(), c0 = cpu_ns();
    spin_until_cpu(c0 + (int64_t)(burst_us * 1000));
    int64_t waited = (now_ns() - w0) - (cpu_ns() - c0);
    int ph = atomic_load(&phase);
    if (ph >= 0 && h->nice == 0) {
      pthread_mutex_lock(&hog_mu);
      add(&hog_wait[ph], waited);
      pthread_mutex_unlock(&hog_mu);
    }
    double sleep_us = burst_us * (1 - h->duty) / h->duty;
    struct timespec ts = {.tv_sec = (time_t)(sleep_us / 1e6), .tv_nsec = (long)fmod(sleep_us * 1000, 1e9)};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* The matcher stand-in: sleeps on the bell, records the wake delay, works --work-us of CPU. */
static void *sleeper(void *arg) {
  (void)arg;
  int last_phase = -2;
  while (atomic_load(&running)) {
    int ph = atomic_load(&phase);
    if (ph != last_phase && ph >= 0) {
      /* Even phases of each pair A B | B A: A = default slice. */
      int is_b = (ph % 4 == 1 || ph % 4 == 2);
      uint64_t got = set_self(0, 0, is_b ? (uint64_t)(o.slice_us * 1000) : 0);
      if (is_b && got != (uint64_t)(o.slice_us * 1000)) die("%s", "the kernel did not take the slice (Linux >= 6.12 needed)");
      last_phase = ph;
    }
    struct timespec to = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
    syscall(SYS_futex, &bell, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
    int64_t t = now_ns();
    if (atomic_exchange(&bell, 0) == 0) continue; /* timeout or spurious */
    int64_t s = atomic_load(&stamp_ns);
    ph = atomic_load(&phase);
    if (ph >= 0 && ph == last_phase) add(&wake[ph], t - s);
    spin_until_cpu(cpu_ns() + (int64_t)(o.work_us * 1000));
  }
  return NULL;
}

static double num(const char *k, const char *v, double lo, double hi) {
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= lo && x <= hi)) die("bad value for %s", k);
  return x;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) die("%s needs a value", k);
    if (!strcmp(k, "--slice-us")) o.slice_us = num(k, v, 100, 100000);
    else if (!strcmp(k, "--rounds")) o.rounds = (int)num(k, v, 1, ROUNDS_MAX / 2 * 2);
    else if (!strcmp(k, "--seconds")) o.seconds = num(k, v, 0.5, 60);
    else if (!strcmp(k, "--rate")) o.rate = num(k, v, 10, 20000);
    else if (!strcmp(k, "--work-us")) o.work_us = num(k, v, 0, 500);
    else if (!strcmp(k, "--hogs")) o.hogs = (int)num(k, v, 0, HOGS_MAX);
    else if (!strcmp(k, "--hog-burst-us")) o.hog_burst_us = num(k, v, 10, 100000);
    else if (!strcmp(k, "--hog-duty")) o.hog_duty = num(k, v, 0.01, 1);
    else if (!strcmp(k, "--background-duty")) o.background_duty = num(k, v, 0, 1);
    else die("unknown option %s", k);
    i++;
  }
  int phases = o.rounds * 2;
  for (int p = 0; p < phases; p++) {
    wake[p] = (samples_t){calloc(SAMPLES_MAX, 8), 0, SAMPLES_MAX};
    hog_wait[p] = (samples_t){calloc(SAMPLES_MAX, 8), 0, SAMPLES_MAX};
    if (!wake[p].v || !hog_wait[p].v) die("%s", "out of memory");
  }
  uint64_t default_slice_ns;
  {
    struct sw_sched_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0u) != 0) die("sched_getattr: %s", strerror(errno));
    default_slice_ns = a.sched_runtime;
  }
  pthread_t th[HOGS_MAX + 2];
  hog_t hs[HOGS_MAX + 1];
  int nt = 0;
  for (int i = 0; i < o.hogs; i++) {
    hs[i] = (hog_t){0, 0, o.hog_duty, 0x1234567ULL * (i + 1)};
    pthread_create(&th[nt++], NULL, hog, &hs[i]);
  }
  if (o.background_duty > 0) {
    hs[o.hogs] = (hog_t){10, 1, o.background_duty, 0xabcdefULL};
    pthread_create(&th[nt++], NULL, hog, &hs[o.hogs]);
  }
  pthread_create(&th[nt++], NULL, sleeper, NULL);
  /* This thread is the waker (the front ringing the matcher), at the default slice. */
  int64_t period = (int64_t)(1e9 / o.rate);
  for (int p = 0; p < phases; p++) {
    atomic_store(&phase, p);
    struct timespec settle = {0, 20 * 1000 * 1000}; /* the sleeper sets its slice first */
    nanosleep(&settle, NULL);
    int64_t t = now_ns(), end = t + (int64_t)(o.seconds * 1e9);
    while (t < end) {
      t += period;
      struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
      atomic_store(&stamp_ns, now_ns());
      atomic_store(&bell, 1);
      syscall(SYS_futex, &bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    atomic_store(&phase, -1);
  }
  atomic_store(&running, 0);
  atomic_store(&bell, 1);
  syscall(SYS_futex, &bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);

  /* Per way: all its phases' samples pooled, and the median over phases of each phase's p99. */
  printf("{\"bench\":\"slice_wake\",\"slice_us\":%.0f,\"default_slice_us\":%.1f,\"rounds\":%d,\"seconds\":%.1f,\"rate\":%.0f,\"work_us\":%.1f,"
         "\"hogs\":%d,\"hog_burst_us\":%.0f,\"hog_duty\":%.2f,\"background_duty\":%.2f",
         o.slice_us, default_slice_ns / 1000.0, o.rounds, o.seconds, o.rate, o.work_us, o.hogs, o.hog_burst_us, o.hog_duty, o.background_duty);
  for (int way = 0; way < 2; way++) {
    samples_t all_w = {calloc(SAMPLES_MAX, 8), 0, SAMPLES_MAX}, all_h = {calloc(SAMPLES_MAX, 8), 0, SAMPLES_MAX};
    double p99s[ROUNDS_MAX];
    int np = 0;
    for (int p = 0; p < phases; p++) {
      int is_b = (p % 4 == 1 || p % 4 == 2);
      if (is_b != way) continue;
      p99s[np++] = pct(&wake[p], 99);
      for (uint32_t i = 0; i < wake[p].n; i++) add(&all_w, wake[p].v[i]);
      for (uint32_t i = 0; i < hog_wait[p].n; i++) add(&all_h, hog_wait[p].v[i]);
    }
    /* median of the phase p99s (insertion sort: a handful) */
    for (int i = 1; i < np; i++)
      for (int j = i; j > 0 && p99s[j - 1] > p99s[j]; j--) {
        double x = p99s[j]; p99s[j] = p99s[j - 1]; p99s[j - 1] = x;
      }
    double med = np == 0 ? 0 : (np % 2 ? p99s[np / 2] : (p99s[np / 2 - 1] + p99s[np / 2]) / 2);
    printf(",\"%s\":{\"wakes\":%u,\"wake_us_p50\":%.1f,\"wake_us_p90\":%.1f,\"wake_us_p99\":%.1f,\"wake_us_p999\":%.1f,\"wake_us_p99_phase_median\":%.1f,"
           "\"competitor_bursts\":%u,\"competitor_wait_us_p50\":%.1f,\"competitor_wait_us_p99\":%.1f}",
           way ? "B_slice" : "A_default", all_w.n, pct(&all_w, 50), pct(&all_w, 90), pct(&all_w, 99), pct(&all_w, 99.9), med, all_h.n, pct(&all_h, 50), pct(&all_h, 99));
  }
  printf("}\n");
  return 0;
}
