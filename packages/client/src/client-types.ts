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
import type { TPaginateOptions } from './paginate.js';

// The client's shape, written out so that the published declarations name each type (Promise<TPostB>) instead
// of spelling every answer out in full.

type TSchemas = components['schemas'];
export type TPostA = TSchemas['PostA'];
export type TPostB = TSchemas['PostB'];
export type TAccountA = TSchemas['AccountA'];
export type TAccountB = TSchemas['AccountB'];
export type TWebhookB = TSchemas['WebhookB'];
export type TWebhookCreatedB = TSchemas['WebhookCreatedB'];
export type TDeliveryB = TSchemas['DeliveryB'];
export type TCreatePostA = TSchemas['CreatePostA'];
export type TCreatePostB = TSchemas['CreatePostB'];
export type TUpdatePostB = TSchemas['UpdatePostB'];

type R<Id extends TOperationId> = Promise<TResultOf<Id>>;
/** Call options plus the operation's query parameters. */
export type TListOptions<Q> = TCallOptions & { query?: Q };
/** Call options, paging (`pageSize`, `offset`, `maxItems`) and the query parameters other than the paging ones. */
export type TIterateOptions<Q> = TCallOptions & TPaginateOptions & { query?: Omit<Q, 'limit' | 'offset'> };

/** `call(operationId, input)`: any operation of GET /openapi.json; `input` may be left out when nothing is required. */
export type TCall = <Id extends TOperationId>(
  operationId: Id,
  ...input: TInputOptional<Id> extends true ? [input?: TCallInput<Id>] : [input: TCallInput<Id>]
) => Promise<TResultOf<Id>>;

/** Variant B (`/v1`). */
export interface TClientV1 {
  posts: {
    create(body: TCreatePostB, opts?: TCallOptions): Promise<TPostB>;
    get(postId: string, opts?: TCallOptions): Promise<TPostB>;
    list(opts?: TListOptions<TQueryOf<'listPostsB'>>): R<'listPostsB'>;
    update(postId: string, body: TUpdatePostB, opts?: TCallOptions): Promise<TPostB>;
    delete(postId: string, opts?: TCallOptions): Promise<undefined>;
    /** Answers at once with status `publishing`; the networks' results arrive in `platform_results`. */
    publish(postId: string, opts?: TCallOptions): Promise<TPostB>;
    /** Every post matching `query`, newest first, fetched `pageSize` (default and maximum 100) at a time. */
    iterate(opts?: TIterateOptions<TQueryOf<'listPostsB'>>): AsyncGenerator<TPostB, void, undefined>;
  };
  accounts: {
    list(opts?: TCallOptions): R<'listAccountsB'>;
    /** Starts an OAuth connection: send the user to the answer's `url`. */
    connect(body: TBodyOf<'connectAccountB'>, opts?: TCallOptions): R<'connectAccountB'>;
    connectWithCredentials(
      body: TBodyOf<'connectAccountWithCredentialsB'>,
      opts?: TCallOptions,
    ): Promise<TAccountB>;
    disconnect(accountId: string, opts?: TCallOptions): R<'disconnectAccountB'>;
  };
  presets: {
    list(opts?: TCallOptions): R<'listPresetsB'>;
    create(body: TBodyOf<'createPresetB'>, opts?: TCallOptions): R<'createPresetB'>;
  };
  webhooks: {
    /** The answer carries the webhook's `secret`, shown this once: keep it to verify deliveries. */
    create(body: TBodyOf<'createWebhookB'>, opts?: TCallOptions): Promise<TWebhookCreatedB>;
    list(opts?: TCallOptions): R<'listWebhooksB'>;
    get(webhookId: string, opts?: TCallOptions): Promise<TWebhookB>;
    update(webhookId: string, body: TBodyOf<'updateWebhookB'>, opts?: TCallOptions): Promise<TWebhookB>;
    delete(webhookId: string, opts?: TCallOptions): Promise<undefined>;
    deliveries(
      webhookId: string,
      opts?: TListOptions<TQueryOf<'listWebhookDeliveriesB'>>,
    ): R<'listWebhookDeliveriesB'>;
    /** Every delivery of the webhook, newest first, `pageSize` (default and maximum 100) at a time. */
    iterateDeliveries(
      webhookId: string,
      opts?: TIterateOptions<TQueryOf<'listWebhookDeliveriesB'>>,
    ): AsyncGenerator<TDeliveryB, void, undefined>;
    retryDelivery(webhookId: string, deliveryId: string, opts?: TCallOptions): R<'retryWebhookDeliveryB'>;
  };
}

/** Variant A (`/api`). */
export interface TClientA {
  posts: {
    create(body: TCreatePostA, opts?: TCallOptions): R<'createPostA'>;
    get(postId: string, opts?: TCallOptions): R<'getPostA'>;
    list(opts?: TListOptions<TQueryOf<'listPostsA'>>): R<'listPostsA'>;
    update(postId: string, body: TBodyOf<'updatePostA'>, opts?: TCallOptions): R<'updatePostA'>;
    delete(postId: string, opts?: TListOptions<TQueryOf<'deletePostA'>>): R<'deletePostA'>;
    publish(postId: string, opts?: TCallOptions): R<'publishPostA'>;
    /** Retries the networks that failed (not keyed by the API, so never retried by the client). */
    retry(postId: string, opts?: TCallOptions): R<'retryPostA'>;
    approve(postId: string, opts?: TCallOptions): R<'approvePostA'>;
    /** Every post matching `query`, newest first, `pageSize` (default and maximum 1000) at a time. */
    iterate(opts?: TIterateOptions<TQueryOf<'listPostsA'>>): AsyncGenerator<TPostA, void, undefined>;
  };
  accounts: {
    list(opts?: TCallOptions): R<'listAccountsA'>;
  };
  queueSettings: {
    get(opts?: TCallOptions): R<'getQueueSettingsA'>;
    put(body: TBodyOf<'putQueueSettingsA'>, opts?: TCallOptions): R<'putQueueSettingsA'>;
  };
}

export interface TSpsClient {
  /** Any operation of both variants by its operationId in GET /openapi.json, typed from the document. */
  call: TCall;
  /** Variant B: `/v1`, snake_case, errors `{error, code, details}`. */
  v1: TClientV1;
  /** Variant A: `/api`, camelCase, errors `{error, fix?, details?}`. */
  api: TClientA;
}
