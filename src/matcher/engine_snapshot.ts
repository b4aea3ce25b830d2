// The engine part of a snapshot: the engine's canonical state and the account registry, as the
// matcher captures them and as a restart (the matcher, the DA thread, the verifier) reads them
// back. The snapshot file around it (header, digest, the front's part) is src/snapshot/.
//
// The engine state is serialized whole (generic over CanonicalState: new engine state needs no
// change here).
import { Packr } from 'msgpackr';
import type { CanonicalState } from '../engine/api.js';
import { toHex0x } from '../util/hex.js';
import { ADDRESS_BYTES } from './registry.js';

/**
 * msgpackr with records: an object shape is written once and its instances as values only (a
 * third of the bytes and time for lists of orders). Typed arrays are one binary blob each.
 * `pack` writes into a buffer it reuses: callers copy what they keep (`new Uint8Array(...)`).
 */
export const snapshotPackr = new Packr({ useRecords: true });

export interface EngineSnapshot {
  canonical: CanonicalState;
  /** Account registry: 20 address bytes per account id, in id order (id 0, the fee account, zeros). */
  addresses: Uint8Array;
}

export class SnapshotInvalid extends Error {
  override name = 'SnapshotInvalid';
}

export function encodeEngine(e: EngineSnapshot): Uint8Array {
  return snapshotPackr.pack(e);
}

export function decodeEngine(bytes: Uint8Array): EngineSnapshot {
  const e = snapshotPackr.unpack(bytes) as EngineSnapshot;
  if (e === null || typeof e !== 'object' || !(e.addresses instanceof Uint8Array) || typeof e.canonical !== 'object') {
    throw new SnapshotInvalid('engine part is not { canonical, addresses }');
  }
  return e;
}

/** Account id -> 0x address ('' for the fee account 0). */
export function addressesHex(addresses: Uint8Array): string[] {
  const out: string[] = [''];
  for (let id = 1; id * ADDRESS_BYTES < addresses.length; id++) {
    out.push(toHex0x(addresses, id * ADDRESS_BYTES, (id + 1) * ADDRESS_BYTES));
  }
  return out;
}
