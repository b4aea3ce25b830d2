// Who signed a request (DECISIONS, "Agent keys"; docs/api.md): the user itself, or, for the kinds
// an agent may sign (orders, cancels, amends, cancel-all, cancel-after and batch items of those),
// one of the user's agents that the read model holds live now. Anything else is INVALID_SIGNATURE,
// as a bad signature is. The front's check only spares the engine hopeless requests: the engine
// re-checks the signer at apply time against the agents live at the batch's time (a revocation
// earlier in the same batch wins there), and the verifier re-checks that the signature recovers to
// the signer the record names (src/da/consent_check.ts).
//
// Cost: one recovery per message form whatever the number of agents: the pool compares the
// recovered address with the user and each live agent (signature_batcher.ts checkSigners), so a
// bad signature for a user with ten agents costs what it costs for a user with none.
import { agentMaySign } from '../engine/agents.js';
import type { GatewayContext } from './context.js';
import { SignatureCheckError, type CheckFailure } from './signature_batcher.js';
import type { StageStamps } from './stage_timings.js';
import type { SignedRequest } from './signed_body.js';

export interface SignerVerdict {
  /** The message form that verified (journaled with the signature), or null: no candidate signed it. */
  message: string | null;
  /** Lowercase 0x address of the agent that signed, or null when the user did. */
  signer: string | null;
}

/** Runs with the form that verified (null: none), why no verdict (0: there is one), and the agent that signed (null: the user). */
export type SignerFound = (message: string | null, failed: CheckFailure, signer: string | null) => void;

/**
 * The user's agents that may sign this request now, as lowercase addresses: none unless the kind
 * is one an agent may sign and the user has live agents.
 */
export function liveAgents(ctx: GatewayContext, parsed: SignedRequest): readonly string[] {
  const rm = ctx.rm;
  // No agent anywhere (the common case): no probe of the map of every account by address (~1% of
  // the front's on-CPU samples at max rate, issue 11).
  if (!agentMaySign(parsed.request.kind) || !rm.agents.any) return NO_AGENTS;
  const user = rm.account_by_address.get(parsed.address);
  if (user === undefined || !rm.agents.hasAny(user)) return NO_AGENTS;
  const now_ms = Date.now();
  return rm.agents.of(user).filter((a) => a.valid_until_ms > now_ms).map((a) => rm.address_by_account[a.agent]);
}

const NO_AGENTS: readonly string[] = [];

/** Who signed `parsed`: the user or one of its live agents (callback form: the per-request path). */
export function checkSigner(ctx: GatewayContext, parsed: SignedRequest, stamps: StageStamps | null, found: SignerFound): void {
  const agents = liveAgents(ctx, parsed);
  ctx.signatures.checkSigners(parsed.messages, parsed.signature_hex, parsed.address, agents.length === 0 ? undefined : agents, stamps, found);
}

/** checkSigner as a promise (POST /orders/batch); rejects (SignatureCheckError) when it could not be checked. */
export function verifySigner(ctx: GatewayContext, parsed: SignedRequest): Promise<SignerVerdict> {
  return new Promise<SignerVerdict>((resolve, reject) => checkSigner(ctx, parsed, null, (message, failed, signer) => {
    if (failed !== 0) reject(new SignatureCheckError(failed));
    else resolve({ message, signer });
  }));
}
