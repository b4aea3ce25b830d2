// The committed events as the front thread posts them to the DA worker (src/da/da_thread.ts): per
// event its type and the numeric fields the state root reads, in one Float64Array per message,
// with the few strings the root reads on the side (ACCOUNT addresses; the client order id of a
// FORCE_INCLUDE or PLACE acceptance, which the inbox entry and order terms leaves commit to). `PackedFields` reads them back
// as EventFields for the worker's StateRootBuilder; test/da/event_packing.test.ts checks that the
// builder gives the same roots through the packing as over the events themselves.
import { RequestKind } from '../engine/types.js';
import {
  AcceptedField, AccountField, BalanceField, BatchField, CreditField, EVENT_FIELDS_MAX, EventType, FeesField, type EventFields,
} from '../ring/event_records.js';

/** Doubles per packed event: type, then the record's fields. */
export const PACKED_STRIDE = 1 + EVENT_FIELDS_MAX;
/** Packed index of the type; field k is at 1 + k. */
const PACKED_TYPE = 0;
const PACKED_FIELD0 = 1;

/** Fields the state root reads, per event type (the rest are not copied). */
function fieldCount(type: number): number {
  switch (type) {
    case EventType.BALANCE: return BalanceField.LOCKED_UNITS + 1;
    case EventType.BATCH_BEGIN:
    case EventType.BATCH_COMMITTED: return BatchField.REQUEST_COUNT + 1;
    case EventType.FEES: return FeesField.TAKER_FEE_BPS + 1;
    case EventType.CREDIT: return CreditField.AUTO_CANCEL_RATIO_PPM + 1;
    case EventType.ACCOUNT: return AccountField.ACCOUNT + 1;
    default: return EVENT_FIELDS_MAX;
  }
}

export interface PackedEvents {
  type: 'events';
  /**
   * The events, transferred to the worker (a fresh copy: only when the shared ring had no room),
   * or null: they are in the shared ring (PackedRing) from double `ring_at_double` on.
   */
  events: Float64Array<ArrayBuffer> | null;
  /** Index in the ring's doubles (PackedRing.events, not bytes) where the events start; -1 when transferred. */
  ring_at_double: number;
  /**
   * The message's number in the ring (the worker acknowledges it once read): Int32, wrapping (the
   * packer compares differences), so any value, -1 included, is a real number after 2^32 - 1
   * messages. Set to -1 when transferred, but meaningless then: `events` non-null is what says
   * transferred, and only a ring message is acknowledged.
   */
  ring_seq: number;
  count: number;
  /** [event index, address hex] of ACCOUNT events. */
  addresses: [number, string][];
  /** [event index, client order id] of FORCE_INCLUDE and PLACE ACCEPTED events that have one; an AGENT event's name. */
  client_ids: [number, string][];
}

/**
 * Doubles in the ring the front packs the DA worker's events into (4 MiB: ~37,000 events, ~9,000
 * requests at ~4 events each; one 5 ms message at max rate is ~50 KB). Why a shared ring and not
 * a fresh Float64Array transferred per message: every ArrayBuffer an isolate receives counts as
 * external memory allocated since its last full GC, which V8 adds to the old generation's size
 * when it decides to start marking, and the DA worker's old generation is small (~10 MB), so the
 * per-message buffers (~170 bytes per request) were one of the things that started its full
 * mark-compacts (docs/benchmarks.md, "Issue 11, the DA worker's full GCs"). A message that does
 * not fit (the worker far behind, a replay's burst) goes the old way, transferred.
 */
export const PACKED_RING_DOUBLES = 1 << 19;

/**
 * The shared ring: one SharedArrayBuffer, handed to the worker once (workerData). Word 0 is the
 * `ring_seq` of the last ring message the worker has read (Atomics); the events follow. Messages
 * take contiguous runs in send order, and the front reuses a run once the worker has read it.
 */
export class PackedRing {
  readonly buffer: SharedArrayBuffer;
  readonly acked: Int32Array;
  readonly events: Float64Array;

  constructor(buffer?: SharedArrayBuffer, doubles = PACKED_RING_DOUBLES) {
    this.buffer = buffer ?? new SharedArrayBuffer(8 + 8 * doubles);
    this.acked = new Int32Array(this.buffer, 0, 1);
    this.events = new Float64Array(this.buffer, 8);
  }
}

/** At most this many ring messages unread at once (a message past it is transferred). */
const RING_MESSAGES_MAX = 1024;

/** Packs committed events (the front thread side). */
export class EventPacker {
  private readonly ring: PackedRing | null;
  /** Ring messages sent (Int32 arithmetic: the count wraps, differences stay right). */
  private ring_sent = 0;
  /** Start of each unread ring message, oldest first (a circular queue of RING_MESSAGES_MAX). */
  private readonly ring_starts = new Float64Array(RING_MESSAGES_MAX);
  private ring_first = 0;
  private ring_unread = 0;
  /** Where the next ring message goes. */
  private ring_head = 0;
  /** Messages that went transferred (no room in the ring): for tests and benches. */
  transferred = 0;
  private buf = new Float64Array(PACKED_STRIDE * 4096);
  private n = 0;
  private addresses: [number, string][] = [];
  private client_ids: [number, string][] = [];
  /** Highest batch id packed (from its BATCH_COMMITTED). */
  packed_batch_id = -1;

  /** `ring`: the ring shared with the reader (null: every message is transferred). */
  constructor(ring: PackedRing | null = null) {
    this.ring = ring;
  }

  get count(): number {
    return this.n;
  }

  pack(e: EventFields): void {
    const type = e.type();
    if (type === EventType.REJECTED) return;
    if ((this.n + 1) * PACKED_STRIDE > this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    const b = this.buf;
    const at = this.n * PACKED_STRIDE;
    b[at + PACKED_TYPE] = type;
    const count = fieldCount(type);
    // A copy of the record's fields, whatever they mean: the worker reads them by their names.
    for (let k = 0; k < count; k++) b[at + PACKED_FIELD0 + k] = e.field(k);
    if (type === EventType.ACCOUNT) this.addresses.push([this.n, e.addressHex()]);
    else if (type === EventType.ACCEPTED && (b[at + PACKED_FIELD0 + AcceptedField.KIND] === RequestKind.FORCE_INCLUDE ||
      b[at + PACKED_FIELD0 + AcceptedField.KIND] === RequestKind.PLACE)) {
      const coid = e.clientOrderId();
      if (coid !== '') this.client_ids.push([this.n, coid]);
    } else if (type === EventType.AGENT) {
      // The agent's name: the agent leaf commits to it.
      const name = e.clientOrderId();
      if (name !== '') this.client_ids.push([this.n, name]);
    } else if (type === EventType.BATCH_COMMITTED) this.packed_batch_id = b[at + PACKED_FIELD0 + BatchField.BATCH_ID];
    this.n++;
  }

  /** What was packed since the last take, as one message (null when nothing was). */
  take(): PackedEvents | null {
    if (this.n === 0) return null;
    const doubles = this.n * PACKED_STRIDE;
    const at = this.ringRoom(doubles);
    let events: Float64Array<ArrayBuffer> | null = null;
    let ring_seq = -1;
    if (at >= 0) {
      (this.ring as PackedRing).events.set(this.buf.subarray(0, doubles), at);
      ring_seq = this.ring_sent = (this.ring_sent + 1) | 0;
      this.ring_starts[(this.ring_first + this.ring_unread) % RING_MESSAGES_MAX] = at;
      this.ring_unread++;
      this.ring_head = at + doubles;
    } else {
      events = this.buf.slice(0, doubles);
      this.transferred++;
    }
    const msg: PackedEvents = {
      type: 'events', events, ring_at_double: at, ring_seq, count: this.n, addresses: this.addresses, client_ids: this.client_ids,
    };
    this.n = 0;
    this.addresses = [];
    this.client_ids = [];
    return msg;
  }

  /** Where a run of `doubles` fits in the ring after the unread messages, or -1 (no ring, no room). */
  private ringRoom(doubles: number): number {
    const ring = this.ring;
    if (ring === null) return -1;
    // Forget the messages the reader has read (it acknowledges them in order).
    const unread = (this.ring_sent - Atomics.load(ring.acked, 0)) | 0;
    while (this.ring_unread > unread) {
      this.ring_first = (this.ring_first + 1) % RING_MESSAGES_MAX;
      this.ring_unread--;
    }
    if (this.ring_unread === RING_MESSAGES_MAX) return -1;
    const size = ring.events.length;
    if (this.ring_unread === 0) this.ring_head = 0;
    const tail = this.ring_unread === 0 ? 0 : this.ring_starts[this.ring_first];
    const head = this.ring_head;
    if (this.ring_unread === 0 || head > tail) {
      // Free: [head, size) and then [0, tail).
      if (doubles <= size - head) return head;
      return doubles <= tail ? 0 : -1;
    }
    // head <= tail: free is [head, tail).
    return doubles <= tail - head ? head : -1;
  }
}

/** Reads a packed message's events (the worker side): set `i`, then read like any EventFields. */
export class PackedFields implements EventFields {
  events: Float64Array = new Float64Array(0);
  /** Where the message's events start in `events` (0, or its place in the ring). */
  base = 0;
  addresses = new Map<number, string>();
  client_ids = new Map<number, string>();
  i = 0;

  /** `ring`: the ring the packer shares (required for a message that is in it). */
  constructor(private readonly ring: PackedRing | null = null) {}

  load(m: PackedEvents): void {
    if (m.events === null) {
      if (this.ring === null) throw new Error('packed events: a ring message without the ring');
      this.events = this.ring.events;
      this.base = m.ring_at_double;
    } else {
      this.events = m.events;
      this.base = 0;
    }
    this.addresses = new Map(m.addresses);
    this.client_ids = new Map(m.client_ids);
    this.i = 0;
  }

  /** The message is read: its part of the ring may be reused (call after the last field read). */
  done(m: PackedEvents): void {
    if (m.events === null && this.ring !== null) Atomics.store(this.ring.acked, 0, m.ring_seq);
  }

  type(): number { return this.events[this.base + this.i * PACKED_STRIDE + PACKED_TYPE]; }
  field(k: number): number { return this.events[this.base + this.i * PACKED_STRIDE + PACKED_FIELD0 + k]; }
  clientOrderId(): string { return this.client_ids.get(this.i) ?? ''; }
  addressHex(): string { return this.addresses.get(this.i) ?? ''; }
}
