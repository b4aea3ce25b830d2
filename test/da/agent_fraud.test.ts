// The verifier re-checks agent signatures against the approvals in force at the request's batch
// (docs/verifiability.md, "Agent keys"): an operator whose engine let an expired (or revoked)
// agent's order through publishes a root that re-execution does not reproduce, while the honest
// operator's same inputs verify. The cheating operator is the real matcher and engine with the
// agent check taught to ignore time and revocations (what a dishonest sequencer would run).
import { describe, expect, it } from 'vitest';
import type { AgentTable } from '../../src/engine/agents.js';
import { toHex0x } from '../../src/util/hex.js';
import { keccak256 } from '../../src/da/keccak.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { Verifier } from '../../src/da/verifier.js';
import { emptyRequest, RequestKind, Side, type Request } from '../../src/engine/types.js';
import { standardConfig, USDC } from '../engine/generator.js';
import { recordsOf } from './records.js';

const T0 = Date.UTC(2026, 10, 25);
const config = standardConfig();

function req(kind: number, f: Partial<Request>): Request {
  return Object.assign(emptyRequest(), { kind }, f);
}

/** Batches of requests: [time, requests]. User 1 approves account 2 as its agent until T0 + 5 s, then revokes account 3. */
const BATCHES: [number, Request[]][] = [
  [T0, [
    req(RequestKind.DEPOSIT, { account: 1, asset: USDC, amount_units: 10_000_000_000 }),
    req(RequestKind.DEPOSIT, { account: 2, asset: USDC, amount_units: 1 }),
    req(RequestKind.DEPOSIT, { account: 3, asset: USDC, amount_units: 1 }),
    req(RequestKind.APPROVE_AGENT, { account: 1, nonce: 1, agent_account: 2, amount_units: T0 + 5_000, client_order_id: 'expiring' }),
    req(RequestKind.APPROVE_AGENT, { account: 1, nonce: 2, agent_account: 3, amount_units: T0 + 3_600_000, client_order_id: 'revoked' }),
    req(RequestKind.REVOKE_AGENT, { account: 1, nonce: 3, agent_account: 3 }),
  ]],
  // Agent 2 signs at T0 + 10 s (expired); agent 3 after its revocation.
  [T0 + 10_000, [req(RequestKind.PLACE, { account: 1, signer: 2, nonce: 1, market: 0, side: Side.BID, price_units: 2_000_000_000, quantity_units: 100 })]],
  [T0 + 11_000, [req(RequestKind.PLACE, { account: 1, signer: 3, nonce: 1, market: 0, side: Side.BID, price_units: 2_000_000_000, quantity_units: 100 })]],
];

type Cheat = 'none' | 'ignore_expiry' | 'ignore_revocation';

/**
 * Runs BATCHES through an operator (the real matcher and engine), returning what it would
 * publish. A cheating operator's agent table ignores expiry (every entry live whatever the batch
 * time) or revocations (answered, the entry kept).
 */
function operate(cheat: Cheat): PublishedBatch[] {
  const op = new ReplayExecutor(config);
  // The fast engine holds its agent table in its state part (engine_state.ts).
  const agents = (op.engine as unknown as { st: { agents: AgentTable } }).st.agents;
  if (cheat === 'ignore_expiry') {
    const honest = agents.checkSigner.bind(agents);
    agents.checkSigner = (user, signer, kind, nonce) => honest(user, signer, kind, nonce, 0);
  } else if (cheat === 'ignore_revocation') {
    agents.revoke = () => undefined;
  }
  let prev = op.genesis().state_root;
  return BATCHES.map(([time, requests], i) => {
    const records = recordsOf(requests);
    const bytes = new Uint8Array(records.buffer, records.byteOffset, records.byteLength);
    const roots = op.apply(i + 1, time, records, requests.length);
    const b: PublishedBatch = {
      header: {
        batch_id: i + 1, prev_state_root: prev, state_root: roots.state_root, fills_root: roots.fills_root,
        input_hash: toHex0x(keccak256(bytes)), timestamp: time,
      },
      inputs_hex: Buffer.from(bytes).toString('hex'),
      fills: roots.fills,
      state_diff: roots.state_diff,
    };
    prev = roots.state_root;
    return b;
  });
}

describe('verify re-checks agent signatures against the approvals in force at the batch', () => {
  it('an honest operator refuses the expired and the revoked agent, and verifies clean', () => {
    const v = new Verifier(config);
    expect(operate('none').map((b) => v.verify(b).ok)).toEqual([true, true, true]);
  });

  it('an operator that lets an expired agent trade is caught at that batch: its order is a leaf re-execution never made', () => {
    const published = operate('ignore_expiry');
    const v = new Verifier(config);
    expect(v.verify(published[0]).ok).toBe(true);
    const caught = v.verify(published[1]);
    expect(caught.ok).toBe(false);
    expect(caught.fraud?.reasons.join('\n')).toMatch(/re-execution gives state_root/);
    expect(caught.fraud?.first_differing_leaf).toMatchObject({ id: 'open_order/order_id=1', expected: null });
  });

  it('an operator that keeps a revoked agent is caught at the revocation\'s batch', () => {
    const v = new Verifier(config);
    const caught = v.verify(operate('ignore_revocation')[0]);
    expect(caught.ok).toBe(false);
    expect(caught.fraud?.first_differing_leaf).toMatchObject({ id: 'agent/account=1/agent=3', expected: null });
  });
});
