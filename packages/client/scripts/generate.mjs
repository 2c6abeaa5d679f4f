// Writes the client's generated sources from the API's OpenAPI document (GET /openapi.json):
//   src/generated/openapi.ts     the typed `paths`, `components` and `operations` (openapi-typescript)
//   src/generated/operations.ts  each operation's method, path and variant, by operationId (used at run time)
//
//   npm run -w packages/client generate                         document from the built API (npx tsc -b first)
//   node scripts/generate.mjs --url http://127.0.0.1:3000       document from a running API's GET /openapi.json
//   node scripts/generate.mjs --doc openapi.json                document from a file
//   add --check to write nothing and exit 1 when the committed files differ from what the document gives
//
// The files are committed (not generated at build) so that the package builds from its own folder, without the
// API's sources or a running server, and so that a change to the API's document shows up as a reviewable diff;
// apps/api/test/client-package.test.ts runs `--check` against GET /openapi.json and fails on drift.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    doc: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
    check: { type: 'boolean', default: false },
  },
});

async function loadDocument() {
  if (values.doc) return JSON.parse(await readFile(resolve(values.doc), 'utf8'));
  if (values.url) {
    const res = await fetch(new URL('/openapi.json', values.url));
    if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
    return res.json();
  }
  const builder = resolve(here, '../../../apps/api/dist/openapi/openapi-document.js');
  const { buildOpenApiDocument } = await import(pathToFileURL(builder).href);
  return buildOpenApiDocument();
}

const BANNER = '// Generated from GET /openapi.json by `npm run -w packages/client generate`.\n';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const VARIANT_OF_TAG = { 'Variant A': 'A', 'Variant B': 'B' };

/** `{operationId: {method, path, variant}}` for every operation of the two variants (not the operations routes). */
function operationsTable(document) {
  const rows = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      const variant = op && VARIANT_OF_TAG[op.tags?.[0]];
      if (!variant) continue;
      rows.push(
        `  ${op.operationId}: { method: '${method.toUpperCase()}', path: '${path}', variant: '${variant}' },`,
      );
    }
  }
  return [
    BANNER.trimEnd(),
    '// Do not edit: the method, path and variant of each operation of GET /openapi.json, by operationId.',
    'export const OPERATIONS = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}

const document = await loadDocument();
const outDir = resolve(values.out ?? resolve(here, '../src/generated'));
const files = {
  'openapi.ts': `${COMMENT_HEADER}${BANNER}${astToString(await openapiTS(document, { silent: true }))}`,
  'operations.ts': operationsTable(document),
};

if (values.check) {
  const stale = [];
  for (const [name, content] of Object.entries(files)) {
    const committed = await readFile(resolve(outDir, name), 'utf8').catch(() => '');
    if (committed !== content) stale.push(name);
  }
  if (stale.length > 0) {
    process.stderr.write(
      `packages/client/src/generated/{${stale.join(',')}} differ from the OpenAPI document: run ` +
        '`npx tsc -b && npm run -w packages/client generate` and commit the result\n',
    );
    process.exit(1);
  }
  process.stdout.write('generated sources match the OpenAPI document\n');
} else {
  for (const [name, content] of Object.entries(files)) {
    await writeFile(resolve(outDir, name), content);
    process.stdout.write(`wrote ${resolve(outDir, name)}\n`);
  }
}
