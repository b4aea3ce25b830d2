// Snapshot files (<data_dir>/snapshots/snapshot-<batch, 12 digits>.msgpack): what a restart needs
// to resume at a batch instead of genesis. One msgpackr object:
//
//   format, version, batch_id, batch_time_ms, state_root (published root of the batch),
//   zero_balance_leaves, created_ms,
//   cluster (optional: a cluster matcher's stream positions, below),
//   engine  (bytes: msgpackr of { canonical: CanonicalState, addresses: 20 bytes per account id }),
//   front   (bytes: msgpackr of the front's FrontState, or null for an engine-only snapshot),
//   digest  (sha256 of the header fields, engine bytes and front bytes).
//
// The engine part's codec is src/matcher/engine_snapshot.ts (the matcher writes it, the DA thread
// and the verifier read it); the parts stay bytes inside the file so that the front thread can check the
// digest and hand the engine part on to the matcher and the DA thread without decoding it.
// Written to a temporary file, fsynced, renamed, and the directory fsynced: a crash leaves either
// the whole new file or none (a stale `.tmp` is deleted at the next start).
import { createHash } from 'node:crypto';
import { promises as fsp, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SnapshotInvalid, snapshotPackr } from '../matcher/engine_snapshot.js';

export {
  addressesHex, decodeEngine, encodeEngine, SnapshotInvalid, snapshotPackr, type EngineSnapshot,
} from '../matcher/engine_snapshot.js';

export const SNAPSHOT_FORMAT = 'ringbook-snapshot';
/**
 * 5: the canonical state carries `agents` (agent keys and nonce floors); a v4 snapshot lacks them
 * and is passed over (4 added `dead_man`).
 */
export const SNAPSHOT_VERSION = 5;
const FILE_RE = /^snapshot-(\d{12})\.msgpack$/;

export interface SnapshotHeader {
  batch_id: number;
  batch_time_ms: number;
  /** The state root published for `batch_id` (null when it was not known when written). */
  state_root: string | null;
  /** [account, asset] balance leaves whose value is zero (src/da/canonical_leaves.ts says why). */
  zero_balance_leaves: [number, number][];
  created_ms: number;
  /**
   * A cluster matcher's snapshot only (src/cluster/matcher_snapshots.ts): the event stream
   * sequence of batch `batch_id` and the request stream sequence consumed through, where a
   * restart follows the streams from. Optional and digested only when present, so the single
   * process's files (which never carry it) keep their digest and no version bump is needed.
   */
  cluster?: { events_through: number; requests_through: number };
}

export interface SnapshotFile extends SnapshotHeader {
  engine: Uint8Array;
  front: Uint8Array | null;
  digest: string;
}

function digestOf(h: SnapshotHeader, engine: Uint8Array, front: Uint8Array | null): string {
  const hash = createHash('sha256');
  const fields: unknown[] = [SNAPSHOT_FORMAT, SNAPSHOT_VERSION, h.batch_id, h.batch_time_ms, h.state_root, h.zero_balance_leaves, h.created_ms];
  if (h.cluster !== undefined) fields.push([h.cluster.events_through, h.cluster.requests_through]);
  hash.update(JSON.stringify(fields));
  hash.update(engine);
  if (front !== null) hash.update(front);
  return hash.digest('hex');
}

export function encodeSnapshot(h: SnapshotHeader, engine: Uint8Array, front: Uint8Array | null): Buffer {
  const file: SnapshotFile & { format: string; version: number } = {
    format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, ...h, engine, front, digest: digestOf(h, engine, front),
  };
  return snapshotPackr.pack(file);
}

export function decodeSnapshot(bytes: Uint8Array): SnapshotFile {
  let s: Record<string, unknown>;
  try {
    s = snapshotPackr.unpack(bytes) as Record<string, unknown>;
  } catch (e) {
    throw new SnapshotInvalid(`not msgpack (${(e as Error).message})`);
  }
  if (s === null || typeof s !== 'object') throw new SnapshotInvalid('not an object');
  if (s.format !== SNAPSHOT_FORMAT || s.version !== SNAPSHOT_VERSION) {
    throw new SnapshotInvalid(`format ${String(s.format)} version ${String(s.version)}, expected ${SNAPSHOT_FORMAT} ${SNAPSHOT_VERSION}`);
  }
  const ok = Number.isSafeInteger(s.batch_id) && (s.batch_id as number) >= 0 && typeof s.batch_time_ms === 'number' &&
    (s.state_root === null || typeof s.state_root === 'string') && Array.isArray(s.zero_balance_leaves) &&
    typeof s.created_ms === 'number' && s.engine instanceof Uint8Array && (s.front === null || s.front instanceof Uint8Array) &&
    typeof s.digest === 'string' && (s.cluster === undefined || isStreamPositions(s.cluster));
  if (!ok) throw new SnapshotInvalid('fields missing or of the wrong type');
  const f = s as unknown as SnapshotFile;
  if (digestOf(f, f.engine, f.front) !== f.digest) throw new SnapshotInvalid('digest mismatch (altered or torn)');
  return f;
}

function isStreamPositions(c: unknown): boolean {
  if (c === null || typeof c !== 'object') return false;
  const p = c as Record<string, unknown>;
  return Number.isSafeInteger(p.events_through) && (p.events_through as number) > 0 &&
    Number.isSafeInteger(p.requests_through) && (p.requests_through as number) >= 0;
}

export function snapshotFileName(batch_id: number): string {
  return `snapshot-${String(batch_id).padStart(12, '0')}.msgpack`;
}

/** Snapshot files of `dir`, newest batch first (a missing directory has none). */
export function listSnapshots(dir: string): { batch_id: number; file: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { batch_id: number; file: string }[] = [];
  for (const n of names) {
    const m = FILE_RE.exec(n);
    if (m) out.push({ batch_id: Number(m[1]), file: path.join(dir, n) });
  }
  return out.sort((a, b) => b.batch_id - a.batch_id);
}

export function readSnapshotFile(file: string): SnapshotFile {
  return decodeSnapshot(readFileSync(file));
}

/** Writes `bytes` to `file` so that a crash leaves the old state or the whole new file. */
export async function writeFileAtomic(file: string, bytes: Uint8Array): Promise<void> {
  const tmp = file + '.tmp';
  const fh = await fsp.open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
  const dir = await fsp.open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Deletes all but the `keep` newest snapshots and any leftover temporary file; returns the kept ones. */
export function pruneSnapshots(dir: string, keep: number): { batch_id: number; file: string }[] {
  const all = listSnapshots(dir);
  for (const s of all.slice(keep)) rmSync(s.file, { force: true });
  try {
    for (const n of readdirSync(dir)) if (n.endsWith('.msgpack.tmp')) rmSync(path.join(dir, n), { force: true });
  } catch {
    // no directory: nothing to prune
  }
  return all.slice(0, keep);
}
