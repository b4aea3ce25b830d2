// The request generator: deterministic per seed, and rich enough that the differential test
// sees every reject reason, every order update reason and every balance reason the engine has.
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/engine/event_log.js';
import { createReferenceEngine } from '../../src/engine/reference/reference_engine.js';
import {
  BALANCE_REASON_NAMES, UPDATE_REASON_NAMES, UpdateReason, type BalanceReasonsNamed, type UpdateReasonsNamed,
} from '../../src/engine/events.js';
import { Reject } from '../../src/engine/codes.js';
import type { Request } from '../../src/engine/types.js';
import { RequestGenerator, generateSequence, mulberry32, sequenceLength } from './generator.js';

function followReference(seed: number): { requests: Request[]; events: ReturnType<EventLog['take']>[]; answers: ReturnType<EventLog['take']>[] } {
  const gen = new RequestGenerator(seed);
  const engine = createReferenceEngine(gen.config);
  const log = new EventLog();
  const requests: Request[] = [];
  const events: ReturnType<EventLog['take']>[] = [];
  /** The events of requests[i], without the inclusions between them. */
  const answers: ReturnType<EventLog['take']>[] = [];
  for (let i = 0; i < sequenceLength(seed); i++) {
    const time_ms = gen.batch();
    if (time_ms !== null) {
      engine.beginBatch(time_ms, log);
      const included = log.take();
      if (included.length > 0) events.push(included);
    }
    const r = gen.next();
    engine.apply(r, log);
    const e = log.take();
    gen.observe(r, e);
    requests.push(r);
    events.push(e);
    answers.push(e);
  }
  return { requests, events, answers };
}

describe('request generator', () => {
  it('mulberry32 is the standard sequence (seed 42 starts 0.6011037...)', () => {
    const r = mulberry32(42);
    expect([r(), r(), r()].map((x) => Math.floor(x * 1e6))).toEqual([601103, 448290, 852465]);
  });

  it('is deterministic per seed, blind or following an engine', () => {
    expect(generateSequence(7, 120)).toEqual(generateSequence(7, 120));
    expect(followReference(11).requests).toEqual(followReference(11).requests);
    expect(generateSequence(7, 120).requests).not.toEqual(generateSequence(8, 120).requests);
  });

  it('sequence lengths are 60 to 150', () => {
    const lengths = Array.from({ length: 2000 }, (_, i) => sequenceLength(i + 1));
    expect(Math.min(...lengths)).toBe(60);
    expect(Math.max(...lengths)).toBe(150);
  });

  it('reaches every reject, order update and balance reason', () => {
    const rejects = new Set<number>();
    const updates = new Set<number>();
    const balances = new Set<number>();
    let fills = 0;
    let shares = 0;
    let inclusions = 0;
    /** Requests whose events include a self-trade-prevention cancel, per the taker's stp mode. */
    const stp_requests = [0, 0, 0];
    for (let seed = 1; seed <= 300; seed++) {
      const run = followReference(seed);
      run.answers.forEach((list, i) => {
        if (list.some((e) => e.type === 'orderUpdate' && e.reason === UpdateReason.SELF_TRADE_PREVENTED)) {
          stp_requests[run.requests[i].stp]++;
        }
      });
      for (const list of run.events) {
        for (const e of list) {
          if (e.type === 'referralShare') shares++;
          if (e.type === 'inboxIncluded') inclusions++;
          if (e.type === 'rejected') rejects.add(e.reason);
          if (e.type === 'orderUpdate') updates.add(e.reason);
          if (e.type === 'balance') balances.add(e.reason);
          if (e.type === 'fill') fills++;
        }
      }
    }
    // Not generated: NONE, REQUEST_MALFORMED (out-of-contract input, see rules.test.ts),
    // KIND_UNKNOWN, ACCOUNTS_MAX (unused by the engine), MARKET_PAUSED on AMEND (a paused market
    // has no resting orders to amend).
    const unreachable = new Set<number>([Reject.NONE, Reject.REQUEST_MALFORMED, Reject.KIND_UNKNOWN, Reject.ACCOUNTS_MAX]);
    const missing = Object.entries(Reject).filter(([, v]) => !unreachable.has(v) && !rejects.has(v)).map(([k]) => k);
    expect(missing).toEqual([]);
    // Every reason, by its name's index (UpdateReason and BalanceReason are const enums: no object
    // to list). The indexes are the values: tsc checks that the names hold one name at each value
    // of the enum and none elsewhere (events.ts UpdateReasonsNamed, BalanceReasonsNamed), so a
    // reason added without a name fails the build, and one added with a name fails here until
    // the generator makes it (the type below stops compiling if those checks are dropped).
    type NamesChecked = [UpdateReasonsNamed, BalanceReasonsNamed];
    const names_checked: NamesChecked = [true, true];
    void names_checked;
    expect([...updates].sort((a, b) => a - b)).toEqual(UPDATE_REASON_NAMES.map((_, i) => i));
    expect([...balances].sort((a, b) => a - b)).toEqual(BALANCE_REASON_NAMES.map((_, i) => i));
    expect(fills).toBeGreaterThan(1000);
    // Referral shares and forced inclusions happen often enough to be compared meaningfully.
    expect(shares).toBeGreaterThan(100);
    expect(inclusions).toBeGreaterThan(300);
    // Self-crossing flow meets every self-trade prevention mode (an amend counts as expire_maker).
    for (const n of stp_requests) expect(n).toBeGreaterThan(50);
  }, 120_000);
});
