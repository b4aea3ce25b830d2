// The leader matcher's status message (docs/scale-out.md, "The leader's status message"): how a
// gateway learns that the leader cannot store its batches in the event stream (the cluster's
// journal) and refuses writes meanwhile, as the single process's front does for its LMDB journal.
//
// A plain NATS message (not JetStream: it must get through while the stream cannot store), made
// of headers only, published by the leader on every lease renewal (TTL/4) and at once when its
// store fault begins or ends. A gateway started during a fault learns it from the next renewal.
// Version 1 carries: the leader's name, its last batch, and the failing store (batch and error)
// or nothing. A reader ignores a message of another version (a newer matcher during an upgrade),
// so a field added later goes with a new version number.
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import type { JournalFault } from '../journal/journal.js';

export const MATCHER_STATUS_SUBJECT = 'rb.matcher.status';
export const MATCHER_STATUS_VERSION = 1;

const H_VERSION = 'Rb-Status-Version';
const H_LEADER = 'Rb-Leader';
const H_BATCH = 'Rb-Batch';
const H_FAULT_BATCH = 'Rb-Store-Fault-Batch';
const H_FAULT_ERROR = 'Rb-Store-Fault-Error';
/** The error text is for operators (GET /admin/state journal); headers are one line, kept short. */
const FAULT_ERROR_CHARS_MAX = 300;

export interface LeaderStatus {
  leader: string;
  /** The last batch the leader applied and stored (-1: none yet). */
  batch_id: number;
  /** The batch whose store fails and is retried, and why; null while batches are stored. */
  store_fault: JournalFault | null;
}

export function leaderStatusHeaders(s: LeaderStatus): MsgHdrs {
  const hd = headers();
  hd.set(H_VERSION, String(MATCHER_STATUS_VERSION));
  hd.set(H_LEADER, s.leader);
  hd.set(H_BATCH, String(s.batch_id));
  if (s.store_fault !== null) {
    hd.set(H_FAULT_BATCH, String(s.store_fault.batch_id));
    hd.set(H_FAULT_ERROR, s.store_fault.message.replace(/[\r\n]+/g, ' ').slice(0, FAULT_ERROR_CHARS_MAX));
  }
  return hd;
}

/**
 * `text` as a batch id: a decimal safe integer, at least `min` (-1: "none yet"); else it throws,
 * naming the header (a value past 2^53 would be read back as another batch). Also batch_request.ts's.
 */
export function batchIdOf(header: string, text: string, min: number): number {
  const n = Number(text);
  if (!/^-?[0-9]{1,16}$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new Error(`${header} is ${JSON.stringify(text.slice(0, 40))}`);
  return n;
}

/** The status in a message's headers; null for another version; throws on a malformed version 1. */
export function readLeaderStatus(hd: MsgHdrs | undefined): LeaderStatus | null {
  if (hd === undefined || hd.get(H_VERSION) !== String(MATCHER_STATUS_VERSION)) return null;
  const batch_id = batchIdOf(H_BATCH, hd.get(H_BATCH), -1);
  const fault_batch = hd.get(H_FAULT_BATCH);
  const store_fault: JournalFault | null = fault_batch === ''
    ? null
    : { batch_id: batchIdOf(H_FAULT_BATCH, fault_batch, 0), message: hd.get(H_FAULT_ERROR).slice(0, FAULT_ERROR_CHARS_MAX) };
  return { leader: hd.get(H_LEADER), batch_id, store_fault };
}
