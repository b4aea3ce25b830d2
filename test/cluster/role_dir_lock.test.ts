// A cluster matcher's snapshots (<data>/matcher), a DA role's store (<data>/da) and a gateway's
// snapshots (<data>/gateway, since h31g) are one process's each (src/cluster/roles.ts roleStoreDir,
// src/journal/data_dir_lock.ts): a second matcher, DA role or gateway started on the same data dir
// exits 1 naming the holder, before it connects to NATS or reads a snapshot or the store. Before, nothing stopped it (two matchers wrote one
// snapshot directory, two DA roles one LMDB store). The holder here is this test's process, which
// takes the lock as a running role does; the role's NATS URL is never reached (nothing listens on
// port 1).
// A role's refused or failed start leaves the data dir as it found it (src/journal/start_claim.ts,
// as the single process's): every role refuses a data dir that `ringbook backup` marked incomplete
// at its top, where the backup writes BACKUP_INCOMPLETE (before 2026-11-29 a matcher or DA role
// looked only in its own directory and went on on half a copy); a start that fails (NATS
// unreachable) removes the secrets, the store directory and the data directories it made. The
// parts a store directory gets only once a role is past NATS (a DA role's LMDB files, a matcher's
// snapshots), which these starts without a NATS server never reach, are checked on StartClaim
// itself, in this process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/journal/data_dir_lock.js';
import { findSecret, StartClaim } from '../../src/journal/start_claim.js';
import { REPO_ROOT, SERVER_MAIN } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmpDir = tempDirsPerFile('ringbook-role-lock-');
/** Bound on a refused role's run (it exits at start; a hang would be the bug). */
const ROLE_EXIT_MS_MAX = 30_000;

type RoleName = 'matcher' | 'da' | 'gateway';
/** A role's store directory that held nothing: everything in it is the start's (src/main.ts rolePart). */
const every = (): boolean => true;

/** Runs a role to its exit (killed past ROLE_EXIT_MS_MAX); no secret from the environment, so a start generates them. */
function runRole(role: RoleName, data_dir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SERVER_MAIN], {
      cwd: REPO_ROOT, timeout: ROLE_EXIT_MS_MAX, stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env, RINGBOOK_ROLE: role, RINGBOOK_DATA_DIR: data_dir, RINGBOOK_NATS_URLS: 'nats://127.0.0.1:1', RINGBOOK_PORT: '0',
        RINGBOOK_ADMIN_TOKEN: '', RINGBOOK_OPERATOR_KEY: '',
      },
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.stderr.on('data', (d: Buffer) => (out += d));
    p.once('close', (code) => resolve({ code, out }));
  });
}

/** Every path under `dir`, relative, sorted (what a start left there). */
function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('one cluster role per store directory', () => {
  const releases: (() => void)[] = [];
  afterAll(() => {
    for (const r of releases) r();
  });

  for (const [role, sub] of [['matcher', 'matcher'], ['da', 'da'], ['gateway', 'gateway']] as const) {
    it(`a ${role} role on a data dir whose ${sub}/ another process holds exits 1 naming it`, async () => {
      const data_dir = tmpDir();
      const dir = path.join(data_dir, sub);
      fs.mkdirSync(dir, { recursive: true });
      releases.push(lockDataDir(dir));
      const r = await runRole(role, data_dir);
      expect(r.out).toContain(`another server (pid ${process.pid}) runs on the data dir ${dir}`);
      expect(r.code).toBe(1);
      // Refused before a secret was written (the DA role's operator key).
      expect(tree(data_dir)).toEqual([sub, path.join(sub, 'server.pid')]);
    });
  }
});

describe('a cluster role\'s refused or failed start leaves the data dir as it found it', () => {
  it('every role refuses a data dir with BACKUP_INCOMPLETE at its top (where ringbook backup writes it), making nothing there', async () => {
    const roles: RoleName[] = ['matcher', 'da', 'gateway'];
    const dirs = roles.map(() => tmpDir());
    for (const d of dirs) fs.writeFileSync(path.join(d, 'BACKUP_INCOMPLETE'), 'ringbook backup of /data by pid 1 since 2026-11-29T00:00:00.000Z\n');
    const runs = await Promise.all(roles.map((role, i) => runRole(role, dirs[i])));
    runs.forEach((r, i) => {
      expect(r.out, roles[i]).toContain(`${dirs[i]} is an incomplete backup (BACKUP_INCOMPLETE: ringbook backup of /data by pid 1`);
      expect(r.code, roles[i]).toBe(1);
      expect(tree(dirs[i]), roles[i]).toEqual(['BACKUP_INCOMPLETE']);
    });
  });

  it('a start that fails (NATS unreachable) removes what it made: a new data dir goes, a used one keeps its files', async () => {
    // matcher and gateway: an absent data dir (its parent too is the start's to make); da: a data
    // dir holding an operator's file, whose da/ the start makes.
    const base = tmpDir();
    const absent = (name: string): string => path.join(base, name, 'data');
    const used = path.join(base, 'used');
    fs.mkdirSync(used);
    fs.writeFileSync(path.join(used, 'notes.txt'), 'an operator\'s file\n');
    const starts: [RoleName, string][] = [['matcher', absent('m')], ['da', used], ['gateway', absent('g')]];
    const runs = await Promise.all(starts.map(([role, dir]) => runRole(role, dir)));
    runs.forEach((r, i) => {
      expect(r.out, starts[i][0]).toContain('ECONNREFUSED 127.0.0.1:1');
      expect(r.code, starts[i][0]).toBe(1);
    });
    // No admin_token or operator_key (the gateway's and the DA role's), no matcher/ or da/.
    expect(tree(base)).toEqual(['used', path.join('used', 'notes.txt')]);
  });
});

describe('StartClaim, in this process: a failed start leaves the data dir as it found it', () => {
  it('a role\'s new store directory: its parts, its lock file, the secrets and the directories the start made go', () => {
    const base = tmpDir();
    const data_dir = path.join(base, 'new', 'data');
    const da = path.join(data_dir, 'da');
    const claim = new StartClaim();
    claim.mkdir(data_dir);
    claim.mkdir(da);
    claim.lock(da, every);
    expect(tree(da)).toEqual(['server.pid']);
    const key = claim.keepSecret(findSecret(data_dir, 'operator_key', null, () => 'generated'));
    expect(key).toMatchObject({ value: 'generated', generated: true });
    fs.writeFileSync(path.join(da, 'data.mdb'), 'store');
    fs.writeFileSync(path.join(da, 'lock.mdb'), 'lock');
    claim.forget();
    expect(tree(base)).toEqual([]);
  });

  it('what was there stays: a store directory in use, a secret written meanwhile by another role, other files', () => {
    const data_dir = tmpDir();
    const matcher = path.join(data_dir, 'matcher');
    fs.mkdirSync(matcher);
    fs.writeFileSync(path.join(matcher, 'snapshot-000000000004.msgpack'), 'a snapshot');
    fs.writeFileSync(path.join(data_dir, 'notes.txt'), 'an operator\'s file');
    const claim = new StartClaim();
    claim.mkdir(data_dir);
    claim.mkdir(matcher);
    claim.lock(matcher, every);
    const found = findSecret(data_dir, 'admin_token', null, () => 'ours');
    // Another role on the same data dir wrote it since it was looked for: its value is used, and kept.
    fs.writeFileSync(path.join(data_dir, 'admin_token'), 'theirs\n');
    expect(claim.keepSecret(found)).toMatchObject({ value: 'theirs', generated: false });
    claim.forget();
    // The lock of a directory the start did not claim goes with the process (data_dir_lock.ts).
    expect(tree(data_dir)).toEqual(['admin_token', 'matcher', path.join('matcher', 'server.pid'), path.join('matcher', 'snapshot-000000000004.msgpack'), 'notes.txt']);
  });

  it('once started, nothing goes', () => {
    const base = tmpDir();
    const data_dir = path.join(base, 'data');
    const claim = new StartClaim();
    claim.mkdir(data_dir);
    claim.lock(data_dir, every);
    claim.keepSecret(findSecret(data_dir, 'admin_token', null, () => 'ours'));
    fs.mkdirSync(path.join(data_dir, 'journal'));
    claim.succeeded();
    claim.forget();
    expect(tree(base)).toEqual(['data', path.join('data', 'admin_token'), path.join('data', 'journal'), path.join('data', 'server.pid')]);
  });
});
