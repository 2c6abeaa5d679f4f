// `npm start`: the API and both workers in one terminal (after build and migrate). Signals reach
// every child; when one child dies the others are stopped, so nothing runs half-started.
import { spawn } from 'node:child_process';

const apps = [
  ['api', 'apps/api/dist/main.js'],
  ['publisher', 'apps/publisher/dist/main.js'],
  ['webhooks', 'apps/webhooks/dist/main.js'],
];

const children = apps.map(([name, entry]) => {
  const child = spawn(process.execPath, [entry], { stdio: 'inherit', env: process.env });
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
