// native-bench/matcher_book.c: the physical-limit reference for the matcher on this machine.
//
// The same price-time book and accounting rules as src/engine (engine.ts, engine_state.ts,
// ledger.ts, book.ts) for the requests the bench flow holds: DEPOSIT, PLACE (limit GTC / IOC /
// FOK / post-only, market IOC / FOK), CANCEL and AMEND, with balances, locks, maker rebates and
// taker fees, nonces, self-trade prevention (the flow carries no stp, so every taker uses the
// default expire_maker: an own resting order met is cancelled and matching goes on), and one
// balance event per changed (account, asset) pair per request. It
// replays the flow file bench/matcher.ts writes (bench/flow_file.ts has the format), counts the
// events of the measured rows, and ends with keccak256 of the canonical state JSON
// (src/engine/state.ts canonicalJson), so the bench can require the same counts and digest.
//
// Data structures mirror the fast engine's so the ratio measures the language, not the design:
// an array of order structs with a free list, an open-addressing id -> slot table, price levels
// with FIFO links, and per book side a sorted array of levels with the best at the end. Credit,
// client order ids, programmes and admin requests are not in the bench flow: a row of another
// kind stops the run with an error rather than being skipped.
//
//   build/matcher_book FLOW_FILE [--repeats N] [--dump-state PATH] [--sample-kinds CLASSES_PATH]
//
// --sample-kinds (a measurement, not a rule): CLASSES_PATH holds one byte per measured row, the
// row's kind (bench/matcher_kinds.ts writes it: limit that rests, crosses, IOC, ..., amend that
// moves). During each timed replay the loop stores the row index it is on in a shared word, and
// a second thread reads that word every SAMPLE_PERIOD_NS and credits the row's kind with the CPU
// time the replaying thread used since its previous reading: the kinds' shares of the replay's
// CPU time (a sample taken while the replay was descheduled weighs nothing; the JSON gains
// "kind_samples" and "kind_cpu_ns"). The JS side samples its replay the
// same way, so the two are compared per kind by one method.
//
// Prints one JSON line: {"ops":..,"ops_per_s":..(median),"ops_per_s_best":..,"accepted":..,...,
// "digest":"0x.."}. Each repeat starts from a fresh engine, replays the set-up rows untimed and
// times the measured rows.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int64_t i64;

#define NIL (-1)
#define FEE_ACCOUNT 0
#define MAX_SAFE ((i64)9007199254740991LL)
#define MONEY_OVERFLOW ((i64)-1)
#define UNITS_PER_WHOLE 1000000
#define BPS_PER_WHOLE 10000
#define MARKETS_MAX 16
#define ASSETS_MAX 16
#define REPEATS_MAX 99
#define FIND_SCAN_LEVELS 16

enum { K_DEPOSIT = 1, K_PLACE = 3, K_CANCEL = 4, K_AMEND = 5 };
enum { BID = 0, ASK = 1 };
enum { LIMIT = 0, MARKET = 1 };
enum { GTC = 0, IOC = 1, FOK = 2, POST_ONLY = 3 };
enum { ST_OPEN = 0, ST_PARTIALLY_FILLED = 1, ST_FILLED = 2, ST_CANCELLED = 3 };
enum { UR_PLACED = 0, UR_FILL = 1, UR_USER_CANCEL = 2, UR_UNFILLED_REMAINDER = 6, UR_INSUFFICIENT_BALANCE = 7, UR_AMENDED = 8, UR_SELF_TRADE_PREVENTED = 11 };
enum { BR_FILL = 0, BR_ORDER_PLACED = 1, BR_ORDER_CANCELLED = 2, BR_DEPOSIT = 3 };
// The reject reasons of src/engine/types.ts that these requests can meet (only counted here).
enum {
  RJ_NONCE = 1, RJ_MARKET_UNKNOWN = 2, RJ_ACCOUNT_UNKNOWN = 4, RJ_SIDE = 5, RJ_TYPE = 6, RJ_TIF = 7,
  RJ_QTY = 8, RJ_LOT = 9, RJ_PRICE = 10, RJ_TICK = 11, RJ_MARKET_TIF = 12, RJ_MARKET_PRICE = 13,
  RJ_NOTIONAL = 14, RJ_ACCOUNT_OPEN_MAX = 17, RJ_ENGINE_OPEN_MAX = 18, RJ_POST_ONLY = 19,
  RJ_BALANCE = 20, RJ_NOT_FOUND = 22, RJ_AMOUNT = 23, RJ_AMOUNT_LARGE = 24, RJ_ASSET = 25,
  RJ_LEVELS_MAX = 30,
};
/** Priority of balance reasons when one pair is touched several times in one request (ledger.ts). */
static const int REASON_RANK[5] = {4, 2, 3, 1, 1};

static void die(const char *what) {
  fprintf(stderr, "matcher_book: %s\n", what);
  exit(1);
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n == 0 ? 1 : n, size);
  if (p == NULL) die("out of memory");
  return p;
}

static void *xrealloc(void *p, size_t size) {
  void *q = realloc(p, size);
  if (q == NULL) die("out of memory");
  return q;
}

// ------------------------------------------------------------------------------ exact money

static inline i64 muldiv_floor(i64 a, i64 b, i64 d) {
  __int128 q = ((__int128)a * b) / d;
  return q > MAX_SAFE ? MONEY_OVERFLOW : (i64)q;
}
static inline i64 muldiv_ceil(i64 a, i64 b, i64 d) {
  __int128 q = ((__int128)a * b + (d - 1)) / d;
  return q > MAX_SAFE ? MONEY_OVERFLOW : (i64)q;
}
static inline i64 notional_floor(i64 p, i64 q) { return muldiv_floor(p, q, UNITS_PER_WHOLE); }
static inline i64 notional_ceil(i64 p, i64 q) { return muldiv_ceil(p, q, UNITS_PER_WHOLE); }
static inline i64 fee_ceil(i64 n, i64 bps) { return muldiv_ceil(n, bps, BPS_PER_WHOLE); }
static inline i64 fee_floor(i64 n, i64 bps) { return muldiv_floor(n, bps, BPS_PER_WHOLE); }

// ------------------------------------------------------------------------------ the flow file

typedef struct {
  uint32_t length, setup_end;
  int32_t maker_bps, taker_bps;
  uint32_t asset_count, market_count;
  uint32_t accounts_max, markets_max, orders_open_max, orders_open_per_account_max, price_levels_per_book_max;
  char asset_name[ASSETS_MAX][17];
  int32_t base[MARKETS_MAX], quote[MARKETS_MAX];
  i64 tick[MARKETS_MAX], lot[MARKETS_MAX];
  // Columns (pointers into the file image).
  const uint8_t *kind;
  const int32_t *account;
  const double *nonce;
  const int8_t *market;
  const uint8_t *side, *order_type, *tif, *asset;
  const double *price, *quantity, *order_id;
} Flow;

typedef struct {
  const uint8_t *p;
  size_t at, size;
} Cursor;

static const void *take(Cursor *c, size_t n) {
  if (c->at + n > c->size) die("flow file is truncated");
  const void *r = c->p + c->at;
  c->at += n;
  return r;
}
static uint32_t take_u32(Cursor *c) {
  uint32_t v;
  memcpy(&v, take(c, 4), 4);
  return v;
}
static int32_t take_i32(Cursor *c) { return (int32_t)take_u32(c); }
static double take_f64(Cursor *c) {
  double v;
  memcpy(&v, take(c, 8), 8);
  return v;
}
static const void *take_column(Cursor *c, size_t n, size_t width) {
  c->at = (c->at + 7) & ~(size_t)7;
  return take(c, n * width);
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "matcher_book: cannot open %s: %s\n", path, strerror(errno));
    exit(1);
  }
  if (fseek(f, 0, SEEK_END) != 0) die("cannot seek the flow file");
  long n = ftell(f);
  if (n < 0) die("cannot size the flow file");
  rewind(f);
  // 8-byte aligned image, so the f64 / i32 columns can be read in place.
  uint8_t *buf = (uint8_t *)aligned_alloc(8, ((size_t)n + 7) & ~(size_t)7);
  if (buf == NULL) die("out of memory");
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read the flow file");
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void load_flow(Flow *f, const uint8_t *image, size_t size) {
  const uint16_t probe = 1;
  if (*(const uint8_t *)&probe != 1) die("the flow file is little-endian; this machine is not");
  Cursor c = {image, 0, size};
  if (memcmp(take(&c, 8), "RBFLOW01", 8) != 0) die("not a flow file (magic RBFLOW01)");
  if (take_u32(&c) != 1) die("flow file version is not 1");
  f->length = take_u32(&c);
  f->setup_end = take_u32(&c);
  f->maker_bps = take_i32(&c);
  f->taker_bps = take_i32(&c);
  f->asset_count = take_u32(&c);
  f->market_count = take_u32(&c);
  f->accounts_max = take_u32(&c);
  f->markets_max = take_u32(&c);
  f->orders_open_max = take_u32(&c);
  f->orders_open_per_account_max = take_u32(&c);
  f->price_levels_per_book_max = take_u32(&c);
  if (f->asset_count == 0 || f->asset_count > ASSETS_MAX) die("asset count out of range");
  if (f->market_count == 0 || f->market_count > MARKETS_MAX) die("market count out of range");
  if (f->setup_end > f->length) die("set-up longer than the flow");
  if (f->accounts_max < 2 || f->orders_open_max < 1) die("limits out of range");
  for (uint32_t a = 0; a < f->asset_count; a++) {
    memcpy(f->asset_name[a], take(&c, 16), 16);
    f->asset_name[a][16] = 0;
  }
  for (uint32_t m = 0; m < f->market_count; m++) {
    f->base[m] = take_i32(&c);
    f->quote[m] = take_i32(&c);
    f->tick[m] = (i64)take_f64(&c);
    f->lot[m] = (i64)take_f64(&c);
    if (f->base[m] < 0 || (uint32_t)f->base[m] >= f->asset_count || f->quote[m] < 0 ||
        (uint32_t)f->quote[m] >= f->asset_count || f->tick[m] <= 0 || f->lot[m] <= 0) die("market out of range");
  }
  size_t n = f->length;
  f->kind = take_column(&c, n, 1);
  f->account = take_column(&c, n, 4);
  f->nonce = take_column(&c, n, 8);
  f->market = take_column(&c, n, 1);
  f->side = take_column(&c, n, 1);
  f->order_type = take_column(&c, n, 1);
  f->tif = take_column(&c, n, 1);
  f->asset = take_column(&c, n, 1);
  f->price = take_column(&c, n, 8);
  f->quantity = take_column(&c, n, 8);
  f->order_id = take_column(&c, n, 8);
  take_column(&c, n, 8); // new_order_id: for the JS peer book only
}

// ------------------------------------------------------------------------------ book storage

typedef struct {
  i64 id, price, quantity, filled, remaining, locked, priority_seq, last_fill_price;
  int32_t account, market, level, prev, next, acct_prev, acct_next;
  uint8_t side, tif;
} Order;

typedef struct {
  i64 price, quantity;
  int32_t head, tail;
} Level;

/** One side of one book: level ids worst to best; key = price (bids) or -price (asks), ascending. */
typedef struct {
  int is_bid;
  int32_t count, capacity;
  int32_t *levels;
  i64 *key;
} BookSide;

/** Order id -> slot: open addressing, linear probing, backward-shift deletion (book.ts OrderIndex). */
typedef struct {
  i64 *keys;
  int32_t *values;
  uint32_t mask;
  uint32_t size;
} OrderIndex;

typedef struct {
  const Flow *flow;
  uint32_t A; // asset count
  uint32_t M;
  i64 mark[MARKETS_MAX];
  BookSide bids[MARKETS_MAX], asks[MARKETS_MAX];
  int32_t maker_bps, taker_bps;
  int32_t fee_maker_bps, fee_taker_bps;
  i64 deposits[ASSETS_MAX], withdrawals[ASSETS_MAX];
  i64 next_order_id, next_fill_id, next_priority_seq;

  // Ledger, sized for accounts_max up front.
  i64 *available, *locked, *nonce;
  int32_t *open_orders, *order_head;
  uint32_t account_high;
  i64 request_stamp;
  i64 *touch_stamp;
  int32_t *touch_pos;
  int32_t t_key[256];
  i64 t_before_available[256], t_before_locked[256];
  uint8_t t_reason[256];
  int32_t t_order[256];
  int32_t t_count;

  // Orders and levels.
  Order *o;
  int32_t o_capacity, o_used_high, o_free_count;
  int32_t *o_free;
  OrderIndex index;
  Level *lv;
  int32_t lv_capacity, lv_used_high, lv_free_count;
  int32_t *lv_free;

  // The taker being matched.
  int32_t tk_account, tk_market, tk_side, tk_type, tk_tif, tk_stop_reason, tk_slot;
  i64 tk_order_id, tk_limit, tk_quantity, tk_filled, tk_remaining, tk_lock, tk_last_price;

  // The event sink: counts per kind.
  i64 n_accepted, n_rejected, n_fills, n_order_updates, n_balances;
} Engine;

static void index_init(OrderIndex *x, uint32_t capacity) {
  uint32_t n = 16;
  while (n < capacity * 2) n *= 2;
  x->keys = xcalloc(n, sizeof(i64));
  x->values = xcalloc(n, sizeof(int32_t));
  x->mask = n - 1;
  x->size = 0;
}

static inline int32_t index_get(const OrderIndex *x, i64 id) {
  if (!(id > 0)) return NIL;
  uint32_t i = (uint32_t)(id & x->mask);
  for (;;) {
    i64 k = x->keys[i];
    if (k == id) return x->values[i];
    if (k == 0) return NIL;
    i = (i + 1) & x->mask;
  }
}

static void index_set(OrderIndex *x, i64 id, int32_t slot);

static void index_grow(OrderIndex *x) {
  i64 *old_keys = x->keys;
  int32_t *old_values = x->values;
  uint32_t old_n = x->mask + 1;
  uint32_t n = old_n * 2;
  x->keys = xcalloc(n, sizeof(i64));
  x->values = xcalloc(n, sizeof(int32_t));
  x->mask = n - 1;
  x->size = 0;
  for (uint32_t i = 0; i < old_n; i++) if (old_keys[i] != 0) index_set(x, old_keys[i], old_values[i]);
  free(old_keys);
  free(old_values);
}

static void index_set(OrderIndex *x, i64 id, int32_t slot) {
  if ((x->size + 1) * 2 > x->mask + 1) index_grow(x);
  uint32_t i = (uint32_t)(id & x->mask);
  while (x->keys[i] != 0 && x->keys[i] != id) i = (i + 1) & x->mask;
  if (x->keys[i] == 0) x->size++;
  x->keys[i] = id;
  x->values[i] = slot;
}

static void index_delete(OrderIndex *x, i64 id) {
  uint32_t mask = x->mask;
  uint32_t i = (uint32_t)(id & mask);
  for (;;) {
    i64 k = x->keys[i];
    if (k == 0) return;
    if (k == id) break;
    i = (i + 1) & mask;
  }
  uint32_t hole = i;
  uint32_t j = (i + 1) & mask;
  for (;;) {
    i64 k = x->keys[j];
    if (k == 0) break;
    uint32_t home = (uint32_t)(k & mask);
    int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!between) {
      x->keys[hole] = k;
      x->values[hole] = x->values[j];
      hole = j;
    }
    j = (j + 1) & mask;
  }
  x->keys[hole] = 0;
  x->size--;
}

static int32_t order_alloc(Engine *e, i64 id) {
  int32_t s;
  if (e->o_free_count > 0) {
    s = e->o_free[--e->o_free_count];
  } else {
    if (e->o_used_high == e->o_capacity) {
      if ((uint32_t)e->o_capacity >= e->flow->orders_open_max) return NIL;
      int32_t n = e->o_capacity * 2;
      if ((uint32_t)n > e->flow->orders_open_max) n = (int32_t)e->flow->orders_open_max;
      e->o = xrealloc(e->o, (size_t)n * sizeof(Order));
      e->o_free = xrealloc(e->o_free, (size_t)n * sizeof(int32_t));
      e->o_capacity = n;
    }
    s = e->o_used_high++;
  }
  e->o[s].id = id;
  index_set(&e->index, id, s);
  return s;
}

static void order_release(Engine *e, int32_t s) {
  index_delete(&e->index, e->o[s].id);
  e->o_free[e->o_free_count++] = s;
}

static int32_t level_alloc(Engine *e, i64 price) {
  int32_t l;
  if (e->lv_free_count > 0) {
    l = e->lv_free[--e->lv_free_count];
  } else {
    if (e->lv_used_high == e->lv_capacity) {
      int32_t n = e->lv_capacity * 2;
      e->lv = xrealloc(e->lv, (size_t)n * sizeof(Level));
      e->lv_free = xrealloc(e->lv_free, (size_t)n * sizeof(int32_t));
      e->lv_capacity = n;
    }
    l = e->lv_used_high++;
  }
  e->lv[l].price = price;
  e->lv[l].quantity = 0;
  e->lv[l].head = NIL;
  e->lv[l].tail = NIL;
  return l;
}

static inline int32_t side_best(const BookSide *b) { return b->count == 0 ? NIL : b->levels[b->count - 1]; }

static int32_t side_find(const BookSide *b, i64 price) {
  i64 k = b->is_bid ? price : -price;
  // As book.ts: scan down from the best a few levels, then binary search.
  int32_t hi = b->count - 1;
  const int32_t stop = hi - FIND_SCAN_LEVELS;
  for (; hi >= 0 && hi > stop; hi--) {
    i64 v = b->key[hi];
    if (v == k) return hi;
    if (v < k) return -(hi + 1) - 1;
  }
  int32_t lo = 0;
  while (lo <= hi) {
    int32_t mid = (int32_t)(((uint32_t)lo + (uint32_t)hi) >> 1);
    i64 v = b->key[mid];
    if (v < k) lo = mid + 1;
    else if (v > k) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

static void side_insert_at(BookSide *b, int32_t index, int32_t lvl, i64 price) {
  if (b->count == b->capacity) {
    b->capacity *= 2;
    b->levels = xrealloc(b->levels, (size_t)b->capacity * sizeof(int32_t));
    b->key = xrealloc(b->key, (size_t)b->capacity * sizeof(i64));
  }
  if (index < b->count) {
    memmove(b->levels + index + 1, b->levels + index, (size_t)(b->count - index) * sizeof(int32_t));
    memmove(b->key + index + 1, b->key + index, (size_t)(b->count - index) * sizeof(i64));
  }
  b->levels[index] = lvl;
  b->key[index] = b->is_bid ? price : -price;
  b->count++;
}

static void side_remove_at(BookSide *b, int32_t index) {
  if (index < b->count - 1) {
    memmove(b->levels + index, b->levels + index + 1, (size_t)(b->count - index - 1) * sizeof(int32_t));
    memmove(b->key + index, b->key + index + 1, (size_t)(b->count - index - 1) * sizeof(i64));
  }
  b->count--;
}

// ------------------------------------------------------------------------------ engine set-up

static Engine *engine_new(const Flow *f) {
  Engine *e = xcalloc(1, sizeof(Engine));
  e->flow = f;
  e->A = f->asset_count;
  e->M = f->market_count;
  e->maker_bps = f->maker_bps;
  e->taker_bps = f->taker_bps;
  e->next_order_id = 1;
  e->next_fill_id = 1;
  e->next_priority_seq = 1;
  size_t accounts = f->accounts_max;
  e->available = xcalloc(accounts * e->A, sizeof(i64));
  e->locked = xcalloc(accounts * e->A, sizeof(i64));
  e->nonce = xcalloc(accounts, sizeof(i64));
  e->open_orders = xcalloc(accounts, sizeof(int32_t));
  e->order_head = xcalloc(accounts, sizeof(int32_t));
  for (size_t a = 0; a < accounts; a++) e->order_head[a] = NIL;
  e->touch_stamp = xcalloc(accounts * e->A, sizeof(i64));
  e->touch_pos = xcalloc(accounts * e->A, sizeof(int32_t));
  e->account_high = 1;
  // Same starting sizes as the fast engine (engine_state.ts): 2^16 order slots, 1024 levels.
  int32_t n = f->orders_open_max < (1u << 16) ? (int32_t)f->orders_open_max : (1 << 16);
  e->o_capacity = n;
  e->o = xcalloc((size_t)n, sizeof(Order));
  e->o_free = xcalloc((size_t)n, sizeof(int32_t));
  index_init(&e->index, (uint32_t)n);
  e->lv_capacity = 1024;
  e->lv = xcalloc(1024, sizeof(Level));
  e->lv_free = xcalloc(1024, sizeof(int32_t));
  for (uint32_t m = 0; m < e->M; m++) {
    BookSide *sides[2] = {&e->bids[m], &e->asks[m]};
    for (int k = 0; k < 2; k++) {
      sides[k]->is_bid = k == 0;
      sides[k]->capacity = 64;
      sides[k]->levels = xcalloc(64, sizeof(int32_t));
      sides[k]->key = xcalloc(64, sizeof(i64));
    }
  }
  return e;
}

static void engine_free(Engine *e) {
  free(e->available);
  free(e->locked);
  free(e->nonce);
  free(e->open_orders);
  free(e->order_head);
  free(e->touch_stamp);
  free(e->touch_pos);
  free(e->o);
  free(e->o_free);
  free(e->index.keys);
  free(e->index.values);
  free(e->lv);
  free(e->lv_free);
  for (uint32_t m = 0; m < e->M; m++) {
    free(e->bids[m].levels);
    free(e->bids[m].key);
    free(e->asks[m].levels);
    free(e->asks[m].key);
  }
  free(e);
}

// ------------------------------------------------------------------------------ ledger

static inline void touch(Engine *e, int32_t account, int32_t asset, int reason) {
  int32_t key = account * (int32_t)e->A + asset;
  if (e->touch_stamp[key] == e->request_stamp) {
    int32_t p = e->touch_pos[key];
    if (REASON_RANK[reason] > REASON_RANK[e->t_reason[p]]) e->t_reason[p] = (uint8_t)reason;
    return;
  }
  if (e->t_count == 256) die("more than 256 balance pairs touched by one request");
  int32_t p = e->t_count++;
  e->touch_stamp[key] = e->request_stamp;
  e->touch_pos[key] = p;
  e->t_key[p] = key;
  e->t_before_available[p] = e->available[key];
  e->t_before_locked[p] = e->locked[key];
  e->t_reason[p] = (uint8_t)reason;
}

/** One balance event per changed pair, ascending by account then asset (ledger.ts flush). */
static void flush(Engine *e) {
  int32_t n = e->t_count;
  for (int32_t i = 0; i < n; i++) {
    int32_t j = i;
    int32_t k = e->t_key[i];
    while (j > 0 && e->t_key[e->t_order[j - 1]] > k) {
      e->t_order[j] = e->t_order[j - 1];
      j--;
    }
    e->t_order[j] = i;
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t p = e->t_order[i];
    int32_t key = e->t_key[p];
    if (e->available[key] == e->t_before_available[p] && e->locked[key] == e->t_before_locked[p]) continue;
    e->n_balances++;
  }
  e->t_count = 0;
}

static inline void move_to_locked(Engine *e, int32_t account, int32_t asset, i64 amount, int reason) {
  int32_t key = account * (int32_t)e->A + asset;
  touch(e, account, asset, reason);
  e->available[key] -= amount;
  e->locked[key] += amount;
}

static inline void release_lock(Engine *e, int32_t account, int32_t asset, i64 amount, int reason) {
  int32_t key = account * (int32_t)e->A + asset;
  touch(e, account, asset, reason);
  e->locked[key] -= amount;
  e->available[key] += amount;
}

static inline void ensure_account(Engine *e, int32_t account) {
  if ((uint32_t)account >= e->account_high) e->account_high = (uint32_t)account + 1;
}

// ------------------------------------------------------------------------------ book mechanics

static void link_level(Engine *e, int32_t s) {
  Order *o = &e->o[s];
  BookSide *side = o->side == BID ? &e->bids[o->market] : &e->asks[o->market];
  int32_t i = side_find(side, o->price);
  int32_t lvl;
  if (i >= 0) {
    lvl = side->levels[i];
  } else {
    lvl = level_alloc(e, o->price);
    side_insert_at(side, -i - 1, lvl, o->price);
  }
  Level *l = &e->lv[lvl];
  o->level = lvl;
  o->next = NIL;
  o->prev = l->tail;
  if (l->tail == NIL) l->head = s;
  else e->o[l->tail].next = s;
  l->tail = s;
  l->quantity += o->remaining;
}

static void unlink_level(Engine *e, int32_t s) {
  Order *o = &e->o[s];
  int32_t lvl = o->level;
  Level *l = &e->lv[lvl];
  if (o->prev == NIL) l->head = o->next;
  else e->o[o->prev].next = o->next;
  if (o->next == NIL) l->tail = o->prev;
  else e->o[o->next].prev = o->prev;
  l->quantity -= o->remaining;
  if (l->head == NIL) {
    BookSide *side = o->side == BID ? &e->bids[o->market] : &e->asks[o->market];
    int32_t i = side->count > 0 && side->levels[side->count - 1] == lvl ? side->count - 1 : side_find(side, l->price);
    if (i < 0 || side->levels[i] != lvl) die("a resting order does not belong to a level of its side");
    side_remove_at(side, i);
    e->lv_free[e->lv_free_count++] = lvl;
  }
}

static void forget(Engine *e, int32_t s) {
  Order *o = &e->o[s];
  int32_t account = o->account;
  if (o->acct_prev == NIL) e->order_head[account] = o->acct_next;
  else e->o[o->acct_prev].acct_next = o->acct_next;
  if (o->acct_next != NIL) e->o[o->acct_next].acct_prev = o->acct_prev;
  e->open_orders[account]--;
  order_release(e, s);
}

static void link_account(Engine *e, int32_t s, int32_t account) {
  Order *o = &e->o[s];
  int32_t head = e->order_head[account];
  o->account = account;
  o->acct_prev = NIL;
  o->acct_next = head;
  if (head != NIL) e->o[head].acct_prev = s;
  e->order_head[account] = s;
  e->open_orders[account]++;
}

static inline void remove_resting(Engine *e, int32_t s) {
  unlink_level(e, s);
  forget(e, s);
}

static void cancel_resting(Engine *e, int32_t s, int reason) {
  (void)reason;
  Order *o = &e->o[s];
  int32_t lock_asset = o->side == BID ? e->flow->quote[o->market] : e->flow->base[o->market];
  if (o->locked > 0) release_lock(e, o->account, lock_asset, o->locked, BR_ORDER_CANCELLED);
  e->n_order_updates++;
  remove_resting(e, s);
}

static inline void load_fees(Engine *e) {
  e->fee_maker_bps = e->maker_bps;
  e->fee_taker_bps = e->taker_bps;
}

static inline i64 bid_lock(Engine *e, i64 p, i64 q) {
  i64 n = notional_ceil(p, q);
  if (n == MONEY_OVERFLOW) return MONEY_OVERFLOW;
  i64 fee = fee_ceil(n, e->fee_taker_bps);
  if (fee == MONEY_OVERFLOW || n + fee > MAX_SAFE) return MONEY_OVERFLOW;
  return n + fee;
}

static inline int crosses(Engine *e, const BookSide *opposite, int side, i64 p) {
  int32_t best = side_best(opposite);
  if (best == NIL) return 0;
  i64 bp = e->lv[best].price;
  return side == BID ? p >= bp : p <= bp;
}

// What a FOK of `account` can fill: its own orders are never liquidity (expire_maker passes over them).
static i64 liquidity(Engine *e, const BookSide *book, int limited, int side, i64 limit, i64 enough, int32_t account) {
  i64 total = 0;
  for (int32_t i = book->count - 1; i >= 0 && total < enough; i--) {
    const Level *l = &e->lv[book->levels[i]];
    if (limited && (side == BID ? l->price > limit : l->price < limit)) break;
    for (int32_t s = l->head; s != NIL && total < enough; s = e->o[s].next) {
      if (e->o[s].account != account) total += e->o[s].remaining;
    }
  }
  return total;
}

static inline i64 market_bid_fill_cost(Engine *e, i64 price, i64 q) {
  i64 n = notional_ceil(price, q);
  return n + fee_ceil(n, e->fee_taker_bps);
}

static i64 market_bid_cost(Engine *e, const BookSide *book, i64 q, int32_t account) {
  i64 left = q;
  i64 cost = 0;
  for (int32_t i = book->count - 1; i >= 0 && left > 0; i--) {
    const Level *l = &e->lv[book->levels[i]];
    for (int32_t s = l->head; s != NIL && left > 0; s = e->o[s].next) {
      if (e->o[s].account == account) continue;
      i64 take = left < e->o[s].remaining ? left : e->o[s].remaining;
      cost += market_bid_fill_cost(e, l->price, take);
      left -= take;
    }
  }
  return cost;
}

static i64 affordable(Engine *e, i64 price, i64 q, i64 available, i64 lot) {
  if (market_bid_fill_cost(e, price, q) <= available) return q;
  i64 lo = 0;
  i64 hi = q / lot - 1;
  while (lo < hi) {
    i64 mid = lo + (hi - lo + 1) / 2;
    if (market_bid_fill_cost(e, price, mid * lot) <= available) lo = mid;
    else hi = mid - 1;
  }
  return lo * lot;
}

// ------------------------------------------------------------------------------ matching

static void fill(Engine *e, int32_t s, i64 price, i64 q) {
  const Flow *f = e->flow;
  Order *o = &e->o[s];
  const int32_t A = (int32_t)e->A;
  const int32_t m = e->tk_market;
  const int32_t base = f->base[m];
  const int32_t quote = f->quote[m];
  const int32_t taker = e->tk_account;
  const int32_t maker = o->account;
  const int taker_bid = e->tk_side == BID;
  const int32_t buyer = taker_bid ? taker : maker;
  const int32_t seller = taker_bid ? maker : taker;
  const i64 n_ceil = notional_ceil(price, q);
  const i64 n_floor = notional_floor(price, q);
  const i64 maker_rem_after = o->remaining - q;
  const i64 taker_rem_after = e->tk_remaining - q;
  const i64 tb = e->fee_taker_bps;
  const i64 mb = e->fee_maker_bps;

  i64 taker_fee;
  if (taker_bid) {
    taker_fee = fee_ceil(n_ceil, tb);
    if (e->tk_type == LIMIT) {
      i64 cap = e->tk_lock - n_ceil - notional_ceil(e->tk_limit, taker_rem_after);
      if (taker_fee > cap) taker_fee = cap;
    }
  } else {
    taker_fee = fee_ceil(n_floor, tb);
  }
  i64 maker_fee = 0;
  i64 rebate = 0;
  if (mb >= 0) {
    if (taker_bid) {
      maker_fee = fee_ceil(n_floor, mb);
    } else {
      maker_fee = fee_ceil(n_ceil, mb);
      i64 cap = o->locked - n_ceil - notional_ceil(o->price, maker_rem_after);
      if (maker_fee > cap) maker_fee = cap;
    }
  } else {
    rebate = fee_floor(taker_bid ? n_floor : n_ceil, -mb);
    if (rebate > taker_fee) rebate = taker_fee;
  }
  const i64 buyer_fee = taker_bid ? taker_fee : maker_fee;
  const i64 seller_fee = taker_bid ? maker_fee : taker_fee;
  const i64 buyer_rebate = taker_bid ? 0 : rebate;
  const i64 seller_rebate = taker_bid ? rebate : 0;

  touch(e, buyer, quote, BR_FILL);
  touch(e, buyer, base, BR_FILL);
  touch(e, seller, quote, BR_FILL);
  touch(e, seller, base, BR_FILL);
  touch(e, FEE_ACCOUNT, quote, BR_FILL);

  const i64 buyer_cost = n_ceil + buyer_fee;
  if (taker_bid) {
    if (e->tk_type == LIMIT) {
      e->tk_lock -= buyer_cost;
      e->locked[buyer * A + quote] -= buyer_cost;
    } else {
      e->available[buyer * A + quote] -= buyer_cost;
    }
  } else {
    o->locked -= buyer_cost;
    e->locked[buyer * A + quote] -= buyer_cost;
  }
  e->available[buyer * A + quote] += buyer_rebate;
  e->available[buyer * A + base] += q;
  if (taker_bid) o->locked -= q;
  else e->tk_lock -= q;
  e->locked[seller * A + base] -= q;
  e->available[seller * A + quote] += n_floor - seller_fee + seller_rebate;
  e->available[FEE_ACCOUNT * A + quote] += n_ceil - n_floor + taker_fee + maker_fee - rebate;

  e->next_fill_id++;
  e->n_fills++;
  e->mark[m] = price;
  e->tk_remaining = taker_rem_after;
  e->tk_filled += q;
  e->tk_last_price = price;

  o->remaining = maker_rem_after;
  o->filled += q;
  o->last_fill_price = price;
  e->lv[o->level].quantity -= q;
  e->n_order_updates++;
  if (maker_rem_after == 0) {
    i64 left = o->locked;
    if (left > 0) {
      int32_t lock_asset = o->side == BID ? quote : base;
      touch(e, maker, lock_asset, BR_FILL);
      e->locked[maker * A + lock_asset] -= left;
      e->available[maker * A + lock_asset] += left;
      o->locked = 0;
    }
    remove_resting(e, s);
  }
}

static void match_taker(Engine *e) {
  const int32_t m = e->tk_market;
  const int taker_bid = e->tk_side == BID;
  BookSide *book = taker_bid ? &e->asks[m] : &e->bids[m];
  const int is_market = e->tk_type == MARKET;
  const i64 limit = e->tk_limit;
  const int32_t quote_key = e->tk_account * (int32_t)e->A + e->flow->quote[m];
  const i64 lot = e->flow->lot[m];
  while (e->tk_remaining > 0 && book->count > 0) {
    int32_t lvl = book->levels[book->count - 1];
    i64 price = e->lv[lvl].price;
    if (!is_market && (taker_bid ? price > limit : price < limit)) return;
    int32_t s = e->lv[lvl].head;
    while (s != NIL && e->tk_remaining > 0) {
      int32_t next = e->o[s].next;
      if (e->o[s].account == e->tk_account) {
        // Self-trade prevention, expire_maker: the own resting order is cancelled.
        cancel_resting(e, s, UR_SELF_TRADE_PREVENTED);
        s = next;
        continue;
      }
      i64 q = e->tk_remaining < e->o[s].remaining ? e->tk_remaining : e->o[s].remaining;
      if (is_market && taker_bid) {
        q = affordable(e, price, q, e->available[quote_key], lot);
        if (q == 0) {
          e->tk_stop_reason = UR_INSUFFICIENT_BALANCE;
          return;
        }
      }
      fill(e, s, price, q);
      if (e->o[s].remaining > 0) continue;
      s = next;
    }
  }
}

static void rest(Engine *e) {
  int32_t s = e->tk_slot;
  if (s == NIL) {
    s = order_alloc(e, e->tk_order_id);
    if (s == NIL) die("capacity was checked before acceptance");
    e->o[s].market = e->tk_market;
    e->o[s].side = (uint8_t)e->tk_side;
    e->o[s].tif = (uint8_t)e->tk_tif;
    link_account(e, s, e->tk_account);
  }
  Order *o = &e->o[s];
  o->price = e->tk_limit;
  o->quantity = e->tk_quantity;
  o->filled = e->tk_filled;
  o->remaining = e->tk_remaining;
  o->locked = e->tk_lock;
  o->priority_seq = e->next_priority_seq++;
  o->last_fill_price = e->tk_last_price;
  link_level(e, s);
}

static void finish_taker(Engine *e, int may_rest) {
  int32_t lock_asset = e->tk_side == BID ? e->flow->quote[e->tk_market] : e->flow->base[e->tk_market];
  if (e->tk_remaining > 0 && may_rest) {
    rest(e);
    e->n_order_updates++;
    return;
  }
  if (e->tk_lock > 0) {
    release_lock(e, e->tk_account, lock_asset, e->tk_lock, e->tk_remaining > 0 ? BR_ORDER_CANCELLED : BR_FILL);
    e->tk_lock = 0;
  }
  if (e->tk_slot != NIL) {
    forget(e, e->tk_slot);
    e->tk_slot = NIL;
  }
  e->n_order_updates++;
}

// ------------------------------------------------------------------------------ requests

typedef struct {
  int32_t kind, account, market, side, order_type, tif, asset;
  i64 nonce, price, quantity, order_id;
} Request;

static inline void reject(Engine *e) { e->n_rejected++; }

static int check_signed(Engine *e, const Request *r) {
  if (r->account < 1 || (uint32_t)r->account >= e->flow->accounts_max) return RJ_ACCOUNT_UNKNOWN;
  ensure_account(e, r->account);
  if (!(r->nonce > e->nonce[r->account])) return RJ_NONCE;
  return 0;
}

static void place(Engine *e, const Request *r) {
  const Flow *f = e->flow;
  if (check_signed(e, r) != 0) return reject(e);
  const int32_t m = r->market;
  if (m < 0 || (uint32_t)m >= e->M) return reject(e);
  const int side = r->side, type = r->order_type, tif = r->tif;
  if (side != BID && side != ASK) return reject(e);
  if (type != LIMIT && type != MARKET) return reject(e);
  if (tif < GTC || tif > POST_ONLY) return reject(e);
  const i64 q = r->quantity;
  if (!(q > 0) || q % f->lot[m] != 0) return reject(e);
  load_fees(e);
  const i64 p = r->price;
  i64 lock = 0;
  if (type == LIMIT) {
    if (!(p > 0) || p % f->tick[m] != 0) return reject(e);
    lock = bid_lock(e, p, q);
    if (lock == MONEY_OVERFLOW) return reject(e);
  } else {
    if (tif != IOC && tif != FOK) return reject(e);
    if (p != 0) return reject(e);
  }
  const int32_t account = r->account;
  const int may_rest = type == LIMIT && (tif == GTC || tif == POST_ONLY);
  BookSide *own = side == BID ? &e->bids[m] : &e->asks[m];
  BookSide *opposite = side == BID ? &e->asks[m] : &e->bids[m];
  if (may_rest) {
    if ((uint32_t)e->open_orders[account] >= f->orders_open_per_account_max) return reject(e);
    if (e->index.size >= f->orders_open_max) return reject(e);
    if ((uint32_t)own->count >= f->price_levels_per_book_max && side_find(own, p) < 0) return reject(e);
  }
  if (tif == POST_ONLY && crosses(e, opposite, side, p)) return reject(e);
  const int32_t base = f->base[m], quote = f->quote[m];
  const int32_t A = (int32_t)e->A;
  if (side == ASK) {
    if (e->available[account * A + base] < q) return reject(e);
    lock = q;
  } else if (type == LIMIT) {
    if (e->available[account * A + quote] < lock) return reject(e);
  }
  int fok_unfilled = 0;
  if (tif == FOK) {
    if (liquidity(e, opposite, type == LIMIT, side, p, q, account) < q) {
      fok_unfilled = 1;
    } else if (side == BID && type == MARKET) {
      if (market_bid_cost(e, opposite, q, account) > e->available[account * A + quote]) return reject(e);
    }
  }

  e->nonce[account] = r->nonce;
  const i64 order_id = e->next_order_id++;
  e->n_accepted++;
  if (lock > 0) move_to_locked(e, account, side == BID ? quote : base, lock, BR_ORDER_PLACED);
  e->tk_account = account;
  e->tk_order_id = order_id;
  e->tk_market = m;
  e->tk_side = side;
  e->tk_type = type;
  e->tk_tif = tif;
  e->tk_limit = type == LIMIT ? p : 0;
  e->tk_quantity = q;
  e->tk_filled = 0;
  e->tk_remaining = q;
  e->tk_lock = lock;
  e->tk_last_price = 0;
  e->tk_stop_reason = UR_UNFILLED_REMAINDER;
  e->tk_slot = NIL;
  if (!fok_unfilled) match_taker(e);
  finish_taker(e, may_rest);
}

static int32_t own_open_order(Engine *e, int32_t account, i64 order_id) {
  if (order_id == 0) return NIL;
  int32_t s = index_get(&e->index, order_id);
  if (s == NIL || e->o[s].account != account) return NIL;
  return s;
}

static void amend(Engine *e, const Request *r) {
  const Flow *f = e->flow;
  if (check_signed(e, r) != 0) return reject(e);
  const int32_t account = r->account;
  const int32_t s = own_open_order(e, account, r->order_id);
  if (s == NIL) return reject(e);
  Order *o = &e->o[s];
  const int32_t m = o->market;
  const i64 q = r->quantity;
  if (!(q > 0) || q % f->lot[m] != 0) return reject(e);
  const i64 p = r->price;
  if (!(p > 0) || p % f->tick[m] != 0) return reject(e);
  load_fees(e);
  const i64 bl = bid_lock(e, p, q);
  if (bl == MONEY_OVERFLOW) return reject(e);
  const int side = o->side;
  BookSide *own = side == BID ? &e->bids[m] : &e->asks[m];
  BookSide *opposite = side == BID ? &e->asks[m] : &e->bids[m];
  const i64 old_price = o->price;
  const int alone = e->lv[o->level].head == s && e->lv[o->level].tail == s;
  if (p != old_price && !alone && (uint32_t)own->count >= f->price_levels_per_book_max && side_find(own, p) < 0) {
    return reject(e);
  }
  const int tif = o->tif;
  if (tif == POST_ONLY && crosses(e, opposite, side, p)) return reject(e);
  const int32_t lock_asset = side == BID ? f->quote[m] : f->base[m];
  const i64 new_lock = side == BID ? bl : q;
  const i64 old_lock = o->locked;
  const int32_t key = account * (int32_t)e->A + lock_asset;
  if (new_lock > e->available[key] + old_lock) return reject(e);
  const i64 old_remaining = o->remaining;

  e->nonce[account] = r->nonce;
  e->n_accepted++;
  const i64 filled = o->filled;
  if (p == old_price && q <= old_remaining) {
    touch(e, account, lock_asset, BR_ORDER_PLACED);
    e->available[key] -= new_lock - old_lock;
    e->locked[key] += new_lock - old_lock;
    o->locked = new_lock;
    const i64 dq = old_remaining - q;
    o->remaining = q;
    o->quantity = filled + q;
    e->lv[o->level].quantity -= dq;
    e->n_order_updates++;
    return;
  }
  touch(e, account, lock_asset, BR_ORDER_PLACED);
  e->available[key] += old_lock - new_lock;
  e->locked[key] += new_lock - old_lock;
  unlink_level(e, s);
  e->tk_account = account;
  e->tk_order_id = o->id;
  e->tk_market = m;
  e->tk_side = side;
  e->tk_type = LIMIT;
  e->tk_tif = tif;
  e->tk_limit = p;
  e->tk_quantity = filled + q;
  e->tk_filled = filled;
  e->tk_remaining = q;
  e->tk_lock = new_lock;
  e->tk_last_price = o->last_fill_price;
  e->tk_stop_reason = UR_UNFILLED_REMAINDER;
  e->tk_slot = s;
  match_taker(e);
  finish_taker(e, 1);
  e->tk_slot = NIL;
}

static void cancel(Engine *e, const Request *r) {
  if (check_signed(e, r) != 0) return reject(e);
  int32_t s = own_open_order(e, r->account, r->order_id);
  if (s == NIL) return reject(e);
  e->nonce[r->account] = r->nonce;
  e->n_accepted++;
  cancel_resting(e, s, UR_USER_CANCEL);
}

static void deposit(Engine *e, const Request *r) {
  const int32_t asset = r->asset;
  const i64 amount = r->quantity;
  if (asset < 0 || (uint32_t)asset >= e->A) return reject(e);
  if (!(amount > 0)) return reject(e);
  if (e->deposits[asset] + amount > MAX_SAFE) return reject(e);
  const int32_t account = r->account;
  if (account < 1 || (uint32_t)account >= e->flow->accounts_max) return reject(e);
  ensure_account(e, account);
  e->n_accepted++;
  touch(e, account, asset, BR_DEPOSIT);
  e->available[account * (int32_t)e->A + asset] += amount;
  e->deposits[asset] += amount;
}

static void apply(Engine *e, const Request *r) {
  e->request_stamp++;
  e->t_count = 0;
  switch (r->kind) {
    case K_PLACE: place(e, r); break;
    case K_AMEND: amend(e, r); break;
    case K_CANCEL: cancel(e, r); break;
    case K_DEPOSIT: deposit(e, r); break;
    default: die("the flow holds a request kind this reference does not implement");
  }
  flush(e);
}

static inline void load_request(Request *r, const Flow *f, uint32_t i) {
  r->kind = f->kind[i];
  r->account = f->account[i];
  r->nonce = (i64)f->nonce[i];
  r->market = f->market[i];
  r->side = f->side[i];
  r->order_type = f->order_type[i];
  r->tif = f->tif[i];
  r->price = (i64)f->price[i];
  r->quantity = (i64)f->quantity[i];
  r->asset = f->asset[i];
  r->order_id = (i64)f->order_id[i];
}

static void replay(Engine *e, const Flow *f, uint32_t from, uint32_t to) {
  Request r;
  for (uint32_t i = from; i < to; i++) {
    load_request(&r, f, i);
    apply(e, &r);
  }
}

// ------------------------------------------------------------------------------ sampling by kind

#define KINDS_MAX 32
/** Period of the kind sampler: ~20 µs asked (the kernel's timer slack makes it ~70-80 µs). */
#define SAMPLE_PERIOD_NS 20000

/** The measured row the replay is on (-1 outside a sampled replay), read by the sampler thread. */
static _Atomic int32_t sample_row = -1;
static _Atomic int sample_stop = 0;

typedef struct {
  const uint8_t *kinds; // one per measured row
  uint32_t setup_end, length;
  /** The replaying thread's CPU clock: each sample is weighted by the CPU time it used since the previous one. */
  clockid_t replay_clock;
  int64_t counts[KINDS_MAX];
  /** CPU ns of the replaying thread per kind: a sample taken while it was descheduled weighs ~0. */
  double cpu_ns[KINDS_MAX];
  int64_t outside;
} Sampler;

static double clock_ns(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void *sampler_main(void *arg) {
  Sampler *sm = (Sampler *)arg;
  const struct timespec period = {0, SAMPLE_PERIOD_NS};
  double last = clock_ns(sm->replay_clock);
  while (!atomic_load_explicit(&sample_stop, memory_order_relaxed)) {
    nanosleep(&period, NULL);
    int32_t row = atomic_load_explicit(&sample_row, memory_order_relaxed);
    double now = clock_ns(sm->replay_clock);
    if (row >= (int32_t)sm->setup_end && (uint32_t)row < sm->length) {
      sm->counts[sm->kinds[row - sm->setup_end]]++;
      sm->cpu_ns[sm->kinds[row - sm->setup_end]] += now - last;
    } else {
      sm->outside++;
    }
    last = now;
  }
  return NULL;
}

/** replay() with the row index published for the sampler: one relaxed store per row. */
static void replay_sampled(Engine *e, const Flow *f, uint32_t from, uint32_t to) {
  Request r;
  for (uint32_t i = from; i < to; i++) {
    atomic_store_explicit(&sample_row, (int32_t)i, memory_order_relaxed);
    load_request(&r, f, i);
    apply(e, &r);
  }
  atomic_store_explicit(&sample_row, -1, memory_order_relaxed);
}

// ------------------------------------------------------------------------------ canonical state

typedef struct {
  char *p;
  size_t n, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n) {
  if (b->n + n > b->cap) {
    while (b->n + n > b->cap) b->cap = b->cap == 0 ? 1 << 16 : b->cap * 2;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}
static void buf_str(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }
static void buf_i64(Buf *b, i64 v) {
  char t[32];
  int n = snprintf(t, sizeof t, "%lld", (long long)v);
  buf_put(b, t, (size_t)n);
}
/** A JSON string of plain ASCII (asset symbols, market ids): no escapes needed, checked. */
static void buf_json_ascii(Buf *b, const char *s) {
  for (const char *c = s; *c; c++) if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) die("symbol needs JSON escaping");
  buf_str(b, "\"");
  buf_str(b, s);
  buf_str(b, "\"");
}

static void side_json(Engine *e, Buf *b, const BookSide *side) {
  buf_str(b, "[");
  int first = 1;
  for (int32_t i = side->count - 1; i >= 0; i--) {
    for (int32_t s = e->lv[side->levels[i]].head; s != NIL; s = e->o[s].next) {
      const Order *o = &e->o[s];
      if (!first) buf_str(b, ",");
      first = 0;
      buf_str(b, "[");
      buf_i64(b, o->id); buf_str(b, ",");
      buf_i64(b, o->account); buf_str(b, ",");
      buf_i64(b, o->side); buf_str(b, ",");
      buf_i64(b, o->tif); buf_str(b, ",");
      buf_i64(b, o->price); buf_str(b, ",");
      buf_i64(b, o->quantity); buf_str(b, ",");
      buf_i64(b, o->filled); buf_str(b, ",");
      buf_i64(b, o->remaining); buf_str(b, ",");
      buf_i64(b, o->locked); buf_str(b, ",");
      buf_i64(b, o->priority_seq); buf_str(b, ",\"\",");
      buf_i64(b, o->last_fill_price);
      buf_str(b, "]");
    }
  }
  buf_str(b, "]");
}

/** src/engine/state.ts canonicalJson, for the state this reference can reach. */
static void canonical_json(Engine *e, Buf *b) {
  const Flow *f = e->flow;
  buf_str(b, "[");
  buf_i64(b, e->next_order_id); buf_str(b, ",");
  buf_i64(b, e->next_fill_id); buf_str(b, ",");
  buf_i64(b, e->next_priority_seq); buf_str(b, ",[");
  buf_i64(b, e->maker_bps); buf_str(b, ",");
  buf_i64(b, e->taker_bps); buf_str(b, "],[");
  for (uint32_t m = 0; m < e->M; m++) {
    if (m > 0) buf_str(b, ",");
    char id[40];
    snprintf(id, sizeof id, "%s-%s", f->asset_name[f->base[m]], f->asset_name[f->quote[m]]);
    buf_str(b, "[");
    buf_json_ascii(b, id); buf_str(b, ",");
    buf_i64(b, f->base[m]); buf_str(b, ",");
    buf_i64(b, f->quote[m]); buf_str(b, ",");
    buf_i64(b, f->tick[m]); buf_str(b, ",");
    buf_i64(b, f->lot[m]); buf_str(b, ",\"active\",null,");
    buf_i64(b, e->mark[m]); buf_str(b, ",");
    side_json(e, b, &e->bids[m]); buf_str(b, ",");
    side_json(e, b, &e->asks[m]);
    buf_str(b, "]");
  }
  buf_str(b, "],[");
  int first = 1;
  const uint32_t A = e->A;
  for (uint32_t acct = 0; acct < e->account_high; acct++) {
    int any = acct == FEE_ACCOUNT || e->nonce[acct] > 0;
    for (uint32_t k = 0; k < A; k++) if (e->available[acct * A + k] != 0 || e->locked[acct * A + k] != 0) any = 1;
    if (!any) continue;
    if (!first) buf_str(b, ",");
    first = 0;
    buf_str(b, "[");
    buf_i64(b, acct); buf_str(b, ",");
    buf_i64(b, e->nonce[acct]); buf_str(b, ",[");
    for (uint32_t k = 0; k < A; k++) {
      if (k > 0) buf_str(b, ",");
      buf_str(b, "[");
      buf_i64(b, e->available[acct * A + k]); buf_str(b, ",");
      buf_i64(b, e->locked[acct * A + k]);
      buf_str(b, "]");
    }
    buf_str(b, "]]");
  }
  buf_str(b, "],[");
  for (uint32_t k = 0; k < A; k++) {
    if (k > 0) buf_str(b, ",");
    buf_i64(b, e->deposits[k]);
  }
  buf_str(b, "],[");
  for (uint32_t k = 0; k < A; k++) {
    if (k > 0) buf_str(b, ",");
    buf_i64(b, e->withdrawals[k]);
  }
  // No credit, no pending withdrawal, and chain_deposit_high_water 0: bench flows deposit by admin.
  buf_str(b, "],[],[],0]");
}

// ------------------------------------------------------------------------------ keccak-256

static const uint64_t KECCAK_RC[24] = {
  0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
  0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
  0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
  0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
  0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
  0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};
static const int KECCAK_ROT[24] = {1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44};
static const int KECCAK_PI[24] = {10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1};

static inline uint64_t rotl64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

static void keccak_f1600(uint64_t st[25]) {
  uint64_t bc[5];
  for (int round = 0; round < 24; round++) {
    for (int i = 0; i < 5; i++) bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
    for (int i = 0; i < 5; i++) {
      uint64_t t = bc[(i + 4) % 5] ^ rotl64(bc[(i + 1) % 5], 1);
      for (int j = 0; j < 25; j += 5) st[j + i] ^= t;
    }
    uint64_t t = st[1];
    for (int i = 0; i < 24; i++) {
      int j = KECCAK_PI[i];
      uint64_t tmp = st[j];
      st[j] = rotl64(t, KECCAK_ROT[i]);
      t = tmp;
    }
    for (int j = 0; j < 25; j += 5) {
      for (int i = 0; i < 5; i++) bc[i] = st[j + i];
      for (int i = 0; i < 5; i++) st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
    }
    st[0] ^= KECCAK_RC[round];
  }
}

/** Keccak-256 (the original padding, 0x01, as @noble/hashes keccak_256 and Ethereum use). */
static void keccak256(const uint8_t *data, size_t n, uint8_t out[32]) {
  enum { RATE = 136 };
  uint64_t st[25] = {0};
  uint8_t block[RATE];
  while (n >= RATE) {
    for (int i = 0; i < RATE / 8; i++) {
      uint64_t lane;
      memcpy(&lane, data + 8 * i, 8);
      st[i] ^= lane;
    }
    keccak_f1600(st);
    data += RATE;
    n -= RATE;
  }
  memset(block, 0, RATE);
  memcpy(block, data, n);
  block[n] ^= 0x01;
  block[RATE - 1] ^= 0x80;
  for (int i = 0; i < RATE / 8; i++) {
    uint64_t lane;
    memcpy(&lane, block + 8 * i, 8);
    st[i] ^= lane;
  }
  keccak_f1600(st);
  memcpy(out, st, 32);
}

// ------------------------------------------------------------------------------ main

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

static double median_of(double *xs, int n) {
  qsort(xs, (size_t)n, sizeof(double), cmp_double);
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  const char *dump = NULL;
  const char *kinds_path = NULL;
  int repeats = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != 0 || v < 1 || v > REPEATS_MAX) die("--repeats must be an integer in [1, 99]");
      repeats = (int)v;
    } else if (strcmp(argv[i], "--dump-state") == 0 && i + 1 < argc) {
      dump = argv[++i];
    } else if (strcmp(argv[i], "--sample-kinds") == 0 && i + 1 < argc) {
      kinds_path = argv[++i];
    } else if (path == NULL && argv[i][0] != '-') {
      path = argv[i];
    } else {
      die("usage: matcher_book FLOW_FILE [--repeats N] [--dump-state PATH] [--sample-kinds CLASSES_PATH]");
    }
  }
  if (path == NULL) die("usage: matcher_book FLOW_FILE [--repeats N] [--dump-state PATH] [--sample-kinds CLASSES_PATH]");
  size_t size;
  uint8_t *image = read_file(path, &size);
  Flow flow;
  load_flow(&flow, image, size);
  const uint32_t ops = flow.length - flow.setup_end;
  Sampler sampler;
  memset(&sampler, 0, sizeof sampler);
  uint8_t *kinds_image = NULL;
  if (kinds_path != NULL) {
    size_t kinds_size;
    kinds_image = read_file(kinds_path, &kinds_size);
    if (kinds_size != ops) die("--sample-kinds: the file must hold one byte per measured row");
    for (uint32_t i = 0; i < ops; i++) if (kinds_image[i] >= KINDS_MAX) die("--sample-kinds: a kind out of range");
    sampler.kinds = kinds_image;
    sampler.setup_end = flow.setup_end;
    sampler.length = flow.length;
  }

  double rates[REPEATS_MAX];
  // Ops per CPU-second of this process too: on a shared machine less sensitive to other load.
  double cpu_rates[REPEATS_MAX];
  i64 counts[5] = {0};
  char digest[67] = {0};
  for (int rep = 0; rep < repeats; rep++) {
    Engine *e = engine_new(&flow);
    replay(e, &flow, 0, flow.setup_end);
    if (e->n_rejected != 0) die("the set-up had rejected requests");
    e->n_accepted = e->n_rejected = e->n_fills = e->n_order_updates = e->n_balances = 0;
    pthread_t sampler_thread;
    if (kinds_image != NULL) {
      atomic_store(&sample_stop, 0);
      if (pthread_getcpuclockid(pthread_self(), &sampler.replay_clock) != 0) die("no CPU clock for the replaying thread");
      if (pthread_create(&sampler_thread, NULL, sampler_main, &sampler) != 0) die("cannot start the sampler thread");
    }
    // This thread's CPU time: with the sampler on, the process's would count the sampler too.
    double t0 = clock_s(CLOCK_MONOTONIC);
    double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    if (kinds_image != NULL) replay_sampled(e, &flow, flow.setup_end, flow.length);
    else replay(e, &flow, flow.setup_end, flow.length);
    double dt = clock_s(CLOCK_MONOTONIC) - t0;
    double dc = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (kinds_image != NULL) {
      atomic_store(&sample_stop, 1);
      pthread_join(sampler_thread, NULL);
    }
    rates[rep] = ops / (dt > 0 ? dt : 1e-9);
    cpu_rates[rep] = ops / (dc > 0 ? dc : 1e-9);
    i64 c[5] = {e->n_accepted, e->n_rejected, e->n_fills, e->n_order_updates, e->n_balances};
    if (rep > 0 && memcmp(c, counts, sizeof c) != 0) die("two repeats gave different event counts");
    memcpy(counts, c, sizeof c);
    if (rep == repeats - 1) {
      Buf b = {0};
      canonical_json(e, &b);
      uint8_t h[32];
      keccak256((const uint8_t *)b.p, b.n, h);
      strcpy(digest, "0x");
      for (int i = 0; i < 32; i++) sprintf(digest + 2 + 2 * i, "%02x", h[i]);
      if (dump != NULL) {
        FILE *out = fopen(dump, "wb");
        if (out == NULL || fwrite(b.p, 1, b.n, out) != b.n || fclose(out) != 0) die("cannot write --dump-state");
      }
      free(b.p);
    }
    engine_free(e);
  }
  double best = 0;
  for (int i = 0; i < repeats; i++) if (rates[i] > best) best = rates[i];
  double median = median_of(rates, repeats);
  double cpu_median = median_of(cpu_rates, repeats);
  if (kinds_image != NULL) {
    // Printed ahead of the rest of the line: the same one JSON object.
    printf("{\"kind_samples\":[");
    for (int k = 0; k < KINDS_MAX; k++) printf("%s%lld", k > 0 ? "," : "", (long long)sampler.counts[k]);
    printf("],\"kind_cpu_ns\":[");
    for (int k = 0; k < KINDS_MAX; k++) printf("%s%.0f", k > 0 ? "," : "", sampler.cpu_ns[k]);
    printf("],\"samples_outside\":%lld,", (long long)sampler.outside);
    free(kinds_image);
  } else {
    printf("{");
  }
  printf("\"bench\":\"native_matcher_book\",\"ops\":%u,\"repeats\":%d,\"ops_per_s\":%.0f,\"ops_per_s_best\":%.0f,\"cpu_ops_per_s\":%.0f,"
         "\"accepted\":%lld,\"rejected\":%lld,\"fills\":%lld,\"order_updates\":%lld,\"balances\":%lld,\"digest\":\"%s\"}\n",
         ops, repeats, median, best, cpu_median, (long long)counts[0], (long long)counts[1], (long long)counts[2],
         (long long)counts[3], (long long)counts[4], digest);
  free(image);
  return 0;
}
