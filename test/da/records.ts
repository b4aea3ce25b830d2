// Engine requests as the request records the front journals (its codec, RequestWriter), for tests
// that drive the real Matcher through ReplayExecutor. Account ids map to fixed addresses; the
// registry gives ids in first-deposit order, so a flow that deposits for accounts 1..N first
// (the generator's warm-up) gets the same ids back.
import type { Request } from '../../src/engine/types.js';
import { RequestKind } from '../../src/engine/types.js';
import { AGENT_NAME_BYTES_MAX } from '../../src/engine/agents.js';
import { CLIENT_ORDER_ID_BYTES_MAX, createRecordRing, RECORD_WORDS } from '../../src/ring/records.js';
import { RequestWriter } from '../../src/ring/request_records.js';

export function addressOf(account: number): Uint8Array {
  const a = new Uint8Array(20);
  a[0] = 0xa5;
  new DataView(a.buffer).setUint32(16, account >>> 0);
  return a;
}

/** The second address a REFER (or a FORCE_INCLUDE carrying one) or an agent change needs in its record. */
function referrerOf(r: Request): Uint8Array | null {
  if (r.kind === RequestKind.APPROVE_AGENT || r.kind === RequestKind.REVOKE_AGENT) return addressOf(r.agent_account);
  const refers = r.kind === RequestKind.REFER || (r.kind === RequestKind.FORCE_INCLUDE && r.inner_kind === RequestKind.REFER);
  return refers && r.client_order_id === '' ? addressOf(r.referrer_account) : null;
}

/**
 * Whether the front could write this generated request to a record: client ids of at most 36
 * characters, agent names of at most 16 (it refuses longer ones; the engine never sees them).
 */
export function recordable(r: Request): boolean {
  return r.client_order_id.length <= (r.kind === RequestKind.APPROVE_AGENT ? AGENT_NAME_BYTES_MAX : CLIENT_ORDER_ID_BYTES_MAX);
}

/** The requests as contiguous records (seq = 1, 2, ...). */
export function recordsOf(requests: readonly Request[]): Int32Array {
  const ring = createRecordRing(4);
  const writer = new RequestWriter(ring);
  const out = new Int32Array(requests.length * RECORD_WORDS);
  requests.forEach((r, i) => {
    const signer = r.signer === 0 ? null : addressOf(r.signer);
    if (!writer.tryWrite(i + 1, addressOf(r.account), 0, r, referrerOf(r), null, 0, signer)) throw new Error('ring full');
    writer.flush();
    // available() also refreshes the consumer's view of the published records.
    if (ring.available() !== 1) throw new Error('record not published');
    const o = ring.slotOffset(0);
    out.set(ring.i32.subarray(o, o + RECORD_WORDS), i * RECORD_WORDS);
    ring.release(1);
  });
  return out;
}
