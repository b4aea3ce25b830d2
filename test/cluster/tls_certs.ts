// Throwaway certificates for the TLS tests, made with the `openssl` command (3.0) at test time in a
// temporary directory: a CA, a second unrelated CA, a server certificate for 127.0.0.1 and
// localhost, one for localhost only, a client certificate. P-256 keys: generated in milliseconds, unlike RSA.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TestPki {
  ca: string;
  ca_key: string;
  /** Another CA, unrelated: trusting it alone must not verify the server. */
  other_ca: string;
  server_cert: string;
  server_key: string;
  /** A server certificate naming localhost only (not 127.0.0.1). */
  localhost_cert: string;
  localhost_key: string;
  client_cert: string;
  client_key: string;
  /** A client certificate the other CA signed: a server whose ca_file is the first CA refuses it. */
  other_client_cert: string;
  other_client_key: string;
}

/** Validity of every test certificate (they live in a temp dir for one run). */
const DAYS = '2';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
    '-days', DAYS, '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  return { cert, key };
}

function makeLeaf(dir: string, name: string, ca: { cert: string; key: string }, serial: number, extensions: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, extensions);
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
  openssl(dir, ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', String(serial), '-days', DAYS, '-extfile', ext, '-out', cert]);
  return { cert, key };
}

export function makeTestPki(dir: string): TestPki {
  const ca = makeCa(dir, 'rb-test-ca');
  const other = makeCa(dir, 'rb-other-ca');
  const server = makeLeaf(dir, 'rb-nats-server', ca, 2, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  const client = makeLeaf(dir, 'rb-matcher', ca, 3, 'extendedKeyUsage=clientAuth\n');
  const localhost = makeLeaf(dir, 'rb-localhost-only', ca, 4, 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n');
  const other_client = makeLeaf(dir, 'rb-other-matcher', other, 5, 'extendedKeyUsage=clientAuth\n');
  return {
    ca: ca.cert, ca_key: ca.key, other_ca: other.cert, server_cert: server.cert, server_key: server.key,
    localhost_cert: localhost.cert, localhost_key: localhost.key, client_cert: client.cert, client_key: client.key,
    other_client_cert: other_client.cert, other_client_key: other_client.key,
  };
}

/** `key` encrypted with a passphrase (PKCS#8), as `openssl pkey -aes256` writes it. */
export function encryptedKey(dir: string, key: string): string {
  const out = path.join(dir, 'encrypted.key');
  openssl(dir, ['pkey', '-in', key, '-aes256', '-passout', 'pass:test-passphrase', '-out', out]);
  return out;
}
