import type { Logger } from 'pino';

// One graceful shutdown for every process: on SIGTERM or SIGINT the steps run in order (the worker or HTTP
// server first, then Redis, then PostgreSQL), a failing or slow step is logged and never skips the rest,
// and a process that still hangs is ended with exit code 1 after `forceAfterMs`.

export interface TShutdownStep {
  name: string;
  run: () => Promise<unknown>;
  /** Gives up waiting on this step after so long (the next steps still run). */
  timeoutMs?: number;
}

function within<T>(promise: Promise<T>, ms: number | undefined): Promise<T | undefined> {
  if (ms === undefined) return promise;
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Installs the SIGTERM/SIGINT handlers; call it before announcing that the process started. */
export function stopOnSignals(options: {
  logger: Logger;
  steps: TShutdownStep[];
  forceAfterMs: number;
}): void {
  const { logger, steps } = options;
  let stopping = false;
  async function stop(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, options.forceAfterMs);
    force.unref();
    for (const step of steps) {
      const finished = await within(
        step.run().then(
          () => true,
          (err: Error) => {
            logger.warn({ err: err?.message, step: step.name }, 'shutdown step failed');
            return true;
          },
        ),
        step.timeoutMs,
      );
      if (finished === undefined)
        logger.warn({ step: step.name, timeoutMs: step.timeoutMs }, 'shutdown step timed out');
    }
    logger.info('stopped');
    process.exit(0);
  }
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
