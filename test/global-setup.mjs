// Migrates the template database once per run; every test file clones it (createTestDatabase in
// @sps/db/testing). Runs the real `db:migrate` entry point in a child process: it exits when done, so
// no pool of the schema engine lingers in jest's own process.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export default async function globalSetup() {
  const root = resolve(import.meta.dirname, '..');
  const url = new URL(process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${process.env.TEST_TEMPLATE_DB ?? 'sps_test_template'}`;
  execFileSync(process.execPath, [resolve(root, 'apps/admin/dist/migrate.js'), 'deploy'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url.toString(), INIT_CWD: root },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
