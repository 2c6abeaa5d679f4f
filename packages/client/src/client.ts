import type { components } from './generated/openapi.js';
import type {
  TBodyOf,
  TCallInput,
  TCallOptions,
  TInputOptional,
  TOperationId,
  TQueryOf,
  TResultOf,
} from './operation-types.js';
import { nextOffsetByTotal, paginate, type TPaginateOptions } from './paginate.js';
import { send, type TClientOptions } from './transport.js';

type TSchemas = components['schemas'];
export type TPostA = TSchemas['PostA'];
export type TPostB = TSchemas['PostB'];
export type TAccountA = TSchemas['AccountA'];
export type TAccountB = TSchemas['AccountB'];
export type TWebhookB = TSchemas['WebhookB'];
export type TDeliveryB = TSchemas['DeliveryB'];
export type TCreatePostA = TSchemas['CreatePostA'];
export type TCreatePostB = TSchemas['CreatePostB'];
export type TUpdatePostB = TSchemas['UpdatePostB'];

/** `call(operationId, input)`: input may be left out when nothing in it is required. */
type TCall = <Id extends TOperationId>(
  operationId: Id,
  ...input: TInputOptional<Id> extends true ? [input?: TCallInput<Id>] : [input: TCallInput<Id>]
) => Promise<TResultOf<Id>>;

type TListOptions<Q> = TCallOptions & { query?: Q };
type TIterateOptions<Q> = TCallOptions & TPaginateOptions & { query?: Omit<Q, 'limit' | 'offset'> };

/**
 * A client of both variants of the API. `client.v1` is Variant B (`/v1`, snake_case), `client.api` is Variant A
 * (`/api`, camelCase); `client.call(operationId, …)` reaches any operation of GET /openapi.json by its id.
 *
 * Every create and publish carries an `Idempotency-Key` (a random UUID per call unless given); a call is retried
 * on 408/429/5xx and connection errors, waiting `Retry-After` when the server says, only when it is idempotent
 * (GET, PUT, DELETE) or carries a key. An error answer throws SpsApiErrorA or SpsApiErrorB with the body.
 */
export function createClient(options: TClientOptions) {
  const call = (<Id extends TOperationId>(operationId: Id, input?: TCallInput<Id>) =>
    send(options, operationId, input ?? ({} as TCallInput<Id>))) as TCall;
  const id = (value: string) => ({ id: value });

  const v1 = {
    posts: {
      create: (body: TBodyOf<'createPostB'>, opts: TCallOptions = {}) =>
        call('createPostB', { ...opts, body }),
      get: (postId: string, opts: TCallOptions = {}) => call('getPostB', { ...opts, path: id(postId) }),
      list: (opts: TListOptions<TQueryOf<'listPostsB'>> = {}) => call('listPostsB', opts),
      update: (postId: string, body: TBodyOf<'updatePostB'>, opts: TCallOptions = {}) =>
        call('updatePostB', { ...opts, path: id(postId), body }),
      delete: (postId: string, opts: TCallOptions = {}) => call('deletePostB', { ...opts, path: id(postId) }),
      publish: (postId: string, opts: TCallOptions = {}) =>
        call('publishPostB', { ...opts, path: id(postId) }),
      /** Every post matching `query`, newest first, fetched `pageSize` (default and maximum 100) at a time. */
      iterate: (
        opts: TIterateOptions<TQueryOf<'listPostsB'>> = {},
      ): AsyncGenerator<TPostB, void, undefined> => {
        const { pageSize = 100, offset, maxItems, query, ...callOptions } = opts;
        return paginate(
          async (at) => {
            const page = await call('listPostsB', {
              ...callOptions,
              query: { ...query, limit: pageSize, offset: at },
            });
            return { items: page.posts, nextOffset: nextOffsetByTotal(at, page.posts.length, page.total) };
          },
          { offset, maxItems },
        );
      },
    },
    accounts: {
      list: (opts: TCallOptions = {}) => call('listAccountsB', opts),
      /** Starts an OAuth connection: send the user to the answer's `url`. */
      connect: (body: TBodyOf<'connectAccountB'>, opts: TCallOptions = {}) =>
        call('connectAccountB', { ...opts, body }),
      connectWithCredentials: (body: TBodyOf<'connectAccountWithCredentialsB'>, opts: TCallOptions = {}) =>
        call('connectAccountWithCredentialsB', { ...opts, body }),
      disconnect: (accountId: string, opts: TCallOptions = {}) =>
        call('disconnectAccountB', { ...opts, path: id(accountId) }),
    },
    presets: {
      list: (opts: TCallOptions = {}) => call('listPresetsB', opts),
      create: (body: TBodyOf<'createPresetB'>, opts: TCallOptions = {}) =>
        call('createPresetB', { ...opts, body }),
    },
    webhooks: {
      /** The answer carries the webhook's `secret`, shown this once: keep it to verify deliveries. */
      create: (body: TBodyOf<'createWebhookB'>, opts: TCallOptions = {}) =>
        call('createWebhookB', { ...opts, body }),
      list: (opts: TCallOptions = {}) => call('listWebhooksB', opts),
      get: (webhookId: string, opts: TCallOptions = {}) =>
        call('getWebhookB', { ...opts, path: id(webhookId) }),
      update: (webhookId: string, body: TBodyOf<'updateWebhookB'>, opts: TCallOptions = {}) =>
        call('updateWebhookB', { ...opts, path: id(webhookId), body }),
      delete: (webhookId: string, opts: TCallOptions = {}) =>
        call('deleteWebhookB', { ...opts, path: id(webhookId) }),
      deliveries: (webhookId: string, opts: TListOptions<TQueryOf<'listWebhookDeliveriesB'>> = {}) =>
        call('listWebhookDeliveriesB', { ...opts, path: id(webhookId) }),
      /** Every delivery of the webhook, newest first, `pageSize` (default and maximum 100) at a time. */
      iterateDeliveries: (
        webhookId: string,
        opts: TIterateOptions<TQueryOf<'listWebhookDeliveriesB'>> = {},
      ): AsyncGenerator<TDeliveryB, void, undefined> => {
        const { pageSize = 100, offset, maxItems, query: _query, ...callOptions } = opts;
        return paginate(
          async (at) => {
            const page = await call('listWebhookDeliveriesB', {
              ...callOptions,
              path: id(webhookId),
              query: { limit: pageSize, offset: at },
            });
            return {
              items: page.deliveries,
              nextOffset: nextOffsetByTotal(at, page.deliveries.length, page.total),
            };
          },
          { offset, maxItems },
        );
      },
      retryDelivery: (webhookId: string, deliveryId: string, opts: TCallOptions = {}) =>
        call('retryWebhookDeliveryB', { ...opts, path: { id: webhookId, deliveryId } }),
    },
  };

  const api = {
    posts: {
      create: (body: TBodyOf<'createPostA'>, opts: TCallOptions = {}) =>
        call('createPostA', { ...opts, body }),
      get: (postId: string, opts: TCallOptions = {}) => call('getPostA', { ...opts, path: id(postId) }),
      list: (opts: TListOptions<TQueryOf<'listPostsA'>> = {}) => call('listPostsA', opts),
      update: (postId: string, body: TBodyOf<'updatePostA'>, opts: TCallOptions = {}) =>
        call('updatePostA', { ...opts, path: id(postId), body }),
      delete: (postId: string, opts: TListOptions<TQueryOf<'deletePostA'>> = {}) =>
        call('deletePostA', { ...opts, path: id(postId) }),
      publish: (postId: string, opts: TCallOptions = {}) =>
        call('publishPostA', { ...opts, path: id(postId) }),
      /** Retries the networks that failed (not keyed by the API, so never retried by the client). */
      retry: (postId: string, opts: TCallOptions = {}) => call('retryPostA', { ...opts, path: id(postId) }),
      approve: (postId: string, opts: TCallOptions = {}) =>
        call('approvePostA', { ...opts, path: id(postId) }),
      /** Every post matching `query`, newest first, `pageSize` (default and maximum 1000) at a time. */
      iterate: (
        opts: TIterateOptions<TQueryOf<'listPostsA'>> = {},
      ): AsyncGenerator<TPostA, void, undefined> => {
        const { pageSize = 1000, offset, maxItems, query, ...callOptions } = opts;
        return paginate(
          async (at) => {
            const page = await call('listPostsA', {
              ...callOptions,
              query: { ...query, limit: pageSize, offset: at },
            });
            return { items: page.posts, nextOffset: page.hasMore ? page.nextOffset : undefined };
          },
          { offset, maxItems },
        );
      },
    },
    accounts: {
      list: (opts: TCallOptions = {}) => call('listAccountsA', opts),
    },
    queueSettings: {
      get: (opts: TCallOptions = {}) => call('getQueueSettingsA', opts),
      put: (body: TBodyOf<'putQueueSettingsA'>, opts: TCallOptions = {}) =>
        call('putQueueSettingsA', { ...opts, body }),
    },
  };

  return { call, v1, api };
}

export type TSpsClient = ReturnType<typeof createClient>;
