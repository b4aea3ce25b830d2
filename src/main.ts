// `make run`: the Ringbook server on its embedded defaults (config/default.json + RINGBOOK_* env).
// `--pretty`: human-readable log lines instead of JSON (as config log.pretty).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, unlinkSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from './config/load.js';
import { ConfigError } from './config/checks.js';
import { RingbookServer } from './gateway/server.js';
import { nativeFutex } from './util/futex.js';
import { nativeLoopBell } from './util/loop_bell.js';
import { defaultRecovererInstance } from './auth/recover.js';
import { componentLog, configureLogs } from './util/log.js';
import { THREAD_NAMES } from './util/thread_name.js';
import { applyThreadSlice } from './util/thread_slice.js';
import { startThreadPlacement } from './util/thread_placement.js';
import { dataDirFsWarning } from './journal/fs_hint.js';
import { DATA_DIR_LOCK_FILE, DataDirInUse, lockDataDir } from './journal/data_dir_lock.js';

const log = componentLog('server');
import { clusterSettings, roleOf, startDa, startGateway, startMatcher, type RunningRole } from './cluster/roles.js';

/** A secret from the environment, else from the data dir, else generated (in memory: keepSecret writes it). */
interface StartSecret {
  value: string;
  /** Made by this start, not yet in the data dir (keepSecret writes it). */
  generated: boolean;
  file: string;
}

function secret(data_dir: string, file: string, from_env: string | null, make: () => string): StartSecret {
  const p = path.join(data_dir, file);
  if (from_env) return { value: from_env, generated: false, file: p };
  if (existsSync(p)) return { value: readFileSync(p, 'utf8').trim(), generated: false, file: p };
  return { value: make(), generated: true, file: p };
}

/**
 * Secret files this start wrote: removed if the start then fails, so a refused start leaves the
 * data dir as it found it (before 2026-11-29 a start refused for an incomplete backup, a data dir
 * in use or a bad cluster setting left a new admin_token there, which on a data dir another
 * server runs on with RINGBOOK_ADMIN_TOKEN is not that server's token).
 */
const written_by_start: string[] = [];

/**
 * Writes a generated secret into the data dir, once the start is past its refusals (the data dir
 * lock, the cluster settings). `wx`: a file another process on this data dir wrote since (two
 * cluster roles sharing it) is kept and its value used, never overwritten.
 */
function keepSecret(s: StartSecret): StartSecret {
  if (!s.generated) return s;
  try {
    writeFileSync(s.file, s.value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return { value: readFileSync(s.file, 'utf8').trim(), generated: false, file: s.file };
  }
  written_by_start.push(s.file);
  return s;
}

/** A failed start: the secret files it wrote go (nothing ran with them). */
function forgetStartSecrets(): void {
  for (const file of written_by_start.splice(0)) {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
}

/**
 * What a single-process start makes in its data dir (RingbookServer.start: the journal, the DA
 * store, the snapshots' directory), removed if the start fails on a data dir that held nothing
 * (newDataDir). Before 2026-11-29 a failed first start (a port in use) left them: a journal no
 * server ever served from, in a data dir the operator had not made.
 */
const START_MADE_PARTS = ['journal', 'da', 'snapshots'];

/** A data dir that held nothing when this start took its lock; `made`: the first directory this start's mkdir made (null: it existed). */
interface NewDataDir {
  dir: string;
  release: () => void;
  made: string | null;
}
let new_data_dir: NewDataDir | null = null;

/**
 * Whether the data dir holds nothing but the lock file this start just took. With the lock held
 * no other server writes it (and `ringbook backup`/`snapshot` refuse a dir without a journal), so
 * what the start makes in it from here on is this start's alone; checked after the lock, not
 * before it, so a server that ran and stopped meanwhile is seen.
 */
function newDataDir(dir: string): boolean {
  return readdirSync(dir).every((name) => name === DATA_DIR_LOCK_FILE);
}

/**
 * A failed start on a new data dir: its parts go, then the lock file, then the directories this
 * start made (rmdir: each only if empty, so anything else found there stays, and so does a data
 * dir that existed empty).
 */
function forgetNewDataDir(): void {
  const n = new_data_dir;
  new_data_dir = null;
  if (n === null) return;
  for (const part of START_MADE_PARTS) {
    try {
      rmSync(path.join(n.dir, part), { recursive: true, force: true });
    } catch {
      // left as it is: the exit says why the start failed
    }
  }
  n.release();
  if (n.made === null) return;
  // Deepest first, up to the first one made (bounded by the path's depth: rmdir of `/` fails).
  for (let d = n.dir; ; d = path.dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
    if (d === n.made) return;
  }
}

/**
 * A start that failed: what it wrote goes, the secrets first (a new data dir is then emptied and
 * its directories removed only if empty). Nothing once the start succeeded (startSucceeded).
 */
function forgetFailedStart(): void {
  forgetStartSecrets();
  forgetNewDataDir();
}

/** Started: its secrets and its data dir stay, whatever follows. */
function startSucceeded(): void {
  written_by_start.length = 0;
  new_data_dir = null;
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  if (process.argv.includes('--pretty')) cfg.log.pretty = true;
  configureLogs(cfg.log);
  // RINGBOOK_RING_FUTEX=native or RINGBOOK_LOOP_BELL=native without a module this process can
  // load, or RINGBOOK_SECP256K1=system|npm without that library: one clear line now rather than a
  // stack from the first ring made or the first signature checked.
  try {
    nativeFutex();
    nativeLoopBell();
    defaultRecovererInstance();
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  // A cluster role (docs/scale-out.md), else the single process: a bad role or cluster setting
  // refuses the start here, before the data dir is made or written.
  const role = roleOf(process.argv, process.env);
  const settings = role === null ? null : clusterSettings(role);
  const data_dir = path.resolve(cfg.server.data_dir);
  const made = mkdirSync(data_dir, { recursive: true }) ?? null;
  const fs_warning = dataDirFsWarning(data_dir);
  if (fs_warning !== null) log.warn(`ringbook: ${fs_warning}`, { data_dir });
  // Read or made now, written (keepSecret) only once the start is past its refusals.
  const admin_found = secret(data_dir, 'admin_token', cfg.admin_token, () => randomBytes(24).toString('hex'));
  const operator_found = secret(data_dir, 'operator_key', cfg.operator_key, () => '0x' + randomBytes(32).toString('hex'));
  // Signals are taken from here on, before the start: a SIGTERM while the journal is recovered
  // or the verify workers load (up to VERIFY_WORKERS_START_WAIT_MS, 10 s) ends the start cleanly
  // (the server does not listen and stops like a running one) instead of killing the process
  // half started. A second one during the start exits at once (a start that hangs).
  // (`as`: the closures below assign them, which TypeScript's narrowing of a `let` would not see.)
  let server = null as (RunningRole & { toggleMetricsRecording?: () => boolean | null }) | null;
  let stop_signal = null as string | null;
  const start_abort = new AbortController();
  const stopServer = (running: RunningRole, signal: string): void => {
    log.info(`ringbook: ${signal}: finishing in-flight requests`);
    running.stop().then(() => {
      log.info('ringbook: stopped cleanly');
      process.exit(0);
    }, (e: unknown) => {
      log.fatal('ringbook: unclean stop', e);
      process.exit(1);
    });
  };
  const stop = (signal: string): void => {
    if (stop_signal !== null) {
      if (server === null) {
        log.warn(`ringbook: ${signal} again during the start: exiting now, without a clean stop`);
        process.exit(1);
      }
      return;
    }
    stop_signal = signal;
    if (server === null) {
      log.info(`ringbook: ${signal} during the start: stopping cleanly once the threads are up, without listening`);
      start_abort.abort();
    } else {
      stopServer(server, signal);
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGUSR2: request-path metrics recording off/on (single process; docs/operations.md).
  process.on('SIGUSR2', () => void server?.toggleMetricsRecording?.());
  // What Node would print on stderr and exit 1 for, as one JSON line (the exit stays the same).
  process.on('uncaughtException', (e) => {
    log.fatal('ringbook: uncaught exception', e);
    forgetFailedStart(); // nothing once started
    process.exit(1);
  });
  let running: RunningRole & { toggleMetricsRecording?: () => boolean | null };
  let health_port: number | null = null;
  // Before anything opens the journal (or a secret is written): a second server on this data dir,
  // or one on an incomplete backup, stops here.
  if (role === null) {
    const release = lockDataDir(data_dir);
    if (newDataDir(data_dir)) new_data_dir = { dir: data_dir, release, made };
  }
  // Only the secrets this start uses go into the data dir: a matcher role uses neither, a DA role
  // only the operator key (before 2026-11-29 every role wrote both, and a matcher's start logged an
  // admin token nobody could use with it).
  const uses_admin_token = role === null || role === 'gateway';
  const admin = uses_admin_token ? keepSecret(admin_found) : admin_found;
  const operator = role === 'matcher' ? operator_found : keepSecret(operator_found);
  if (role === null || settings === null) {
    const single = new RingbookServer({ cfg, admin_token: admin.value, operator_key: operator.value });
    running = { port: await single.start(start_abort.signal), stop: () => single.stop(), toggleMetricsRecording: () => single.toggleMetricsRecording() };
    health_port = single.health_port;
  } else {
    if (role === 'gateway') running = await startGateway(cfg, settings, { admin_token: admin.value, operator_key: operator.value }, start_abort.signal);
    else if (role === 'matcher') running = await startMatcher(cfg, settings);
    else running = await startDa(cfg, settings, { operator_key: operator.value });
    health_port = running.health_port ?? null;
    log.info(`ringbook: ${role} ${settings.node_id} on NATS ${settings.nats_urls.join(',')}`, { role });
  }
  server = running;
  startSucceeded();
  // The matcher thread's EEVDF slice (config threads.matcher_slice_us): set from this thread by the
  // matcher's kernel thread id (found by its name, which it sets first thing), since a thread may
  // set any thread of its own process; the matcher's own start is left as it is. Logged, never
  // thrown; a process without a matcher thread (a cluster gateway) logs that it has none.
  applyThreadSlice('matcher', THREAD_NAMES.matcher, cfg.threads.matcher_slice_us, 'threads.matcher_slice_us');
  // After the threads exist (the matcher found by its name, as above); later threads are placed by the next sweep.
  startThreadPlacement(cfg.threads.pipeline_cpu);
  if (stop_signal !== null) {
    stopServer(running, stop_signal);
    return;
  }
  if (health_port !== null) log.info(`ringbook: health checks on http://${cfg.server.host}:${health_port}/health`, { health_port });
  const port = running.port;
  log.info(`ringbook: listening on http://${cfg.server.host}:${port} (data dir ${data_dir})`, { port, data_dir });
  if (!cfg.admin_token && uses_admin_token) {
    log.info(`ringbook: admin token ${admin.generated ? 'generated' : 'read'} at ${path.join(data_dir, 'admin_token')}: ${admin.value}`);
  }
}

main().catch((e: unknown) => {
  forgetFailedStart();
  if (e instanceof ConfigError || e instanceof DataDirInUse) log.fatal(e.message);
  else log.fatal('ringbook: start failed', e);
  process.exit(1);
});
