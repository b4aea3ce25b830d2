/*
 * crc32_clmul.node: the journal's CRC-32 (zlib's: reflected polynomial 0xEDB88320, initial and
 * final inversion; the value zlib.crc32 gives) with carry-less multiplication (PCLMULQDQ), for the
 * matcher's journal replay on start (src/journal/crc32.ts). Node's bundled zlib computes it at
 * ~4 GB/s here, ~50-55 ms of the 1,000,000-request replay's ~1.4 s (docs/benchmarks.md, h19b);
 * folding 64 bytes a step with four independent carry-less products is several times faster.
 *
 * The folding (64-byte blocks, then 16-byte blocks, then 128 -> 64 -> 32 bits with a Barrett
 * reduction) is the method of Gopal et al., "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ Instruction" (Intel, 2009), with the bit-reflected constants of its appendix for the
 * CRC-32 polynomial, as zlib's own SIMD variants use them. Lengths below 64 and the last
 * len % 16 bytes go through a byte table. Without PCLMULQDQ (checked at run time) `available()`
 * is false and the caller keeps zlib's. The caller also checks the result against zlib's on
 * sample data before trusting it.
 *
 * A plain N-API module in C, built by `make native` with the machine's cc, like ring_futex.c.
 */
#include <node_api.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RB_X86 1
#endif

static uint32_t table[256];

static void make_table(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
}

/* `crc` is the running (inverted) state. */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t n) {
  while (n-- > 0) crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#ifdef RB_X86
/* `len` >= 64 and a multiple of 16; `crc` is the running (inverted) state, returned the same way. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_fold(const uint8_t *buf, size_t len, uint32_t crc) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

  x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
  x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
  x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
  x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
  x0 = k1k2;
  buf += 64;
  len -= 64;

  /* Four 128-bit lanes folded 64 bytes ahead at a time. */
  while (len >= 64) {
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
    x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
    x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
    x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
    y5 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    y6 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    y7 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    y8 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
    buf += 64;
    len -= 64;
  }

  /* The four lanes folded into one. */
  x0 = k3k4;
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

  /* 16-byte blocks left. */
  while (len >= 16) {
    x2 = _mm_loadu_si128((const __m128i *)buf);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    buf += 16;
    len -= 16;
  }

  /* 128 -> 64 bits. */
  x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
  x3 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_srli_si128(x1, 8);
  x1 = _mm_xor_si128(x1, x2);
  x0 = k5k0;
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, x3);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);

  /* Barrett reduction to 32 bits. */
  x0 = poly;
  x2 = _mm_and_si128(x1, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
  x2 = _mm_and_si128(x2, x3);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

static int clmul_ok;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Once per process: the matcher, the DA worker and the main thread each load the module. */
static void init_once(void) {
  make_table();
#ifdef RB_X86
  __builtin_cpu_init();
  clmul_ok = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

static uint32_t crc32_of(const uint8_t *p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
#ifdef RB_X86
  if (clmul_ok && n >= 64) {
    size_t blocks = n & ~(size_t)15;
    crc = crc_fold(p, blocks, crc);
    p += blocks;
    n -= blocks;
  }
#endif
  return crc_bytes(crc, p, n) ^ 0xFFFFFFFFu;
}

/* crc32(view: ArrayBufferView) -> the CRC-32 of its bytes (an unsigned 32-bit number). */
static napi_value Crc32(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  bool is_view = false;
  if (argc == 1) napi_is_typedarray(env, argv[0], &is_view);
  if (!is_view) {
    napi_throw_type_error(env, NULL, "crc32(typed array)");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_value buffer;
  size_t byte_offset;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, &buffer, &byte_offset) != napi_ok) return NULL;
  size_t bytes = length;
  switch (type) {
    case napi_int16_array: case napi_uint16_array: bytes *= 2; break;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: bytes *= 4; break;
    case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: bytes *= 8; break;
    default: break;
  }
  napi_value out;
  napi_create_uint32(env, crc32_of((const uint8_t *)data, bytes), &out);
  return out;
}

/* available() -> whether the carry-less multiply path runs on this CPU (else a byte table: slow). */
static napi_value Available(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_get_boolean(env, clmul_ok != 0, &out);
  return out;
}

static napi_value Init(napi_env env, napi_value exports) {
  pthread_once(&once, init_once);
  napi_property_descriptor props[] = {
    { "crc32", NULL, Crc32, NULL, NULL, NULL, napi_default, NULL },
    { "available", NULL, Available, NULL, NULL, NULL, napi_default, NULL },
  };
  napi_define_properties(env, exports, 2, props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
