// One real server per test file: started before the file's tests, stopped after them with a
// clean exit asserted. The set-up every real-server test file otherwise writes out again.
import { afterAll, beforeAll, expect } from 'vitest';
import { api, startServer, type Api, type StartedServer } from './harness.js';

/** Registers the hooks; `onStarted` receives the server and a client for it before any test runs. */
export function serverPerFile(onStarted: (s: StartedServer, a: Api) => void, options?: Parameters<typeof startServer>[0]): void {
  let started: StartedServer | undefined;
  beforeAll(async () => {
    started = await startServer(options);
    onStarted(started, api(started.url));
  });
  afterAll(async () => {
    const r = await started?.stop();
    expect(r?.code).toBe(0);
  });
}
