import { stat } from 'node:fs/promises';

// A test file's beforeAll hung once in CI until jest's 60 s hook timeout, somewhere in startTestApi,
// account() or connect(), and never again here. A step that takes this long says which it is on stderr,
// with whether the process's libuv thread pool (file system, crypto, DNS lookups, sharp) still answers:
// the next such failure names its cause instead of only the hook.
const WARN_AFTER_MS = 15_000;

async function threadPoolAnswer(): Promise<string> {
  const started = Date.now();
  const answered = await Promise.race([
    stat('/').then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
  ]);
  return answered ? `answered in ${Date.now() - started} ms` : 'did not answer within 5 s';
}

/** Awaits `work`; when it takes longer than 15 s, reports `label` (and the thread pool) on stderr, once. */
export async function watchStep<T>(label: string, work: Promise<T>): Promise<T> {
  const timer = setTimeout(() => {
    void threadPoolAnswer().then((pool) =>
      process.stderr.write(
        `[test harness] ${label}: still waiting after ${WARN_AFTER_MS / 1000} s (libuv thread pool ${pool})\n`,
      ),
    );
  }, WARN_AFTER_MS);
  timer.unref();
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}
