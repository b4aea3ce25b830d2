// The matcher's batch loop: drain the request ring in batches, apply each request to the engine,
// write its events to the event ring, and close the batch with a commit marker once the journal
// says it is durable. The sequencer part (batch number and time) lives here, outside the engine:
// the engine never reads a clock. Live batches and journal replay go through the same apply path.
import { performance } from 'node:perf_hooks';
import { signerChecked } from '../engine/agents.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { RECORD_WORDS as RECORD_WORDS_, viewsOfRecords, viewsOfRing, type RecordViews } from '../ring/records.js';
import { groupFollowingAt, REQUEST_GROUP_MAX, RequestReader } from '../ring/request_records.js';
import { EventWriter } from '../ring/event_writer.js';
import type { FastEngine } from '../engine/engine.js';
import { CONSENT_SLOTS_MAX } from '../ring/consent.js';
import { AccountRegistry } from './registry.js';
import { RequestKind, type Request } from '../engine/types.js';
import { WordsRequest } from '../engine/client_id.js';

// Module-local copies of imported constants used on the replay's hot path: an imported binding
// is a cell that optimized code loads and hole-checks at each use (src/ring/event_writer.ts).
const RECORD_WORDS = RECORD_WORDS_;

export interface MatcherOptions {
  batch_requests_max: number;
  accounts_max: number;
  /** The sequencer's clock (ms since epoch); injected so tests and replays control it. */
  now_ms: () => number;
  /**
   * Makes a batch's records durable (the journal) and returns once they are: the commit marker
   * (and so every answer of the batch) is published right after it, on this thread, with no turn
   * of an event loop in between. It throws only when the process cannot go on acknowledging.
   */
  commit?: (batch_id: number, time_ms: number, records: Int32Array, count: number) => void;
  /**
   * Runs after a batch's commit marker is published (its answers are on their way): the journal
   * stores what its write-ahead file holds into LMDB there, off the acknowledgement path
   * (src/journal/journal.ts `afterAck`). Not called for replayed batches.
   */
  afterCommitted?: () => void;
  /**
   * Stage timings (docs/benchmarks.md, load): BATCH_COMMITTED carries the batch's start, applied
   * and durable times in fields 3-5 (epoch ms, performance.timeOrigin + now()); 0 when off.
   */
  stamp_batches?: boolean;
}

// afterAdmin's kinds lie in PAUSE_MARKET..ADD_MARKET (applyBatch tests that range, not each kind).
for (const k of [RequestKind.PAUSE_MARKET, RequestKind.RESUME_MARKET, RequestKind.SET_FEES, RequestKind.SET_CREDIT, RequestKind.ADD_MARKET]) {
  if (k < RequestKind.PAUSE_MARKET || k > RequestKind.ADD_MARKET) throw new Error(`request kind ${k} outside the admin range`);
}

// What resolveAccount does per request kind besides resolving the account: one table load instead
// of a dozen kind compares per request. Built from the rules below at load; a kind outside the
// table resolves like an unknown kind (none of these).
const RESOLVE_NONE = 1; // admin kinds without an account: account 0
const RESOLVE_REFERRER = 2; // REFER: the second address is the referrer
const RESOLVE_FORCED = 4; // FORCE_INCLUDE: the same when the included request is a REFER
const RESOLVE_AGENT = 8; // APPROVE_AGENT, REVOKE_AGENT: the second address is the agent
const RESOLVE_SIGNER = 16; // the engine checks the signer: a non-zero signer address is looked up
const RESOLVE_KINDS = 256;
const RESOLVE: Uint8Array = (() => {
  const t = new Uint8Array(RESOLVE_KINDS);
  for (let k = 0; k < RESOLVE_KINDS; k++) {
    const none = k === RequestKind.PAUSE_MARKET || k === RequestKind.RESUME_MARKET || k === RequestKind.SET_FEES || k === RequestKind.ADD_MARKET;
    t[k] = (none ? RESOLVE_NONE : 0) | (k === RequestKind.REFER ? RESOLVE_REFERRER : 0) |
      (k === RequestKind.FORCE_INCLUDE ? RESOLVE_FORCED : 0) |
      (k === RequestKind.APPROVE_AGENT || k === RequestKind.REVOKE_AGENT ? RESOLVE_AGENT : 0) |
      (signerChecked(k) ? RESOLVE_SIGNER : 0);
  }
  return t;
})();

/**
 * Read once: `performance.timeOrigin` is a getter through Node's internals, and it never changes in
 * a thread's life. (`performance` itself is imported: the global one is a lazy getter called at
 * each use. The two getters were ~1.2% of the matcher thread's samples at 1,000 requests/s with
 * three stamps per batch, perf, issue 11.)
 */
const TIME_ORIGIN_MS = performance.timeOrigin;

function stampMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

export class Matcher {
  readonly engine: FastEngine;
  readonly registry: AccountRegistry;
  private readonly requests: SpscRing | null;
  private readonly reader: RequestReader;
  /** Reads the request ring's slots in place (to keep a request with its consent slots). */
  private readonly ring_reader: RequestReader | null;
  private readonly writer: EventWriter;
  private readonly options: MatcherOptions;
  /** Its client id as words from the record (client_id.ts): no string per request. */
  private readonly request: WordsRequest = new WordsRequest();
  private readonly batch_records: Int32Array;
  private readonly batch_views: RecordViews;
  /** Ids registered for the request being applied (kept only if it is accepted). */
  private readonly tentative: number[] = [];
  batch_id = 0;
  /**
   * The last batch's time (set only when a batch starts, is replayed or resumed): batch times
   * never go back, even if the clock does (or across restarts).
   */
  last_time_ms = 0;
  requests_applied = 0;

  constructor(engine: FastEngine, requests: SpscRing | null, events: SpscRing, options: MatcherOptions) {
    this.engine = engine;
    this.registry = new AccountRegistry(options.accounts_max);
    this.requests = requests;
    // A batch may run past batch_requests_max by the consent slots of its last request, or by the
    // rest of a group (POST /orders/batch) starting at its last slot, each request with its slots.
    this.batch_records = new Int32Array(
      (options.batch_requests_max + CONSENT_SLOTS_MAX + REQUEST_GROUP_MAX * (1 + CONSENT_SLOTS_MAX)) * RECORD_WORDS,
    );
    this.batch_views = viewsOfRecords(this.batch_records);
    this.reader = new RequestReader(this.batch_views);
    this.ring_reader = requests === null ? null : new RequestReader(viewsOfRing(requests));
    this.writer = new EventWriter(events);
    this.options = options;
  }

  /** Batch 0 (genesis): announces markets and fees so the front's read model starts complete. */
  genesis(): void {
    const w = this.writer;
    const time = this.clock();
    w.seq = 0;
    w.current = null;
    w.batchBegin(0, time);
    for (let m = 0; m < this.engine.marketCount(); m++) w.market(m, this.engine.marketInfo(m));
    w.fees(...this.engine.globalFees());
    this.writeCommitted(0, time, 0);
  }

  /**
   * Instead of genesis: continue after a snapshot at `batch_id` whose engine state this matcher's
   * engine was restored from (restoreFastEngine). Re-registers the snapshot's accounts (20 address
   * bytes per id, id 0 unused) so that ids stay what the journal's later batches expect. Writes no
   * events: the front and the DA thread restore their own state from the same snapshot.
   */
  resume(batch_id: number, addresses: Uint8Array, batch_time_ms: number): void {
    if (this.batch_id !== 0 || this.registry.size !== 1) throw new Error('resume needs a fresh matcher');
    this.last_time_ms = batch_time_ms;
    for (let at = 20; at + 20 <= addresses.length; at += 20) {
      const id = this.registry.register(addresses, at);
      if (id !== at / 20) throw new Error(`snapshot account ${at / 20} registered as ${id}`);
    }
    this.batch_id = batch_id;
  }

  /** The engine state and account addresses after the last applied batch (a snapshot's engine part). */
  captureState(): { canonical: ReturnType<FastEngine['canonicalState']>; addresses: Uint8Array } {
    const size = this.registry.size;
    const addresses = new Uint8Array(size * 20);
    for (let id = 1; id < size; id++) addresses.set(this.registry.addressBytes(id), id * 20);
    return { canonical: this.engine.canonicalState(), addresses };
  }

  /** Re-applies a journaled batch (already durable): same path as live, no commit hook. */
  replay(batch_id: number, time_ms: number, records: Int32Array, count: number): void {
    if (batch_id !== this.batch_id + 1) throw new Error(`replay of batch ${batch_id} after ${this.batch_id}`);
    this.batch_id = batch_id;
    this.last_time_ms = time_ms;
    this.reader.setViews(viewsOfRecords(records));
    this.applyBatch(batch_id, time_ms, count);
    this.reader.setViews(this.batch_views);
    this.writeCommitted(batch_id, time_ms, count);
  }

  /** Applies up to batch_requests_max available requests as one batch; returns how many. */
  runBatch(): number {
    const ring = this.requests;
    if (ring === null) return 0;
    const available = ring.available();
    if (available === 0) return 0;
    let n = available < this.options.batch_requests_max ? available : this.options.batch_requests_max;
    const reader = this.ring_reader as RequestReader;
    // A group (POST /orders/batch) is applied contiguously in one batch: never cut it. The group
    // count is on its requests (not on their consent slots); its records were published together.
    let last = n - 1;
    while (last > 0 && reader.isConsent(ring.slotOffset(last))) last--;
    let following = reader.isConsent(ring.slotOffset(last)) ? 0 : groupFollowingAt(ring.i32, ring.slotOffset(last));
    while (following > 0) {
      while (n < available && reader.isConsent(ring.slotOffset(n))) n++;
      if (n >= available) throw new Error('request ring: a group was published in part');
      n++;
      following--;
    }
    // Never cut a request from its consent slots (published with it, so they are available).
    while (n < available && reader.isConsent(ring.slotOffset(n))) n++;
    this.commitBatch(n);
    return n;
  }

  /**
   * With no requests waiting: starts an empty batch when a forced-inclusion entry or a dead-man
   * switch is due, so inbox deadlines hold and switches fire on an idle exchange too. Returns
   * whether it did. `now_ms`: the sequencer's clock read once for the caller's idle turn.
   */
  runDueBatch(now_ms = this.options.now_ms()): boolean {
    if (this.engine.nextDueMs() > now_ms) return false;
    this.commitBatch(0);
    return true;
  }

  /**
   * Starts an empty batch now (the front asked for one: a forced entry it refused outright must
   * be counted with the roots of a batch after it, src/gateway/chain_link.ts).
   */
  runEmptyBatch(): void {
    this.commitBatch(0);
  }

  /** How long the matcher may sleep before an inbox entry or a dead-man switch falls due (ms; capped by `max_ms`). */
  idleMs(max_ms: number, now_ms = this.options.now_ms()): number {
    const due = this.engine.nextDueMs() - now_ms;
    return due < max_ms ? Math.max(0, due) : max_ms;
  }

  /** The time of a batch starting now: the sequencer's clock, never below the last batch's. */
  private clock(): number {
    const now = this.options.now_ms();
    if (now > this.last_time_ms) this.last_time_ms = now;
    return this.last_time_ms;
  }

  /** Applies the first `n` records of the ring (0: an empty batch) as the next batch and journals it. */
  private commitBatch(n: number): void {
    const ring = this.requests;
    if (ring === null) return;
    // Copy the batch out of the ring and free the slots at once: the front can refill them while
    // this batch is applied and journaled.
    const stamp = this.options.stamp_batches === true;
    const started_ms = stamp ? stampMs() : 0;
    for (let i = 0; i < n; i++) {
      const o = ring.slotOffset(i);
      this.batch_records.set(ring.i32.subarray(o, o + RECORD_WORDS), i * RECORD_WORDS);
    }
    if (n > 0) ring.release(n);
    const batch_id = ++this.batch_id;
    const time = this.clock();
    this.applyBatch(batch_id, time, n);
    const applied_ms = stamp ? stampMs() : 0;
    const commit = this.options.commit;
    if (commit !== undefined) commit(batch_id, time, this.batch_records, n);
    this.writeCommitted(batch_id, time, n, started_ms, applied_ms, commit !== undefined && stamp ? stampMs() : applied_ms);
    this.options.afterCommitted?.();
  }

  private applyBatch(batch_id: number, time_ms: number, count: number): void {
    const w = this.writer;
    const r = this.request;
    // In locals: fields of `this` are loaded (and their maps checked) again after every call.
    const reader = this.reader;
    const engine = this.engine;
    const tentative = this.tentative;
    w.seq = 0;
    w.current = null;
    w.batchBegin(batch_id, time_ms);
    // Forced inclusions that are due go first, before any request of the batch.
    engine.beginBatch(time_ms, w);
    w.current = null;
    for (let i = 0; i < count; i++) {
      const o = i * RECORD_WORDS;
      if (reader.isConsent(o)) continue; // who asked: for the journal and the verifier
      const seq = reader.read(o, r);
      w.seq = seq;
      w.current = r;
      r.account = this.resolveAccount(r.kind, o);
      engine.apply(r, w);
      if (tentative.length !== 0) this.releaseTentative();
      // Only the admin kinds (PAUSE_MARKET..ADD_MARKET) announce state after them: the range test
      // here spares the ~1,000,000 orders of a journal replay a call each (~30 instructions).
      if (w.last_accepted && r.kind >= RequestKind.PAUSE_MARKET && r.kind <= RequestKind.ADD_MARKET) this.afterAdmin(r);
    }
    w.seq = 0;
    w.current = null;
    // Quiet: the front wakes once per batch, at its commit marker (writeCommitted), not twice.
    w.flush(true);
    this.requests_applied += count;
  }

  private writeCommitted(batch_id: number, time_ms: number, count: number, started_ms = 0, applied_ms = 0, durable_ms = 0): void {
    const w = this.writer;
    w.seq = 0;
    w.current = null;
    w.batchCommitted(batch_id, time_ms, count, started_ms, applied_ms, durable_ms);
    w.flush();
  }

  /**
   * Address -> account id. Every well-formed address is an account (DECISIONS, "Accounts and
   * money"): an unknown signer (or a referrer it names) gets the next id tentatively, and keeps it
   * only if the engine accepts the request (its ACCOUNT event then follows the ACCEPTED); a refused
   * request hands the id back (`releaseTentative`). So an address is stored from its first accepted
   * request on and never forgotten (its nonce high-water mark never goes back), while any number
   * of refused requests from fresh wallets store nothing (docs/engine.md, "Accounts").
   * With the registry full, the id is accounts_max, which the engine refuses.
   */
  private resolveAccount(kind: number, o: number): number {
    const flags = kind >= 0 && kind < RESOLVE_KINDS ? RESOLVE[kind] : 0;
    if ((flags & RESOLVE_NONE) !== 0) return 0;
    const bytes = this.reader.u8;
    if ((flags & RESOLVE_REFERRER) !== 0 || ((flags & RESOLVE_FORCED) !== 0 && this.request.inner_kind === RequestKind.REFER)) {
      this.request.referrer_account = this.findOrRegister(bytes, this.reader.referrerByteOffset(o), -1);
    } else if ((flags & RESOLVE_AGENT) !== 0) {
      // The agent is an address like any other: an approval registers it (kept only if accepted).
      this.request.agent_account = this.findOrRegister(bytes, this.reader.referrerByteOffset(o), -1);
    }
    // An agent's signature: an approved agent is registered (its approval registered it), so an
    // unknown signer is no agent of anyone; accounts_max is never an agent (the engine refuses).
    const signer_at = (flags & RESOLVE_SIGNER) !== 0 ? this.reader.signerByteOffset(o) : -1;
    if (signer_at >= 0) {
      const id = this.registry.find(bytes, signer_at, -1);
      this.request.signer = id >= 0 ? id : this.options.accounts_max;
    }
    return this.findOrRegister(bytes, this.reader.addressByteOffset(o), this.reader.accountHint(o));
  }

  /** `bytes` is the reader's `u8` (the hint is checked against its words). */
  private findOrRegister(bytes: Uint8Array, at: number, hint: number): number {
    const id = this.registry.findInRecord(this.reader.i32, bytes, at, hint);
    if (id >= 0) return id;
    const fresh = this.registry.register(bytes, at);
    if (fresh < 0) return this.options.accounts_max;
    this.tentative.push(fresh);
    this.writer.announceOnAccept(fresh, bytes, at);
    return fresh;
  }

  /** After a request: a refused one gives its tentative ids back, newest first. */
  private releaseTentative(): void {
    const t = this.tentative;
    if (t.length === 0) return;
    if (this.writer.dropUnannounced() > 0) {
      for (let i = t.length - 1; i >= 0; i--) this.registry.unregisterLast(t[i]);
    }
    t.length = 0;
  }

  /** After an admin request, tells the front the market/fee/credit state it changed. */
  private afterAdmin(r: Request): void {
    const w = this.writer;
    switch (r.kind) {
      case RequestKind.PAUSE_MARKET:
      case RequestKind.RESUME_MARKET:
      case RequestKind.SET_FEES:
      case RequestKind.ADD_MARKET: {
        const count = this.engine.marketCount();
        if (r.kind === RequestKind.SET_FEES && r.market < 0) {
          w.fees(...this.engine.globalFees());
          for (let m = 0; m < count; m++) w.market(m, this.engine.marketInfo(m));
        } else if (r.kind === RequestKind.ADD_MARKET) {
          w.market(count - 1, this.engine.marketInfo(count - 1));
        } else if (r.market >= 0 && r.market < count) {
          w.market(r.market, this.engine.marketInfo(r.market));
        }
        break;
      }
      case RequestKind.SET_CREDIT:
        w.credit(r.account, r.credit_limit_units, r.auto_cancel_ratio_ppm);
        break;
      default:
        break;
    }
  }
}
