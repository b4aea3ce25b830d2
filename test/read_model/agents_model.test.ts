// The read model's agent view: `any` (whether some user has an agent entry, which lets the signed
// routes skip looking the account up) follows approvals, re-approvals, revocations and restores.
import { describe, expect, it } from 'vitest';
import { AgentsModel } from '../../src/read_model/agents_model.js';
import { AgentField, EventType, type EventFields } from '../../src/ring/event_records.js';

/** An AGENT event: `valid_until_ms` 0 revokes. */
function agentEvent(user: number, agent: number, valid_until_ms: number): EventFields {
  const f = [0, 0, 0, 0, 0];
  f[AgentField.ACCOUNT] = user;
  f[AgentField.AGENT] = agent;
  f[AgentField.VALID_UNTIL_MS] = valid_until_ms;
  return { type: () => EventType.AGENT, field: (k) => f[k], clientOrderId: () => 'bot', addressHex: () => '' };
}

describe('AgentsModel.any', () => {
  it('is true exactly while some user holds an agent entry', () => {
    const m = new AgentsModel();
    expect(m.any).toBe(false);
    m.apply(agentEvent(1, 10, 5_000));
    expect(m.any).toBe(true);
    m.apply(agentEvent(1, 10, 9_000)); // re-approved: still one entry
    m.apply(agentEvent(2, 11, 9_000));
    m.apply(agentEvent(1, 10, 0));
    expect(m.any).toBe(true); // user 2's agent remains
    m.apply(agentEvent(2, 11, 0));
    expect(m.any).toBe(false);
    m.apply(agentEvent(2, 11, 0)); // revoking what is gone changes nothing
    expect(m.any).toBe(false);
    expect(m.hasAny(1)).toBe(false);
  });

  it('counts what a snapshot restores', () => {
    const m = new AgentsModel();
    m.importState([{ account: 3, nonce_floor: 0, agents: [{ agent: 12, name: 'a', valid_until_ms: 1, nonce_high_water: 0 }] }]);
    expect(m.any).toBe(true);
    m.apply(agentEvent(3, 12, 0));
    expect(m.any).toBe(false);
  });
});
