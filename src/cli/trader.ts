// `ringbook deposit | order | cancel | balances`: the trader commands, on the SDK
// (src/client). Decimal prices and quantities are converted with the money module.
import { formatUnits, RingbookClient, type OrderRecord, type OrderResult, type TakerFill } from '../client/index.js';
import {
  adminToken, EXIT_OK, int, KEY_FLAG_USAGE, oneOf, orderFlags, type ParsedArgs, req, runCommand, str, table,
  TRADING_COMMON_USAGE, TRADING_EXITS_USAGE, tradingSigner, units, url, UsageError, wallet,
} from './common.js';

const FOR = `  --for <user address>       sign as an agent key of this user (ringbook agent approve)`;

export const DEPOSIT_USAGE = `usage: ringbook deposit --user <address> --asset <asset> --amount <decimal> [options]

Credits an account (operator deposit, needs the admin token).

options:
  --user <address>           account to credit
  --asset <symbol>           ETH, USDC, ...
  --amount <decimal>         whole units, e.g. 2 or 1234.5
  --admin-token <token>      default: RINGBOOK_ADMIN_TOKEN, else <data-dir>/admin_token
  --data-dir <dir>           where admin_token is looked for (default: RINGBOOK_DATA_DIR or config)
${TRADING_COMMON_USAGE}

${TRADING_EXITS_USAGE}`;

export const ORDER_USAGE = `usage: ringbook order --market <id> --side bid|ask --quantity <decimal> [--price <decimal>] [options]

Signs and places an order; prints the order record and its fills.

options:
  --market <id>              e.g. ETH-USDC
  --side bid|ask
  --price <decimal>          limit price in quote units (required for limit orders)
  --quantity <decimal>       base quantity
  --type limit|market        default limit
  --tif gtc|ioc|fok|post_only  default gtc (limit) / ioc (market)
  --client-id <id>           your own order id (cancel it with --client-id)
  --stp <mode>               self-trade prevention: expire_maker (server default), expire_taker,
                             expire_both
  --expires-after-ms <ms>    refused with EXPIRED if the engine applies it later (epoch ms)
${KEY_FLAG_USAGE}
${FOR}
${TRADING_COMMON_USAGE}

${TRADING_EXITS_USAGE}`;

export const CANCEL_USAGE = `usage: ringbook cancel (--order-id <n> | --client-id <id>) [options]

Cancels one open order of the key's account.

options:
  --order-id <n>             the exchange's order id
  --client-id <id>           the client order id given at placement
${KEY_FLAG_USAGE}
${FOR}
${TRADING_COMMON_USAGE}

${TRADING_EXITS_USAGE}`;

export const BALANCES_USAGE = `usage: ringbook balances (--address <address> | --key <private_key>) [options]

Prints an account's available and locked balances and its nonce high-water mark.

options:
  --address <address>        account to show
${KEY_FLAG_USAGE}
${TRADING_COMMON_USAGE}

${TRADING_EXITS_USAGE}`;

export async function depositCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, DEPOSIT_USAGE, async () => {
    const user = req(args, 'user');
    const asset = req(args, 'asset');
    const amount_units = units(args, 'amount'); // validates the decimal
    const client = new RingbookClient({ base_url: url(args), admin_token: adminToken(args) });
    const r = await client.deposit({ user, asset, amount: formatUnits(amount_units) });
    if (args.flags.has('json')) console.log(JSON.stringify(r));
    else {
      console.log(`deposited ${formatUnits(r.amount)} ${r.asset} to ${r.user} (batch ${r.batch_id})`);
      console.log(`balance   available ${formatUnits(r.balance.available)}  locked ${formatUnits(r.balance.locked)}`);
    }
    return EXIT_OK;
  });
}

function orderRows(o: OrderRecord): string[][] {
  return [
    ['order_id', String(o.order_id)],
    ['client_order_id', o.client_order_id || '-'],
    ['status', o.status],
    ['market', o.market_id],
    ['side', o.side],
    ['type', `${o.order_type} ${o.time_in_force}`],
    ['price', o.order_type === 'market' ? 'market' : formatUnits(o.price)],
    ['quantity', formatUnits(o.quantity)],
    ['filled', formatUnits(o.filled_quantity)],
    ['remaining', formatUnits(o.remaining_quantity)],
    ['updated_at', o.updated_at],
  ];
}

/**
 * A fill's fee is in the market's quote asset whichever the side (docs/api.md, "Fees"; the answer
 * gives the amount only): `BASE-QUOTE` ids (config: symbols are [A-Z0-9], no dash).
 */
function feeAsset(market_id: string): string {
  return market_id.slice(market_id.indexOf('-') + 1);
}

function printFills(fills: TakerFill[], market_id: string): void {
  if (fills.length === 0) {
    console.log('fills: none');
    return;
  }
  console.log(`fills: ${fills.length}`);
  const asset = feeAsset(market_id);
  console.log(table(['fill_id', 'price', 'quantity', 'fee', 'role'], fills.map((f) => [
    String(f.fill_id), formatUnits(f.price), formatUnits(f.quantity), `${formatUnits(f.fee)} ${asset}`, f.is_maker ? 'maker' : 'taker',
  ])));
}

export async function orderCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, ORDER_USAGE, async () => {
    const order = orderFlags(args);
    const stp = args.flags.has('stp') ? oneOf(args, 'stp', ['expire_maker', 'expire_taker', 'expire_both'] as const, 'expire_maker') : undefined;
    const expires_after_ms = args.flags.has('expires-after-ms') ? int(args, 'expires-after-ms', 0, 1) : undefined;
    const client = new RingbookClient({ base_url: url(args), wallet: tradingSigner(args) });
    const r: OrderResult = await client.placeOrder({
      ...order,
      ...(stp !== undefined ? { stp } : {}),
      ...(expires_after_ms !== undefined ? { expires_after_ms } : {}),
    });
    if (args.flags.has('json')) console.log(JSON.stringify(r));
    else {
      console.log(table(['order', ''], orderRows(r)).split('\n').slice(1).join('\n'));
      console.log(`batch ${r.batch_id}`);
      printFills(r.fills, r.market_id);
    }
    return EXIT_OK;
  });
}

export async function cancelCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, CANCEL_USAGE, async () => {
    const order_id = str(args, 'order-id');
    const client_order_id = str(args, 'client-id');
    if (order_id === undefined && client_order_id === undefined) throw new UsageError('--order-id or --client-id is required');
    if (order_id !== undefined && !/^[0-9]+$/.test(order_id)) throw new UsageError('--order-id must be a non-negative integer');
    const client = new RingbookClient({ base_url: url(args), wallet: tradingSigner(args) });
    const r = await client.cancel({
      ...(order_id !== undefined ? { order_id } : {}),
      ...(client_order_id !== undefined ? { client_order_id } : {}),
    });
    if (args.flags.has('json')) console.log(JSON.stringify(r));
    else {
      console.log(table(['order', ''], orderRows(r)).split('\n').slice(1).join('\n'));
      console.log(`batch ${r.batch_id}`);
    }
    return EXIT_OK;
  });
}

export const CANCEL_AFTER_USAGE = `usage: ringbook cancel-after <timeout_ms> [options]

Arms the dead-man switch of the key's account: unless re-armed within <timeout_ms> (1000 to
86400000), every resting order is cancelled (reason dead_man_switch). 0 disarms.

options:
${KEY_FLAG_USAGE}
${FOR}
${TRADING_COMMON_USAGE}`;

export async function cancelAfterCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, CANCEL_AFTER_USAGE, async () => {
    const text = args.positional[1];
    if (text === undefined || !/^[0-9]+$/.test(text)) throw new UsageError('<timeout_ms> is required: a non-negative integer (0 disarms)');
    const client = new RingbookClient({ base_url: url(args), wallet: tradingSigner(args) });
    const r = await client.armDeadMan(Number(text));
    if (args.flags.has('json')) console.log(JSON.stringify(r));
    else console.log(r.deadline === null ? `dead-man switch disarmed (batch ${r.batch_id})` : `dead-man switch armed: deadline ${r.deadline} (batch ${r.batch_id})`);
    return EXIT_OK;
  });
}

export async function balancesCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, BALANCES_USAGE, async () => {
    let address = str(args, 'address');
    if (address === undefined) {
      if (!args.flags.has('key') && !process.env.RINGBOOK_KEY) throw new UsageError('--address or --key is required');
      address = wallet(args).address;
    }
    const client = new RingbookClient({ base_url: url(args) });
    const b = await client.balances(address);
    if (args.flags.has('json')) {
      console.log(JSON.stringify({ address: address.toLowerCase(), ...b }));
      return EXIT_OK;
    }
    console.log(`account ${address.toLowerCase()}  nonce_high_water ${b.nonce_high_water}`);
    const rows = Object.entries(b.assets).sort(([a], [c]) => a.localeCompare(c)).map(([asset, v]) => [
      asset, formatUnits(v.available), formatUnits(v.locked), formatUnits(v.available + v.locked),
    ]);
    console.log(rows.length === 0 ? '(no balances)' : table(['asset', 'available', 'locked', 'total'], rows));
    if (b.credit) {
      console.log(`credit limit ${formatUnits(b.credit.credit_limit)}  quoted ${formatUnits(b.credit.quoted_value)}  utilization ${b.credit.utilization}`);
    }
    return EXIT_OK;
  });
}
