import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

// Child processes of the repo-level tests (scale-out): the built entry points run exactly as deployed,
// with their output kept (bounded) for the failure message, and every child killed when the test ends.

export const ROOT = resolve(import.meta.dirname, '..');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns true; throws with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = await check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A TCP port nobody listens on right now (the OS picks it; the child binds it moments later). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

const OUTPUT_LIMIT = 20_000;

export interface TChild {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last ~20 KB the process wrote (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the first stdout/stderr text matching `pattern` (or rejects when the process exits first). */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  running(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<TChild>();
let exitHookInstalled = false;

/** Last resort when the test process itself goes away: no child outlives it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  });
}

/**
 * `node [nodeArgs] <entry>` from the repository root with exactly `env` (plus PATH/HOME of this process).
 * `nodeArgs` takes test-only preloads (`--import <hook>`).
 */
export function startNode(
  name: string,
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): TChild {
  installExitHook();
  const child = spawn(process.execPath, [...nodeArgs, resolve(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > OUTPUT_LIMIT * 2) output = output.slice(-OUTPUT_LIMIT);
    for (const l of listeners) l();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => {
      for (const l of listeners) l();
      done({ code, signal });
    });
  });
  const handle: TChild = {
    name,
    child,
    exited,
    output: () => output.slice(-OUTPUT_LIMIT),
    running: () => child.exitCode === null && child.signalCode === null,
    waitForOutput(pattern, timeoutMs) {
      return new Promise((done, fail) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          fail(new Error(`${name}: no output matching ${pattern} within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        function check() {
          const match = pattern.exec(output);
          if (match) {
            clearTimeout(timer);
            listeners.delete(check);
            done(match);
          } else if (!handle.running()) {
            clearTimeout(timer);
            listeners.delete(check);
            fail(new Error(`${name} exited before printing ${pattern}:\n${output}`));
          }
        }
        listeners.add(check);
        check();
      });
    },
    async stop(graceMs = 10_000) {
      if (handle.running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      children.delete(handle);
    },
  };
  children.add(handle);
  return handle;
}

/** The value of one series in Prometheus text format, matched by name and a subset of its labels. */
export function metricSample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/** GET on a local port; null when nothing answers (yet, or any more). */
export async function httpGet(port: number, path: string): Promise<{ status: number; text: string } | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return null;
  }
}
