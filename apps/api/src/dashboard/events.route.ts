import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { LiveEvents, TLiveEvent, TLiveSink } from './live-events.js';

export interface TEventsRouteDeps {
  live: LiveEvents;
  /** Whether the stream's session still exists (read without extending it: an open tab is not a use). */
  sessionAlive: (sessionId: string) => Promise<boolean>;
  /** A comment line this often keeps proxies from closing an idle stream and notices a signed-out session. */
  heartbeatMs: number;
  logger: Logger;
}

/** Bytes a slow client may leave unread before its stream is ended (it reconnects and reloads the lists). */
const MAX_BUFFERED = 256 * 1024;

/**
 * `GET /dashboard/api/events`: server-sent events for the signed-in account (behind `sessionAuthenticate`, so
 * only its own account's changes; a GET, so the CSRF header is not needed and EventSource can open it). Each
 * message is `event: <type>` with a small JSON `data` naming what changed. The stream ends when the session
 * ends (sign-out, expiry), when the client lags, and when the server stops.
 */
export function eventsRoute(deps: TEventsRouteDeps): RequestHandler {
  return (req: Request, res: Response) => {
    const auth = req.auth!;
    const sessionId = req.session!.id;
    let ended = false;
    let heartbeat: NodeJS.Timeout | null = null;
    let unregister: () => void = () => undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      if (heartbeat) clearInterval(heartbeat);
      unregister();
      res.end();
    };
    const write = (chunk: string): boolean => {
      if (ended) return false;
      res.write(chunk);
      return res.writableLength <= MAX_BUFFERED;
    };
    const sink: TLiveSink = {
      send: (event: TLiveEvent) => write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
      end,
    };
    // Throws (429 in Variant B's shape) before any byte is written when the account has too many streams.
    unregister = deps.live.open(auth.accountId, sink);

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    // no-transform: a compressing proxy would hold messages back; X-Accel-Buffering: nginx would too.
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    req.socket.setNoDelay(true);
    // `retry`: how long EventSource waits before reconnecting after a drop.
    write(`retry: 3000\n: connected\n\n`);
    write(`event: ready\ndata: {}\n\n`);

    heartbeat = setInterval(() => {
      deps
        .sessionAlive(sessionId)
        .then((alive) => {
          if (!alive) {
            // A signed-out session's stream stops here; EventSource reconnects and gets a 401.
            end();
            return;
          }
          if (!write(': ping\n\n')) end();
        })
        .catch((err: unknown) => {
          deps.logger.debug({ err: (err as Error).message }, 'dashboard events: session check failed');
        });
    }, deps.heartbeatMs);
    heartbeat.unref();
    req.on('close', end);
  };
}
