import type { TPlatform } from '@sps/core';
import type { TFetchMedia } from './media-fetch.js';
import type { TMetricsOutcome, TMetricsRef } from './metrics-reader.js';

/** Decrypted credentials of a connected account, as stored by `social connect --token`. */
export interface TConnectorAccount {
  id: string;
  platform: TPlatform;
  accountName: string;
  /** Network-side id the connector posts as (page id, channel id, chat id, person URN, user id). */
  externalId: string | null;
  /** Server base URL for Mastodon instances and Bluesky PDSes; wins over the configured base URL. */
  instanceUrl: string | null;
  /** What the connector sends: an OAuth access token, a bot token, or a Bluesky session's access JWT. */
  token: string;
  /**
   * Details stored with the credentials (Bluesky: the account's PDS from its DID document; Facebook:
   * `userToken`, the long-lived user token video uploads need, a secret like `token`: never logged).
   */
  extra?: Readonly<Record<string, string>>;
  /**
   * The scopes the network granted this account (stored at connect and refresh); null or absent when
   * unknown (a token from outside): the network then decides, and its refusal is named afterwards.
   */
  permissions?: readonly string[] | null;
}

export interface TMediaImage {
  url: string;
  altText?: string;
}
export interface TMediaVideo {
  url: string;
  thumbnailUrl?: string;
}
export interface TMedia {
  images: TMediaImage[];
  video: TMediaVideo | null;
}

/** Ids a later segment needs to reply to an earlier one. */
export interface TRemoteRef {
  remoteId: string;
  /** Extra ids some networks need (Bluesky `cid`, `uri`). */
  meta?: Record<string, string>;
}

/**
 * Progress of a publish that takes several calls and may outlive one attempt (a YouTube upload session,
 * a TikTok publish id). The publisher keeps it in PostgreSQL on the segment's row, so a job retry, a
 * stalled job or a restarted worker resumes the same remote work instead of starting a second one.
 */
export interface TPublishProgress {
  /** What an earlier attempt of this segment saved; null when it starts afresh. */
  saved: Record<string, string> | null;
  /** Stores the progress (null clears it); resolves once it is durable. */
  save(state: Record<string, string> | null): Promise<void>;
}

export interface TPublishInput {
  account: TConnectorAccount;
  text: string;
  media: TMedia | null;
  /** Variant A polls (X supports them natively; other connectors ignore or reject). */
  poll?: { options: string[]; durationMinutes: number } | null;
  /** The previous segment, for native reply chains; null for the main post and for sequential posts. */
  replyTo: TRemoteRef | null;
  /** The thread's first post (Bluesky replies need the root as well as the parent). */
  root: TRemoteRef | null;
  /** Stable per (post, network, segment); sent where the network supports idempotency keys. */
  idempotencyKey: string;
  /** Resumable progress; absent in callers that do not keep it (each publish then starts afresh). */
  progress?: TPublishProgress;
  /**
   * An earlier attempt already sent this segment (its answer was lost, or it failed in a way that may still
   * have posted): a network that refuses duplicate content then tells us that attempt landed.
   */
  sentBefore?: boolean;
  /**
   * When the post was created: a time that never changes across attempts, for keys derived from it
   * (Bluesky's record key is a timestamp identifier). Without it the connector uses the current time.
   */
  postCreatedAt?: Date;
}

export type TFailureKind = 'auth_expired' | 'rate_limited' | 'rejected' | 'transient';

export interface TNetworkFailure {
  kind: TFailureKind;
  /** Human-readable: what failed and what to do next. */
  message: string;
  /** HTTP status of the network's answer, when there was one. */
  status?: number;
  /** Network's error body, truncated (never more than 500 characters). */
  body?: string;
  /** For `rate_limited`: how long the network asked us to wait. */
  retryAfterMs?: number;
  /** True when the request may have reached the network (timeout after sending): do not blindly resend. */
  outcomeUnknown?: boolean;
  /**
   * The network refused this send as a duplicate of a post it holds, which an earlier send of the segment
   * may have made (with `outcomeUnknown`): this send did not post, so the read-back's settle wait counts from
   * the earlier one.
   */
  duplicate?: boolean;
  /**
   * The video could not be spooled because this process's spool budget is full now: nothing was sent, and
   * the same call succeeds once other uploads end (`retryAfterMs` says when to look again; spool-wait.ts).
   */
  spoolFull?: boolean;
}

export type TPublishOutcome =
  | {
      ok: true;
      remoteId: string;
      url: string;
      meta?: Record<string, string>;
      /** The call's answer was lost and the connector found the post by reading it back (Bluesky). */
      readBack?: boolean;
    }
  | {
      ok: false;
      failure: TNetworkFailure;
      /**
       * The network is still processing the segment's media: nothing failed, the connector saved its
       * progress (container ids, the wait's start) and asks to be called again after `checkAfterMs`, so no
       * worker slot waits (DESIGN invariant 10). `failure` (transient) stands for it where a caller does not
       * know pending outcomes. Only returned to callers that keep `progress`.
       */
      pending?: { checkAfterMs: number };
    };

export type TDeleteOutcome = { ok: true } | { ok: false; failure: TNetworkFailure };

/**
 * What the service sent in a call whose answer never arrived, so the network can be asked whether it holds
 * it: the exact text, the reply target, the media count, the idempotency key and the time window.
 */
export interface TPublishedProbe {
  account: TConnectorAccount;
  /** The text exactly as it was sent (suffix included). */
  text: string;
  replyTo: TRemoteRef | null;
  root: TRemoteRef | null;
  /** Images plus video attached to the segment. */
  mediaCount: number;
  idempotencyKey: string;
  postCreatedAt?: Date;
  /** When the write-ahead row was first recorded: the post cannot be older. */
  since: Date;
  /** Now, when asked. */
  until: Date;
  /**
   * Which of these remote ids the service already recorded for another segment (of this post or another):
   * such a post is never taken for the lost one. Absent: nothing is excluded.
   */
  claimed?: (remoteIds: string[]) => Promise<ReadonlySet<string>>;
}

/**
 * The network's answer to "did it land?": the post it holds (recorded as if the original answer had
 * arrived), its absence (send it), no way to tell (a person checks; `reason` says why), or a failed read
 * (`rate_limited` and `transient` mean ask again later, never resend blindly).
 */
export type TFindOutcome =
  | { kind: 'found'; remoteId: string; url: string; meta?: Record<string, string> }
  | { kind: 'absent' }
  | { kind: 'cannot_tell'; reason: string }
  | { kind: 'failed'; failure: TNetworkFailure };

export interface TNetworkConnector {
  readonly platform: TPlatform;
  publish(input: TPublishInput): Promise<TPublishOutcome>;
  /**
   * Reads the account back to learn whether a segment whose answer was lost landed, with a bounded number
   * of reads. Absent where the network's API offers no such read.
   */
  findPublished?(probe: TPublishedProbe): Promise<TFindOutcome>;
  /** Absent when the network's API cannot delete a published post. */
  delete?(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome>;
  /** Posts one `readMetrics` call reads at most; present with it (metrics-registry.ts attaches both). */
  metricsBatchSize?: number;
  /** Reads the engagement figures of published posts of one account; absent where nothing is readable. */
  readMetrics?(account: TConnectorAccount, refs: TMetricsRef[]): Promise<TMetricsOutcome>;
}

/**
 * How a connector waits for the network to finish processing uploaded media before it may be posted.
 * Each connector has production defaults from its network's documentation; tests shorten them.
 */
export interface TProcessingWait {
  /** Pause between two status checks. */
  intervalMs?: number;
  /** Total time to keep checking; running out is a `transient` failure (retried later). */
  maxWaitMs?: number;
}

export interface TConnectorOptions {
  /** Base URL of the network's API; defaults to the real host. */
  baseUrl?: string;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Downloads media given by API users; every connector shares the one built by `createConnectors`. */
  fetchMedia?: TFetchMedia;
  /** The network's API version where it is versioned (LinkedIn-Version, Graph API `vNN.0`); a default per connector. */
  apiVersion?: string;
  /** Media processing waits (container/video status polling). */
  processingWait?: TProcessingWait;
  /** Bluesky's video service (`app.bsky.video.*`); defaults to https://video.bsky.app. */
  videoServiceUrl?: string;
  /**
   * Facebook's video host (`graph-video.facebook.com`, `NETWORK_FACEBOOK_VIDEO_BASE_URL`); defaults to
   * `baseUrl` when that is set, else the real host.
   */
  videoBaseUrl?: string;
  /** The operator's app id on the network (Facebook's Resumable Upload API: `OAUTH_FACEBOOK_CLIENT_ID`). */
  appId?: string;
  /**
   * Piece size for networks that take media in pieces (X APPEND, YouTube resumable, TikTok FILE_UPLOAD, Slack);
   * tests shrink it to exercise many pieces with a small file. Each connector rounds it to its network's rules.
   */
  uploadChunkBytes?: number;
}
