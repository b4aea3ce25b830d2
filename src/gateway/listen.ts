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

/**
 * libusockets' LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT on the listening socket. uWS sets it by
 * default, so a second server started on a port in use (a mistaken second start, an old process
 * not gone yet) listened too and the kernel split the connections between two exchanges; with
 * this, its listen fails and it does not start.
 */
const LISTEN_EXCLUSIVE_PORT = 1;
/** `app.listen(host, port, options, cb)`: in uWS.js 20.30 itself, absent from its typings. */
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => uWS.TemplatedApp;

/** Listens on `host:port` (0: any free port), the port for this process alone; the socket and the port it got. */
export function listenApp(app: uWS.TemplatedApp, host: string, port: number): Promise<{ socket: uWS.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port} (the port is in use, e.g. by another server, or the address is not one of this machine's)`));
        return;
      }
      resolve({ socket, port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
    });
  });
}
