import type { TPostRecord } from '@sps/core';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb } from './client.js';
import { POST_COLUMNS, POST_TARGETS, postFromSql, type TPostSqlRow } from './post-sql.js';
import type { TPublishAccount } from './publish-batch-rows.js';

/** A connected account as a prepared publish holds it, with the version its credentials had. */
export interface TPreparedAccount extends TPublishAccount {
  credentialsVersion: number;
}

/** What a publisher reads ahead of a scheduled post's due time (see the publisher's prepare job). */
export interface TPrepareLoad {
  post: TPostRecord;
  deletedAt: Date | null;
  /** The owner's plan and whether the post's twitter publish takes from the monthly allowance. */
  plan: string;
  countsTwitterAllowance: boolean;
  /** Active accounts of the post's networks, oldest first (the one a network publishes with comes first). */
  accounts: TPreparedAccount[];
  /** Segment rows the post has (sent parts of an earlier attempt); 0 for a post never published. */
  segmentCount: number;
}

type TPrepareRow = TPostSqlRow & {
  plan: string;
  counts: boolean;
  account_rows: TPreparedAccount[];
  segment_count: number;
};

/** The state of a connected account that a prepared publish depends on. */
export interface TAccountVersion {
  isActive: boolean;
  credentialsVersion: number;
}

/**
 * The reads of the publisher's prepare-ahead work, plain SQL batched across the jobs a publisher runs at
 * once (see batchLoader): at 9:00 thousands of posts are prepared within seconds, and at the due second
 * every prepared post checks its accounts again.
 */
export function createPublishPrepare(db: TDb) {
  const loads = batchLoader<string, TPrepareLoad | null>(async (ids) => {
    const { rows } = await sqlOf(db).query<TPrepareRow>({
      name: 'publish_prepare_many',
      text: `SELECT ${POST_COLUMNS}, ${POST_TARGETS}, o.plan::text AS plan, p.counts_twitter_allowance AS counts,
           (SELECT count(*)::int FROM segment_deliveries s WHERE s.post_id = p.id) AS segment_count,
           COALESCE((SELECT json_agg(json_build_object('id', a.id, 'accountId', a.account_id, 'platform', a.platform,
               'accountName', a.account_name, 'externalId', a.external_id, 'instanceUrl', a.instance_url,
               'credentialsEncrypted', a.credentials_encrypted, 'isActive', a.is_active,
               'tokenExpiresAt', a.token_expires_at, 'credentialsVersion', a.credentials_version,
               'grantedScopes', a.granted_scopes)
               ORDER BY a.created_at, a.id)
             FROM social_accounts a
             WHERE a.account_id = p.account_id AND a.is_active AND a.platform = ANY (p.platforms)), '[]'::json)
             AS account_rows
         FROM posts p JOIN accounts o ON o.id = p.account_id WHERE p.id = ANY ($1::uuid[])`,
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      if (!row) return null;
      return {
        post: postFromSql(row),
        deletedAt: row.deletedAt,
        plan: row.plan,
        countsTwitterAllowance: row.counts,
        accounts: row.account_rows,
        segmentCount: row.segment_count,
      };
    });
  });

  const versions = batchLoader<string, TAccountVersion | null>(async (ids) => {
    const { rows } = await sqlOf(db).query<{ id: string; is_active: boolean; credentials_version: number }>({
      name: 'social_account_versions',
      text: 'SELECT id, is_active, credentials_version FROM social_accounts WHERE id = ANY ($1::uuid[])',
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      return row ? { isActive: row.is_active, credentialsVersion: row.credentials_version } : null;
    });
  });

  return {
    /** A post with its owner's plan and the active accounts of its networks (sealed credentials). */
    loadForPrepare(postId: string): Promise<TPrepareLoad | null> {
      return loads.load(postId.toLowerCase());
    },
    /** Whether a connected account is still active, and its credentials' version (bumped by every refresh). */
    accountVersion(socialAccountId: string): Promise<TAccountVersion | null> {
      return versions.load(socialAccountId.toLowerCase());
    },
  };
}
