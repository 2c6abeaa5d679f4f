import http from 'node:http';
import https from 'node:https';
import { guardedLookup } from '@sps/safe-fetch';

// The publish call of the busiest connectors, over node:http. Profiles of a 1,000-post burst put got at a
// quarter of the publisher's CPU (its per-request option normalisation, hooks and cancelable promises, not
// the sockets), and the publisher is what the due second waits on. This keeps what connectors rely on from
// got: one bounded timeout for the whole call, no redirects, no retries, JSON in and out, an answer size
// bound, the address guard for hosts chosen by users, and errors that classifyHttpError sorts into kinds.

/** A non-2xx answer; `body` is the parsed JSON when the answer is JSON, its text otherwise. */
export class LeanHttpError extends Error {
  readonly response: {
    statusCode: number;
    headers: http.IncomingHttpHeaders;
    body: unknown;
  };
  constructor(statusCode: number, headers: http.IncomingHttpHeaders, body: unknown) {
    super(`Response code ${statusCode}`);
    this.response = { statusCode, headers, body };
  }
}

/** Why a call ended without an answer: `timeout` and `too_large` after the request may have been read. */
export class LeanRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly reason: 'timeout' | 'too_large' | 'connection' | 'parse',
  ) {
    super(message);
  }
}

export interface TLeanCallOptions {
  headers?: Record<string, string>;
  /** Sent as the JSON body. */
  json?: unknown;
  searchParams?: Record<string, string | number>;
}

export interface TLeanHttp {
  request<T>(method: string, path: string, options?: TLeanCallOptions): Promise<T>;
}

export interface TLeanHttpOptions {
  /** See THttpClientOptions.chosenByUser: resolve through the address guard. */
  chosenByUser?: boolean;
  /** Answers past this many bytes are cut off (default 1 MiB: a publish answer is a few hundred bytes). */
  maxAnswerBytes?: number;
}

const DEFAULT_MAX_ANSWER = 1024 * 1024;

/** One client per connector, like createHttpClient: keep-alive sockets of its own, `baseUrl` + `path`. */
export function createLeanHttp(
  baseUrl: string,
  timeoutMs = 15_000,
  options: TLeanHttpOptions = {},
): TLeanHttp {
  const base = new URL(`${baseUrl.replace(/\/+$/, '')}/`);
  const secure = base.protocol === 'https:';
  const transport = secure ? https : http;
  const agent = new transport.Agent({ keepAlive: true });
  const lookup = options.chosenByUser ? (guardedLookup(false) as never) : undefined;
  const maxBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER;

  return {
    request<T>(method: string, path: string, call: TLeanCallOptions = {}): Promise<T> {
      const url = new URL(path.replace(/^\/+/, ''), base);
      for (const [key, value] of Object.entries(call.searchParams ?? {}))
        url.searchParams.set(key, String(value));
      const body = call.json === undefined ? undefined : Buffer.from(JSON.stringify(call.json));
      const headers: Record<string, string | number> = {
        'user-agent': 'social-post-service/0.1',
        accept: 'application/json',
        ...call.headers,
      };
      if (body) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = body.length;
      }
      return new Promise<T>((resolve, reject) => {
        let settled = false;
        const fail = (error: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(error);
        };
        const req = transport.request(url, { method, headers, agent, ...(lookup ? { lookup } : {}) });
        // The whole call, answer included (got's `timeout.request`).
        const timer = setTimeout(() => {
          fail(
            new LeanRequestError(
              `Timeout awaiting '${method} ${url.pathname}' for ${timeoutMs}ms`,
              'ETIMEDOUT',
              'timeout',
            ),
          );
          req.destroy();
        }, timeoutMs);
        req.on('error', (error: NodeJS.ErrnoException) =>
          fail(
            error.code === 'EFORBIDDENADDRESS'
              ? error
              : new LeanRequestError(error.message, error.code ?? 'ERR_REQUEST', 'connection'),
          ),
        );
        req.on('response', (res) => {
          const announced = Number(res.headers['content-length']);
          const chunks: Buffer[] = [];
          let bytes = 0;
          const tooLarge = () => {
            fail(new LeanRequestError('answer over the size bound', 'ERR_TOO_LARGE', 'too_large'));
            req.destroy();
          };
          if (Number.isFinite(announced) && announced > maxBytes) return tooLarge();
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > maxBytes) return tooLarge();
            chunks.push(chunk);
          });
          res.on('error', (error: NodeJS.ErrnoException) =>
            fail(new LeanRequestError(error.message, error.code ?? 'ECONNRESET', 'connection')),
          );
          // Closed before its end (a reset mid-answer): the request was read, so its outcome is unknown.
          res.on('close', () => {
            if (!res.complete)
              fail(new LeanRequestError('the answer was cut short', 'ECONNRESET', 'connection'));
          });
          res.on('end', () => {
            if (settled) return;
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            let parsed: unknown = text;
            let parseError: Error | null = null;
            try {
              parsed = text === '' ? '' : JSON.parse(text);
            } catch (error) {
              parseError = error as Error;
            }
            if (status < 200 || status > 299) return fail(new LeanHttpError(status, res.headers, parsed));
            if (parseError)
              return fail(
                new LeanRequestError(
                  `${parseError.message} in "${url.pathname}"`,
                  'ERR_BODY_PARSE_FAILURE',
                  'parse',
                ),
              );
            settled = true;
            clearTimeout(timer);
            resolve(parsed as T);
          });
        });
        req.end(body);
      });
    },
  };
}
