// `ringbook bench`: a small load loop against a running server, on the SDK. bench/load.ts (the
// full benchmark) starts its own server and cannot target a URL; `--local` runs it instead.
//
// The loop: N funded wallets (one lane each, so each wallet's nonces arrive in order), every
// order signed before the clock starts, then each lane POSTs its orders one at a time. Orders rest
// away from each other (bids below, asks above the mid) and are cancelled at the end. Reports
// orders/s and latency percentiles. Default rate limits are 20 orders per wallet per minute
// (burst 20): keep --orders-per-wallet <= 20 against a default-config server.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { formatUnits, RateLimitedError, RingbookClient, RingbookError, Wallet, type Market } from '../client/index.js';
import {
  adminToken, EXIT_ERROR, EXIT_OK, int, type ParsedArgs, runCommand, str, table, url, URL_FLAG_USAGE, UsageError,
} from './common.js';
import { percentileNearestRankOfSorted } from '../util/quantile.js';
import { randomBytes } from 'node:crypto';

export const BENCH_USAGE = `usage: ringbook bench [--url <base_url>] [options]
       ringbook bench --local [bench/load.ts options...]

Runs a small load loop against a running server: funds N fresh wallets (operator deposits),
pre-signs every order, then sends them (one lane per wallet) and reports orders/s, p50 and p99.

options:
  --wallets <n>              wallets = concurrent lanes (default 50)
  --orders-per-wallet <n>    orders each wallet sends (default 20; the default rate limit is 20
                             per wallet per minute)
  --market <id>              default ETH-USDC
  --mid <decimal>            mid price the orders rest around (default: the market's last price
                             or 2000)
  --admin-token <token>      for the deposits (default RINGBOOK_ADMIN_TOKEN or <data-dir>/admin_token)
  --data-dir <dir>           where admin_token is looked for
  --local                    run the full benchmark instead (node dist/bench/load.js, its own
                             server); the remaining flags are passed to it (--seconds, --wallets...)
${URL_FLAG_USAGE}
  --json                     one JSON line of results
  --help                     this text

exit codes: 0 ok, 1 error (or every order refused), 64 usage error`;

/** The nearest-rank percentile of the accepted orders' latencies; 0 when none was accepted (exit 1 then). */
function percentile(sorted: number[], p_pct: number): number {
  return sorted.length === 0 ? 0 : percentileNearestRankOfSorted(sorted, p_pct);
}

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
}

function runLocal(argv: readonly string[]): Promise<number> {
  const script = path.join(repoRoot(), 'dist', 'bench', 'load.js');
  if (!fs.existsSync(script)) {
    console.error(`ringbook: ${script} not found: build first (npx tsc -p tsconfig.json)`);
    return Promise.resolve(EXIT_ERROR);
  }
  const pass = argv.filter((a) => a !== '--local' && a !== 'bench');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', script, ...pass], { stdio: 'inherit' });
    const fwd = (sig: NodeJS.Signals): void => {
      child.kill(sig);
    };
    process.on('SIGINT', fwd);
    process.on('SIGTERM', fwd);
    child.on('exit', (code) => {
      process.off('SIGINT', fwd);
      process.off('SIGTERM', fwd);
      resolve(code ?? EXIT_ERROR);
    });
  });
}

interface Prepared {
  client: RingbookClient;
  bodies: Record<string, unknown>[];
}

export async function benchCommand(args: ParsedArgs, argv: readonly string[]): Promise<number> {
  if (args.flags.has('local') && !args.flags.has('help')) return runLocal(argv);
  return runCommand(args, BENCH_USAGE, async () => {
    const base_url = url(args);
    const n_wallets = int(args, 'wallets', 50, 1, 10_000);
    const per_wallet = int(args, 'orders-per-wallet', 20, 1, 100_000);
    const market_id = str(args, 'market') ?? 'ETH-USDC';
    const json = args.flags.has('json');
    const log = (s: string): void => {
      if (!json) console.log(s);
    };
    const admin = new RingbookClient({ base_url, admin_token: adminToken(args) });
    const markets = await admin.markets();
    const market: Market | undefined = markets.find((m) => m.id === market_id);
    if (!market) throw new UsageError(`unknown market ${market_id} (markets: ${markets.map((m) => m.id).join(', ')})`);
    const tick = market.tick_size;
    const lot = market.lot_size;
    const mid_text = str(args, 'mid') ?? market.last_price ?? '2000';
    const mid = Math.round(Number(mid_text) * 1_000_000 / tick) * tick;
    if (!Number.isSafeInteger(mid) || mid <= 100 * tick) throw new UsageError(`--mid: unusable mid price ${mid_text}`);
    const qty = Math.max(lot, Math.ceil(1000 / lot) * lot); // 0.001 base

    // Fund: enough for every order of the wallet (bids lock quote, asks lock base).
    log(`funding ${n_wallets} wallets on ${base_url} ...`);
    const wallets = Array.from({ length: n_wallets }, () => new Wallet('0x' + randomBytes(32).toString('hex')));
    const quote_needed = formatUnits(Math.ceil(((mid / 1_000_000) * qty * per_wallet * 1.01)) + 1_000_000);
    const base_needed = formatUnits(qty * per_wallet);
    const pool = 16;
    for (let i = 0; i < wallets.length; i += pool) {
      await Promise.all(wallets.slice(i, i + pool).map(async (w) => {
        await admin.deposit({ user: w.address, asset: market.quote, amount: quote_needed });
        await admin.deposit({ user: w.address, asset: market.base, amount: base_needed });
      }));
    }

    // Pre-sign: alternate bids below and asks above the mid, 1..50 ticks away (never crossing).
    const t_sign = performance.now();
    const nonce0 = Date.now() * 1000;
    const prepared: Prepared[] = wallets.map((w) => {
      const bodies: Record<string, unknown>[] = [];
      for (let k = 0; k < per_wallet; k++) {
        const side = k % 2 === 0 ? 'bid' : 'ask';
        const away = (1 + ((k * 7 + bodies.length) % 50)) * tick;
        const price = side === 'bid' ? mid - away : mid + away;
        const nonce = nonce0 + k + 1;
        const f = { market_id, side, price, quantity: qty, order_type: 'limit', time_in_force: 'gtc', nonce } as const;
        bodies.push({ user: w.address, ...f, signature: w.signOrder(f) });
      }
      return { client: new RingbookClient({ base_url, wallet: w }), bodies };
    });
    log(`pre-signed ${n_wallets * per_wallet} orders in ${((performance.now() - t_sign) / 1000).toFixed(2)} s`);

    // Timed phase.
    const lat: number[] = [];
    const refused = new Map<string, number>();
    const t0 = performance.now();
    await Promise.all(prepared.map(async (p) => {
      for (const body of p.bodies) {
        const s = performance.now();
        try {
          await p.client.request('POST', '/orders', body);
          lat.push(performance.now() - s);
        } catch (e) {
          const code = e instanceof RateLimitedError ? 'RATE_LIMITED' : e instanceof RingbookError ? e.code : 'NETWORK';
          refused.set(code, (refused.get(code) ?? 0) + 1);
          if (code === 'NETWORK') throw e;
        }
      }
    }));
    const seconds = (performance.now() - t0) / 1000;

    // Clean up: cancel what rests (cancel-all, one per wallet).
    await Promise.all(prepared.map((p) => p.client.cancelAll(market_id).catch(() => undefined)));

    lat.sort((a, b) => a - b);
    const result = {
      url: base_url,
      market_id,
      wallets: n_wallets,
      sent: n_wallets * per_wallet,
      accepted: lat.length,
      refused: Object.fromEntries(refused),
      seconds: Number(seconds.toFixed(3)),
      orders_per_s: Number((lat.length / seconds).toFixed(1)),
      p50_ms: Number(percentile(lat, 50).toFixed(3)),
      p99_ms: Number(percentile(lat, 99).toFixed(3)),
      max_ms: Number((lat[lat.length - 1] ?? 0).toFixed(3)),
    };
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(table(['metric', 'value'], [
        ['orders accepted', `${result.accepted} / ${result.sent}`],
        ['refused', refused.size === 0 ? '0' : [...refused].map(([c, n]) => `${c} ${n}`).join(', ')],
        ['seconds', String(result.seconds)],
        ['orders/s', String(result.orders_per_s)],
        ['p50 ms', String(result.p50_ms)],
        ['p99 ms', String(result.p99_ms)],
        ['max ms', String(result.max_ms)],
      ]));
    }
    return result.accepted === 0 ? EXIT_ERROR : EXIT_OK;
  });
}
