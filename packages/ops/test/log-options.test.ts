import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import got from 'got';
import { type LoggerOptions, pino } from 'pino';
import { logOptions } from '../src/index.js';

const BOT_TOKEN = '123456:AAE-secret-bot-token-in-the-path';
const BEARER = 'bearer-secret-0123456789';
const FORM_SECRET = 'form-client-secret-abcdef';

/** The lines one logger writes, as text. */
function capture(options: LoggerOptions) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino(options, sink), text: () => lines.join('') };
}

describe('errors in every app log: message and code only', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    // A network answering 401 to everything, like a refused token.
    server = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"ok":false}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A got error as one escapes a connector: bot token in the URL, bearer header, client secret in the form. */
  async function gotError(): Promise<Error> {
    return got
      .post(`${base}/bot${BOT_TOKEN}/sendMessage`, {
        headers: { authorization: `Bearer ${BEARER}` },
        form: { client_secret: FORM_SECRET },
        retry: { limit: 0 },
      })
      .then(
        () => new Error('expected a refusal'),
        (error: Error) => error,
      );
  }

  it("pino's own error serializer would write the request's secrets (what this guards against)", async () => {
    const { logger, text } = capture({ level: 'info' });
    logger.error({ err: await gotError() }, 'publish crashed');
    expect(text()).toContain(BEARER);
  });

  it('logOptions keeps the message and the code, and none of the secrets', async () => {
    const { logger, text } = capture(logOptions('publisher', 'info'));
    const error = await gotError();
    logger.error({ err: error }, 'publish crashed');
    logger.error(error, 'as the first argument');
    logger.warn({ error }, 'under another key');
    const written = text();
    for (const secret of [BEARER, BOT_TOKEN, FORM_SECRET]) expect(written).not.toContain(secret);
    const first = JSON.parse(written.split('\n')[0] ?? '{}') as { err: Record<string, unknown> };
    expect(first.err).toEqual({
      message: `Request failed with status code 401 (Unauthorized): POST ${base}/…`,
      code: 'ERR_NON_2XX_3XX_RESPONSE',
    });
  });
});
