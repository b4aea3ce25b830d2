// One server per data directory (src/journal/data_dir_lock.ts): a second server started on the
// data dir of a running one stops before it opens the journal, naming the first one's pid; a
// server.pid whose process is gone (kill -9) is taken over, and a clean stop removes the file.
// The lock is flock(2) on the file (native/file_lock.c): a file naming a live node process that
// holds no lock (a pid reused, a copied data dir) does not block a start, which the pid file alone
// refused.
// Before, the second server started and both wrote one journal (found running `ringbook start
// --help` beside a running server: it recovered from the same data dir and listened).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, startServer, type StartedServer } from './harness.js';
import { dataDirLockKind, lockDataDir } from '../../src/journal/data_dir_lock.js';

describe('one server per data directory', () => {
  const started: StartedServer[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-lock-'));
  afterAll(async () => {
    for (const s of started) await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a second server on a running server\'s data dir exits 1 naming it; the first keeps serving', async () => {
    const data_dir = path.join(tmp, 'shared');
    const first = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    started.push(first);
    expect(fs.readFileSync(path.join(data_dir, 'server.pid'), 'utf8').trim()).toBe(String(first.proc.pid));
    const second = startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    second.then((s) => started.push(s), () => undefined);
    await expect(second).rejects.toThrow(new RegExp(`server exited \\(code 1, signal null\\) before listening[\\s\\S]*another server \\(pid ${first.proc.pid}\\) runs on the data dir`));
    expect((await api(first.url).get('/health')).status).toBe(200);
    // The refused start left the running server's file alone.
    expect(fs.readFileSync(path.join(data_dir, 'server.pid'), 'utf8').trim()).toBe(String(first.proc.pid));
  }, 90_000);

  it('takes over the file of a process that is gone, and removes it at a clean stop', async () => {
    const data_dir = path.join(tmp, 'stale');
    fs.mkdirSync(data_dir);
    // The pid of a process that has exited (as after a kill -9 of a server).
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    fs.writeFileSync(path.join(data_dir, 'server.pid'), `${gone.stdout}\n`);
    const s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    started.push(s); // stopped in afterAll should an expectation fail first (stop() is idempotent)
    expect(fs.readFileSync(path.join(data_dir, 'server.pid'), 'utf8').trim()).toBe(String(s.proc.pid));
    const stopped = await s.stop();
    expect(stopped.code).toBe(0);
    expect(fs.existsSync(path.join(data_dir, 'server.pid'))).toBe(false);
  }, 90_000);

  it('the kernel lock decides, not the pid in the file: a live node process named there without the lock does not block', async () => {
    // make native builds file_lock.node: this suite runs the flock path, not the pid fallback.
    expect(dataDirLockKind()).toBe('flock');
    const data_dir = path.join(tmp, 'live-pid');
    fs.mkdirSync(data_dir);
    // This test's own process: alive, and node (the pid file alone refused it as a running server).
    fs.writeFileSync(path.join(data_dir, 'server.pid'), `${process.pid}\n`);
    const s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
    started.push(s);
    expect(fs.readFileSync(path.join(data_dir, 'server.pid'), 'utf8').trim()).toBe(String(s.proc.pid));
    // While it runs, this process cannot take the directory either (its lock is another open file).
    expect(() => lockDataDir(data_dir)).toThrow(new RegExp(`another server \\(pid ${s.proc.pid}\\) runs on the data dir`));
    // kill -9: the kernel drops the lock with the process; the file it left names a dead pid.
    s.proc.kill('SIGKILL');
    await new Promise<void>((resolve) => s.proc.once('exit', () => resolve()));
    const release = lockDataDir(data_dir);
    expect(fs.readFileSync(path.join(data_dir, 'server.pid'), 'utf8').trim()).toBe(String(process.pid));
    release();
    expect(fs.existsSync(path.join(data_dir, 'server.pid'))).toBe(false);
  }, 90_000);
});
