// `npm start`: the API and both workers in one terminal (after scripts/setup.mjs built and migrated).
// `npm start -- --demo` also runs the network simulator, points every network at it and creates a demo account
// with a connected account on each network, so the whole flow can be tried without credentials.
// Signals reach every child; when one child dies the others are stopped, so nothing runs half-started.
import { spawn } from 'node:child_process';
import { createDemo, demoEnv, waitForHttp } from './demo.mjs';

const demo = process.argv.includes('--demo');
const env = demo ? { ...process.env, ...demoEnv() } : process.env;

const apps = [
  ...(demo ? [['network-sim', 'apps/network-sim/dist/main.js']] : []),
  ['api', 'apps/api/dist/main.js'],
  ['publisher', 'apps/publisher/dist/main.js'],
  ['webhooks', 'apps/webhooks/dist/main.js'],
];

const children = apps.map(([name, entry]) => {
  const child = spawn(process.execPath, [entry], { stdio: 'inherit', env });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping the others`);
      stop('SIGTERM', code ?? 1);
    }
  });
  return child;
});

let stopping = false;
let exitCode = 0;
function stop(signal, code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
  setTimeout(() => process.exit(exitCode), 15_000).unref();
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stop(signal));
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});
let remaining = children.length;
for (const child of children) {
  child.on('exit', () => {
    remaining -= 1;
    if (remaining === 0) process.exit(exitCode);
  });
}

if (demo) {
  const api = `http://127.0.0.1:${env.PORT ?? 3000}`;
  try {
    await waitForHttp(`${api}/readyz`, 60_000);
    const created = await createDemo(env);
    console.log(
      [
        '',
        'Demo ready: every network points at the simulator; nothing leaves this machine.',
        `  dashboard: ${api}/dashboard/ — sign in as ${created.email} with password ${created.password}`,
        `  account ${created.accountId}, API key ${created.apiKey}`,
        `  connected: ${created.platforms.join(', ')}`,
        '  try:',
        `  curl -s -H 'Authorization: Bearer ${created.apiKey}' -H 'content-type: application/json' \\`,
        `    -d '{"content":"Hello from the demo","platforms":["twitter","mastodon"]}' ${api}/v1/posts`,
        `  curl -s -X POST -H 'Authorization: Bearer ${created.apiKey}' ${api}/v1/posts/<id>/publish`,
        `  curl -s -H 'Authorization: Bearer ${created.apiKey}' ${api}/v1/posts/<id>`,
        '',
      ].join('\n'),
    );
  } catch (error) {
    console.error(`demo set-up failed: ${error.message}`);
    stop('SIGTERM', 1);
  }
}
