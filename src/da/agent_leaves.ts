// Agent-key leaves (docs/verifiability.md, "State root"; src/engine/agents.ts):
//   0x12 agent:        key user u32 || agent u32; value valid_until_ms u64, nonce_high_water u64,
//                      name length u8, name (ASCII) zero-padded to 16 bytes. Removed when the entry
//                      leaves (revoked, or expired and pruned at the user's next approval).
//   0x13 agent floor:  key user u32; value nonce_floor u64 (the mark a new agent of the user starts
//                      at); absent while 0, and it never goes back.
// Event side: every AGENT event carries the entry and the floor after the change (state_root.ts);
// canonical side: the canonical state's `agents` (agentLeavesOfCanonical).
import type { CanonicalState } from '../engine/api.js';
import { AGENT_NAME_BYTES_MAX } from '../engine/agents.js';
import { LeafKind, need, putU32, putU64, putU8, type PendingLeaf } from './state_leaves.js';

export const AGENT_VALUE_BYTES = 8 + 8 + 1 + AGENT_NAME_BYTES_MAX;

export interface AgentLeafFields {
  valid_until_ms: number;
  nonce_high_water: number;
  name: string;
}

export function agentLeafId(user: number, agent: number): string {
  return `18:${user}:${agent}`;
}

/** The agent entry's leaf; `e` null removes it. */
export function agentLeaf(user: number, agent: number, e: AgentLeafFields | null): [string, PendingLeaf] {
  const k = new Uint8Array(8); putU32(k, 0, user); putU32(k, 4, agent);
  let v: Uint8Array | null = null;
  if (e !== null) {
    need(e.name.length <= AGENT_NAME_BYTES_MAX, 'agent name longer than 16');
    v = new Uint8Array(AGENT_VALUE_BYTES);
    putU64(v, 0, e.valid_until_ms); putU64(v, 8, e.nonce_high_water); putU8(v, 16, e.name.length);
    for (let i = 0; i < e.name.length; i++) putU8(v, 17 + i, e.name.charCodeAt(i));
  }
  return [agentLeafId(user, agent), { kind: LeafKind.AGENT, key: k, value: v }];
}

export function agentFloorLeaf(user: number, nonce_floor: number): [string, PendingLeaf] {
  const k = new Uint8Array(4); putU32(k, 0, user);
  const v = new Uint8Array(8); putU64(v, 0, nonce_floor);
  return [`19:${user}`, { kind: LeafKind.AGENT_NONCE_FLOOR, key: k, value: v }];
}

export function agentLeavesOfCanonical(s: Pick<CanonicalState, 'agents'>): [string, PendingLeaf][] {
  const out: [string, PendingLeaf][] = [];
  for (const u of s.agents) {
    if (u.nonce_floor > 0) out.push(agentFloorLeaf(u.account, u.nonce_floor));
    for (const a of u.agents) out.push(agentLeaf(u.account, a.agent, a));
  }
  return out;
}
