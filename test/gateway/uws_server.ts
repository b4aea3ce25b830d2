// A real uWS server on a free loopback port for the gateway tests.
import uWS from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';

export interface TestServer {
  readonly app: TemplatedApp;
  readonly port: number;
  readonly url: string;
  close(): void;
}

/** Builds an App with `routes`, listens on 127.0.0.1 port 0, resolves with the chosen port. */
export function startServer(routes: (app: TemplatedApp) => void): Promise<TestServer> {
  const app = uWS.App();
  routes(app);
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket: us_listen_socket | false) => {
      if (socket === false) {
        reject(new Error('uWS could not listen on 127.0.0.1'));
        return;
      }
      const port = uWS.us_socket_local_port(socket);
      let closed = false;
      resolve({
        app,
        port,
        url: `http://127.0.0.1:${port}`,
        close() {
          if (closed) return;
          closed = true;
          uWS.us_listen_socket_close(socket);
          // App.close() exists at runtime in 20.30 (not in its typings): it also ends keep-alive
          // connections so the test process can exit promptly.
          const closable = app as unknown as { close?: () => void };
          closable.close?.();
        },
      });
    });
  });
}

/** Polls `condition` every 5 ms until it holds (or throws after `timeout_ms`). */
export async function waitFor(condition: () => boolean, timeout_ms = 5000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
