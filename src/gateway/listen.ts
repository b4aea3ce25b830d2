// The end of every uWS app's set-up, shared by the server and the cluster's DA role: the 404 for
// any request no route took, and listening on the config's host and port.
import uWS from 'uWebSockets.js';
import { markHead } from './context.js';
import { Reply } from './http_reply.js';

/**
 * Every other request of the nine methods uWS routes (docs/api.md "Connections": the others never
 * reach here) gets NOT_FOUND; HEAD the headers of the 404 without its body. `hint` ends the message.
 */
export function registerNotFound(app: uWS.TemplatedApp, hint = ''): void {
  app.any('/*', (res, req) => {
    const reply = new Reply(res);
    markHead(reply, req);
    reply.error('NOT_FOUND', `no route ${req.getMethod().toUpperCase()} ${req.getUrl().slice(0, 100)}${hint}`);
  });
}

/** Listens on `host:port` (0: any free port); the socket and the port it got. */
export function listenApp(app: uWS.TemplatedApp, host: string, port: number): Promise<{ socket: uWS.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port}`));
        return;
      }
      resolve({ socket, port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
    });
  });
}
