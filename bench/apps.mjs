// The service's worker apps as child processes and a keep-alive JSON client, for the benches that run the
// real API, publisher and webhooks processes (neighbours; burst.bench.mjs has its own copy of the same).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { resolve } from 'node:path';
import { root } from './lib.mjs';

const children = new Set();
/** Pids of servers started with startServer (simulator, API): killed with the children if the bench fails. */
export const serverPids = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const pid of serverPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** A worker app as the service runs it (`node apps/<app>/dist/main.js`); resolves once it logged `ready`. */
export function startApp(app, ready, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [resolve(root, `apps/${app}/dist/main.js`)], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    let buffered = '';
    // Keeps draining stdout (the info lines) after start-up, as a log shipper would.
    child.stdout.on('data', (chunk) => {
      if (buffered === null) return;
      buffered += chunk.toString();
      if (buffered.includes(`"${ready}"`)) {
        buffered = null;
        resolvePromise({
          pid: child.pid,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
              child.once('exit', () => {
                clearTimeout(timer);
                children.delete(child);
                done();
              });
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => {
      children.delete(child);
      reject(new Error(`${app} exited with ${code}`));
    });
  });
}

const agent = new http.Agent({
  keepAlive: true,
  maxSockets: Number(process.env.BENCH_HTTP_CONNECTIONS ?? 50),
});
/** One JSON request over the shared keep-alive agent; rejects on a status of 300 or more. */
export function call(base, method, path, body, headers = {}) {
  return new Promise((resolvePromise, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: payload
          ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const json = text ? JSON.parse(text) : null;
          if (res.statusCode >= 300)
            reject(new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`));
          else resolvePromise(json);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function closeAgent() {
  agent.destroy();
}
