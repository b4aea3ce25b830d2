// One real server per test file: started before the file's tests, stopped after them with a
// clean exit asserted. The set-up every real-server test file otherwise writes out again.
import { afterAll, beforeAll, expect } from 'vitest';
import { api, startServer, type Api, type StartedServer } from './harness.js';

export type ServerOptions = Parameters<typeof startServer>[0];

/**
 * Registers the hooks; `onStarted` receives the server and a client for it before any test runs,
 * `beforeStop` (when given) runs after the file's tests, just before the server is stopped.
 */
export function serverPerFile(onStarted: (s: StartedServer, a: Api) => void, options?: ServerOptions, beforeStop?: () => void): void {
  let started: StartedServer | undefined;
  beforeAll(async () => {
    started = await startServer(options);
    onStarted(started, api(started.url));
  });
  afterAll(async () => {
    beforeStop?.();
    const r = await started?.stop();
    expect(r?.code).toBe(0);
  });
}
