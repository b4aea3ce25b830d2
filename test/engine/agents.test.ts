// Agent keys (docs/engine.md, "Agent keys"), rule by rule on both engines: approval (name,
// valid_until), the live limit, what an agent may sign, expiry by batch time, revocation in the
// same batch as an agent's order (decided by their order), per-signer nonce marks, and the floor
// that keeps a re-approved agent's old signatures from being replayed.
import { describe, expect, it } from 'vitest';
import { AGENT_VALIDITY_MS_MAX } from '../../src/engine/agents.js';
import type { EngineEvent } from '../../src/engine/event_log.js';
import { RequestKind as K, Side, type Request } from '../../src/engine/types.js';
import { Reject as RJ } from '../../src/engine/codes.js';
import { ETH, USDC, standardConfig } from './generator.js';
import { ENGINES, Harness, ONE, P2000, acc, rej } from './rules_harness.js';

const T0 = Date.UTC(2026, 10, 25);
const HOUR = 3_600_000;

function agentEvent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): EngineEvent {
  return { type: 'agent', account, agent, valid_until_ms, nonce_high_water, nonce_floor, name };
}

describe.each(ENGINES)('%s engine: agent keys', (_name, factory) => {
  const make = (live_max?: number): Harness => {
    const h = new Harness(factory, standardConfig({ accounts_max: 30, agents_live_per_account_max: live_max }, { maker: 0, taker: 10 }));
    h.beginBatch(T0);
    h.deposit(1, USDC, 100_000 * ONE);
    h.deposit(1, ETH, 100 * ONE);
    h.deposit(2, USDC, 100_000 * ONE);
    return h;
  };
  const approve = (h: Harness, user: number, agent: number, until: number, name = 'mm', signer = 0): EngineEvent[] =>
    h.apply(h.request(K.APPROVE_AGENT, user, { agent_account: agent, amount_units: until, client_order_id: name, signer }));
  const revoke = (h: Harness, user: number, agent: number, signer = 0): EngineEvent[] =>
    h.apply(h.request(K.REVOKE_AGENT, user, { agent_account: agent, signer }));
  /** An order of `user` signed by `signer` with the signer's nonce. */
  const agentOrder = (h: Harness, user: number, signer: number, nonce: number, price = P2000): Request => {
    const r = h.placeRequest(user, Side.BID, 0, price, ONE, { nonce });
    r.signer = signer;
    return r;
  };

  it('approves an agent, which then trades for its user with its own nonce mark', () => {
    const h = make();
    expect(approve(h, 1, 5, T0 + HOUR, 'quoter-1')).toEqual([acc(K.APPROVE_AGENT, 1, 0), agentEvent(1, 5, T0 + HOUR, 0, 0, 'quoter-1')]);
    expect(h.state().agents).toEqual([{ account: 1, nonce_floor: 0, agents: [{ agent: 5, name: 'quoter-1', valid_until_ms: T0 + HOUR, nonce_high_water: 0 }] }]);
    // The agent's nonce 1 is its own: the user already used 1 (the approval).
    const placed = h.apply(agentOrder(h, 1, 5, 1));
    expect(placed[0]).toEqual(acc(K.PLACE, 1, 1));
    expect(placed[1]).toEqual(agentEvent(1, 5, T0 + HOUR, 1, 0, 'quoter-1'));
    expect(h.state().markets[0].bids.map((o) => o.account)).toEqual([1]);
    // The user's mark did not move; the agent's did.
    expect(h.state().accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(1);
    expect(h.apply(agentOrder(h, 1, 5, 1))).toEqual([rej(K.PLACE, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
    // A wallet and two agents interleave with the same nonce values, none refused.
    approve(h, 1, 6, T0 + HOUR, 'other');
    for (let n = 2; n <= 4; n++) {
      expect(h.apply(agentOrder(h, 1, 5, n))[0].type).toBe('accepted');
      expect(h.apply(agentOrder(h, 1, 6, n))[0].type).toBe('accepted');
      expect(h.limit(1, Side.BID, P2000, ONE, { nonce: 10 + n })[0].type).toBe('accepted');
    }
    // Cancels, amends, cancel-all and cancel-after too.
    expect(h.apply(Object.assign(h.request(K.CANCEL, 1, { order_id: 1 }), { signer: 5, nonce: 5 }))[0]).toEqual(acc(K.CANCEL, 1, 1));
    expect(h.apply(Object.assign(h.request(K.AMEND, 1, { order_id: 2, price_units: P2000, quantity_units: 2 * ONE }), { signer: 5, nonce: 6 }))[0]).toEqual(acc(K.AMEND, 1, 2));
    expect(h.apply(Object.assign(h.request(K.CANCEL_AFTER, 1, { amount_units: 5_000 }), { signer: 6, nonce: 5 }))[0]).toEqual(acc(K.CANCEL_AFTER, 1, 0));
    expect(h.apply(Object.assign(h.request(K.CANCEL_ALL, 1), { signer: 6, nonce: 6 }))[0]).toEqual(acc(K.CANCEL_ALL, 1, 0));
    expect(h.state().markets[0].bids).toEqual([]);
  });

  it('never lets an agent withdraw, refer, force-include, approve or revoke', () => {
    const h = make();
    approve(h, 1, 5, T0 + HOUR);
    const as = (r: Request): Request => Object.assign(r, { signer: 5, nonce: 9 });
    expect(h.apply(as(h.request(K.WITHDRAW, 1, { asset: USDC, amount_units: ONE })))).toEqual([rej(K.WITHDRAW, 1, RJ.AGENT_NOT_ALLOWED)]);
    expect(h.apply(as(h.request(K.REFER, 1, { referrer_account: 2 })))).toEqual([rej(K.REFER, 1, RJ.AGENT_NOT_ALLOWED)]);
    expect(h.apply(as(h.request(K.FORCE_INCLUDE, 1, { inner_kind: K.PLACE, inner_nonce: 9 })))).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.AGENT_NOT_ALLOWED)]);
    expect(approve(h, 1, 6, T0 + HOUR, 'x', 5)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_NOT_ALLOWED)]);
    expect(revoke(h, 1, 5, 5)).toEqual([rej(K.REVOKE_AGENT, 1, RJ.AGENT_NOT_ALLOWED)]);
    // Nor may it sign for another user, nor an unknown signer for anyone.
    expect(h.apply(agentOrder(h, 2, 5, 1))).toEqual([rej(K.PLACE, 2, RJ.AGENT_NOT_APPROVED)]);
    expect(h.apply(agentOrder(h, 1, 30, 1))).toEqual([rej(K.PLACE, 1, RJ.AGENT_NOT_APPROVED)]);
    expect(h.balance(1, USDC)).toEqual([100_000 * ONE, 0]);
  });

  it('checks the approval: name, validity, itself, unknown agent', () => {
    const h = make();
    expect(approve(h, 1, 5, T0 + HOUR, '')).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_NAME_INVALID)]);
    expect(approve(h, 1, 5, T0 + HOUR, 'a:b')).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_NAME_INVALID)]);
    expect(approve(h, 1, 5, T0 + HOUR, 'x'.repeat(17))).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_NAME_INVALID)]);
    expect(approve(h, 1, 5, T0)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_VALIDITY_INVALID)]);
    expect(approve(h, 1, 5, T0 + AGENT_VALIDITY_MS_MAX + 1)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_VALIDITY_INVALID)]);
    expect(approve(h, 1, 1, T0 + HOUR)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENT_SELF)]);
    expect(approve(h, 1, 30, T0 + HOUR)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.ACCOUNTS_MAX)]);
    expect(revoke(h, 1, 5)).toEqual([rej(K.REVOKE_AGENT, 1, RJ.AGENT_NOT_FOUND)]);
    expect(approve(h, 1, 5, T0 + AGENT_VALIDITY_MS_MAX)[0]).toEqual(acc(K.APPROVE_AGENT, 1, 0));
    expect(h.state().agents).toHaveLength(1);
  });

  it('refuses an agent from the batch stamped at its valid_until on', () => {
    const h = make();
    approve(h, 1, 5, T0 + 2_000);
    h.beginBatch(T0 + 1_999);
    expect(h.apply(agentOrder(h, 1, 5, 1))[0].type).toBe('accepted');
    h.beginBatch(T0 + 2_000);
    expect(h.apply(agentOrder(h, 1, 5, 2))).toEqual([rej(K.PLACE, 1, RJ.AGENT_NOT_APPROVED)]);
    // The expired entry waits in the state until the user's next approval prunes it (its mark into the floor).
    expect(h.state().agents[0].agents.map((a) => a.agent)).toEqual([5]);
    expect(approve(h, 1, 6, T0 + HOUR)).toEqual([
      acc(K.APPROVE_AGENT, 1, 0), agentEvent(1, 5, 0, 0, 1, ''), agentEvent(1, 6, T0 + HOUR, 1, 1, 'mm'),
    ]);
    expect(h.state().agents).toEqual([{ account: 1, nonce_floor: 1, agents: [{ agent: 6, name: 'mm', valid_until_ms: T0 + HOUR, nonce_high_water: 1 }] }]);
  });

  it('a revocation and an agent order in one batch: their order in the batch decides', () => {
    const h = make();
    approve(h, 1, 5, T0 + HOUR);
    expect(h.apply(agentOrder(h, 1, 5, 1))[0].type).toBe('accepted');
    expect(revoke(h, 1, 5)).toEqual([acc(K.REVOKE_AGENT, 1, 0), agentEvent(1, 5, 0, 0, 1, '')]);
    expect(h.apply(agentOrder(h, 1, 5, 2))).toEqual([rej(K.PLACE, 1, RJ.AGENT_NOT_APPROVED)]);
    // The order it placed before the revocation rests on (revoking a key does not cancel).
    expect(h.state().markets[0].bids.map((o) => o.order_id)).toEqual([1]);
  });

  it('re-approving a revoked agent starts its mark at the floor: its old signatures cannot replay', () => {
    const h = make();
    approve(h, 1, 5, T0 + HOUR);
    h.apply(agentOrder(h, 1, 5, 7));
    revoke(h, 1, 5);
    expect(approve(h, 1, 5, T0 + HOUR)).toEqual([acc(K.APPROVE_AGENT, 1, 0), agentEvent(1, 5, T0 + HOUR, 7, 7, 'mm')]);
    expect(h.apply(agentOrder(h, 1, 5, 7))).toEqual([rej(K.PLACE, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
    expect(h.apply(agentOrder(h, 1, 5, 8))[0].type).toBe('accepted');
    // Re-approving a live agent keeps its mark and moves its expiry.
    expect(approve(h, 1, 5, T0 + 2 * HOUR, 'renamed')).toEqual([acc(K.APPROVE_AGENT, 1, 0), agentEvent(1, 5, T0 + 2 * HOUR, 8, 7, 'renamed')]);
  });

  it('refuses the 11th live agent (the default limit of 10); an expired one frees a place', () => {
    const h = make();
    for (let a = 3; a < 13; a++) expect(approve(h, 1, a, a === 3 ? T0 + 1_000 : T0 + HOUR)[0].type).toBe('accepted');
    expect(approve(h, 1, 13, T0 + HOUR)).toEqual([rej(K.APPROVE_AGENT, 1, RJ.AGENTS_MAX)]);
    // Re-approving one of the ten is no 11th.
    expect(approve(h, 1, 12, T0 + 2 * HOUR)[0].type).toBe('accepted');
    h.beginBatch(T0 + 1_000);
    const events = approve(h, 1, 13, T0 + HOUR);
    expect(events[0]).toEqual(acc(K.APPROVE_AGENT, 1, 0));
    expect(events[1]).toEqual(agentEvent(1, 3, 0, 0, 0, ''));
    expect(h.state().agents[0].agents.map((a) => a.agent)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });
});
