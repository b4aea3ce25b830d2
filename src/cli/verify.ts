// ringbook-verify: fetches published batches from a Ringbook DA endpoint, re-executes them from
// genesis with the real engine and compares state roots, fills roots, fills and input hashes.
//
//   node dist/src/cli/verify.js --url http://127.0.0.1:8080 [--from N] [--out DIR] [--config FILE]
//
//   --url     base URL of the server (its GET /da/batches endpoints); default RINGBOOK_URL, else
//             http://127.0.0.1:8080, as every ringbook command
//   --from    first batch to check (default 1); earlier batches are re-executed to rebuild the
//             state but not compared, and batch N's prev_state_root must match the rebuilt root
//   --out     directory for fraud proofs (default ./fraud-proofs)
//   --config  JSON merged over config/default.json, like the server's RINGBOOK_CONFIG (which is
//             also honoured); the engine part (assets, markets, fees, limits) must be the server's
//   --to      last batch to check (default: whatever is published when the verifier gets there)
//   --snapshot  start from this snapshot file (docs/operations.md, "Snapshots") instead of
//             genesis: its state is trusted as given, its root (computed from its own state) must
//             be the published root of its batch, and re-execution starts after it
//
// Progress goes to stderr; one JSON summary line to stdout. Exit code: 0 all batches agree,
// 2 fraud (a proof file was written), 1 error (network, config mismatch), 64 a bad command line
// (the ringbook CLI's usage code; it was 1, and --help was one too, printed as an error).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config/load.js';
import { engineConfigOf } from '../config/read.js';
import { ConfigError } from '../config/checks.js';
import { batchFromJson, MalformedBatch, type PublishedBatch } from '../da/published.js';
import { getData, Verifier, type VerifierOptions } from '../da/verifier.js';
import { ConsentPool } from '../da/consent_pool.js';
import { decodeEngine, readSnapshotFile } from '../snapshot/snapshot_file.js';
import { mkdirSync, writeFileSync } from 'node:fs';

interface Args {
  url: string;
  from: number;
  to: number;
  out: string;
  config: string | null;
  snapshot: string | null;
}

class UsageError extends Error {}
/** `--help`: the usage on stdout, exit 0. */
class HelpWanted extends Error {}

const EXIT_USAGE = 64;
const DEFAULT_URL = 'http://127.0.0.1:8080';

const USAGE = `usage: ringbook verify [--url <base_url>] [--from N] [--to N] [--out <dir>] [--config <file>] [--snapshot <file>]
       node dist/src/cli/verify.js (the same options)

Fetches the published batches (GET /da/batches) and re-executes them with the real engine from
genesis (or --snapshot), comparing input hashes, state roots, fills and signatures' consent.

options:
  --url <base_url>           the server or DA role (default RINGBOOK_URL or ${DEFAULT_URL})
  --from <n>                 first batch compared (earlier ones are re-executed, not compared)
  --to <n>                   last batch (default: the last published when reached)
  --out <dir>                where a fraud proof is written (default ./fraud-proofs)
  --config <file>            the operator's config, merged over config/default.json (as RINGBOOK_CONFIG)
  --snapshot <file>          start from this snapshot (its root must be the published one)
  --json                     accepted: the summary on stdout is always one JSON line
  --help                     this text

exit codes: 0 all batches agree, 1 error (network, config mismatch), 2 fraud (proof written),
64 usage error`;

function usage(message: string): never {
  throw new UsageError(`${message}\n\n${USAGE}`);
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { url: '', from: 1, to: Number.MAX_SAFE_INTEGER, out: 'fraud-proofs', config: null, snapshot: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    const int = (): number => {
      if (v === undefined || !/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v))) usage(`${k} needs a non-negative integer`);
      i++;
      return Number(v);
    };
    switch (k) {
      case '--url': if (v === undefined) usage('--url needs a value'); a.url = v; i++; break;
      case '--from': a.from = Math.max(1, int()); break;
      case '--to': a.to = int(); break;
      case '--out': if (v === undefined) usage('--out needs a value'); a.out = v; i++; break;
      case '--config': if (v === undefined) usage('--config needs a value'); a.config = v; i++; break;
      case '--snapshot': if (v === undefined) usage('--snapshot needs a file'); a.snapshot = v; i++; break;
      // The summary on stdout is one JSON line already; taken so that `--json` (which every
      // ringbook command has, README) is not refused here.
      case '--json': break;
      case '--help': case '-h': throw new HelpWanted();
      default: usage(`unknown argument ${k}`);
    }
  }
  // Like every ringbook command: --url, else RINGBOOK_URL, else the default (verify alone
  // required --url, and said so with RINGBOOK_URL set).
  const from = a.url !== '' ? '--url' : process.env.RINGBOOK_URL ? 'RINGBOOK_URL' : null;
  if (a.url === '') a.url = process.env.RINGBOOK_URL || DEFAULT_URL;
  if (!/^https?:\/\//.test(a.url)) usage(`${from ?? '--url'} must start with http:// or https://`);
  return a;
}

const PAGE = 100;

/** Runs the verifier; resolves to the exit code (also the entry of `ringbook verify`). */
export async function main(argv: readonly string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (e instanceof HelpWanted) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    process.stderr.write(`ringbook-verify: ${(e as Error).message}\n`);
    return EXIT_USAGE;
  }
  try {
    return await run(args);
  } catch (e) {
    const m = e instanceof ConfigError || e instanceof Error ? e.message : String(e);
    process.stderr.write(`ringbook-verify: error: ${m}\n`);
    return 1;
  }
}

async function run(args: Args): Promise<number> {
  const env = { ...process.env };
  if (args.config !== null) env.RINGBOOK_CONFIG = path.resolve(args.config);
  const cfg = loadConfig(env);
  const log = (m: string): void => void process.stderr.write(m + '\n');
  let snapshot: VerifierOptions['snapshot'];
  if (args.snapshot !== null) {
    const s = readSnapshotFile(path.resolve(args.snapshot));
    const e = decodeEngine(s.engine);
    snapshot = { batch_id: s.batch_id, canonical: e.canonical, addresses: e.addresses, zero_balance_leaves: s.zero_balance_leaves };
  }
  const verifier = new Verifier(engineConfigOf(cfg), {
    out_dir: path.resolve(args.out), source: args.url, log, snapshot,
    consent_assets: cfg.assets.map((a) => ({ symbol: a.symbol, onchain_decimals: a.onchain_decimals })),
  });
  // Signatures are re-checked across every core, a page of batches at a time.
  const pool = new ConsentPool();
  try {
    return await runPages(args, verifier, pool, snapshot, log);
  } finally {
    await pool.close();
  }
}

async function runPages(
  args: Args, verifier: Verifier, pool: ConsentPool, snapshot: VerifierOptions['snapshot'], log: (m: string) => void,
): Promise<number> {
  const started = Date.now();
  let last_progress = started;
  let checked = 0;
  let next = 1;
  if (snapshot !== undefined) {
    // The snapshot's root, computed from its state, against the published root of its batch.
    const n = snapshot.batch_id;
    const published = n === 0 ? null : batchFromJson(await getData(args.url, `/da/batches/${n}`)).header.state_root;
    log(`ringbook-verify: ${args.url}: snapshot at batch ${n}, root ${verifier.state_root}; checking from batch ${Math.max(args.from, n + 1)}`);
    if (published !== null && published !== verifier.state_root) {
      const error = `the snapshot's state gives root ${verifier.state_root}, the published root of batch ${n} is ${published}`;
      log(`ringbook-verify: error: ${error}`);
      process.stdout.write(JSON.stringify({ verify: 'error', url: args.url, error }) + '\n');
      return 1;
    }
    next = n + 1;
  } else {
    log(`ringbook-verify: ${args.url}: genesis root ${verifier.genesis_root}; checking from batch ${args.from}`);
  }
  const summary = (status: string, extra: Record<string, unknown> = {}): void => {
    process.stdout.write(JSON.stringify({
      verify: status, url: args.url, batches: verifier.batch_id, checked, state_root: verifier.state_root,
      seconds: (Date.now() - started) / 1000, ...extra,
    }) + '\n');
  };
  for (;;) {
    if (next > args.to) break;
    const limit = Math.min(PAGE, args.to - next + 1);
    const page = await getData(args.url, `/da/batches?from=${next}&limit=${limit}`);
    if (!Array.isArray(page)) throw new Error('GET /da/batches did not answer an array');
    if (page.length === 0) break;
    for (const raw of page) {
      let b: PublishedBatch;
      try {
        b = batchFromJson(raw);
      } catch (e) {
        if (!(e instanceof MalformedBatch)) throw e;
        const file = path.join(path.resolve(args.out), `fraud-batch-${next}.json`);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, JSON.stringify({ type: 'ringbook-fraud-proof', version: 1, batch_id: next, detected_at: new Date().toISOString(), source: args.url, reasons: [`published batch is malformed: ${e.message}`], published: raw }, null, 2) + '\n');
        log(`ringbook-verify: FRAUD in batch ${next}: published batch is malformed (${e.message}); proof written to ${file}`);
        summary('fraud', { fraud_batch: next, proof: file });
        return 2;
      }
      const check = b.header.batch_id >= args.from;
      const verdict = verifier.verify(b, check);
      if (check) checked++;
      if (verdict.error !== undefined) {
        log(`ringbook-verify: error at batch ${verdict.batch_id}: ${verdict.error}`);
        summary('error', { error: verdict.error });
        return 1;
      }
      if (!verdict.ok) {
        summary('fraud', { fraud_batch: verdict.batch_id, proof: verifier.proofs_written[verifier.proofs_written.length - 1] ?? null });
        return 2;
      }
      next = verdict.batch_id + 1;
    }
    const consent = await verifier.checkConsent(pool);
    if (consent.length > 0) {
      summary('fraud', { fraud_batch: consent[0].batch_id, proof: verifier.proofs_written[verifier.proofs_written.length - 1] ?? null });
      return 2;
    }
    const now = Date.now();
    if (now - last_progress >= 1000) {
      last_progress = now;
      log(`ringbook-verify: ${verifier.batch_id} batches re-executed, ${checked} checked, all agree`);
    }
  }
  log(`ringbook-verify: OK: ${verifier.batch_id} batches re-executed, ${checked} checked, all agree (state root ${verifier.state_root})`);
  summary('ok');
  return 0;
}

// Run when executed directly (not when imported by `ringbook verify`).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
