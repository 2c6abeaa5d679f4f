import type { TCall, TClientA, TClientV1, TListOptions, TSpsClient } from './client-types.js';
import type {
  TBodyOf,
  TCallInput,
  TCallOptions,
  TOperationId,
  TQueryOf,
  TResultOf,
} from './operation-types.js';
import { nextOffsetByTotal, paginate } from './paginate.js';
import { send, type TClientOptions } from './transport.js';

/**
 * A client of both variants of the API. `client.v1` is Variant B (`/v1`, snake_case), `client.api` is Variant A
 * (`/api`, camelCase); `client.call(operationId, …)` reaches any operation of GET /openapi.json by its id.
 *
 * Every create and publish carries an `Idempotency-Key` (a random UUID per call unless given); a call is retried
 * on 408/429/5xx and connection errors, waiting `Retry-After` when the server says, only when it is idempotent
 * (GET, PUT, DELETE) or carries a key. An error answer throws SpsApiErrorA or SpsApiErrorB with the body.
 */
export function createClient(options: TClientOptions): TSpsClient {
  const call = (<Id extends TOperationId>(operationId: Id, input?: TCallInput<Id>) =>
    send(options, operationId, input ?? ({} as TCallInput<Id>))) as TCall;
  // One shape of method per kind of operation; the casts meet TCallInput's per-operation conditional types,
  // which TypeScript cannot resolve for a generic Id (TClientV1 and TClientA type each method exactly).
  const input = <Id extends TOperationId>(value: object) => value as unknown as TCallInput<Id>;
  const path = (id: string) => ({ id });
  const withBody =
    <Id extends TOperationId>(op: Id) =>
    (body: TBodyOf<Id>, opts: TCallOptions = {}): Promise<TResultOf<Id>> =>
      send(options, op, input<Id>({ ...opts, body }));
  const withId =
    <Id extends TOperationId>(op: Id) =>
    (id: string, opts: TCallOptions = {}): Promise<TResultOf<Id>> =>
      send(options, op, input<Id>({ ...opts, path: path(id) }));
  const withIdAndBody =
    <Id extends TOperationId>(op: Id) =>
    (id: string, body: TBodyOf<Id>, opts: TCallOptions = {}): Promise<TResultOf<Id>> =>
      send(options, op, input<Id>({ ...opts, path: path(id), body }));
  const withQuery =
    <Id extends TOperationId>(op: Id) =>
    (opts: TListOptions<TQueryOf<Id>> = {}): Promise<TResultOf<Id>> =>
      send(options, op, input<Id>(opts));

  const v1: TClientV1 = {
    posts: {
      create: withBody('createPostB'),
      get: withId('getPostB'),
      list: withQuery('listPostsB'),
      update: withIdAndBody('updatePostB'),
      delete: withId('deletePostB'),
      publish: withId('publishPostB'),
      iterate: ({ pageSize = 100, offset, maxItems, query, ...opts } = {}) =>
        paginate(
          async (at) => {
            const page = await call('listPostsB', {
              ...opts,
              query: { ...query, limit: pageSize, offset: at },
            });
            return { items: page.posts, nextOffset: nextOffsetByTotal(at, page.posts.length, page.total) };
          },
          { offset, maxItems },
        ),
    },
    accounts: {
      list: withQuery('listAccountsB'),
      connect: withBody('connectAccountB'),
      connectWithCredentials: withBody('connectAccountWithCredentialsB'),
      disconnect: withId('disconnectAccountB'),
    },
    presets: {
      list: withQuery('listPresetsB'),
      create: withBody('createPresetB'),
    },
    webhooks: {
      create: withBody('createWebhookB'),
      list: withQuery('listWebhooksB'),
      get: withId('getWebhookB'),
      update: withIdAndBody('updateWebhookB'),
      delete: withId('deleteWebhookB'),
      deliveries: (id, opts = {}) => call('listWebhookDeliveriesB', { ...opts, path: path(id) }),
      iterateDeliveries: (id, { pageSize = 100, offset, maxItems, query: _paging, ...opts } = {}) =>
        paginate(
          async (at) => {
            const page = await call('listWebhookDeliveriesB', {
              ...opts,
              path: path(id),
              query: { limit: pageSize, offset: at },
            });
            return {
              items: page.deliveries,
              nextOffset: nextOffsetByTotal(at, page.deliveries.length, page.total),
            };
          },
          { offset, maxItems },
        ),
      retryDelivery: (id, deliveryId, opts = {}) =>
        call('retryWebhookDeliveryB', { ...opts, path: { id, deliveryId } }),
    },
  };

  const api: TClientA = {
    posts: {
      create: withBody('createPostA'),
      get: withId('getPostA'),
      list: withQuery('listPostsA'),
      update: withIdAndBody('updatePostA'),
      delete: (id, opts = {}) => call('deletePostA', { ...opts, path: path(id) }),
      publish: withId('publishPostA'),
      retry: withId('retryPostA'),
      approve: withId('approvePostA'),
      iterate: ({ pageSize = 1000, offset, maxItems, query, ...opts } = {}) =>
        paginate(
          async (at) => {
            const page = await call('listPostsA', {
              ...opts,
              query: { ...query, limit: pageSize, offset: at },
            });
            return { items: page.posts, nextOffset: page.hasMore ? page.nextOffset : undefined };
          },
          { offset, maxItems },
        ),
    },
    accounts: { list: withQuery('listAccountsA') },
    queueSettings: {
      get: withQuery('getQueueSettingsA'),
      put: withBody('putQueueSettingsA'),
    },
  };

  return { call, v1, api };
}
