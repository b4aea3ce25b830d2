// RINGBOOK_RING_FUTEX: the doorbell's futex as asked, and a value outside auto/native/atomics
// refused (a misspelt `atomic` once left the native futex on without a word). Each case runs the
// compiled dist/src/util/futex.js in its own process (a thread loads the module once and keeps
// it), and the server itself is started with a bad value and must refuse to start.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ringFutexChoice } from '../../src/util/futex.js';
import { REPO_ROOT, startServer } from '../server/harness.js';
import { nativeChoiceIn } from './native_choice.js';

const FUTEX_JS = path.join(REPO_ROOT, 'dist', 'src', 'util', 'futex.js');

/** What nativeFutex() gives in a fresh process of `futex_js` with RINGBOOK_RING_FUTEX=`value`. */
const nativeFutexIn = (futex_js: string, value: string | undefined): Promise<string> =>
  nativeChoiceIn(futex_js, 'nativeFutex', 'RINGBOOK_RING_FUTEX', value);

describe('RINGBOOK_RING_FUTEX', () => {
  it('takes auto (or unset), native and atomics; anything else is an error naming them', () => {
    expect(ringFutexChoice({})).toEqual({ choice: 'auto' });
    expect(ringFutexChoice({ RINGBOOK_RING_FUTEX: '' })).toEqual({ choice: 'auto' });
    for (const v of ['auto', 'native', 'atomics'] as const) expect(ringFutexChoice({ RINGBOOK_RING_FUTEX: v })).toEqual({ choice: v });
    for (const bad of ['atomic', 'Atomics', 'futex', ' atomics', '1']) {
      expect(ringFutexChoice({ RINGBOOK_RING_FUTEX: bad })).toEqual({
        error: `RINGBOOK_RING_FUTEX must be one of auto, native, atomics (or unset: auto), not ${JSON.stringify(bad)}`,
      });
    }
  });

  it('a thread loads the doorbell as asked and throws on a value it does not know', async () => {
    // `make native` built native/build/ring_futex.node (Linux).
    const built = process.platform === 'linux' ? 'native' : 'atomics';
    expect(await nativeFutexIn(FUTEX_JS, undefined)).toBe(built);
    expect(await nativeFutexIn(FUTEX_JS, 'auto')).toBe(built);
    expect(await nativeFutexIn(FUTEX_JS, 'atomics')).toBe('atomics');
    expect(await nativeFutexIn(FUTEX_JS, 'atomic')).toMatch(/^error: RINGBOOK_RING_FUTEX must be one of auto, native, atomics/);
  });

  it('native without the module is an error, auto then falls back to Atomics', async () => {
    // The same compiled file where no native/build/ring_futex.node sits above it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-futex-'));
    try {
      // util/futex.js finds the module through util/native_module.js beside it: the same folder.
      fs.mkdirSync(path.join(dir, 'util'));
      const copy = path.join(dir, 'util', 'futex.js');
      fs.copyFileSync(FUTEX_JS, copy);
      fs.copyFileSync(path.join(path.dirname(FUTEX_JS), 'native_module.js'), path.join(dir, 'util', 'native_module.js'));
      expect(await nativeFutexIn(copy, 'auto')).toBe('atomics');
      expect(await nativeFutexIn(copy, 'native')).toMatch(/^error: RINGBOOK_RING_FUTEX=native, but /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the server refuses to start on a misspelt value, with the accepted values in its message', async () => {
    const started = startServer({ env: { RINGBOOK_RING_FUTEX: 'atomic' } });
    await expect(started).rejects.toThrow(/server exited \(code 1[\s\S]*RINGBOOK_RING_FUTEX must be one of auto, native, atomics/);
  });
});
