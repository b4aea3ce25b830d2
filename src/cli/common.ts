// Shared helpers of the `ringbook` trader commands (deposit, order, cancel, balances, book,
// bench, market-maker, referral, force-include): argument parsing, flag access with defaults,
// error reporting and tables.
// Kept apart from ringbook.ts, which runs its main() on import.
import fs from 'node:fs';
import path from 'node:path';
import { Agent, parseDecimalUnits, RingbookError, Wallet, type PlaceOrderInput } from '../client/index.js';
import { isAddress } from '../util/address.js';
import { loadConfig } from '../config/load.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 64;

export const DEFAULT_URL = 'http://127.0.0.1:8080';

// Usage lines every command that takes the flag prints the same (the default URL is DEFAULT_URL's).
export const URL_FLAG_USAGE = `  --url <base_url>           server (default RINGBOOK_URL or ${DEFAULT_URL})`;
export const KEY_FLAG_USAGE = `  --key <private_key>        signing key (default: RINGBOOK_KEY)`;
/** The last lines of a trading command's usage (trader.ts, programmes.ts). */
export const TRADING_COMMON_USAGE = `${URL_FLAG_USAGE}
  --json                     machine-readable output
  --help                     this text`;
export const TRADING_EXITS_USAGE = `exit codes: 0 ok, 1 error or engine rejection (its code and message are printed), 64 usage error`;

/** Flags that never take a value (so `--once ETH-USDC` keeps the market positional). */
export const BOOLEAN_FLAGS = ['json', 'help', 'once', 'local', 'follow-trades', 'wait', 'no-kind', 'pretty'] as const;

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
}

/** `--name value`, `--name=value` and bare `--flag`; everything else is positional. */
export function parseArgs(argv: readonly string[], boolean_flags: readonly string[] = ['json', 'help']): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      flags.set(a.slice(2, eq), a.slice(eq + 1));
    } else if (boolean_flags.includes(a.slice(2)) || i + 1 >= argv.length || argv[i + 1].startsWith('--')) {
      flags.set(a.slice(2), true);
    } else {
      flags.set(a.slice(2), argv[++i]);
    }
  }
  return { positional, flags };
}

/** A bad command line: printed with the command's usage, exit 64. */
export class UsageError extends Error {}

export function str(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

export function req(args: ParsedArgs, name: string): string {
  const v = str(args, name);
  if (v === undefined) throw new UsageError(`--${name} is required`);
  return v;
}

export function int(args: ParsedArgs, name: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = str(args, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer in [${min}, ${max}]`);
  return n;
}

export function num(args: ParsedArgs, name: string, dflt: number, min = 0, max = Number.MAX_VALUE): number {
  const v = str(args, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be a number in [${min}, ${max}]`);
  return n;
}

export function oneOf<T extends string>(args: ParsedArgs, name: string, allowed: readonly T[], dflt: T): T {
  const v = str(args, name);
  if (v === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

/** A positive decimal amount (`"2000.5"`) as integer units; a usage error otherwise. */
export function units(args: ParsedArgs, name: string): number {
  const text = req(args, name);
  let u: number;
  try {
    u = parseDecimalUnits(text, { allow_negative: false });
  } catch (e) {
    throw new UsageError(`--${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (u <= 0) throw new UsageError(`--${name} must be above 0`);
  return u;
}

/** An order's terms as `ringbook order` and `ringbook force-include order` both take them. */
export type OrderFlags = Pick<PlaceOrderInput, 'market_id' | 'side' | 'quantity' | 'order_type' | 'time_in_force' | 'price' | 'client_order_id'>;

/**
 * The order flags (--market, --side, --type, --tif, --quantity, --price, --client-id): --side
 * required, --price required for a limit order and refused for a market one, --tif `ioc` by
 * default for a market order.
 */
export function orderFlags(args: ParsedArgs): OrderFlags {
  const market_id = req(args, 'market');
  if (str(args, 'side') === undefined) throw new UsageError('--side is required');
  const side = oneOf(args, 'side', ['bid', 'ask'] as const, 'bid');
  const order_type = oneOf(args, 'type', ['limit', 'market'] as const, 'limit');
  const time_in_force = oneOf(args, 'tif', ['gtc', 'ioc', 'fok', 'post_only'] as const, order_type === 'market' ? 'ioc' : 'gtc');
  const quantity = units(args, 'quantity');
  let price: number | undefined;
  if (order_type === 'limit') price = units(args, 'price');
  else if (args.flags.has('price')) throw new UsageError('--price is not allowed with --type market');
  const client_order_id = str(args, 'client-id');
  return {
    market_id, side, quantity, order_type, time_in_force,
    ...(price !== undefined ? { price } : {}),
    ...(client_order_id !== undefined ? { client_order_id } : {}),
  };
}

const HTTP_PROTOCOLS: readonly string[] = ['http:', 'https:'];
/** What a command that only opens a WebSocket (RingbookSocket) accepts: it maps http(s) to ws(s). */
export const SOCKET_PROTOCOLS: readonly string[] = ['http:', 'https:', 'ws:', 'wss:'];

/**
 * --url, else RINGBOOK_URL, else DEFAULT_URL: a URL of one of `protocols` (http(s) by default); a
 * bad one is refused naming where it came from.
 */
export function url(args: ParsedArgs, protocols: readonly string[] = HTTP_PROTOCOLS): string {
  const flag = str(args, 'url');
  const env = process.env.RINGBOOK_URL;
  const [u, from] = flag !== undefined ? [flag, '--url'] : env !== undefined && env !== '' ? [env, 'RINGBOOK_URL'] : [DEFAULT_URL, 'the default URL'];
  let protocol: string;
  try {
    protocol = new URL(u).protocol;
  } catch {
    throw new UsageError(`${from}: not a URL: ${u}`);
  }
  if (!protocols.includes(protocol)) throw new UsageError(`${from}: not an ${protocols.map((p) => `${p}//`).join(' or ')} URL: ${u}`);
  return u;
}

/** The URL a command used (for an error message: never throws). */
function triedUrl(args: ParsedArgs): string {
  try {
    return url(args, SOCKET_PROTOCOLS);
  } catch {
    return 'the --url';
  }
}

/** undici's cause when fetch refuses a port of the Fetch standard's blocked list (9, 25, 6000, ...). */
const FETCH_BAD_PORT_MESSAGE = 'bad port';

/**
 * Says which URL was tried and where it came from when the error is that nothing could be
 * reached there ('' otherwise): 'fetch failed (connect ECONNREFUSED ...)' alone left an operator
 * to guess a stopped server or a wrong port, and 'fetch failed (bad port)' named no port at all.
 * `what` names the peer ("server", "JSON-RPC endpoint"), `from` where its URL is set.
 */
export function unreachableHint(e: unknown, tried: string, what = 'server', from = '--url, RINGBOOK_URL'): string {
  if (!(e instanceof Error)) return '';
  const cause = e.cause instanceof Error ? e.cause : undefined;
  if ((cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED') {
    return `: no ${what} answers at ${tried} (is it running? ${from})`;
  }
  // Refused before any connection: no server there can answer fetch, whatever runs on that port.
  if (cause?.message === FETCH_BAD_PORT_MESSAGE) {
    return `: fetch refuses the port of ${tried} (a blocked port of the Fetch standard; serve on another: ${from})`;
  }
  return '';
}

/** --key, else RINGBOOK_KEY. */
export function wallet(args: ParsedArgs): Wallet {
  const flag = str(args, 'key');
  const k = flag ?? process.env.RINGBOOK_KEY;
  if (k === undefined || k === '') throw new UsageError('--key (or RINGBOOK_KEY) is required');
  try {
    return new Wallet(k);
  } catch {
    throw new UsageError(`${flag !== undefined ? '--key' : 'RINGBOOK_KEY'}: not a valid private key (0x + 64 hex)`);
  }
}

/**
 * The trading signer: the --key wallet, or with `--for <user address>` that key as an agent of
 * the user (it must be approved: ringbook agent approve). Orders, cancels, cancel-after only.
 */
export function tradingSigner(args: ParsedArgs): Wallet | Agent {
  const w = wallet(args);
  const user = str(args, 'for');
  if (user === undefined) return w;
  if (!isAddress(user)) throw new UsageError('--for: not an address (0x + 40 hex)');
  try {
    return new Agent(str(args, 'key') ?? (process.env.RINGBOOK_KEY as string), user);
  } catch (e) {
    throw new UsageError(`--for: ${(e as Error).message}`);
  }
}

export function dataDir(args: ParsedArgs): string {
  const flag = str(args, 'data-dir');
  if (flag !== undefined) return path.resolve(flag);
  if (process.env.RINGBOOK_DATA_DIR) return path.resolve(process.env.RINGBOOK_DATA_DIR);
  return path.resolve(loadConfig().server.data_dir);
}

/**
 * `dir` when it holds a server's journal. A command that reads one refuses a dir without
 * `journal/`: opening it would create an empty journal there (a mistyped --data-dir, or the
 * default ./data from another directory, answered "empty", "replayed 0 batches" or a snapshot of
 * batch 0, exit 0).
 */
export function requireJournal(dir: string): string {
  if (!fs.existsSync(path.join(dir, 'journal'))) {
    throw new Error(`no journal in ${dir} (${path.join(dir, 'journal')} does not exist): name the server's data dir with --data-dir ` +
      '(default: RINGBOOK_DATA_DIR, else config server.data_dir, ./data from the current directory)');
  }
  return dir;
}

/** --admin-token, else RINGBOOK_ADMIN_TOKEN, else `<data-dir>/admin_token`. */
export function adminToken(args: ParsedArgs): string {
  const t = str(args, 'admin-token') ?? process.env.RINGBOOK_ADMIN_TOKEN;
  if (t) return t;
  const file = path.join(dataDir(args), 'admin_token');
  try {
    const v = fs.readFileSync(file, 'utf8').trim();
    if (v) return v;
  } catch {
    // fall through
  }
  throw new UsageError(`--admin-token is required (no RINGBOOK_ADMIN_TOKEN and no ${file})`);
}

/**
 * Runs one command: prints `--help`, maps a UsageError to 64 and an engine rejection (a
 * RingbookError) to `CODE: message` and 1 (with --json, also `{"ok":false,...}` on stdout).
 */
export async function runCommand(args: ParsedArgs, usage: string, body: () => Promise<number>): Promise<number> {
  if (args.flags.has('help')) {
    console.log(usage);
    return EXIT_OK;
  }
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`ringbook: ${e.message}\n\n${usage}`);
      return EXIT_USAGE;
    }
    if (e instanceof RingbookError) {
      if (args.flags.has('json')) {
        console.log(JSON.stringify({ ok: false, error: e.code, message: e.message, status: e.status, request_id: e.request_id }));
      }
      console.error(`ringbook: rejected: ${e.code}: ${e.message}`);
      return EXIT_ERROR;
    }
    const msg = e instanceof Error ? e.message : String(e);
    // The cause's text unless the message already says it (a WebSocket error repeats it) or it is empty.
    const cause = e instanceof Error && e.cause instanceof Error && e.cause.message !== '' && !msg.includes(e.cause.message) ? ` (${e.cause.message})` : '';
    console.error(`ringbook: ${msg}${cause}${unreachableHint(e, triedUrl(args))}`);
    return EXIT_ERROR;
  }
}

/** A plain left-aligned table (numbers: pass them pre-formatted). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
