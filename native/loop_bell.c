/*
 * loop_bell.node: a doorbell that wakes a Node event loop (the front thread) from another thread
 * directly, for the event ring's consumer (src/ring/loop_bell.ts, src/ring/ring_wake.ts).
 *
 * The front slept on the event ring in Atomics.waitAsync. The matcher's Atomics.notify then goes
 * through V8's FutexEmulation: its process-wide mutex, a task posted to the front isolate's
 * platform queue (another mutex, a heap task, uv_async_send), and on the front the task takes the
 * FutexEmulation mutex again to resolve the wait's promise, whose resumption takes two microtask
 * hops before the event pump runs; the pump then allocates a new promise and a new waiter node
 * (the mutex once more) for its next sleep. Here the producer calls uv_async_send on a uv_async_t
 * of the front's own loop (one eventfd write when the loop sleeps) and the front's loop calls the
 * consumer's JS function directly (napi_make_callback: microtasks run after it, as after any I/O
 * callback). Measured in docs/benchmarks.md ("The front's wake-up").
 *
 * A bell is opened on the consumer's thread (open(fn) -> id), rung from any thread of the process
 * (ring(id); a shared library's globals are shared by every thread that loads it), and closed on
 * the consumer's thread (close(id)) or when its environment is torn down. Ids carry a generation,
 * so a ring of a closed bell that reuses its slot rings nothing. The handle is unref'd: a bell
 * never keeps a process alive.
 *
 * Built by `make native` with the machine's cc, like ring_futex.c; without it the event ring's
 * consumer uses Atomics.waitAsync.
 */
/* uv.h needs POSIX types (pthread_rwlock_t, struct addrinfo) that -std=c11 hides. */
#define _GNU_SOURCE
/* napi_add_async_cleanup_hook (the teardown that can wait for uv_close) is N-API 8. */
#define NAPI_VERSION 8
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <uv.h>

/* Bells open at once in one process: one per running server (its event ring), a few in tests. */
#define BELLS_MAX 256

typedef struct bell {
  uv_async_t async; /* first: the uv callback gets &async */
  napi_env env;
  napi_ref callback;
  napi_async_context context;
  /* The environment's teardown hook while the bell is open; NULL once close() removed it. */
  napi_async_cleanup_hook_handle cleanup;
  int32_t id;
  int closing;
} bell_t;

/* Guards `bells` and `generation`: ring() runs on producer threads while close() runs on the
 * consumer's. Uncontended (a ring per batch, an open/close per server), ~20 ns. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bell_t *bells[BELLS_MAX];
static int32_t generation = 0;

/* The handle is closed. At teardown the environment waits for this (its async cleanup hook is
 * still registered: a synchronous hook would close the handle with nothing left to run the loop,
 * so this callback might never fire and a worker's loop would end with the handle open). */
static void on_closed(uv_handle_t *h) {
  bell_t *b = (bell_t *)h;
  if (b->cleanup != NULL) napi_remove_async_cleanup_hook(b->cleanup);
  free(b);
}

/* Takes the bell out of the table (no ring reaches it afterwards) and closes its handle. */
static void retire(bell_t *b) {
  pthread_mutex_lock(&lock);
  int slot = b->id & (BELLS_MAX - 1);
  if (bells[slot] == b) bells[slot] = NULL;
  pthread_mutex_unlock(&lock);
  if (b->closing) return;
  b->closing = 1;
  uv_close((uv_handle_t *)&b->async, on_closed);
}

static void on_env_teardown(napi_async_cleanup_hook_handle handle, void *arg) {
  bell_t *b = (bell_t *)arg;
  b->cleanup = handle;
  napi_delete_reference(b->env, b->callback);
  napi_async_destroy(b->env, b->context);
  retire(b);
}

/* On the consumer's loop: calls its function (a throw becomes an uncaught exception). */
static void on_async(uv_async_t *h) {
  bell_t *b = (bell_t *)h;
  if (b->closing) return;
  napi_env env = b->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, recv;
  if (napi_get_reference_value(env, b->callback, &fn) == napi_ok && fn != NULL && napi_get_global(env, &recv) == napi_ok) {
    napi_status s = napi_make_callback(env, b->context, recv, fn, 0, NULL, NULL);
    if (s == napi_pending_exception) {
      napi_value error;
      if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
    }
  }
  napi_close_handle_scope(env, scope);
}

/* open(fn): a bell on this thread's loop that calls fn when rung; its id (> 0). Throws when
 * BELLS_MAX - 1 are open (slot 0 is never used, so no id is 0). */
static napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_valuetype type;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 1 || napi_typeof(env, argv[0], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "open(function)");
    return NULL;
  }
  struct uv_loop_s *loop;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    napi_throw_error(env, NULL, "loop bell: no event loop");
    return NULL;
  }
  bell_t *b = (bell_t *)calloc(1, sizeof(bell_t));
  if (b == NULL) {
    napi_throw_error(env, NULL, "loop bell: out of memory");
    return NULL;
  }
  napi_value resource, name;
  if (uv_async_init(loop, &b->async, on_async) != 0) {
    free(b);
    napi_throw_error(env, NULL, "loop bell: uv_async_init failed");
    return NULL;
  }
  uv_unref((uv_handle_t *)&b->async);
  b->env = env;
  if (napi_create_reference(env, argv[0], 1, &b->callback) != napi_ok) b->callback = NULL;
  if (b->callback == NULL || napi_create_object(env, &resource) != napi_ok ||
      napi_create_string_utf8(env, "ringbook.loop_bell", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_async_init(env, resource, name, &b->context) != napi_ok) {
    if (b->callback != NULL) napi_delete_reference(env, b->callback);
    b->closing = 1;
    uv_close((uv_handle_t *)&b->async, on_closed);
    napi_throw_error(env, NULL, "loop bell: cannot hold the callback");
    return NULL;
  }
  int slot = -1;
  pthread_mutex_lock(&lock);
  for (int i = 1; i < BELLS_MAX && slot < 0; i++) {
    if (bells[i] == NULL) slot = i;
  }
  if (slot > 0) {
    generation = (generation + 1) & 0x3fffff;
    b->id = (generation << 8) | slot; /* BELLS_MAX = 2^8; slot 0 unused, so an id is never 0 */
    bells[slot] = b;
  }
  pthread_mutex_unlock(&lock);
  const char *failure = slot < 0 ? "loop bell: too many open bells" : NULL;
  napi_value out = NULL;
  if (failure == NULL && napi_add_async_cleanup_hook(env, on_env_teardown, b, &b->cleanup) != napi_ok) {
    b->cleanup = NULL;
    failure = "loop bell: cannot add the teardown hook";
  }
  if (failure == NULL && napi_create_int32(env, b->id, &out) != napi_ok) failure = "loop bell: cannot return the id";
  if (failure != NULL) {
    if (b->cleanup != NULL) napi_remove_async_cleanup_hook(b->cleanup);
    b->cleanup = NULL;
    napi_delete_reference(env, b->callback);
    napi_async_destroy(env, b->context);
    retire(b); /* out of the table (when it got a slot) and closed */
    napi_throw_error(env, NULL, failure);
    return NULL;
  }
  return out;
}

/* The one argument of ring/close, a bell id: 0 (a TypeError thrown, naming `usage`) when it is not one. */
static int id_argument(napi_env env, napi_callback_info info, const char *usage, int32_t *id) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (argc != 1 || napi_get_value_int32(env, argv[0], id) != napi_ok) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

/* ring(id), any thread: wakes the bell's loop (coalesced: rings before the callback runs make one
 * call). false when the bell is closed. */
static napi_value Ring(napi_env env, napi_callback_info info) {
  int32_t id;
  if (!id_argument(env, info, "ring(id)", &id)) return NULL;
  int rung = 0;
  pthread_mutex_lock(&lock);
  bell_t *b = bells[id & (BELLS_MAX - 1)];
  if (b != NULL && b->id == id) rung = uv_async_send(&b->async) == 0;
  pthread_mutex_unlock(&lock);
  napi_value out;
  napi_get_boolean(env, rung, &out);
  return out;
}

/* close(id), on the thread that opened it: no call after this returns. false when not open here. */
static napi_value Close(napi_env env, napi_callback_info info) {
  int32_t id;
  if (!id_argument(env, info, "close(id)", &id)) return NULL;
  pthread_mutex_lock(&lock);
  bell_t *b = bells[id & (BELLS_MAX - 1)];
  if (b != NULL && (b->id != id || b->env != env)) b = NULL;
  pthread_mutex_unlock(&lock);
  napi_value out;
  if (b == NULL) {
    napi_get_boolean(env, 0, &out);
    return out;
  }
  napi_remove_async_cleanup_hook(b->cleanup);
  b->cleanup = NULL; /* on_closed frees it without the (removed) hook */
  napi_delete_reference(env, b->callback);
  napi_async_destroy(env, b->context);
  retire(b);
  napi_get_boolean(env, 1, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor d[] = {
    {"open", NULL, Open, NULL, NULL, NULL, napi_default, NULL},
    {"ring", NULL, Ring, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, Close, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, 3, d) != napi_ok) return NULL;
  return exports;
}
