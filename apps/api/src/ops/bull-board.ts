import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { QUEUE_NAMES, type TQueues } from '@sps/queue';
import type { Router } from 'express';

/**
 * Bull Board over every queue. A retry from the board re-runs the same job id and payload through the
 * same processors, which re-read PostgreSQL and never resend a segment that has a remote id.
 */
export function bullBoardRouter(queues: TQueues, basePath: string): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: QUEUE_NAMES.map((name) => new BullMQAdapter(queues[name])), serverAdapter });
  return serverAdapter.getRouter() as Router;
}
