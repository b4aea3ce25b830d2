// The escape hatch from the user's side (`ringbook escape`, docs/settlement.md): once the
// contract is frozen, re-execute the published batches up to the last posted one (checking each
// like `ringbook verify`), require the re-executed root to be the contract's escape root, and
// claim every balance and pending withdrawal the user has in it, each once.
import type { EngineConfig } from '../engine/api.js';
import { addressFromPrivateKey } from '../auth/sign.js';
import { batchFromJson } from '../da/published.js';
import { getData, Verifier } from '../da/verifier.js';
import type { AbiArg } from './abi_codec.js';
import { SettlementContract } from './contract.js';
import { escapeProofs } from './state_proof.js';

/** Batches per GET /da/batches page (the route's maximum). */
const PAGE = 100;

export interface EscapeReport {
  user: string;
  escape_batch_id: number;
  escape_root: string;
  /** Claims paid now: asset index, kind, base units paid, gas. */
  paid: { asset: number; kind: 'balance' | 'withdrawal'; nonce: number | null; amount: string; gas_used: number }[];
  /** Claims already paid before (by an earlier escape, or a signed withdrawal). */
  already_paid: number;
}

export class EscapeError extends Error {}

/** Re-executes published batches 1..`last` from `da_url` and returns the verifier at `last`. */
export async function replayTo(engine_config: EngineConfig, da_url: string, last: number): Promise<Verifier> {
  const v = new Verifier(engine_config, { out_dir: null, source: da_url });
  let next = 1;
  while (next <= last) {
    const page = await getData(da_url, `/da/batches?from=${next}&limit=${Math.min(PAGE, last - next + 1)}`);
    if (!Array.isArray(page) || page.length === 0) throw new EscapeError(`the DA source has no batch ${next} (the escape root is batch ${last})`);
    for (const raw of page) {
      const verdict = v.verify(batchFromJson(raw));
      if (!verdict.ok) throw new EscapeError(`published batch ${verdict.batch_id} does not re-execute to its roots: ${verdict.error ?? verdict.fraud?.reasons.join('; ')}`);
      next = verdict.batch_id + 1;
      if (next > last) break;
    }
  }
  return v;
}

export async function escape(c: SettlementContract, key: string, engine_config: EngineConfig, da_url: string): Promise<EscapeReport> {
  const user = addressFromPrivateKey(key);
  const [frozen] = await c.read('frozen');
  if (frozen !== true) throw new EscapeError('the contract is not frozen: withdraw with the operator signature instead');
  const last = Number(await c.readNumber('lastBatchId'));
  const [root] = (await c.read('escapeRoot')) as string[];
  const v = await replayTo(engine_config, da_url, last);
  if (v.state_root !== root) {
    throw new EscapeError(`re-executing batches 1..${last} gives root ${v.state_root}, the contract's escape root is ${root}: no leaf of the real state can be proven against it`);
  }
  const proofs = escapeProofs(v.builder, user, engine_config.assets.length);
  const report: EscapeReport = { user, escape_batch_id: last, escape_root: root, paid: [], already_paid: 0 };
  if (proofs === null) return report;
  /** Sends one claim unless its flag says it was paid; records what it paid. */
  const claim = async (paid: boolean, asset: number, kind: 'balance' | 'withdrawal', nonce: number | null, units: bigint, call: string, args: AbiArg[]): Promise<void> => {
    if (paid) {
      report.already_paid++;
      return;
    }
    const r = await c.send(key, call, args);
    const scale = (await c.read('unitScale', [asset]))[0] as bigint;
    report.paid.push({ asset, kind, nonce, amount: String(units * scale), gas_used: Number(r.gasUsed) });
  };
  for (const b of proofs.balances) {
    await claim((await c.read('escaped', [user, b.asset]))[0] === true, b.asset, 'balance', null,
      BigInt(b.available_units) + BigInt(b.locked_units),
      'escape', [proofs.account, b.asset, b.available_units, b.locked_units, proofs.account_proof, b.proof]);
  }
  for (const w of proofs.withdrawals) {
    await claim((await c.read('withdrawn', [user, w.nonce]))[0] === true, w.asset, 'withdrawal', w.nonce, BigInt(w.amount_units),
      'escapeWithdrawal', [proofs.account, w.nonce, w.asset, w.amount_units, proofs.account_proof, w.proof]);
  }
  return report;
}
