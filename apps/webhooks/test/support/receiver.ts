import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Test-only HTTPS receiver on 127.0.0.1 with a self-signed certificate made by openssl.

export interface TCertificate {
  dir: string;
  certPath: string;
  cert: Buffer;
  key: Buffer;
  remove(): void;
}

export function makeCertificate(): TCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'sps-webhooks-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return {
    dir,
    certPath,
    cert: readFileSync(certPath),
    key: readFileSync(keyPath),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TReceived {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  at: number;
}

/** A status to answer, or 'hang' to never answer. */
export type TRespond = (req: TReceived) => number | 'hang';

export interface TReceiver {
  url(path?: string): string;
  port: number;
  received: TReceived[];
  respond: TRespond;
  on(path: string): TReceived[];
  waitFor(predicate: (all: TReceived[]) => boolean, timeoutMs?: number): Promise<TReceived[]>;
  close(): Promise<void>;
}

export async function startReceiver(cert: TCertificate): Promise<TReceiver> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver: TReceiver = {
    port: 0,
    received: [],
    respond: () => 200,
    url: (path = '/hook') => `https://127.0.0.1:${receiver.port}${path}`,
    on: (path) => receiver.received.filter((r) => r.path === path),
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: condition not met in ${timeoutMs}ms (${receiver.received.length} received)`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
      return receiver.received;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = {
        path: req.url ?? '/',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      receiver.received.push(entry);
      const status = receiver.respond(entry);
      if (status === 'hang') {
        hanging.add(res);
        return;
      }
      // A 3xx points somewhere the test can watch: a client that followed it would show up at /followed.
      const location = status >= 300 && status < 400 ? { location: receiver.url('/followed') } : {};
      res.writeHead(status, { 'content-type': 'text/plain', ...location }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  receiver.port = typeof address === 'object' && address ? address.port : 0;
  return receiver;
}
