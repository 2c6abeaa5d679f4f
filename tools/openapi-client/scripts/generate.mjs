// Writes src/schema.d.ts (the typed `paths` of the API) from the OpenAPI document with openapi-typescript.
//
//   npm run -w tools/openapi-client generate                      document from the built API (npx tsc -b first)
//   node scripts/generate.mjs --doc openapi.json --out x.d.ts      document from a file, types to another file
//
// apps/api/test/openapi.test.ts runs the second form and fails when the committed schema.d.ts is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { doc: { type: 'string' }, out: { type: 'string' } },
});

async function loadDocument() {
  if (values.doc) return JSON.parse(await readFile(resolve(values.doc), 'utf8'));
  const builder = resolve(here, '../../../apps/api/dist/openapi/openapi-document.js');
  const { buildOpenApiDocument } = await import(pathToFileURL(builder).href);
  return buildOpenApiDocument();
}

const BANNER = '// Generated from GET /openapi.json by `npm run -w tools/openapi-client generate`.\n';

const document = await loadDocument();
const types = `${COMMENT_HEADER}${BANNER}${astToString(await openapiTS(document, { silent: true }))}`;
const out = resolve(values.out ?? resolve(here, '../src/schema.d.ts'));
await writeFile(out, types);
process.stdout.write(`wrote ${out}\n`);
