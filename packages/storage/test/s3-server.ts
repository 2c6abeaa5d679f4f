import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface TS3Server {
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('../../../scripts/s3-test-server.mjs', import.meta.url));

/**
 * The local S3 API server the tests run against: the one `.ci/run` started (`S3_TEST_ENDPOINT`), or a
 * new one in a child process (a separate server speaking HTTP, never a stand-in for the SDK).
 */
export async function startS3Server(): Promise<TS3Server> {
  const bucket = 'sps-media';
  if (process.env.S3_TEST_ENDPOINT) {
    return { endpoint: process.env.S3_TEST_ENDPOINT, bucket, stop: async () => undefined };
  }
  const child: ChildProcess = spawn(process.execPath, [SCRIPT, '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the S3 test server exited (${code})`)));
  });
  return {
    endpoint,
    bucket,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
