// `ringbook batch FILE`: several order-entry requests in one POST /orders/batch, read from a JSON
// file (docs/api.md "POST /orders/batch"). Prices and quantities are decimals in whole units, as
// the `order` command's flags; each item is signed by the key's wallet with consecutive nonces.
import { readFileSync } from 'node:fs';
import {
  formatUnits, parseDecimalUnits, RingbookClient, type BatchItemResult, type BatchRequest,
} from '../client/index.js';
import {
  EXIT_ERROR, EXIT_OK, KEY_FLAG_USAGE, type ParsedArgs, runCommand, table, url, URL_FLAG_USAGE, UsageError, wallet,
} from './common.js';

export const BATCH_USAGE = `usage: ringbook batch <file> [options]

Sends up to 20 orders, cancels, amends and cancel-alls in one call, applied in order in one engine
batch. <file> is a JSON array (or - for standard input); each item has a "kind":
  {"kind":"order","market_id":"ETH-USDC","side":"bid","price":"1999.5","quantity":"0.1",
   "time_in_force":"post_only","stp":"expire_taker","client_order_id":"q1"}
  {"kind":"cancel","client_order_id":"q1"}        (or "order_id")
  {"kind":"amend","order_id":"42","price":"1999.6","quantity":"0.1"}
  {"kind":"cancel_all","market_id":"ETH-USDC"}    (no market_id: every market)
Prices and quantities are decimals in whole units; order fields as for \`ringbook order\`
(order_type, time_in_force, stp, expires_after_ms, client_order_id are optional).

options:
${KEY_FLAG_USAGE}
${URL_FLAG_USAGE}
  --json                     machine-readable output (the server's per-item results)
  --help                     this text

exit codes: 0 every item ok, 1 an item failed or an error (each item's result is printed), 64 usage error`;

const ORDER_KEYS = ['kind', 'market_id', 'side', 'price', 'quantity', 'order_type', 'time_in_force', 'client_order_id', 'stp', 'expires_after_ms'];

function decimal(v: unknown, what: string): number {
  if (typeof v !== 'string' && typeof v !== 'number') throw new UsageError(`${what} must be a decimal string, e.g. "0.1"`);
  try {
    return parseDecimalUnits(String(v), { allow_negative: false });
  } catch (e) {
    throw new UsageError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new UsageError(`${what} must be a string`);
  return v;
}

/** One file item as the SDK's batch input; throws UsageError naming the item. */
export function batchItemOf(raw: unknown, i: number): BatchRequest {
  const at = `item ${i}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageError(`${at} must be an object`);
  const o = raw as Record<string, unknown>;
  switch (o.kind) {
    case 'order': {
      for (const k of Object.keys(o)) if (!ORDER_KEYS.includes(k)) throw new UsageError(`${at}: unknown field ${k}`);
      const order_type = o.order_type === undefined ? 'limit' : text(o.order_type, `${at} order_type`);
      if (order_type !== 'limit' && order_type !== 'market') throw new UsageError(`${at}: order_type must be limit or market`);
      const side = text(o.side, `${at} side`);
      if (side !== 'bid' && side !== 'ask') throw new UsageError(`${at}: side must be bid or ask`);
      return {
        kind: 'order', market_id: text(o.market_id, `${at} market_id`), side, order_type,
        quantity: decimal(o.quantity, `${at} quantity`),
        ...(order_type === 'limit' ? { price: decimal(o.price, `${at} price`) } : {}),
        ...(o.time_in_force !== undefined ? { time_in_force: text(o.time_in_force, `${at} time_in_force`) as 'gtc' } : {}),
        ...(o.client_order_id !== undefined ? { client_order_id: text(o.client_order_id, `${at} client_order_id`) } : {}),
        ...(o.stp !== undefined ? { stp: text(o.stp, `${at} stp`) as 'expire_maker' } : {}),
        ...(o.expires_after_ms !== undefined ? { expires_after_ms: Number(o.expires_after_ms) } : {}),
      };
    }
    case 'cancel':
      if (o.order_id === undefined && o.client_order_id === undefined) throw new UsageError(`${at}: order_id or client_order_id is required`);
      return {
        kind: 'cancel',
        ...(o.order_id !== undefined ? { order_id: String(o.order_id) } : {}),
        ...(o.client_order_id !== undefined ? { client_order_id: text(o.client_order_id, `${at} client_order_id`) } : {}),
      };
    case 'amend':
      return { kind: 'amend', order_id: String(o.order_id), price: decimal(o.price, `${at} price`), quantity: decimal(o.quantity, `${at} quantity`) };
    case 'cancel_all':
      return { kind: 'cancel_all', ...(o.market_id !== undefined ? { market_id: text(o.market_id, `${at} market_id`) } : {}) };
    default:
      throw new UsageError(`${at}: kind must be order, cancel, amend or cancel_all`);
  }
}

function describe(r: BatchItemResult): string {
  if (!r.ok) return `${r.error}: ${r.message}`;
  const d = r.data as unknown as Record<string, unknown>;
  if (Array.isArray(d.cancelled)) return `cancelled ${d.cancelled.length} orders`;
  const filled = typeof d.filled_quantity === 'number' ? ` filled ${formatUnits(d.filled_quantity)}` : '';
  return `order ${String(d.order_id)} ${String(d.status)}${filled}`;
}

export async function batchCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, BATCH_USAGE, async () => {
    const file = args.positional[1];
    if (file === undefined) throw new UsageError('the batch file is required');
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
    } catch (e) {
      throw new UsageError(`cannot read ${file} as JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!Array.isArray(parsed) || parsed.length === 0) throw new UsageError('the file must hold a non-empty JSON array of requests');
    const items = parsed.map(batchItemOf);
    const client = new RingbookClient({ base_url: url(args), wallet: wallet(args) });
    await client.syncNonce();
    const results = await client.batch(items);
    if (args.flags.has('json')) console.log(JSON.stringify(results));
    else console.log(table(['#', 'kind', 'result'], results.map((r, i) => [String(i), items[i].kind, describe(r)])));
    return results.every((r) => r.ok) ? EXIT_OK : EXIT_ERROR;
  });
}
