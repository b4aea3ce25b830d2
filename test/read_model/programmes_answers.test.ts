// The read model hands an answer (ACCEPTED / REJECTED) to the programmes model only when it matters
// there (ProgrammesModel.hearsAnswer: an accepted FORCE_INCLUDE, or the answer of the entry being
// included): the forced entries still get their envelope nonce and their results, and answers of
// ordinary requests around them change nothing.
import { describe, expect, it } from 'vitest';
import { RequestKind } from '../../src/engine/types.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { ev } from '../da/events.js';

describe('read model answers and the programmes model', () => {
  it('records a forced entry, its envelope nonce and its result (accepted, then rejected), ignoring other answers', () => {
    const rm = new ReadModel(['ETH', 'USDC'], { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 });
    const events = [
      ev.begin(1), ev.market(0, 0, 1), ev.account(7, '0x' + '77'.repeat(20)),
      // Ordinary answers before anything is queued.
      ev.accepted(RequestKind.DEPOSIT, 7, 0, 0), ev.rejected(RequestKind.CANCEL, 7),
      ev.forceAccepted(7, 1, 41), ev.queued(1, 7, RequestKind.PLACE, 5, 9_000),
      ev.forceAccepted(7, 2, 42), ev.queued(2, 7, RequestKind.CANCEL, 6, 9_000),
      ev.committed(1),
      ev.begin(2),
      ev.included(1, 7, RequestKind.PLACE, 5), ev.accepted(RequestKind.PLACE, 7, 33, 5),
      // An ordinary answer between two inclusions: it closes nothing.
      ev.accepted(RequestKind.PLACE, 7, 34, 0), ev.rejected(RequestKind.CANCEL, 7),
      ev.included(2, 7, RequestKind.CANCEL, 6), ev.rejected(RequestKind.CANCEL, 7),
      ev.accepted(RequestKind.PLACE, 7, 35, 0),
      ev.committed(2),
    ];
    events.forEach((e, i) => rm.apply(e, i));
    const p = rm.programmes;
    expect(p.envelope_high_water.get(7)).toBe(42);
    expect(p.entries.get(1)).toMatchObject({ envelope_nonce: 41, included_batch_id: 2, result: { accepted: true, code: 0, reason: 0, order_id: 33 } });
    expect(p.entries.get(2)).toMatchObject({ envelope_nonce: 42, included_batch_id: 2, result: { accepted: false, code: 5, reason: 9, order_id: 0 } });
    expect(p.pending.size).toBe(0);
    expect(p.hearsAnswer(RequestKind.PLACE)).toBe(false);
    expect(p.hearsAnswer(RequestKind.FORCE_INCLUDE)).toBe(true);
  });
});
