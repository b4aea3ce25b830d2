#!/usr/bin/env node
// `ringbook`: the operator and trader command line. Each command prints a human table by
// default and JSON with --json; exit codes: 0 ok, 1 error, 2 verification found fraud,
// 64 usage error.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { addressFromPrivateKey } from '../auth/sign.js';
import { BOOLEAN_FLAGS, parseArgs, requireJournal, str, UsageError, type ParsedArgs } from './common.js';
import { loadConfig } from '../config/load.js';
import { requestsOfBatch } from './request_count.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 64;

export { parseArgs, type ParsedArgs } from './common.js';

const HELP = `ringbook — Ringbook exchange engine command line

usage: ringbook <command> [options]

commands:
  start                      run the server (config/default.json + RINGBOOK_* environment)
  keygen                     make a wallet: private key and address
  journal inspect            list the journal's batches (sizes, checksums, input hashes)
  snapshot                   replay the journal and write a snapshot at its last batch (data dir
                             snapshots/, the server's format); prints the batch and its state root
  replay [--every N]         rebuild the state from the journal; print its state root (and every
                             N-th batch's), compared with the published roots when present
  verify --url <base_url>    re-execute published batches and compare state roots
  backup --out <dir>         copy the data dir, while the server runs or stopped, and check that
                             a server started on the copy recovers (--help for the details)

settlement contract commands (--help on each; docs/settlement.md):
  contract deploy            deploy contracts/Settlement.sol to --rpc for the config's assets
  withdraw-onchain           pay a pending withdrawal on chain with the operator signature
  escape                     once the contract is frozen: prove and claim your balances

trader commands (--url defaults to http://127.0.0.1:8080; --help on each):
  deposit                    operator deposit: --user --asset --amount (admin token)
  order                      sign and place an order: --key --market --side --price --quantity
                             (--stp expire_maker|expire_taker|expire_both, --expires-after-ms T)
  cancel                     cancel an order: --key (--order-id N | --client-id ID)
  cancel-after <timeout_ms>  arm the dead-man switch: --key (0 disarms)
  agent approve|revoke|list  agent keys: approve <address> --name N, revoke <address>, list [<address>]
                             (trade as an agent: order/cancel/cancel-after --key <agent key> --for <user>)
  batch <file>               up to 20 orders/cancels/amends/cancel-alls in one call (JSON file)
  balances                   an account's balances: --address A | --key K
  referral register          be referred: --key --referrer <address> (once, never changes)
  referral show [<address>]  referral statistics: users referred, USDC earned, referred by
  force-include <kind>       queue a signed order, cancel, amend, cancel-all, withdrawal or
                             referral in the forced-inclusion inbox (--wait: until included)
  force-include status <id>  an inbox entry and, once included, its result
  book <market>              live order book over the WebSocket (--once: one snapshot)
  bench                      small load loop against --url (--local: the full bench/load.ts)
  market-maker               example bot quoting around a reference price

common options:
  --data-dir <dir>           data directory (default: RINGBOOK_DATA_DIR or config server.data_dir)
  --json                     machine-readable output
  --help                     this text

exit codes: 0 ok, 1 error, 2 fraud found (verify), 64 usage error`;

const DATA_DIR_USAGE = `  --data-dir <dir>           the server's data directory (default: RINGBOOK_DATA_DIR, else config
                             server.data_dir: ./data from the current directory)`;

// The offline commands' own --help (each used to run on \`--help\`: \`start --help\` started a
// server, \`snapshot --help\` wrote a snapshot into ./data).
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  start: `usage: ringbook start [--data-dir <dir>] [--config <file>] [--pretty] [--role gateway|matcher|da]

Runs the server in the foreground (as node dist/src/main.js); SIGTERM or Ctrl-C stops it cleanly.
Settings: config/default.json, the JSON file of --config or RINGBOOK_CONFIG merged over it, and
the RINGBOOK_* environment (RINGBOOK_PORT, RINGBOOK_HOST, ...: docs/operations.md).

options:
${DATA_DIR_USAGE}
  --config <file>            JSON merged over config/default.json (as RINGBOOK_CONFIG)
  --pretty                   human-readable log lines instead of JSON (as config log.pretty)
  --role <role>              a cluster role (docs/scale-out.md); absent: the single process
  --help                     this text

exit codes: 0 stopped cleanly, 1 start failed (the reason is the last log line), 64 usage error`,
  keygen: `usage: ringbook keygen [--json]

Makes a random wallet and prints its private key and address (nothing is written).

exit codes: 0 ok, 64 usage error`,
  journal: `usage: ringbook journal inspect [--data-dir <dir>] [--json]

Lists the journal's batches (time, requests, bytes, input hash), reading it only.

options:
${DATA_DIR_USAGE}
  --json                     machine-readable output

exit codes: 0 ok, 1 error (no journal in the data dir, a corrupt batch), 64 usage error`,
  snapshot: `usage: ringbook snapshot [--data-dir <dir>] [--json]

Replays the journal from batch 1 and writes a snapshot at its last batch into <data-dir>/snapshots
(the server's format; a server started on the data dir resumes from it). Needs an untrimmed journal.

options:
${DATA_DIR_USAGE}
  --json                     machine-readable output

exit codes: 0 ok, 1 error (no journal in the data dir, a corrupt batch), 64 usage error`,
  replay: `usage: ringbook replay [--data-dir <dir>] [--every N] [--json]

Rebuilds the state from the journal alone (read only) and prints the last batch's state root (and
every N-th batch's), compared with the roots the server published in <data-dir>/da when present.

options:
${DATA_DIR_USAGE}
  --every <n>                also print the root of every n-th batch (a positive integer)
  --json                     machine-readable output

exit codes: 0 ok, 1 error (no journal in the data dir, a corrupt batch), 2 a root differs from
the published one, 64 usage error`,
};

/**
 * --data-dir, else the config's server.data_dir. Not common.ts's dataDir, which takes
 * RINGBOOK_DATA_DIR without reading the config: these commands read the config first, so a bad
 * one is refused here too (test/config/unknown_keys.test.ts).
 */
function dataDir(args: ParsedArgs): string {
  const flag = str(args, 'data-dir');
  if (flag !== undefined) return path.resolve(flag);
  return path.resolve(loadConfig().server.data_dir);
}

/** The data dir of a command that reads a server's journal (one without `journal/` is refused). */
function journalDataDir(args: ParsedArgs): string {
  return requireJournal(dataDir(args));
}

function keygen(args: ParsedArgs): number {
  const key = '0x' + randomBytes(32).toString('hex');
  const address = addressFromPrivateKey(key);
  if (args.flags.has('json')) console.log(JSON.stringify({ private_key: key, address }));
  else console.log(`address      ${address}\nprivate key  ${key}\n(keep the private key secret: it signs your orders)`);
  return EXIT_OK;
}

async function journalInspect(args: ParsedArgs): Promise<number> {
  const dir = path.join(journalDataDir(args), 'journal');
  // Imported here, not at the top: the journal (LMDB, msgpackr: 37 JS files and 3 native addons)
  // cost every other command, a Node process per call, ~13% of its start-up CPU for nothing.
  const { Journal } = await import('../journal/journal.js');
  // Read only: the write-ahead file's batches (not yet in LMDB) are listed after LMDB's.
  const journal = Journal.open(dir, { read_only: true });
  const rows: { batch_id: number; time: string; requests: number; consent_slots: number; bytes: number; input_hash: string }[] = [];
  let requests = 0;
  let bytes = 0;
  // After a snapshot the matcher trims the journal through it (Journal.trimThrough): the walk
  // starts at the oldest batch still held, not batch 1, which a trimmed journal no longer has.
  // 0: an empty journal (never written; a trim always keeps the newest batch).
  let first_batch_id = 0;
  let last_batch_id = 0;
  try {
    first_batch_id = journal.firstBatchId();
    last_batch_id = journal.lastBatchId();
    // Each batch is done with before the next is read (only its counts and hash are kept), so the
    // reused-buffer reader serves, with the same checks as `read`: a large journal is walked
    // without a fresh ~200 KB value and records copy per batch (src/journal/journal.ts).
    for (const b of journal.readTransient(first_batch_id === 0 ? 1 : first_batch_id)) {
      // Records are requests and the consent slots that follow signed ones (src/ring/consent.ts).
      const { requests: n, consent_slots } = requestsOfBatch(b.records, b.count);
      rows.push({ batch_id: b.batch_id, time: new Date(b.time_ms).toISOString(), requests: n, consent_slots, bytes: b.bytes, input_hash: b.input_hash });
      requests += n;
      bytes += b.bytes;
    }
  } finally {
    void journal.close();
  }
  // Batches 1..trimmed_through were deleted after a snapshot (0: none trimmed, or empty).
  const trimmed_through_batch_id = first_batch_id === 0 ? 0 : first_batch_id - 1;
  if (args.flags.has('json')) {
    console.log(JSON.stringify({
      journal: dir, batches: rows.length, requests, bytes,
      first_batch_id: first_batch_id === 0 ? null : first_batch_id, last_batch_id: first_batch_id === 0 ? null : last_batch_id,
      trimmed_through_batch_id, rows,
    }));
    return EXIT_OK;
  }
  if (first_batch_id === 0) {
    console.log(`journal ${dir}: empty (no batches stored)`);
    return EXIT_OK;
  }
  console.log(`journal ${dir}: ${rows.length} batches, ${requests} requests, ${bytes} bytes`);
  console.log(trimmed_through_batch_id === 0
    ? `batches ${first_batch_id}..${last_batch_id} (none trimmed)`
    : `batches ${first_batch_id}..${last_batch_id}; batches 1..${trimmed_through_batch_id} were trimmed after a snapshot`);
  console.log('batch      time                      requests  bytes     input_hash');
  const shown = rows.length > 50 ? [...rows.slice(0, 20), null, ...rows.slice(-20)] : rows;
  for (const r of shown) {
    if (r === null) {
      console.log(`... ${rows.length - 40} more ...`);
      continue;
    }
    console.log(`${String(r.batch_id).padEnd(10)} ${r.time.padEnd(25)} ${String(r.requests).padStart(8)}  ${String(r.bytes).padEnd(9)} ${r.input_hash}`);
  }
  return EXIT_OK;
}

/** The flags `ringbook start` takes; --data-dir and --config reach main.ts as its environment. */
function prepareStart(args: ParsedArgs): void {
  const known = ['data-dir', 'config', 'pretty', 'role'];
  for (const name of args.flags.keys()) {
    // An unknown flag used to be ignored: `start --port 9000` listened on 8080.
    if (!known.includes(name)) throw new UsageError(`unknown option --${name} (the port and host: RINGBOOK_PORT, RINGBOOK_HOST)`);
  }
  if (args.positional.length > 1) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[1])}`);
  const config = args.flags.get('config');
  if (config === true) throw new UsageError('--config needs a file');
  if (args.flags.get('role') === true) throw new UsageError('--role needs a value');
  // --data-dir used to be ignored here (the server took ./data), though the help lists it.
  if (args.flags.has('data-dir')) process.env.RINGBOOK_DATA_DIR = dataDir(args);
  if (typeof config === 'string') process.env.RINGBOOK_CONFIG = path.resolve(config);
}

/** `--every N`: a positive integer (anything else was ignored: `--every abc` printed no roots). */
function everyFlag(args: ParsedArgs): number | undefined {
  const every = args.flags.get('every');
  if (every === undefined) return undefined;
  if (every === true || !/^[0-9]+$/.test(every) || Number(every) < 1 || !Number.isSafeInteger(Number(every))) {
    throw new UsageError('--every must be a positive integer');
  }
  return Number(every);
}

export async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv, BOOLEAN_FLAGS);
  const [command, sub] = args.positional;
  if (command === undefined) {
    console.log(HELP);
    return args.flags.has('help') ? EXIT_OK : EXIT_USAGE;
  }
  const usage = COMMAND_USAGE[command];
  if (usage === undefined) return dispatch(command, sub, args, argv);
  if (args.flags.has('help')) {
    console.log(usage);
    return EXIT_OK;
  }
  try {
    return await dispatch(command, sub, args, argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`ringbook ${command}: ${e.message}\n\n${usage}`);
    return EXIT_USAGE;
  }
}

async function dispatch(command: string, sub: string | undefined, args: ParsedArgs, argv: readonly string[]): Promise<number> {
  switch (command) {
    case 'help':
      console.log(HELP);
      return EXIT_OK;
    case 'start':
      prepareStart(args);
      await import('../main.js');
      return -1; // the server keeps running; main.ts owns the exit
    case 'keygen':
      return keygen(args);
    case 'journal':
      if (sub === 'inspect') return await journalInspect(args);
      throw new UsageError(sub === undefined ? 'which subcommand? (inspect)' : `unknown subcommand ${JSON.stringify(sub)}`);
    case 'deposit':
      return (await import('./trader.js')).depositCommand(args);
    case 'order':
      return (await import('./trader.js')).orderCommand(args);
    case 'cancel':
      return (await import('./trader.js')).cancelCommand(args);
    case 'cancel-after':
      return (await import('./trader.js')).cancelAfterCommand(args);
    case 'agent':
      return (await import('./agent.js')).agentCommand(args);
    case 'batch':
      return (await import('./batch.js')).batchCommand(args);
    case 'balances':
      return (await import('./trader.js')).balancesCommand(args);
    case 'referral':
      return (await import('./programmes.js')).referralCommand(args);
    case 'force-include':
      return (await import('./programmes.js')).forceIncludeCommand(args);
    case 'book':
      return (await import('./book.js')).bookCommand(args);
    case 'bench':
      return (await import('./bench.js')).benchCommand(args, argv);
    case 'market-maker':
      return (await import('./market_maker.js')).marketMakerCommand(args);
    case 'contract':
    case 'withdraw-onchain':
    case 'escape':
      return (await import('./settlement.js')).settlementCommand(command, args);
    case 'replay': {
      const { replayJournal } = await import('./replay.js');
      const every = everyFlag(args);
      const json = args.flags.has('json');
      const r = replayJournal(journalDataDir(args), {
        every,
        onRoot: json ? undefined : (id, root) => console.log(`batch ${id}  state root ${root}`),
      });
      if (json) console.log(JSON.stringify(r));
      else {
        console.log(`replayed ${r.batches} batches (${r.requests} requests) in ${r.seconds.toFixed(2)} s`);
        console.log(`last batch ${r.last_batch_id}  state root ${r.state_root}`);
        console.log(`engine state digest ${r.engine_digest}`);
        console.log(`compared with published roots: ${r.compared} batches, ${r.mismatches.length} mismatches`);
        for (const m of r.mismatches.slice(0, 10)) console.log(`  batch ${m.batch_id}: journal ${m.journal_root} published ${m.published_root}`);
      }
      return r.mismatches.length > 0 ? 2 : EXIT_OK;
    }
    case 'backup':
      return (await import('./backup.js')).backupCommand(args);
    case 'snapshot': {
      const { writeSnapshot } = await import('./snapshot.js');
      const w = await writeSnapshot(journalDataDir(args));
      if (args.flags.has('json')) {
        console.log(JSON.stringify(w));
      } else {
        console.log(`snapshot of batch ${w.batch_id}: state root ${w.state_root}`);
        console.log(`written to ${w.file} (${w.bytes} bytes)`);
      }
      return EXIT_OK;
    }
    case 'verify': {
      // Resolved at run time: the verifier is its own entry point (dist/src/cli/verify.js).
      const verify_module = './verify.js';
      const verify = (await import(verify_module)) as { main?: (argv: readonly string[]) => Promise<number> };
      if (typeof verify.main !== 'function') {
        console.error('ringbook verify: not available in this build');
        return EXIT_ERROR;
      }
      return verify.main(argv.slice(1));
    }
    default:
      console.error(`ringbook: unknown command ${JSON.stringify(command)}\n\n${HELP}`);
      return EXIT_USAGE;
  }
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exitCode = code;
}, (e: unknown) => {
  console.error(`ringbook: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = EXIT_ERROR;
});
