import type { z } from 'zod';
import {
  queryParameters,
  schemaRef,
  type TJsonSchema,
  type TParameter,
  type TRequestSchemaName,
  type TResponseSchemaName,
} from './openapi-components.js';
import {
  errorResponses,
  securityOf,
  successHeaders,
  type TErrorStatus,
  type TVariant,
} from './openapi-responses.js';

export type THttpMethod = 'get' | 'post' | 'put' | 'delete';

/** One route as the document states it; the variant adds tags, security, headers and error bodies. */
export interface TOperationSpec {
  method: THttpMethod;
  /** OpenAPI path, e.g. `/v1/posts/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Descriptions of the path parameters (every `{name}` in the path is a required string). */
  pathParams?: Record<string, string>;
  /** The zod object the route parses `req.query` with. */
  query?: z.ZodObject;
  /** The request body schema (JSON). */
  body?: TRequestSchemaName;
  /** A multipart/form-data body (uploads), as a JSON Schema of its parts. */
  multipart?: TJsonSchema;
  /** The route also works without a body (PUT /v1/webhooks/{id} treats none as `{}`). */
  bodyOptional?: boolean;
  success: {
    status: 200 | 201 | 202 | 204;
    description: string;
    /** JSON body; omitted for 204 and non-JSON bodies. */
    schema?: TResponseSchemaName;
    /** A non-JSON body, e.g. `text/html`. */
    mediaType?: string;
  };
  errors: readonly TErrorStatus[];
  /** Takes `Idempotency-Key` (http/idempotency.ts): the header, the replay header and its 409/422 are added. */
  idempotent?: boolean;
  /** Other answers outside the variant's error shape (e.g. /readyz's 503). */
  otherResponses?: Record<string, { description: string; schema: TResponseSchemaName }>;
}

const PATH_PARAM = /\{([^}]+)\}/g;

function pathParameters(spec: TOperationSpec): TParameter[] {
  return [...spec.path.matchAll(PATH_PARAM)].map(([, name = '']) => {
    const description = spec.pathParams?.[name];
    return {
      name,
      in: 'path',
      required: true,
      ...(description ? { description } : {}),
      schema: { type: 'string' },
    };
  });
}

function successResponse(
  spec: TOperationSpec,
  variant: TVariant | undefined,
  idempotent: boolean,
): TJsonSchema {
  const { description, schema, mediaType } = spec.success;
  const base = variant ? successHeaders(variant) : undefined;
  const headers = idempotent ? { ...base, ...REPLAYED_HEADER } : base;
  const content = schema
    ? { 'application/json': { schema: schemaRef(schema) } }
    : mediaType
      ? { [mediaType]: { schema: { type: 'string' } } }
      : undefined;
  return { description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
}

const TAGS: Record<TVariant, string> = { A: 'Variant A', B: 'Variant B' };

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same body (compared as JSON data) from the same account within ' +
    '24 hours answers the first answer again, with `Idempotent-Replayed: true`, and does nothing else. Another ' +
    'route or body with the key is 422 `idempotency_key_reused`; while the first request runs, 409 ' +
    '`idempotency_key_in_use`. Successes and refusals (4xx other than 400, 409 and 429) are remembered; a 400, ' +
    '409, 429 or 5xx frees the key for the retry. Use a new random key (a UUID) per operation.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    required: false,
    description:
      '`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** The OpenAPI operation object; `variant` undefined for unauthenticated operations routes. */
export function buildOperation(spec: TOperationSpec, variant: TVariant | undefined): TJsonSchema {
  const parameters = [
    ...pathParameters(spec),
    ...(spec.query ? queryParameters(spec.query) : []),
    ...(spec.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : []),
  ];
  const errors = spec.idempotent
    ? [...new Set([...spec.errors, 409, 422] as TErrorStatus[])].sort((a, b) => a - b)
    : spec.errors;
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [variant ? TAGS[variant] : 'Operations'],
    security: variant ? securityOf(variant) : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: !spec.bodyOptional,
            content: { 'application/json': { schema: schemaRef(spec.body) } },
          },
        }
      : spec.multipart
        ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: spec.multipart } } } }
        : {}),
    responses: {
      [String(spec.success.status)]: successResponse(spec, variant, spec.idempotent === true),
      ...(variant ? errorResponses(variant, errors) : {}),
      ...Object.fromEntries(
        Object.entries(spec.otherResponses ?? {}).map(([status, { description, schema }]) => [
          status,
          { description, content: { 'application/json': { schema: schemaRef(schema) } } },
        ]),
      ),
    },
  };
}
