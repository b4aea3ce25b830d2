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
// A task's signatures in one call (issue 11, branch h22v: the N-API glue of a call, ~1,300
// instructions, once per task of up to 64 instead of once per signature):
//
//   recoverRows(rows, count, keys) -> number of rows recovered
//     rows    Uint8Array of at least count * 100 bytes, row i at 100 i: bytes 0..32 the digest,
//             byte 32 the recovery id (0..3; any other value: the row is refused without a call,
//             how recover.ts marks a signature its acceptance rules refused), bytes 35..99 r || s
//             (byte 99, v, is not read)
//     count   an integer >= 0 (a number; never coerced)
//     keys    Uint8Array of at least count * 68 bytes, row i at 68 i: byte 0 the row's status (1
//             recovered, 0 refused: libsecp256k1 refused it or its recovery id was not 0..3),
//             bytes 3..68 the uncompressed key (0x04 || x || y) of a recovered row (so that x || y
//             is on word boundaries for the caller), left as they were for a refused one
//   Throws a TypeError for a wrong type, a RangeError for a count that is not an integer >= 0 or
//   buffers too short for it. Per row the same libsecp256k1 calls as recover(): same key, same
//   refusals (test/auth/secp256k1_batch.test.ts).
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

static bool recover_one(const uint8_t *sig64, int recid, const uint8_t *hash32, uint8_t *key65);

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
  return boolean(env, recover_one(sig, recid, hash, out));
}

/** One row's recovery into `key65`: the calls Recover makes; false when libsecp256k1 refuses it. */
static bool recover_one(const uint8_t *sig64, int recid, const uint8_t *hash32, uint8_t *key65) {
  secp256k1_ecdsa_recoverable_signature rs;
  secp256k1_pubkey pub;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &rs, sig64, recid)) return false;
  if (!secp256k1_ecdsa_recover(ctx, &pub, &rs, hash32)) return false;
  size_t n = 65;
  secp256k1_ec_pubkey_serialize(ctx, key65, &n, &pub, SECP256K1_EC_UNCOMPRESSED);
  return n == 65;
}

enum {
  ROW_BYTES = 100, ROW_HASH_AT = 0, ROW_RECID_AT = 32, ROW_SIG_AT = 35,
  KEY_ROW_BYTES = 68, KEY_STATUS_AT = 0, KEY_AT = 3,
};

static napi_value RecoverRows(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) {
    napi_throw_type_error(env, NULL, "recoverRows(rows, count, keys): three arguments");
    return NULL;
  }
  uint8_t *rows, *keys;
  size_t rows_len, keys_len;
  double count_number;
  if (!bytes_of(env, argv[0], &rows, &rows_len, "rows must be a Uint8Array")) return NULL;
  if (!bytes_of(env, argv[2], &keys, &keys_len, "keys must be a Uint8Array")) return NULL;
  if (napi_get_value_double(env, argv[1], &count_number) != napi_ok) {
    napi_throw_type_error(env, NULL, "count must be a number");
    return NULL;
  }
  // Integer and in range before the products below (NaN fails every comparison).
  if (!(count_number >= 0 && count_number <= (double)(rows_len / ROW_BYTES) && count_number <= (double)(keys_len / KEY_ROW_BYTES)) ||
      count_number != (double)(size_t)count_number) {
    napi_throw_range_error(env, NULL, "count must be an integer >= 0 with rows >= 100 count bytes and keys >= 68 count bytes");
    return NULL;
  }
  size_t count = (size_t)count_number;
  pthread_once(&ctx_once, make_context);
  if (ctx == NULL) {
    napi_throw_error(env, NULL, "secp256k1_context_create failed");
    return NULL;
  }
  uint32_t recovered = 0;
  for (size_t i = 0; i < count; i++) {
    const uint8_t *row = rows + i * ROW_BYTES;
    uint8_t *key = keys + i * KEY_ROW_BYTES;
    const uint8_t recid = row[ROW_RECID_AT];
    const bool ok = recid <= 3 && recover_one(row + ROW_SIG_AT, recid, row + ROW_HASH_AT, key + KEY_AT);
    key[KEY_STATUS_AT] = ok ? 1 : 0;
    recovered += ok ? 1 : 0;
  }
  napi_value out;
  napi_create_uint32(env, recovered, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "recover", NAPI_AUTO_LENGTH, Recover, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "recover", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "recoverRows", NAPI_AUTO_LENGTH, RecoverRows, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "recoverRows", fn) != napi_ok) return NULL;
  return exports;
}
