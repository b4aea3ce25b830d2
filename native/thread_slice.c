/*
 * thread_slice.node: a thread's EEVDF slice request (config threads.matcher_slice_us,
 * src/util/thread_slice.ts). Since Linux 6.6 the fair class is EEVDF: a thread that wakes is
 * placed by its virtual deadline, eligible time + slice / weight, so a thread asking for a shorter
 * slice gets an earlier deadline and preempts the running thread sooner when it wakes (and is
 * itself preempted after that much of its own work). Since 6.12 the slice is asked for per thread
 * with sched_setattr's sched_runtime on SCHED_OTHER / SCHED_BATCH (the kernel clamps it to
 * 0.1..100 ms; 0 gives back the default slice, sysctl_sched_base_slice), without privileges: no
 * capability check covers it, unlike a lower nice value. sched_getattr reports the thread's slice
 * in sched_runtime (the default one when none was asked for). There is no glibc wrapper before
 * 2.41 (Debian 12 has 2.36), so both go through syscall(2) with the kernel's struct.
 *
 * The call keeps the thread's policy and nice value (sched_setattr without KEEP_PARAMS sets both
 * from the struct, so they are read first) and its reset-on-fork flag. A plain N-API module in
 * C, built by `make native` with the machine's cc, like ring_futex.c.
 *
 * The same module sets a thread's CPU affinity (config threads.pipeline_cpu,
 * src/util/thread_placement.ts): sched_setaffinity on one thread id of this process, and
 * sched_getaffinity to read it back, without spawning `taskset` per thread (the placement sweeps
 * the process's threads every few seconds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched_attr.h"

static int get_attr(pid_t tid, struct rb_sched_attr *a) {
  memset(a, 0, sizeof *a);
  return syscall(SYS_sched_getattr, tid, a, (unsigned)sizeof *a, 0u) == 0 ? 0 : errno;
}

static void set_prop(napi_env env, napi_value obj, const char *name, double v) {
  napi_value x;
  napi_create_double(env, v, &x);
  napi_set_named_property(env, obj, name, x);
}

/* { errno, policy, nice, runtime_ns } (errno 0: the rest is the kernel's view; else only errno). */
static napi_value result(napi_env env, int err, const struct rb_sched_attr *a) {
  napi_value out;
  napi_create_object(env, &out);
  set_prop(env, out, "errno", err);
  if (err == 0) {
    set_prop(env, out, "policy", a->sched_policy);
    set_prop(env, out, "nice", a->sched_nice);
    set_prop(env, out, "runtime_ns", (double)a->sched_runtime);
  }
  return out;
}

/* The tid argument: a thread id of this machine, 0 for the calling thread. */
static int tid_arg(napi_env env, napi_value v, pid_t *tid) {
  int32_t t;
  if (napi_get_value_int32(env, v, &t) != napi_ok || t < 0) return 0;
  *tid = t;
  return 1;
}

/* A call's one argument, a tid (see tid_arg); on anything else throws `usage` and returns 0. */
static int one_tid_arg(napi_env env, napi_callback_info info, pid_t *tid, const char *usage) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (argc != 1 || !tid_arg(env, argv[0], tid)) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

/* getattr(tid): the thread's { errno, policy, nice, runtime_ns }. */
static napi_value GetAttr(napi_env env, napi_callback_info info) {
  pid_t tid;
  if (!one_tid_arg(env, info, &tid, "getattr(tid >= 0)")) return NULL;
  struct rb_sched_attr a;
  int err = get_attr(tid, &a);
  return result(env, err, &a);
}

/*
 * setSlice(tid, runtime_ns): asks for that slice for the thread, keeping its policy and nice;
 * returns the kernel's view afterwards ({ errno } of the failing call when it fails: EINVAL for a
 * policy outside the fair class's OTHER / BATCH, whose slice the kernel does not take).
 */
static napi_value SetSlice(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  pid_t tid;
  double ns;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 2 || !tid_arg(env, argv[0], &tid) || napi_get_value_double(env, argv[1], &ns) != napi_ok ||
      !(ns >= 0 && ns <= 1e12)) {
    napi_throw_type_error(env, NULL, "setSlice(tid >= 0, runtime_ns in [0, 1e12])");
    return NULL;
  }
  struct rb_sched_attr a;
  int err = get_attr(tid, &a);
  if (err != 0) return result(env, err, &a);
  if (a.sched_policy != RB_SCHED_OTHER && a.sched_policy != RB_SCHED_BATCH) return result(env, EINVAL, &a);
  if (rb_set_slice(tid, &a, (uint64_t)ns) != 0) return result(env, errno, &a);
  err = get_attr(tid, &a);
  return result(env, err, &a);
}

/* getAffinity(tid): { errno, cpus } (cpus: the CPU numbers the thread may run on, ascending). */
static napi_value GetAffinity(napi_env env, napi_callback_info info) {
  pid_t tid;
  if (!one_tid_arg(env, info, &tid, "getAffinity(tid >= 0)")) return NULL;
  cpu_set_t set;
  CPU_ZERO(&set);
  int err = sched_getaffinity(tid, sizeof set, &set) == 0 ? 0 : errno;
  napi_value out, cpus;
  napi_create_object(env, &out);
  set_prop(env, out, "errno", err);
  if (err == 0) {
    napi_create_array(env, &cpus);
    uint32_t n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
      if (!CPU_ISSET(c, &set)) continue;
      napi_value x;
      napi_create_int32(env, c, &x);
      napi_set_element(env, cpus, n++, x);
    }
    napi_set_named_property(env, out, "cpus", cpus);
  }
  return out;
}

/* setAffinity(tid, cpus): lets the thread run only on `cpus` (CPU numbers below CPU_SETSIZE); returns errno (0: done). */
static napi_value SetAffinity(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  pid_t tid;
  bool is_array = false;
  uint32_t n = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 2 || !tid_arg(env, argv[0], &tid) || napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[1], &n) != napi_ok || n == 0) {
    napi_throw_type_error(env, NULL, "setAffinity(tid >= 0, a non-empty array of CPU numbers)");
    return NULL;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (uint32_t i = 0; i < n; i++) {
    napi_value x;
    int32_t c;
    if (napi_get_element(env, argv[1], i, &x) != napi_ok || napi_get_value_int32(env, x, &c) != napi_ok || c < 0 || c >= CPU_SETSIZE) {
      napi_throw_type_error(env, NULL, "setAffinity: a CPU number must be an integer in [0, CPU_SETSIZE)");
      return NULL;
    }
    CPU_SET(c, &set);
  }
  napi_value out;
  napi_create_int32(env, sched_setaffinity(tid, sizeof set, &set) == 0 ? 0 : errno, &out);
  return out;
}

/* gettid(): the calling thread's kernel id (what tid 0 stands for). */
static napi_value GetTid(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_int32(env, (int32_t)syscall(SYS_gettid), &out);
  return out;
}

/* strerror(errno): the C library's text for an errno the calls above returned. */
static napi_value StrError(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t e;
  napi_value out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 1 || napi_get_value_int32(env, argv[0], &e) != napi_ok) {
    napi_throw_type_error(env, NULL, "strerror(errno)");
    return NULL;
  }
  const char *s = strerror(e);
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor d[] = {
    {"getattr", NULL, GetAttr, NULL, NULL, NULL, napi_default, NULL},
    {"setSlice", NULL, SetSlice, NULL, NULL, NULL, napi_default, NULL},
    {"gettid", NULL, GetTid, NULL, NULL, NULL, napi_default, NULL},
    {"strerror", NULL, StrError, NULL, NULL, NULL, napi_default, NULL},
    {"getAffinity", NULL, GetAffinity, NULL, NULL, NULL, napi_default, NULL},
    {"setAffinity", NULL, SetAffinity, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, 6, d) != napi_ok) return NULL;
  return exports;
}
