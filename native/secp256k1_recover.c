// secp256k1_recover.node (issue 11): ECDSA public key recovery through the machine's libsecp256k1
// (Debian's libsecp256k1 0.2, `make native` installs libsecp256k1-dev), for src/auth/recover.ts.
// The `secp256k1` npm package's prebuilt addon carries an older libsecp256k1 and a JS wrapper
// that checks and allocates per call; this recovers in 47.3 us of CPU here against 62.5 us
// (bare recovery, docs/benchmarks.md, issue 11, branch h11q). One call, no allocation:
//
//   recover(sig, recid, hash32, out65) -> boolean
//     sig     Uint8Array whose first 64 bytes are r || s (big-endian)
//     recid   an integer 0..3, libsecp256k1's recovery id (2 and 3: the point's x is r + n, which
//             Ethereum's v never names); recover.ts passes 0 or 1, after its acceptance rules
//             (v 27/28 or 0/1, low-s, r and s in range)
//     hash32  Uint8Array of 32 bytes, the signed digest
//     out65   Uint8Array of at least 65 bytes: receives the uncompressed public key (0x04 || x || y)
//   false when libsecp256k1 refuses the signature (no point for r, recovery fails). Throws a
//   TypeError for an argument of the wrong type (recid not a number; a buffer not a Uint8Array)
//   or a buffer of the wrong length (a detached one has length 0), and a RangeError for a recid
//   that is a number but not an integer in 0..3 (NaN, 1.5, 2^32: never coerced to an int).
//
// The context is created once per process (pthread_once) and only read afterwards: libsecp256k1
// allows a const context to be used from several threads at once (the front and the verify
// workers each load this module).
#include <node_api.h>
#include <pthread.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static secp256k1_context *ctx = NULL;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;

static void make_context(void) {
  // VERIFY: what recovery needs (libsecp256k1 0.2 treats every flag alike; older ones need it).
  ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
}

/** The bytes of a Uint8Array argument and their count; false (TypeError thrown) otherwise. */
static bool bytes_of(napi_env env, napi_value v, uint8_t **data, size_t *length, const char *what) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) {
    napi_throw_type_error(env, NULL, what);
    return false;
  }
  napi_typedarray_type type;
  void *p = NULL;
  if (napi_get_typedarray_info(env, v, &type, length, &p, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, what);
    return false;
  }
  *data = (uint8_t *)p;
  return true;
}

static napi_value boolean(napi_env env, bool b) {
  napi_value out;
  napi_get_boolean(env, b, &out);
  return out;
}

static napi_value Recover(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) {
    napi_throw_type_error(env, NULL, "recover(sig, recid, hash32, out65): four arguments");
    return NULL;
  }
  uint8_t *sig, *hash, *out;
  size_t sig_len, hash_len, out_len;
  double recid_number;
  if (!bytes_of(env, argv[0], &sig, &sig_len, "sig must be a Uint8Array")) return NULL;
  if (!bytes_of(env, argv[2], &hash, &hash_len, "hash32 must be a Uint8Array")) return NULL;
  if (!bytes_of(env, argv[3], &out, &out_len, "out65 must be a Uint8Array")) return NULL;
  // The double itself: napi_get_value_int32 would turn NaN into 0, 1.9 into 1 and 2^32 into 0.
  if (napi_get_value_double(env, argv[1], &recid_number) != napi_ok) {
    napi_throw_type_error(env, NULL, "recid must be a number");
    return NULL;
  }
  if (!(recid_number == 0 || recid_number == 1 || recid_number == 2 || recid_number == 3)) {
    napi_throw_range_error(env, NULL, "recid must be an integer in 0..3");
    return NULL;
  }
  int recid = (int)recid_number;
  if (sig_len < 64 || hash_len != 32 || out_len < 65) {
    napi_throw_type_error(env, NULL, "recover: sig >= 64 bytes, hash32 32 bytes, out65 >= 65 bytes");
    return NULL;
  }
  pthread_once(&ctx_once, make_context);
  if (ctx == NULL) {
    napi_throw_error(env, NULL, "secp256k1_context_create failed");
    return NULL;
  }
  secp256k1_ecdsa_recoverable_signature rs;
  secp256k1_pubkey pub;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &rs, sig, recid)) return boolean(env, false);
  if (!secp256k1_ecdsa_recover(ctx, &pub, &rs, hash)) return boolean(env, false);
  size_t n = 65;
  secp256k1_ec_pubkey_serialize(ctx, out, &n, &pub, SECP256K1_EC_UNCOMPRESSED);
  return boolean(env, n == 65);
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "recover", NAPI_AUTO_LENGTH, Recover, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "recover", fn) != napi_ok) return NULL;
  return exports;
}
