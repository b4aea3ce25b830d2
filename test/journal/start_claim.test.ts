// What a start writes before it has started, and what a failed one removes (src/journal/start_claim.ts,
// used by src/main.ts for the single process and every cluster role), in this process: the real
// starts are in test/server/port_in_use.test.ts and test/cluster/role_dir_lock.test.ts. Here the
// parts a role's store directory gets only once its start is past NATS (a DA role's LMDB files, a
// matcher's snapshots), which those starts without a NATS server never reach.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSecret, StartClaim } from '../../src/journal/start_claim.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmpDir = tempDirsPerFile('ringbook-start-claim-');
const every = (): boolean => true;

function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('a failed start leaves the data dir as it found it', () => {
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
