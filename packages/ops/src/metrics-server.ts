import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

// The worker's operator port: `GET /metrics` (Prometheus) and `GET /healthz` (200 while the process runs).

export interface TMetricsServer {
  /** The bound port (useful with port 0 in tests); null when the server is off or could not listen. */
  port: number | null;
  close(): Promise<void>;
}

/**
 * Listens on `port` (0 in the environment means off: nothing listens). A port already taken is logged
 * and the worker keeps running without the server, rather than dying over its metrics.
 */
export async function startMetricsServer(options: {
  port: number;
  host?: string;
  registry: Registry;
  logger: Logger;
}): Promise<TMetricsServer> {
  const { registry, logger } = options;
  if (options.port === 0) return { port: null, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: Error) => {
          logger.warn({ err: err.message }, 'metrics collection failed');
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  server.keepAliveTimeout = 5_000;
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      logger.error(
        { err: err.message, code: err.code, port: options.port },
        'metrics server could not listen; running without /metrics and /healthz',
      );
      resolve(false);
    });
    server.listen(options.port, options.host, () => resolve(true));
  });
  if (!listening) return { port: null, close: async () => undefined };
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'metrics server listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
