import { JOBS, type TQueues } from '@sps/queue';

/** Publish jobs added in the same turn go to Redis in one `addBulk` (thousands start in the same second). */
export function publishEnqueuer(queues: TQueues) {
  let pending: { postId: string; attempt: number; done: (error?: unknown) => void }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    queues.publish
      .addBulk(
        batch.map(({ postId, attempt }) => {
          const payload = JOBS.publish.payload.parse({ postId, attempt });
          return {
            name: 'publish',
            data: payload,
            opts: { ...JOBS.publish.options, jobId: JOBS.publish.jobId(payload) },
          };
        }),
      )
      .then(
        () => {
          for (const item of batch) item.done();
        },
        (error: unknown) => {
          for (const item of batch) item.done(error);
        },
      );
  };
  return (postId: string, attempt: number) =>
    new Promise<void>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ postId, attempt, done: (error) => (error === undefined ? resolve() : reject(error)) });
    });
}
