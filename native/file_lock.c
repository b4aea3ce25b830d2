// build/file_lock.node: flock(2) for src/journal/data_dir_lock.ts (one server per data directory).
// A kernel lock on <data>/server.pid held through an open descriptor for the process's life: the
// kernel drops it when the process ends however it ends (kill -9, a crash), so no stale file can
// block a start and no second server can start beside a live one, which a pid file alone could
// only guess at (a pid reused by another program, two starts at the same instant).
#include <errno.h>
#include <sys/file.h>
#include <node_api.h>

// lockExclusive(fd) -> errno: 0 when this process now holds the exclusive lock, EWOULDBLOCK when
// another open file description holds it (never waits), another errno when flock failed.
static napi_value LockExclusive(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  napi_value out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "lockExclusive(fd): fd must be a non-negative integer");
    return NULL;
  }
  int e = 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) e = errno;
  napi_create_int32(env, e, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor d[] = {
    {"lockExclusive", NULL, LockExclusive, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, 1, d) != napi_ok) return NULL;
  return exports;
}
