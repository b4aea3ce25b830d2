// The signed request's address on the front (issue 11, branch h21f): checked, lowercased and
// decoded to its 20 ring bytes, the old way (util/address.ts isAddress's regex, toLowerCase,
// auth/hex.ts parseHexStringInto at the ring write) against auth/address_rows.ts (a Map probe
// at the parse, a 5-word copy at the ring write). Each request's address is a fresh string out of
// JSON.parse (its hash not yet computed), cycling over `--wallets` distinct addresses, as the
// load bench's bodies do. Both ways run in this process, rounds alternated, CPU time per request
// (process.cpuUsage), median of the rounds after two warm-up rounds.
//
// Run: npx tsc -p tsconfig.json && node dist/bench/address_rows.js [--requests N] [--wallets N] [--rounds N]
// Ends with one JSON line.
import { parseHexStringInto } from '../src/auth/hex.js';
import { checkedAddress, rememberedAddressInto } from '../src/auth/address_rows.js';
import { isAddress } from '../src/util/address.js';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';

const knobs = new Knobs();
const requests = knobs.number('requests', 200_000, 1_000, 5_000_000);
const wallets = knobs.number('wallets', 1_000, 1, 100_000);
const rounds = knobs.number('rounds', 12, 4, 100);
knobs.finish();

const addresses = Array.from({ length: wallets }, (_, i) => `0x${(0xa11ce000 + i).toString(16).padStart(40, '0')}`);
/** `requests` distinct string objects (out of JSON.parse, as a body's), their texts cycling over the wallets. */
const fresh = (): string[] => JSON.parse(JSON.stringify(Array.from({ length: requests }, (_, i) => addresses[i % wallets]))) as string[];
const out = new Uint8Array(20);
const words = new Int32Array(out.buffer);
let sink = 0;

function oldWay(list: readonly string[]): void {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (!isAddress(v)) throw new Error('refused');
    const lower = v.toLowerCase();
    if (!parseHexStringInto(lower, 2, 20, out, 0)) throw new Error('not hex');
    sink += out[19];
  }
}

function rowsWay(list: readonly string[]): void {
  for (let i = 0; i < list.length; i++) {
    const lower = checkedAddress(list[i]);
    if (lower === null) throw new Error('refused');
    if (!rememberedAddressInto(lower, words)) throw new Error('not remembered');
    sink += out[19];
  }
}

const ns: Record<'old' | 'rows', number[]> = { old: [], rows: [] };
for (let r = 0; r < rounds; r++) {
  const order: ['old' | 'rows', (l: readonly string[]) => void][] = r % 2 === 0 ? [['rows', rowsWay], ['old', oldWay]] : [['old', oldWay], ['rows', rowsWay]];
  for (const [name, fn] of order) {
    const list = fresh();
    const t0 = process.cpuUsage();
    fn(list);
    const t = process.cpuUsage(t0);
    if (r >= 2) ns[name].push(((t.user + t.system) * 1000) / requests);
  }
}
if (sink === 0) throw new Error('nothing computed');
const old_ns = Math.round(medianUpperMiddle(ns.old));
const rows_ns = Math.round(medianUpperMiddle(ns.rows));
console.log(`address_rows: ${requests} requests over ${wallets} wallets: regex + toLowerCase + decode ${old_ns} ns, address rows ${rows_ns} ns per request (CPU, median of ${rounds - 2} alternated rounds)`);
console.log(JSON.stringify({ bench: 'address_rows', requests, wallets, old_ns_per_request: old_ns, rows_ns_per_request: rows_ns, ratio: Math.round((rows_ns / old_ns) * 1000) / 1000 }));
