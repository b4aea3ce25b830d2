// The matcher's batch loop: drain the request ring in batches, apply each request to the engine,
// write its events to the event ring, and close the batch with a commit marker. The sequencer
// part (batch number and time) lives here, outside the engine: the engine never reads a clock.
import type { SpscRing } from '../ring/spsc_ring.js';
import { EventReader, EventType, EventWriter, RequestReader } from '../ring/records.js';
import type { FastEngine } from './engine.js';
import { AccountRegistry } from './registry.js';
import { emptyRequest, RequestKind, type Request } from './types.js';

export interface MatcherOptions {
  batch_requests_max: number;
  accounts_max: number;
  /** The sequencer's clock (ms since epoch); injected so tests and replays control it. */
  now_ms: () => number;
  /**
   * Called with the batch's raw request records before its commit marker is published. The
   * journal makes them durable here; until then it is a no-op. Answers wait for the marker.
   */
  commit?: (batch_id: number, time_ms: number, records: Int32Array, count: number) => void;
}

export class Matcher {
  readonly engine: FastEngine;
  readonly registry: AccountRegistry;
  private readonly requests: SpscRing;
  private readonly reader: RequestReader;
  private readonly writer: EventWriter;
  private readonly options: MatcherOptions;
  private readonly request: Request = emptyRequest();
  private readonly batch_records: Int32Array;
  batch_id = 0;
  requests_applied = 0;

  constructor(engine: FastEngine, requests: SpscRing, events: SpscRing, options: MatcherOptions) {
    this.engine = engine;
    this.registry = new AccountRegistry(options.accounts_max);
    this.requests = requests;
    this.reader = new RequestReader(requests);
    this.writer = new EventWriter(events);
    this.options = options;
    this.batch_records = new Int32Array(options.batch_requests_max * requests.slot_words);
  }

  /** Batch 0 (genesis): announces markets and fees so the front's read model starts complete. */
  genesis(): void {
    const w = this.writer;
    const time = this.options.now_ms();
    w.seq = 0;
    w.current = null;
    w.numbers(EventType.BATCH_BEGIN, [0, time]);
    for (let m = 0; m < this.engine.marketCount(); m++) w.numbers(EventType.MARKET, [m, ...this.engine.marketInfo(m)]);
    w.numbers(EventType.FEES, this.engine.globalFees());
    w.numbers(EventType.BATCH_COMMITTED, [0, time, 0]);
    w.flush();
  }

  /** Applies up to batch_requests_max available requests as one batch; returns how many. */
  runBatch(): number {
    const available = this.requests.available();
    if (available === 0) return 0;
    const n = available < this.options.batch_requests_max ? available : this.options.batch_requests_max;
    const batch_id = ++this.batch_id;
    const time = this.options.now_ms();
    const w = this.writer;
    const r = this.request;
    w.seq = 0;
    w.current = null;
    w.numbers(EventType.BATCH_BEGIN, [batch_id, time]);
    const words = this.requests.slot_words;
    for (let i = 0; i < n; i++) {
      const o = this.requests.slotOffset(i);
      this.reader.copyRecord(o, this.batch_records, i * words);
      const seq = this.reader.read(o, r);
      w.seq = seq;
      w.current = r;
      r.account = this.resolveAccount(r.kind, o);
      this.engine.apply(r, w);
      this.afterAdmin(r);
    }
    this.requests.release(n);
    this.requests_applied += n;
    if (this.options.commit) this.options.commit(batch_id, time, this.batch_records, n);
    w.seq = 0;
    w.current = null;
    w.numbers(EventType.BATCH_COMMITTED, [batch_id, time, n]);
    w.flush();
    return n;
  }

  /**
   * Address -> account id. An address becomes an account with its first deposit (or credit
   * setting); any other request from an unknown address gets an id the engine refuses
   * (ACCOUNT_UNKNOWN), so hostile traffic cannot fill the registry.
   */
  private resolveAccount(kind: number, o: number): number {
    if (kind === RequestKind.PAUSE_MARKET || kind === RequestKind.RESUME_MARKET ||
      kind === RequestKind.SET_FEES || kind === RequestKind.ADD_MARKET) return 0;
    const bytes = this.reader.u8;
    const at = this.reader.addressByteOffset(o);
    let id = this.registry.find(bytes, at, this.reader.accountHint(o));
    if (id >= 0) return id;
    if (kind !== RequestKind.DEPOSIT && kind !== RequestKind.SET_CREDIT) return this.options.accounts_max;
    id = this.registry.register(bytes, at);
    if (id < 0) return this.options.accounts_max;
    this.writer.account(id, bytes, at);
    return id;
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
          w.numbers(EventType.FEES, this.engine.globalFees());
          for (let m = 0; m < count; m++) w.numbers(EventType.MARKET, [m, ...this.engine.marketInfo(m)]);
        } else if (r.kind === RequestKind.ADD_MARKET) {
          w.numbers(EventType.MARKET, [count - 1, ...this.engine.marketInfo(count - 1)]);
        } else if (r.market >= 0 && r.market < count) {
          w.numbers(EventType.MARKET, [r.market, ...this.engine.marketInfo(r.market)]);
        }
        break;
      }
      case RequestKind.SET_CREDIT:
        w.numbers(EventType.CREDIT, [r.account, r.credit_limit_units, r.auto_cancel_ratio_ppm]);
        break;
      default:
        break;
    }
  }
}

export { EventReader };
