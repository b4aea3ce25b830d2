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
  /** Transferred to the worker (a fresh copy per message). */
  events: Float64Array<ArrayBuffer>;
  count: number;
  /** [event index, address hex] of ACCOUNT events. */
  addresses: [number, string][];
  /** [event index, client order id] of FORCE_INCLUDE and PLACE ACCEPTED events that have one; an AGENT event's name. */
  client_ids: [number, string][];
}

/** Packs committed events (the front thread side). */
export class EventPacker {
  private buf = new Float64Array(PACKED_STRIDE * 4096);
  private n = 0;
  private addresses: [number, string][] = [];
  private client_ids: [number, string][] = [];
  /** Highest batch id packed (from its BATCH_COMMITTED). */
  packed_batch_id = -1;

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
    const msg: PackedEvents = {
      type: 'events', events: this.buf.slice(0, this.n * PACKED_STRIDE), count: this.n,
      addresses: this.addresses, client_ids: this.client_ids,
    };
    this.n = 0;
    this.addresses = [];
    this.client_ids = [];
    return msg;
  }
}

/** Reads a packed message's events (the worker side): set `i`, then read like any EventFields. */
export class PackedFields implements EventFields {
  events: Float64Array = new Float64Array(0);
  addresses = new Map<number, string>();
  client_ids = new Map<number, string>();
  i = 0;

  load(m: PackedEvents): void {
    this.events = m.events;
    this.addresses = new Map(m.addresses);
    this.client_ids = new Map(m.client_ids);
    this.i = 0;
  }

  type(): number { return this.events[this.i * PACKED_STRIDE + PACKED_TYPE]; }
  field(k: number): number { return this.events[this.i * PACKED_STRIDE + PACKED_FIELD0 + k]; }
  clientOrderId(): string { return this.client_ids.get(this.i) ?? ''; }
  addressHex(): string { return this.addresses.get(this.i) ?? ''; }
}
