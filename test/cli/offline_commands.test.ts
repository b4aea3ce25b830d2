// The operator's offline commands as a new operator types them (docs/operations.md, "Inspecting";
// README): `--help` of each prints its usage and does nothing else, a data dir without a journal is
// refused instead of being created, `start` takes the flags its help names and refuses others, and
// `verify` reads RINGBOOK_URL and answers a bad command line with the usage code.
// Every run is in a temporary directory: on the old code `start --help` started a server and
// `snapshot --help` wrote ./data/snapshots (so each run is bounded and killed if it hangs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/util/free_port.js';
import { REPO_ROOT } from '../server/harness.js';
import { cli } from './run_cli.js';

/** Bounds a run that would start a server on the old code (killed then, so the test fails). */
const RUN_BOUND_MS = 20_000;
const LISTEN_BOUND_MS = 30_000;

describe('ringbook offline commands', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-offline-'));
  const cwd = path.join(tmp, 'cwd');
  fs.mkdirSync(cwd);
  // A free port and metrics port for anything that might start a server (the old code did).
  const metrics_config = path.join(tmp, 'metrics.json');
  fs.writeFileSync(metrics_config, JSON.stringify({ metrics: { port: 0 } }));
  const env = { RINGBOOK_PORT: '0', RINGBOOK_CONFIG: metrics_config, RINGBOOK_DATA_DIR: '', RINGBOOK_URL: '' };
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it.each([
    ['start', 'usage: ringbook start'],
    ['keygen', 'usage: ringbook keygen'],
    ['journal', 'usage: ringbook journal inspect'],
    ['journal inspect', 'usage: ringbook journal inspect'],
    ['snapshot', 'usage: ringbook snapshot'],
    ['replay', 'usage: ringbook replay'],
    ['verify', 'usage: ringbook verify'],
  ])('%s --help prints its usage on stdout, exits 0 and writes nothing', async (command, first_line) => {
    const r = await cli([...command.split(' '), '--help'], env, { cwd, timeout_ms: RUN_BOUND_MS });
    expect(r.stdout.startsWith(first_line), r.stdout.slice(0, 300)).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(fs.readdirSync(cwd)).toEqual([]);
  }, RUN_BOUND_MS + 5_000);

  // The three read --json (settlement.ts print) but their shared usage named it nowhere.
  it.each(['contract deploy', 'withdraw-onchain', 'escape'])('%s --help is its own usage and lists --json, which it takes', async (command) => {
    const r = await cli([...command.split(' '), '--help'], env, { cwd, timeout_ms: RUN_BOUND_MS });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`usage: ringbook ${command} `), r.stdout.slice(0, 300)).toBe(true);
    expect(r.stdout).toMatch(/^ {2}--json {2,}machine-readable output/m);
  }, RUN_BOUND_MS + 5_000);

  it.each(['journal inspect', 'replay', 'snapshot'])('%s refuses a data dir without a journal (exit 1) and creates nothing', async (command) => {
    const missing = path.join(tmp, 'no-such-dir');
    const r = await cli([...command.split(' '), '--data-dir', missing], env, { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no journal in ${missing}`);
    expect(fs.existsSync(missing)).toBe(false);
    // The default data dir (./data from the current directory) alike.
    const d = await cli([...command.split(' ')], env, { cwd });
    expect(d.code).toBe(1);
    expect(d.stderr).toContain(`no journal in ${path.join(cwd, 'data')}`);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('replay --every takes a positive integer only (usage error otherwise)', async () => {
    for (const bad of ['abc', '0', '1.5']) {
      const r = await cli(['replay', '--every', bad, '--data-dir', path.join(tmp, 'no-such-dir')], env, { cwd });
      expect(r.code, bad).toBe(64);
      expect(r.stderr).toContain('--every must be a positive integer');
    }
  });

  it('start refuses an option it does not take instead of starting on the defaults', async () => {
    const r = await cli(['start', '--port', '9000'], env, { cwd, timeout_ms: RUN_BOUND_MS });
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('unknown option --port');
    expect(fs.readdirSync(cwd)).toEqual([]);
  }, RUN_BOUND_MS + 5_000);

  it('verify: a bad command line is the usage code 64; RINGBOOK_URL is read when --url is absent', async () => {
    const bad = await cli(['verify', '--frobnicate'], env, { cwd });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('unknown argument --frobnicate');
    const from_env = await cli(['verify'], { ...env, RINGBOOK_URL: 'ftp://example.invalid' }, { cwd });
    expect(from_env.code).toBe(64);
    expect(from_env.stderr).toContain('RINGBOOK_URL must start with http:// or https://');
  });

  it('a command that finds no server at its URL says which URL and where it came from', async () => {
    const closed = await freePort(); // free: nothing listens there
    const r = await cli(['balances', '--address', '0x' + '11'.repeat(20)], { ...env, RINGBOOK_URL: `http://127.0.0.1:${closed}` }, { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ECONNREFUSED 127.0.0.1:${closed}): no server answers at http://127.0.0.1:${closed} (is it running? --url, RINGBOOK_URL)`);
  });

  // Port 9 is on the Fetch standard's blocked list: undici refuses it before connecting (no network
  // use). The old code printed only 'fetch failed (bad port)', naming neither the port nor the URL.
  it('a command whose URL has a port fetch refuses says which URL', async () => {
    const r = await cli(['balances', '--address', '0x' + '11'.repeat(20), '--url', 'http://127.0.0.1:9'], env, { cwd, timeout_ms: RUN_BOUND_MS });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('fetch failed (bad port): fetch refuses the port of http://127.0.0.1:9 (');
  }, RUN_BOUND_MS + 5_000);

  it('book (a WebSocket command) that finds no server says which URL, as the HTTP commands do', async () => {
    const closed = await freePort(); // free: nothing listens there
    const r = await cli(['book', 'ETH-USDC', '--once', '--url', `http://127.0.0.1:${closed}`], env, { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ECONNREFUSED 127.0.0.1:${closed}: no server answers at http://127.0.0.1:${closed} (is it running? --url, RINGBOOK_URL)`);
  });

  // Without --once the old code printed "connection lost, reconnecting..." before the error, though
  // no connection had ever been up. Bounded: a run that kept retrying is killed and fails here.
  it('book (live, without --once) that finds no server at first says which URL and exits 1, not "reconnecting"', async () => {
    const closed = await freePort(); // free: nothing listens there
    const r = await cli(['book', 'ETH-USDC', '--url', `http://127.0.0.1:${closed}`], env, { cwd, timeout_ms: RUN_BOUND_MS });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`no server answers at http://127.0.0.1:${closed} (is it running? --url, RINGBOOK_URL)`);
    expect(r.stderr).not.toContain('reconnecting');
  }, RUN_BOUND_MS + 5_000);

  it('start --data-dir puts the server\'s data there; verify finds it through RINGBOOK_URL', async () => {
    const data_dir = path.join(tmp, 'served');
    const proc = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'cli', 'ringbook.js'), 'start', '--data-dir', data_dir], {
      cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.resume();
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + LISTEN_BOUND_MS;
      let m: RegExpExecArray | null = null;
      while (m === null && Date.now() < deadline && proc.exitCode === null) {
        await new Promise((r) => setTimeout(r, 50));
        m = /ringbook: listening on (http:\/\/[^\s]+) \(data dir ([^)]+)\)/.exec(stdout);
      }
      expect(m, stdout).not.toBeNull();
      expect(m![2]).toBe(data_dir);
      expect(fs.existsSync(path.join(data_dir, 'journal'))).toBe(true);
      expect(fs.readdirSync(cwd)).toEqual([]);
      const v = await cli(['verify', '--out', path.join(tmp, 'proofs')], { ...env, RINGBOOK_URL: m![1] }, { cwd, timeout_ms: RUN_BOUND_MS });
      expect(v.code, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout.trim())).toMatchObject({ verify: 'ok', url: m![1] });
    } finally {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), RUN_BOUND_MS);
      expect(await exited).toBe(0);
      clearTimeout(killer);
    }
  }, LISTEN_BOUND_MS + 2 * RUN_BOUND_MS);
});
