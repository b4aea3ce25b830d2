// `ringbook contract deploy`, `ringbook withdraw-onchain`, `ringbook escape`: the settlement
// contract from the command line (docs/settlement.md). The chain is any JSON-RPC endpoint
// (--rpc, else settlement.rpc_url); transactions are signed locally with --key.
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { engineConfigOf } from '../config/read.js';
import { ConfigError } from '../config/checks.js';
import type { RingbookConfig } from '../config/types.js';
import { addressFromPrivateKey } from '../auth/sign.js';
import { onchainAmount } from '../auth/withdrawal.js';
import { parseDecimalUnits } from '../money/index.js';
import { deploySettlement, SettlementContract } from '../settlement/contract.js';
import { escape, EscapeError } from '../settlement/escape.js';
import { isUnanswered, JsonRpc, RevertError } from '../settlement/rpc.js';
import { AnswerTooLargeError, isTimeout, readAnswer } from '../util/bounded_answer.js';
import { isAddress } from '../util/address.js';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE, int, req, str, unreachableHint, UsageError, type ParsedArgs } from './common.js';

// Each command's own usage, listing every option its parser reads (--json was read by all three
// but named by none: an operator scripting a deploy had to find it in the source).
const SETTLEMENT_OPTIONS_USAGE = `  --rpc <url>                JSON-RPC endpoint of the chain (default: config settlement.rpc_url)
  --config <file>            JSON merged over config/default.json (as RINGBOOK_CONFIG)
  --json                     machine-readable output (with an error: {"ok":false,...} on stdout)
  --help                     this text`;
const SETTLEMENT_EXITS_USAGE = 'exit codes: 0 ok, 1 error (a revert names the contract\'s error; a bad config), 64 usage';

const USAGE: Readonly<Record<'contract' | 'withdraw-onchain' | 'escape', string>> = {
  contract: `usage: ringbook contract deploy --key <deployer key> [--operator <address>] [--rpc <url>] [--config <file>] [--json]

Deploys contracts/Settlement.sol for the config's assets (in config order); the operator
(default: the deployer) signs withdrawals and posts roots. Prints {contract, block, ...}:
put contract and block into the config (settlement.contract, settlement.start_block).

options:
  --key <private_key>        the deployer's key (0x + 64 hex)
  --operator <address>       the operator address (default: the deployer's)
${SETTLEMENT_OPTIONS_USAGE}

${SETTLEMENT_EXITS_USAGE}`,
  'withdraw-onchain': `usage: ringbook withdraw-onchain --key <user key> --asset <SYMBOL> --amount <decimal> --nonce <n>
       [--signature <0x..> | --url <server>] [--contract <address>] [--rpc <url>] [--config <file>] [--json]

Pays a pending withdrawal on chain with the operator's signature (fetched from the server's
POST /withdrawal-signature unless --signature is given).

options:
  --key <private_key>        the user's key (0x + 64 hex)
  --asset <SYMBOL>           the withdrawn asset (a symbol of the config's assets)
  --amount <decimal>         the withdrawn amount, in whole units
  --nonce <n>                the withdrawal's nonce
  --signature <0x..>         the operator's signature (default: asked of --url)
  --url <base_url>           the server that signs it (without --signature)
  --contract <address>       the settlement contract (default: config settlement.contract)
${SETTLEMENT_OPTIONS_USAGE}

${SETTLEMENT_EXITS_USAGE}`,
  escape: `usage: ringbook escape --key <user key> --url <DA source> [--contract <address>] [--rpc <url>] [--config <file>] [--json]

Once the contract is frozen: re-executes the published batches up to the last posted root,
proves the key's balances and pending withdrawals against it and claims each once.

options:
  --key <private_key>        the user's key (0x + 64 hex)
  --url <base_url>           where the published batches are read (the DA source)
  --contract <address>       the settlement contract (default: config settlement.contract)
${SETTLEMENT_OPTIONS_USAGE}

${SETTLEMENT_EXITS_USAGE}`,
};

function configOf(args: ParsedArgs): RingbookConfig {
  const file = str(args, 'config');
  return loadConfig(file === undefined ? process.env : { ...process.env, RINGBOOK_CONFIG: path.resolve(file) });
}

function rpcOf(args: ParsedArgs, cfg: RingbookConfig): JsonRpc {
  const url = str(args, 'rpc') ?? cfg.settlement.rpc_url;
  if (url === null) throw new UsageError('--rpc is required (no settlement.rpc_url in the config)');
  return new JsonRpc(url);
}

function keyOf(args: ParsedArgs): string {
  const key = req(args, 'key');
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new UsageError('--key must be 0x + 64 hex digits');
  return key;
}

function contractOf(args: ParsedArgs, cfg: RingbookConfig, rpc: JsonRpc): SettlementContract {
  const address = str(args, 'contract') ?? cfg.settlement.contract;
  if (!isAddress(address)) throw new UsageError('--contract must be an address');
  return new SettlementContract(rpc, address.toLowerCase());
}

function print(args: ParsedArgs, value: Record<string, unknown>, text: string): void {
  console.log(args.flags.has('json') ? JSON.stringify(value) : text);
}

async function deploy(args: ParsedArgs): Promise<number> {
  const cfg = configOf(args);
  const rpc = rpcOf(args, cfg);
  const key = keyOf(args);
  const operator = (str(args, 'operator') ?? addressFromPrivateKey(key)).toLowerCase();
  if (!isAddress(operator)) throw new UsageError('--operator must be an address');
  const chain_id = await reaching('JSON-RPC endpoint', rpc.url, RPC_FROM, () => rpc.chainId());
  if (chain_id !== cfg.settlement.chain_id) {
    throw new UsageError(`the endpoint's chain id is ${chain_id}, the config's settlement.chain_id is ${cfg.settlement.chain_id}`);
  }
  const assets = cfg.assets.map((a) => ({ address: onchainAmount(a, 0).asset_address, decimals: a.onchain_decimals }));
  const { address, receipt } = await reaching('JSON-RPC endpoint', rpc.url, RPC_FROM, () => deploySettlement(rpc, key, operator, assets));
  const out = { contract: address, block: Number(receipt.blockNumber), chain_id, operator, gas_used: Number(receipt.gasUsed) };
  print(args, out, `Settlement deployed at ${address} (block ${out.block}, chain ${chain_id}, operator ${operator}, gas ${out.gas_used})`);
  return EXIT_OK;
}

/** Where the chain's URL is set, for a message that names it. */
const RPC_FROM = '--rpc, config settlement.rpc_url';

/** Nothing answered at a URL the command calls: 'fetch failed' alone named neither the server nor the chain. */
class EndpointUnreachable extends Error {}

/** `call`, whose fetches go to `url` (the `what` set by `from`): a failure to reach it names the URL. */
async function reaching<T>(what: string, url: string, from: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (!isUnanswered(e)) throw e;
    const err = e as Error;
    const cause = err.cause instanceof Error && err.cause.message !== '' ? ` (${err.cause.message})` : '';
    const hint = unreachableHint(err, url, what, from);
    throw new EndpointUnreachable(`${err.message}${cause}${hint !== '' ? hint : `: the ${what} at ${url} (${from})`}`);
  }
}

/** The server would not sign (no such pending withdrawal, or not posted in time). */
class SignatureUnavailable extends Error {}

/** How long withdraw-onchain waits for the server to sign (it signs once the root is posted). */
const SIGNATURE_WAIT_MS = 60_000;
const SIGNATURE_POLL_MS = 500;
/**
 * Longest answer of POST /withdrawal-signature read: its answer is `{ok, data: {signature, ...}}`
 * (a 65-byte signature as 132 hex characters, the request's fields: a few hundred bytes) or an
 * error envelope of one message; 64 KiB is far above either.
 */
export const SIGNATURE_ANSWER_BYTES_MAX = 64 * 1024;
/**
 * How long one POST /withdrawal-signature may take, body included: the server answers from memory
 * at once (a signature, or "no signature yet"); as the JSON-RPC client's RPC_TIMEOUT_MS.
 */
export const SIGNATURE_FETCH_TIMEOUT_MS = 10_000;

/** Bounds of fetchSignature's requests; tests pass small ones (defaults: the constants above). */
export interface SignatureFetchOptions {
  timeout_ms?: number;
  bytes_max?: number;
}

/**
 * The server's signature of the withdrawal, asked again while it says "no signature yet" (until
 * SIGNATURE_WAIT_MS). Each answer is read up to `bytes_max` (AnswerTooLargeError past it) within
 * `timeout_ms` (else EndpointUnreachable naming the URL and the bound). Before (2026-11-29, h32b)
 * a server that never answered hung the command, and one streaming without end filled its memory.
 */
export async function fetchSignature(
  server: string, body: { user: string; asset: string; amount: string; nonce: number }, opts: SignatureFetchOptions = {},
): Promise<string> {
  const deadline = Date.now() + SIGNATURE_WAIT_MS;
  const url = server.replace(/\/$/, '') + '/withdrawal-signature';
  const timeout_ms = opts.timeout_ms ?? SIGNATURE_FETCH_TIMEOUT_MS;
  for (;;) {
    let text: string;
    try {
      const res = await fetch(url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeout_ms),
      });
      text = await readAnswer(res, opts.bytes_max ?? SIGNATURE_ANSWER_BYTES_MAX);
    } catch (e) {
      if (!isTimeout(e)) throw e;
      throw new EndpointUnreachable(`no whole answer within ${timeout_ms} ms from the server at ${url} (--url)`);
    }
    const r = JSON.parse(text) as { ok: boolean; data?: { signature: string }; error?: string; message?: string };
    if (r.ok && r.data !== undefined) return r.data.signature;
    const later = typeof r.message === 'string' && r.message.startsWith('no signature yet');
    if (!later || Date.now() > deadline) throw new SignatureUnavailable(`POST /withdrawal-signature: ${r.error}: ${r.message}`);
    await new Promise((resolve) => setTimeout(resolve, SIGNATURE_POLL_MS));
  }
}

async function withdrawOnchain(args: ParsedArgs): Promise<number> {
  const cfg = configOf(args);
  const rpc = rpcOf(args, cfg);
  const key = keyOf(args);
  const user = addressFromPrivateKey(key);
  const symbol = req(args, 'asset');
  const asset = cfg.assets.find((a) => a.symbol === symbol);
  if (asset === undefined) throw new UsageError(`--asset must be one of ${cfg.assets.map((a) => a.symbol).join(', ')}`);
  const amount = req(args, 'amount');
  const units = parseDecimalUnits(amount, { allow_negative: false });
  const nonce = int(args, 'nonce', -1, 0);
  if (nonce < 0) throw new UsageError('--nonce is required');
  let signature = str(args, 'signature');
  if (signature === undefined) {
    const server = req(args, 'url');
    const body = { user, asset: symbol, amount, nonce };
    signature = await reaching('server', server, '--url', () => fetchSignature(server, body));
  }
  const { asset_address, amount_wei } = onchainAmount(asset, units);
  const c = contractOf(args, cfg, rpc);
  const signed = signature;
  const r = await reaching('JSON-RPC endpoint', rpc.url, RPC_FROM, () => c.withdraw(key, user, asset_address, amount_wei, nonce, signed));
  const out = { tx: r.transactionHash, user, asset: asset_address, amount_wei: amount_wei.toString(), nonce, gas_used: Number(r.gasUsed) };
  print(args, out, `paid ${amount} ${symbol} (${amount_wei} base units) to ${user}, nonce ${nonce} (tx ${r.transactionHash}, gas ${out.gas_used})`);
  return EXIT_OK;
}

async function escapeCommand(args: ParsedArgs): Promise<number> {
  const cfg = configOf(args);
  const rpc = rpcOf(args, cfg);
  const key = keyOf(args);
  const c = contractOf(args, cfg, rpc);
  const report = await escape(c, key, engineConfigOf(cfg), req(args, 'url'));
  const lines = report.paid.map((p) => `  ${cfg.assets[p.asset]?.symbol ?? p.asset} ${p.kind}${p.nonce === null ? '' : ` nonce ${p.nonce}`}: ${p.amount} base units (gas ${p.gas_used})`);
  print(args, report as unknown as Record<string, unknown>,
    `escape of ${report.user} against batch ${report.escape_batch_id} (root ${report.escape_root}):\n` +
    (lines.length === 0 ? '  nothing left to claim' : lines.join('\n')) + (report.already_paid > 0 ? `\n  ${report.already_paid} claim(s) already paid` : ''));
  return EXIT_OK;
}

export async function settlementCommand(command: 'contract' | 'withdraw-onchain' | 'escape', args: ParsedArgs): Promise<number> {
  const usage = USAGE[command];
  if (args.flags.has('help')) {
    console.log(usage);
    return EXIT_OK;
  }
  try {
    if (command === 'contract') {
      if (args.positional[1] !== 'deploy') throw new UsageError('ringbook contract deploy ...');
      return await deploy(args);
    }
    if (command === 'withdraw-onchain') return await withdrawOnchain(args);
    return await escapeCommand(args);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`ringbook: ${e.message}\n\n${usage}`);
      return EXIT_USAGE;
    }
    // A bad config file is not a bad command line: its message only, and exit 1 as the other
    // commands that read the config (replay, snapshot, journal; runCommand) and the server.
    if (e instanceof ConfigError) {
      console.error(`ringbook: ${e.message}`);
      return EXIT_ERROR;
    }
    if (e instanceof RevertError || e instanceof EscapeError || e instanceof SignatureUnavailable || e instanceof EndpointUnreachable
      || e instanceof AnswerTooLargeError) {
      const error = e instanceof RevertError ? e.error_name : e instanceof EscapeError ? 'ESCAPE'
        : e instanceof EndpointUnreachable ? 'UNREACHABLE' : e instanceof AnswerTooLargeError ? 'ANSWER_TOO_LARGE' : 'NO_SIGNATURE';
      if (args.flags.has('json')) console.log(JSON.stringify({ ok: false, error, message: e.message }));
      console.error(`ringbook: ${e.message}`);
      return EXIT_ERROR;
    }
    throw e;
  }
}
