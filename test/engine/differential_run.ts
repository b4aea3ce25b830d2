// The differential harness: one generated sequence through two engines side by side.
//
// After every request: the two event lists must be equal field by field, the OrderTracker checks
// the reference's events, and checkInvariants checks the reference state (skipped after a
// rejection: a rejected request changes nothing, and the state was checked after the previous
// request). After the sequence: the two canonical states must be deep-equal with equal digests,
// the fast state must pass checkInvariants too, and the events must account for the final state.
import type { EngineConfig, MatchingEngine } from '../../src/engine/api.js';
import { EventLog, formatEvent } from '../../src/engine/event_log.js';
import type { EngineEvent } from '../../src/engine/event_log.js';
import { OrderTracker, checkInvariants } from '../../src/engine/invariants.js';
import { canonicalJson, stateDigest } from '../../src/engine/state.js';
import { payloadRequest } from '../../src/engine/programmes.js';
import { emptyRequest, RequestKind, type Request } from '../../src/engine/types.js';
import { WordsRequest } from '../../src/engine/client_id.js';
import { RequestGenerator, sequenceLength } from './generator.js';

export type EngineFactory = (config: EngineConfig) => MatchingEngine;

export class DifferentialFailure extends Error {}

/** Field-by-field equality (Object.is, so -0 differs from 0) of two event lists. */
export function eventsEqual(a: readonly EngineEvent[], b: readonly EngineEvent[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!eventEqual(a[i], b[i])) return false;
  return true;
}

/** Same type and every field equal (Object.is: -0 differs from 0). */
function eventEqual(x: EngineEvent, y: EngineEvent): boolean {
  if (x.type !== y.type) return false;
  const a = x as unknown as Record<string, unknown>;
  const b = y as unknown as Record<string, unknown>;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.is(a[k], b[k])) return false;
  return true;
}

/** One event per line; with `other`, lines that differ from it at the same index get a `!`. */
function show(events: readonly EngineEvent[], other?: readonly EngineEvent[]): string {
  if (events.length === 0) return '    (none)';
  return events.map((e, i) => {
    const mark = other !== undefined && (i >= other.length || !eventEqual(e, other[i])) ? '  ! ' : '    ';
    return `${mark}${formatEvent(e)}`;
  }).join('\n');
}

/** History marker for a batch start (shown as such, never applied). */
const BATCH_MARK = -1;

function showRequest(r: Request): string {
  if (r.kind === BATCH_MARK) return `beginBatch(time_ms ${r.amount_units})`;
  const d: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(r)) if (val !== 0 && val !== '') d[k] = val;
  return JSON.stringify(d);
}

function fail(seed: number, index: number, requests: Request[], what: string): never {
  const history = requests.map((r, i) => `  #${i} ${showRequest(r)}`).join('\n');
  throw new DifferentialFailure(
    `seed ${seed}, request #${index}: ${what}\n` +
    `request: ${showRequest(requests[index] ?? requests[requests.length - 1])}\n` +
    `requests so far (fields that are 0 or '' omitted; replay with RINGBOOK_DIFF_SEED=${seed}):\n${history}`,
  );
}

export interface SequenceStats {
  requests: number;
  rejected: number;
  fills: number;
}

/**
 * Runs the sequence of `seed` through `reference` and `candidate`. Throws DifferentialFailure
 * with a reproducible description on the first disagreement or broken invariant.
 */
export function runSequence(
  seed: number, reference: EngineFactory, candidate: EngineFactory, length = sequenceLength(seed),
  /** Applied to both event lists before they are compared (exploration aid; unused by the tests). */
  normalize?: (events: EngineEvent[]) => void,
): SequenceStats {
  const gen = new RequestGenerator(seed);
  const config = gen.config;
  const ref = reference(config);
  const cand = candidate(config);
  const refLog = new EventLog();
  const candLog = new EventLog();
  const tracker = new OrderTracker(config);
  const requests: Request[] = [];
  const stats: SequenceStats = { requests: 0, rejected: 0, fills: 0 };
  /** Forced-inclusion payloads by entry id, to check their events when they are included. */
  const payloads = new Map<number, Request>();
  for (let i = 0; i < length; i++) {
    const time_ms = gen.batch();
    if (time_ms !== null) {
      const mark = emptyRequest();
      mark.kind = BATCH_MARK;
      mark.amount_units = time_ms;
      requests.push(mark);
      try {
        ref.beginBatch(time_ms, refLog);
        cand.beginBatch(time_ms, candLog);
      } catch (e) {
        fail(seed, requests.length - 1, requests, `beginBatch threw: ${(e as Error).stack ?? String(e)}`);
      }
      const a = refLog.take();
      const b = candLog.take();
      if (!eventsEqual(a, b)) {
        fail(seed, requests.length - 1, requests, `batch start events differ\n  reference:\n${show(a, b)}\n  candidate:\n${show(b, a)}`);
      }
      for (const { entry_id, account, events } of splitBatchStart(a)) {
        let request: Request;
        if (entry_id === null) {
          // A dead-man switch fired: an engine-issued cancel of the account's orders.
          request = emptyRequest();
          request.kind = RequestKind.DEAD_MAN_CANCEL;
          request.account = account;
        } else {
          const payload = payloads.get(entry_id);
          if (payload === undefined) fail(seed, requests.length - 1, requests, `inclusion of unknown entry ${entry_id}`);
          payloads.delete(entry_id);
          request = payload;
        }
        const tv = tracker.observe(request, events);
        if (tv.length > 0) fail(seed, requests.length - 1, requests, `event invariants broken in batch start group (entry ${entry_id}, account ${account}):\n  ${tv.join('\n  ')}\n  events:\n${show(events)}`);
        gen.observe(request, events);
        for (const e of events) if (e.type === 'fill') stats.fills++;
      }
      if (a.length > 0) {
        const sv = checkInvariants(ref.canonicalState(), config);
        if (sv.length > 0) fail(seed, requests.length - 1, requests, `state invariants broken after inclusions:\n  ${sv.join('\n  ')}\n  events:\n${show(a)}`);
      }
    }
    const r = gen.next();
    requests.push(r);
    // Odd seeds hand the candidate a WordsRequest (the matcher's kind: the client id as words,
    // src/engine/client_id.ts), even seeds a plain copy: the fast engine takes both.
    const mine: Request = seed % 2 === 1 ? Object.assign(new WordsRequest(), r) : { ...r };
    try {
      ref.apply(r, refLog);
    } catch (e) {
      fail(seed, i, requests, `the reference engine threw: ${(e as Error).stack ?? String(e)}`);
    }
    try {
      cand.apply(mine, candLog);
    } catch (e) {
      fail(seed, i, requests, `the candidate engine threw: ${(e as Error).stack ?? String(e)}`);
    }
    const a = refLog.take();
    const b = candLog.take();
    if (normalize !== undefined) {
      normalize(a);
      normalize(b);
    }
    if (!eventsEqual(a, b)) {
      fail(seed, i, requests, `events differ ('!' marks the differing lines)\n  reference:\n${show(a, b)}\n  candidate:\n${show(b, a)}`);
    }
    const tv = tracker.observe(r, a);
    if (tv.length > 0) fail(seed, i, requests, `event invariants broken:\n  ${tv.join('\n  ')}\n  events:\n${show(a)}`);
    gen.observe(r, a);
    if (r.kind === RequestKind.FORCE_INCLUDE && a[0]?.type === 'accepted') payloads.set(a[0].order_id, payloadRequest(r));
    stats.requests++;
    if (a[0]?.type === 'rejected') {
      stats.rejected++;
      continue;
    }
    for (const e of a) if (e.type === 'fill') stats.fills++;
    const sv = checkInvariants(ref.canonicalState(), config);
    if (sv.length > 0) fail(seed, i, requests, `state invariants broken:\n  ${sv.join('\n  ')}\n  events:\n${show(a)}`);
  }
  const last = requests.length - 1;
  const refState = ref.canonicalState();
  const candState = cand.canonicalState();
  const diff = firstDifference(refState, candState);
  if (diff !== null) {
    fail(seed, last, requests, `canonical states differ at state${diff}\n  reference: ${canonicalJson(refState)}\n  candidate: ${canonicalJson(candState)}`);
  }
  if (stateDigest(refState) !== stateDigest(candState)) fail(seed, last, requests, 'state digests differ');
  const cv = checkInvariants(candState, config);
  if (cv.length > 0) fail(seed, last, requests, `candidate state invariants broken:\n  ${cv.join('\n  ')}`);
  const ev = tracker.checkAgainstState(refState);
  if (ev.length > 0) fail(seed, last, requests, `events do not account for the state:\n  ${ev.join('\n  ')}`);
  return stats;
}

/**
 * The events of a batch start, split per included entry: each `inboxIncluded` and the events of
 * its request up to the next inclusion. Anything before the first inclusion is an error.
 */
/**
 * Splits batch-start events into groups: a fired dead-man switch (its DEAD_MAN_CANCEL acceptance
 * and cancels; entry_id null) or an inbox inclusion (the events after its inboxIncluded).
 */
export function splitBatchStart(events: readonly EngineEvent[]): { entry_id: number | null; account: number; events: EngineEvent[] }[] {
  const out: { entry_id: number | null; account: number; events: EngineEvent[] }[] = [];
  for (const e of events) {
    if (e.type === 'inboxIncluded') out.push({ entry_id: e.entry_id, account: e.account, events: [] });
    else if (e.type === 'accepted' && e.kind === RequestKind.DEAD_MAN_CANCEL) out.push({ entry_id: null, account: e.account, events: [e] });
    else if (out.length === 0) throw new DifferentialFailure(`batch start event ${e.type} before any inclusion or dead-man cancel`);
    else out[out.length - 1].events.push(e);
  }
  return out;
}

/**
 * Path of the first difference between two JSON-like values (Object.is on leaves) relative to
 * them ('' when they differ at the top), or null when equal. Builds strings only on a difference.
 */
export function firstDifference(a: unknown, b: unknown): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return '';
  if (Array.isArray(a) !== Array.isArray(b)) return '';
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return '.length';
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i]);
      if (d !== null) return `[${i}]${d}`;
    }
    return null;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    n++;
    if (!(k in y)) return `.${k}`;
    const d = firstDifference(x[k], y[k]);
    if (d !== null) return `.${k}${d}`;
  }
  for (const k in y) {
    n--;
    if (!(k in x)) return `.${k}`;
  }
  return n === 0 ? null : '';
}
