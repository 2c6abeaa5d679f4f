import { componentSchemas, type TJsonSchema } from './openapi-components.js';
import { buildOperation, type TOperationSpec } from './openapi-operation.js';
import { OPERATIONS_A } from './openapi-paths-a.js';
import { OPERATIONS_B } from './openapi-paths-b.js';
import { MEDIA_OPERATIONS_A, MEDIA_OPERATIONS_B, MEDIA_OPERATIONS_PUBLIC } from './openapi-paths-media.js';
import { errorComponents, SECURITY_SCHEMES, type TVariant } from './openapi-responses.js';

/** Unauthenticated operations routes mounted in app.ts (Bull Board and MCP are described elsewhere). */
export const OPERATIONS_OPS: readonly TOperationSpec[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'Liveness: 200 while the process runs',
    success: { status: 200, description: 'Alive.', schema: 'Health' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: 200 when PostgreSQL and Redis answer, else 503',
    success: { status: 200, description: 'Ready.', schema: 'Readiness' },
    errors: [],
    otherResponses: { 503: { description: 'PostgreSQL or Redis does not answer.', schema: 'Readiness' } },
  },
  {
    method: 'get',
    path: '/oauth/callback/{platform}',
    operationId: 'oauthCallback',
    summary: "Where a network's authorization page sends the user back (no API key: the state binds it)",
    description:
      'Answers 302 to the `redirect_uri` given at connect with `account_id` (several Facebook Pages: also `account_ids`) or `error` (`access_denied`, `exchange_failed`, `temporarily_unavailable`, …) added; without a `redirect_uri`, a small HTML page. An unknown, expired or used state is a 400 page.',
    pathParams: { platform: 'The network, e.g. twitter.' },
    success: {
      status: 200,
      description: 'An HTML page (when no redirect_uri was given).',
      mediaType: 'text/html',
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    success: { status: 200, description: 'The OpenAPI 3.1 document.', mediaType: 'application/json' },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'docs',
    summary: 'Interactive documentation of this document (Swagger UI, served locally)',
    success: { status: 200, description: 'An HTML page.', mediaType: 'text/html' },
    errors: [],
  },
];

export type TOpenApiDocument = TJsonSchema & {
  openapi: string;
  paths: Record<string, Record<string, TJsonSchema>>;
  components: Record<string, Record<string, TJsonSchema>>;
};

function addOperations(
  paths: TOpenApiDocument['paths'],
  operations: readonly TOperationSpec[],
  variant: TVariant | undefined,
): void {
  for (const spec of operations) {
    const item = paths[spec.path] ?? {};
    if (item[spec.method])
      throw new Error(`OpenAPI: ${spec.method.toUpperCase()} ${spec.path} described twice`);
    item[spec.method] = buildOperation(spec, variant);
    paths[spec.path] = item;
  }
}

const DESCRIPTION = [
  'One service, two interface descriptions over the same posts.',
  '',
  '- **Variant A** under `/api`: camelCase fields, posts carry `published` and `queueStatus`; errors are',
  '  `{error, fix?, details?}`; the API key goes in `Authorization: Bearer <API_KEY>` or `x-api-key`.',
  '- **Variant B** under `/v1`: snake_case fields, posts carry `status`; errors are `{error, code, details}`;',
  '  the API key goes in `Authorization: Bearer <API_KEY>`; every authenticated answer carries the',
  '  `X-RateLimit-*` headers, and a 429 also `Retry-After`.',
].join('\n');

/** The OpenAPI 3.1 document of both variants, built from the zod schemas the routes validate with. */
export function buildOpenApiDocument(): TOpenApiDocument {
  const paths: TOpenApiDocument['paths'] = {};
  addOperations(paths, OPERATIONS_A, 'A');
  addOperations(paths, OPERATIONS_B, 'B');
  addOperations(paths, MEDIA_OPERATIONS_A, 'A');
  addOperations(paths, MEDIA_OPERATIONS_B, 'B');
  addOperations(paths, OPERATIONS_OPS, undefined);
  addOperations(paths, MEDIA_OPERATIONS_PUBLIC, undefined);
  const errors = errorComponents();
  return {
    openapi: '3.1.0',
    info: { title: 'Social post publishing service', version: '1.0.0', description: DESCRIPTION },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Variant A', description: '`/api`: camelCase, `published` + `queueStatus`.' },
      { name: 'Variant B', description: '`/v1`: snake_case, `status`, webhooks.' },
      { name: 'Operations', description: 'Health, readiness, metrics and this documentation; no API key.' },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      responses: errors.responses,
      headers: errors.headers,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

let cached: TOpenApiDocument | undefined;

/** Built once per process (the schemas do not change at run time). */
export function openApiDocument(): TOpenApiDocument {
  cached ??= buildOpenApiDocument();
  return cached;
}
