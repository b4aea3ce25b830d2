// The front's per-request work between a signed order's body bytes and its ring write (issue 11,
// branch h17f), on one thread with no server and no socket: the body's text and JSON parse
// (http_body.ts parseJsonObject), the order's shape check and request (signed_requests.ts
// parseOrder), the JSON message form the signature is checked over (OrderForms.at(0), what the
// signature batcher hands to the verify pool), the consent blob the ring carries
// (UserConsentEncoder.encode) and its consent slots written into a ring's records
// (writeConsentSlots, as request_records.ts tryWrite; added by branch h19c), the address's ring bytes (auth/hex.ts parseHexStringInto, as
// context.ts submitWithDone; from auth/address_rows.ts when the build has it; gateway/address_rows.ts in branch h21f) and the pooled request's release. Bodies are the load bench's shape
// (~355 bytes, a client_order_id, a 65-byte signature).
//
// Three load-independent figures, each build in its own child process:
// - bytes allocated per request: the growth of V8's new space over `--requests` requests with the
//   young generation large enough that no scavenge runs inside a round (median of 5 rounds);
// - instructions per request: run it under callgrind at two round counts and divide the
//   difference by the requests between them (docs/benchmarks.md, h17f):
//     valgrind --tool=callgrind node --single-threaded dist/bench/signed_parse.js --mode cpu --rounds 1
//     valgrind --tool=callgrind node --single-threaded dist/bench/signed_parse.js --mode cpu --rounds 4
// - ns per request (process.cpuUsage, median round; a shared core slows it).
//
// Run: npx tsc -p tsconfig.json && node dist/bench/signed_parse.js [--dist DIR[,DIR]] [--requests N]
//   --dist      builds' dist/ folders, comma separated (default: this build); e.g. /work/wt/start/dist,dist
//   --requests  requests per round (default 4,000)
//   --mode      all (default: bytes and CPU per build, in child processes), bytes or cpu (this
//               process, the first --dist only)
//   --rounds    with --mode cpu: timed rounds (default 5)
// Ends with one JSON line.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Knobs } from './knobs.js';
import { BYTE_COUNT_FLAGS, gc, newSpaceUsed } from './byte_count_flags.js';
import { medianUpperMiddle } from './quantile.js';

interface Parsed {
  request: unknown;
  address: string;
  signature_hex: string;
  messages: { at(k: number): string | undefined };
}
interface Build {
  parseJsonObject: (body: Buffer) => { ok: true; value: Record<string, unknown> } | { ok: false; message: string };
  parseOrder: (body: Record<string, unknown>, lookup: { marketIndex(id: string): number }) => Parsed | { code: string; message: string };
  releaseRequest: (r: unknown) => void;
  encoder: { encode(signature_hex: string, message: string): Uint8Array };
  writeConsentSlots: (u8: Uint8Array, i32: Int32Array, slotByteOffset: (j: number) => number, blob: Uint8Array) => number;
  parseHexStringInto: (text: string, from: number, bytes: number, out: Uint8Array, at: number) => boolean;
  /** The ring write's copy of a checked address (auth/address_rows.ts; gateway/address_rows.ts in branch h21f); null in older builds. */
  rememberedAddressInto: ((text: string, out_words: Int32Array) => boolean) | null;
}

async function load(dist: string): Promise<Build> {
  const imp = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(dist, p)).href) as T;
  const body = await imp<Pick<Build, 'parseJsonObject'>>('src/gateway/http_body.js');
  const orders = await imp<Pick<Build, 'parseOrder'>>('src/gateway/signed_requests.js');
  const pool = await imp<Pick<Build, 'releaseRequest'>>('src/gateway/request_pool.js');
  const consent = await imp<{ UserConsentEncoder: new () => Build['encoder']; writeConsentSlots: Build['writeConsentSlots'] }>('src/ring/consent.js');
  const hex = await imp<Pick<Build, 'parseHexStringInto'>>('src/auth/hex.js');
  // The table was src/gateway/address_rows.js in h21f's build, src/auth/address_rows.js since (one table for the parse,
  // the ring write and the verify record); older builds have neither, or auth's without this export.
  const rows_at = ['src/auth/address_rows.js', 'src/gateway/address_rows.js'].find((p) => existsSync(path.join(dist, p)));
  const rows = rows_at === undefined ? null : await imp<{ rememberedAddressInto?: NonNullable<Build['rememberedAddressInto']> }>(rows_at);
  return {
    parseJsonObject: body.parseJsonObject, parseOrder: orders.parseOrder, releaseRequest: pool.releaseRequest,
    encoder: new consent.UserConsentEncoder(), writeConsentSlots: consent.writeConsentSlots, parseHexStringInto: hex.parseHexStringInto,
    rememberedAddressInto: rows?.rememberedAddressInto ?? null,
  };
}

/** 1,000 distinct bodies of the load bench's shape (bench/load/flow.ts): limit orders with a client id. */
function bodies(): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 1000; i++) {
    const sig = `0x${(i * 7919).toString(16).padStart(8, '0')}${'ab'.repeat(60)}1b`;
    out.push(Buffer.from(
      `{"user":"0x${(0xa11ce000 + i).toString(16).padStart(40, '0')}","market_id":"ETH-USDC","side":"${i % 2 === 0 ? 'bid' : 'ask'}",` +
      `"price":${2_000_000_000 + (i % 50) * 10_000},"quantity":${100_000 * (1 + (i % 7))},"order_type":"limit","time_in_force":"gtc",` +
      `"nonce":${1_795_000_000_000 + i},"client_order_id":"c${i + 1000}","signature":"${sig}"}`,
    ));
  }
  return out;
}

const LOOKUP = { marketIndex: (id: string): number => (id === 'ETH-USDC' ? 0 : -1) };
const ADDRESS = new Uint8Array(20);
const ADDRESS_WORDS = new Int32Array(ADDRESS.buffer, 0, 5);
/** A request ring's records (192 bytes each, shared memory as the real ring), written round robin. */
const RING_RECORD_BYTES = 192;
const RING_RECORDS = 64;
const RING = new SharedArrayBuffer(RING_RECORD_BYTES * RING_RECORDS);
const RING_U8 = new Uint8Array(RING);
const RING_I32 = new Int32Array(RING);
let ring_next = 0;
const ringSlot = (j: number): number => ((ring_next + j) % RING_RECORDS) * RING_RECORD_BYTES;

/** One request's front work; returns a number that depends on all of it (so none is dead code). */
function one(b: Build, body: Buffer): number {
  const json = b.parseJsonObject(body);
  if (!json.ok) throw new Error(`bench body refused: ${json.message}`);
  const parsed = b.parseOrder(json.value, LOOKUP);
  if (!('request' in parsed)) throw new Error(`bench order refused: ${parsed.message}`);
  const message = parsed.messages.at(0) as string;
  const blob = b.encoder.encode(parsed.signature_hex, message);
  ring_next = (ring_next + 1 + b.writeConsentSlots(RING_U8, RING_I32, ringSlot, blob)) % RING_RECORDS;
  // As context.ts submitWithDone: from the address rows when the build has them, else decoded.
  const remembered = b.rememberedAddressInto !== null && b.rememberedAddressInto(parsed.address, ADDRESS_WORDS);
  if (!remembered && !b.parseHexStringInto(parsed.address, 2, 20, ADDRESS, 0)) throw new Error('bench address refused');
  b.releaseRequest(parsed.request);
  return blob.length + ADDRESS[19];
}

async function measureBytes(dist: string, n: number): Promise<number> {
  const b = await load(dist);
  const all = bodies();
  let sink = 0;
  const round = (): number => {
    gc();
    const before = newSpaceUsed();
    for (let i = 0; i < n; i++) sink += one(b, all[i % all.length]);
    const grown = newSpaceUsed() - before;
    if (grown <= 0) throw new Error('new space shrank inside a round: a scavenge ran');
    return grown / n;
  };
  for (let w = 0; w < 5; w++) round();
  const per: number[] = [];
  for (let r = 0; r < 5; r++) per.push(round());
  if (sink === 0) throw new Error('nothing computed');
  return Math.round(medianUpperMiddle(per));
}

async function measureCpu(dist: string, n: number, rounds: number): Promise<number> {
  const b = await load(dist);
  const all = bodies();
  let sink = 0;
  for (let i = 0; i < 5 * n; i++) sink += one(b, all[i % all.length]); // warm-up: compiled code, pools
  const per: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) sink += one(b, all[i % all.length]);
    const t = process.cpuUsage(t0);
    per.push(((t.user + t.system) * 1000) / n);
  }
  if (sink === 0) throw new Error('nothing computed');
  return Math.round(medianUpperMiddle(per));
}

function child(dist: string, mode: 'bytes' | 'cpu', n: number): number {
  const flags = mode === 'bytes' ? [...BYTE_COUNT_FLAGS] : [];
  const run = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--mode', mode, '--dist', dist, '--requests', String(n)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`signed_parse child (${mode}, ${dist}) failed: ${run.stderr}`);
  const last = run.stdout.trim().split('\n').at(-1) as string;
  return (JSON.parse(last) as { value: number }).value;
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const n = knobs.number('requests', 4000, 100, 20_000);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dists = (knobs.optionalString('dist') ?? path.resolve(here, '..')).split(',').map((d) => path.resolve(d));
  const mode = knobs.optionalString('mode') ?? 'all';
  const rounds = knobs.number('rounds', 5, 1, 100);
  knobs.finish();
  if (mode === 'bytes') return void console.log(JSON.stringify({ value: await measureBytes(dists[0], n) }));
  if (mode === 'cpu') return void console.log(JSON.stringify({ value: await measureCpu(dists[0], n, rounds) }));
  if (mode !== 'all') throw new Error('--mode is all, bytes or cpu');
  const builds = dists.map((dist) => ({ dist, bytes_per_request: child(dist, 'bytes', n), ns_per_request: child(dist, 'cpu', n) }));
  for (const x of builds) console.log(`signed_parse: ${x.dist}: ${x.bytes_per_request} B and ${x.ns_per_request} ns CPU per signed order (body bytes -> ring inputs)`);
  console.log(JSON.stringify({ bench: 'signed_parse', requests: n, builds }));
}

await main();
