import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from '@jest/globals';

// A real local HTTP server that answers what each test scripts, recording every request it receives, so the
// client is tested over real sockets (no mocked fetch). Registers its own jest hooks.

export interface TSeen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
/** Answers one request; `n` counts the requests since the test began (1 for the first). */
export type THandler = (req: TSeen, res: ServerResponse, n: number) => void;

export interface TScriptedServer {
  baseUrl: string;
  /** The requests of the current test, in order (emptied before each test). */
  seen: TSeen[];
  handler: THandler;
  server: Server;
}

export function scriptedServer(): TScriptedServer {
  const state: TScriptedServer = {
    baseUrl: '',
    seen: [],
    handler: (_req, res) => res.writeHead(500).end(),
    server: createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const entry = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        state.seen.push(entry);
        state.handler(entry, res, state.seen.length);
      });
    }),
  };
  beforeAll(async () => {
    await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
    state.baseUrl = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    state.server.closeAllConnections();
    await new Promise((resolve) => state.server.close(resolve));
  });
  beforeEach(() => {
    state.seen = [];
  });
  return state;
}

export const json = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
export const errorB = (code: string) => ({ error: `${code} happened`, code, details: {} });
export const postB = (id: string) => ({ id, content: 'x', platforms: ['twitter'], status: 'draft' });
