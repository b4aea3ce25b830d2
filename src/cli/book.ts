// `ringbook book <market>`: a live order book over the WebSocket (RingbookSocket keeps it in
// sync by sequence), redrawn on every snapshot; `--once` prints one snapshot and exits.
import { formatUnits, RingbookSocket, type BookView } from '../client/index.js';
import {
  EXIT_ERROR, EXIT_OK, int, num, type ParsedArgs, runCommand, SOCKET_PROTOCOLS, url, URL_FLAG_USAGE, UsageError,
} from './common.js';

export const BOOK_USAGE = `usage: ringbook book <market> [options]

Shows a market's order book, kept in sync over the WebSocket and redrawn on every change.
Ctrl-C exits.

options:
  --depth <n>                price levels per side (default 10)
  --once                     print one snapshot and exit (for scripts)
  --timeout <s>              with --once: give up after this long without a snapshot (default 10)
${URL_FLAG_USAGE}
  --json                     machine-readable output (one JSON object per snapshot)
  --help                     this text

exit codes: 0 ok, 1 error, 64 usage error`;

interface Level {
  price: string;
  quantity: string;
  price_units: string;
  quantity_units: string;
}

export function bookJson(v: BookView, depth: number): { market_id: string; sequence: number; timestamp: string | null; bids: Level[]; asks: Level[] } {
  const lv = ([p, q]: [string, string]): Level => ({ price: formatUnits(Number(p)), quantity: formatUnits(Number(q)), price_units: p, quantity_units: q });
  return { market_id: v.market_id, sequence: v.sequence, timestamp: v.timestamp, bids: v.bids.slice(0, depth).map(lv), asks: v.asks.slice(0, depth).map(lv) };
}

export function renderBook(v: BookView, depth: number): string {
  const b = bookJson(v, depth);
  const pw = Math.max(10, ...[...b.bids, ...b.asks].map((l) => l.price.length));
  const qw = Math.max(12, ...[...b.bids, ...b.asks].map((l) => l.quantity.length));
  const out: string[] = [];
  out.push(`${b.market_id}  sequence ${b.sequence}  ${b.timestamp ?? ''}`.trimEnd());
  const best_bid = b.bids[0] ? Number(b.bids[0].price_units) : null;
  const best_ask = b.asks[0] ? Number(b.asks[0].price_units) : null;
  if (best_bid !== null && best_ask !== null) out.push(`spread ${formatUnits(best_ask - best_bid)}`);
  out.push(`${'side'.padEnd(4)}  ${'price'.padStart(pw)}  ${'quantity'.padStart(qw)}`);
  for (const l of [...b.asks].reverse()) out.push(`${'ask'.padEnd(4)}  ${l.price.padStart(pw)}  ${l.quantity.padStart(qw)}`);
  out.push('-'.repeat(4 + 2 + pw + 2 + qw));
  for (const l of b.bids) out.push(`${'bid'.padEnd(4)}  ${l.price.padStart(pw)}  ${l.quantity.padStart(qw)}`);
  if (b.bids.length === 0 && b.asks.length === 0) out.push('(empty book)');
  return out.join('\n');
}

export async function bookCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, BOOK_USAGE, async () => {
    const market = args.positional[1] ?? (typeof args.flags.get('market') === 'string' ? (args.flags.get('market') as string) : undefined);
    if (market === undefined) throw new UsageError('a market is required (ringbook book ETH-USDC)');
    const depth = int(args, 'depth', 10, 1, 1000);
    const timeout_s = num(args, 'timeout', 10, 0.1, 3600);
    const json = args.flags.has('json');
    const once = args.flags.has('once');
    const sock = new RingbookSocket({ url: url(args, SOCKET_PROTOCOLS), channels: [`book:${market}`] });
    const errors: string[] = [];
    sock.onError((e) => errors.push(e.message));

    if (once) {
      const view = await new Promise<BookView | Error>((resolve) => {
        const timer = setTimeout(() => resolve(new Error(`no book snapshot within ${timeout_s} s${errors.length ? ': ' + errors.join('; ') : ''}`)), timeout_s * 1000);
        sock.onBook((v) => {
          if (v.market_id.toUpperCase() !== market.toUpperCase()) return;
          clearTimeout(timer);
          resolve(v);
        });
        sock.onError((e) => {
          clearTimeout(timer);
          resolve(e);
        });
        sock.connect().catch((e: Error) => {
          clearTimeout(timer);
          resolve(e);
        });
      });
      sock.close();
      if (view instanceof Error) throw view;
      console.log(json ? JSON.stringify(bookJson(view, depth)) : renderBook(view, depth));
      return EXIT_OK;
    }

    const tty = process.stdout.isTTY === true && !json;
    const draw = (v: BookView): void => {
      if (v.market_id.toUpperCase() !== market.toUpperCase()) return;
      if (json) console.log(JSON.stringify(bookJson(v, depth)));
      else if (tty) process.stdout.write('\x1b[2J\x1b[H' + renderBook(v, depth) + '\n\n(Ctrl-C to exit)\n');
      else console.log(renderBook(v, depth) + '\n');
    };
    sock.onBook(draw);
    sock.onState((s) => {
      // Only a connection that was up can be lost. A first connect that fails also passes through
      // 'reconnecting' (ws.ts schedules its retry before rejecting): that rejection is thrown below,
      // so runCommand says no server answers at the URL and exits 1, as `book --once` does.
      if (!json && s === 'reconnecting' && sock.stats.connects > 0) console.error('ringbook: connection lost, reconnecting...');
    });
    sock.onError((e) => console.error(`ringbook: ${e.message}`));
    try {
      await sock.connect();
    } catch (e) {
      sock.close();
      throw e;
    }
    return new Promise<number>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        sock.close();
        if (tty) process.stdout.write('\n');
        resolve(errors.length > 0 && sock.stats.connects === 0 ? EXIT_ERROR : EXIT_OK);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
  });
}
