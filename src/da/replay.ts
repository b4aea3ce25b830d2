// Re-execution of journaled or published batches with the real engine, in one thread: a Matcher
// over an in-process event ring that drains itself into a StateRootBuilder. Used by the verifier
// and the recovery bench.
//
// The event ring drains itself: when the matcher's EventWriter finds it full it flushes and waits
// for space, and that wait (replaced on this ring instance) drains every published event into
// the builder instead of sleeping. So a single request with a huge event burst (a pause that
// cancels 100,000 orders) needs no ring sized for it and cannot deadlock the lone thread.
import type { EngineConfig } from '../engine/api.js';
import type { CanonicalState } from '../engine/api.js';
import { FastEngine, restoreFastEngine } from '../engine/engine.js';
import { addressesHex } from '../matcher/engine_snapshot.js';
import { leavesFromCanonical } from './canonical_leaves.js';
import { Matcher } from '../matcher/matcher.js';
import { createRecordRing, RECORD_WORDS, viewsOfRing, type RecordViews } from '../ring/records.js';
import { BatchField, EV_TYPE_WORD as EV_TYPE_WORD_, EventCursor, EventReader, EventType, type EventFields } from '../ring/event_records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { StateRootBuilder, type BatchRoots } from './state_root.js';

// Module-local copies of imported constants used on the replay's hot path: an imported binding
// is a cell that optimized code loads and hole-checks at each use (src/ring/event_writer.ts).
const EV_TYPE_WORD = EV_TYPE_WORD_;
const BATCH_COMMITTED = EventType.BATCH_COMMITTED;

export interface ReplayOptions {
  /** Event ring slots (power of two); only a buffer, any size works. Default 8192. */
  event_ring_slots?: number;
  /** Extra consumer of every event (after the builder), e.g. counters in benches. */
  onEvent?: (e: EventFields) => void;
  /** Extra consumer of every raw event record (the cluster matcher publishes them), before the builder. */
  onRecord?: (views: RecordViews, o: number) => void;
  /**
   * Feed the StateRootBuilder: true (default) closes every batch with its root; 'deferred' only
   * applies events (skipBatch) until `finishDeferred()` computes one root (the publisher's
   * restart path); false measures bare replay.
   */
  state_root?: boolean | 'deferred';
  /**
   * Start from a snapshot at `batch_id` instead of genesis (do not call `genesis()`): engine and
   * account registry restored, state leaves built from the canonical state.
   */
  restore?: { batch_id: number; canonical: CanonicalState; addresses: Uint8Array; zero_balance_leaves: [number, number][] };
}

export class ReplayExecutor {
  readonly builder: StateRootBuilder;
  readonly matcher: Matcher;
  readonly engine: FastEngine;
  private readonly ring: SpscRing;
  private readonly fields: EventCursor;
  private readonly on_event: ((e: EventFields) => void) | undefined;
  private readonly on_record: ((views: RecordViews, o: number) => void) | undefined;
  private readonly ring_views: RecordViews;
  private readonly roots: boolean;
  private readonly deferred: boolean;
  private finished: BatchRoots[] = [];
  events = 0;
  /** Time spent in the state root builder (wall ms, and CPU ms of the process). */
  root_ms = 0;
  root_cpu_ms = 0;

  constructor(engine_config: EngineConfig, options: ReplayOptions = {}) {
    const r = options.restore;
    this.engine = r === undefined ? new FastEngine(engine_config) : restoreFastEngine(engine_config, r.canonical);
    this.ring = createRecordRing(options.event_ring_slots ?? 8192);
    const ring = this.ring;
    ring.waitForSpace = (): number => {
      this.drain();
      return ring.freeSlots();
    };
    this.fields = new EventCursor(new EventReader(viewsOfRing(ring)));
    this.on_event = options.onEvent;
    this.on_record = options.onRecord;
    this.ring_views = viewsOfRing(ring);
    this.roots = options.state_root !== false;
    this.deferred = options.state_root === 'deferred';
    this.builder = new StateRootBuilder(engine_config.assets);
    this.matcher = new Matcher(this.engine, null, ring, {
      batch_requests_max: 1,
      accounts_max: engine_config.limits.accounts_max,
      now_ms: () => 0,
    });
    if (r !== undefined) {
      this.matcher.resume(r.batch_id, r.addresses, r.canonical.batch_time_ms);
      this.builder.restore(leavesFromCanonical({
        canonical: r.canonical, addresses: addressesHex(r.addresses), zero_balance_leaves: r.zero_balance_leaves, assets: engine_config.assets,
      }), r.batch_id);
    }
  }

  private drain(): void {
    const ring = this.ring;
    const n = ring.available();
    if (n === 0) return;
    if (!this.roots && this.on_record === undefined && this.on_event === undefined) {
      this.drainBare(n);
      return;
    }
    const f = this.fields;
    const t0 = this.roots ? performance.now() : 0;
    const c0 = this.roots ? process.cpuUsage() : null;
    for (let i = 0; i < n; i++) {
      f.o = ring.slotOffset(i);
      if (this.on_record) this.on_record(this.ring_views, f.o);
      const committed = f.type() === EventType.BATCH_COMMITTED;
      if (this.roots) this.builder.apply(f);
      if (committed) {
        if (this.roots && !this.deferred) {
          this.finished.push(this.builder.endBatch());
        } else {
          if (this.deferred) this.builder.skipBatch();
          this.finished.push(withoutRoot(f.field(BatchField.BATCH_ID)));
        }
      }
      if (this.on_event) this.on_event(f);
    }
    if (c0 !== null) this.account(t0, c0);
    this.events += n;
    ring.release(n);
  }

  /**
   * Bare replay (no state root, no consumer: the recovery bench's timed replay): only the commit
   * markers matter, so each record's type word is read straight from the ring. The general loop
   * above cost ~125 instructions an event (cursor, three option checks per event; ~8% of the
   * bench's replay, 5.3 events a request: docs/benchmarks.md, h16r) for what the server's matcher
   * never does (there the front drains the ring on its own thread).
   *
   * The available records lie in at most two runs of consecutive slots (before and after the
   * ring's end), each walked in plain strides of `slot_words`. Asking the ring for each next slot
   * (`slotAfter`, now removed) still cost ~56 instructions an event: the ring's fields and the wrap
   * test were reloaded around a loop that may call out (-180 a request; docs/benchmarks.md, h17r).
   */
  private drainBare(n: number): void {
    const ring = this.ring;
    const i32 = ring.i32;
    const step = ring.slot_words;
    // Locals: inside a loop that may call out, optimized code was seen reloading these module
    // constants from their context slots (with a hole check) at every record.
    const type_word = EV_TYPE_WORD;
    const committed = BATCH_COMMITTED;
    for (let i = 0; i < n;) {
      let o = ring.slotOffset(i);
      const before_end = ring.slotsBeforeEnd(o);
      const run = n - i < before_end ? n - i : before_end;
      const end = o + run * step;
      for (; o < end; o += step) {
        if (i32[o + type_word] === committed) this.committedBare(o);
      }
      i += run;
    }
    this.events += n;
    ring.release(n);
  }

  /** A commit marker met by the bare drain: the batch closed without a root. */
  private committedBare(o: number): void {
    this.fields.o = o;
    this.finished.push(withoutRoot(this.fields.field(BatchField.BATCH_ID)));
  }

  private account(t0: number, c0: NodeJS.CpuUsage): void {
    this.root_ms += performance.now() - t0;
    const c = process.cpuUsage(c0);
    this.root_cpu_ms += (c.user + c.system) / 1000;
  }

  /** Deferred mode: the root of everything applied so far (one rehash of what changed). */
  finishDeferred(): BatchRoots {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const r = this.builder.endBatch();
    this.account(t0, c0);
    return r;
  }

  private take(batch_id: number): BatchRoots {
    this.drain();
    const done = this.finished;
    this.finished = [];
    if (done.length !== 1 || done[0].batch_id !== batch_id) {
      throw new Error(`replay: expected the commit of batch ${batch_id}, got ${done.map((d) => d.batch_id).join(',') || 'none'}`);
    }
    return done[0];
  }

  /** Batch 0: the markets and fees of the config. */
  genesis(): BatchRoots {
    this.matcher.genesis();
    return this.take(0);
  }

  /** Applies one batch of request records (8-byte aligned: `recordsOfBytes` makes a copy that is). */
  apply(batch_id: number, time_ms: number, records: Int32Array, count: number): BatchRoots {
    this.matcher.replay(batch_id, time_ms, records, count);
    return this.take(batch_id);
  }
}

/** A batch closed without a state root (bare or deferred replay). */
function withoutRoot(batch_id: number): BatchRoots {
  return { batch_id, state_root: '', fills: [], fills_root: '', leaves_changed: 0, state_diff: [], state_diff_bytes: new Uint8Array(0) };
}

/** Request records from raw bytes (a fresh, aligned copy); throws unless whole records. */
export function recordsOfBytes(bytes: Uint8Array): { records: Int32Array; count: number } {
  const record_bytes = RECORD_WORDS * 4;
  if (bytes.length % record_bytes !== 0) throw new Error(`inputs are ${bytes.length} bytes, not a whole number of ${record_bytes}-byte records`);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return { records: new Int32Array(copy.buffer), count: bytes.length / record_bytes };
}
