import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';

const NETWORK = 'LinkedIn';
const API_VERSION = '202411';

/** LinkedIn's "little text" format treats these as markup; unescaped, they cut or garble the post. */
function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, '\\$&');
}

function restliId(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['x-restli-id'] ?? headers['x-linkedin-id'];
  return Array.isArray(raw) ? raw[0] : raw;
}

export function createLinkedInConnector(options: TConnectorOptions): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? 'https://api.linkedin.com', options.timeoutMs);
  const classify = (err: unknown) => classifyHttpError(err, { network: NETWORK });
  const headers = (account: TConnectorAccount) => ({
    authorization: `Bearer ${account.token}`,
    'linkedin-version': API_VERSION,
    'x-restli-protocol-version': '2.0.0',
  });

  async function comment(input: TPublishInput, author: string, parent: TRemoteRef): Promise<TPublishOutcome> {
    const postUrn = parent.remoteId;
    const res = await http.post(`rest/socialActions/${encodeURIComponent(postUrn)}/comments`, {
      headers: headers(input.account),
      json: { actor: author, object: postUrn, message: { text: input.text } },
    });
    const body = res.body as { id?: string; $URN?: string } | undefined;
    const urn = restliId(res.headers) ?? body?.$URN ?? '';
    const commentId = body?.id ?? /,(\d+)\)$/.exec(urn)?.[1] ?? urn;
    return {
      ok: true,
      remoteId: urn,
      url: `https://www.linkedin.com/feed/update/${postUrn}?commentUrn=${encodeURIComponent(urn)}`,
      meta: { kind: 'comment', parent: postUrn, commentId },
    };
  }

  return {
    platform: 'linkedin',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const author = account.externalId;
      if (!author?.startsWith('urn:li:')) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account ${account.accountName} has no author URN (urn:li:person:… or urn:li:organization:…). Reconnect it with its URN.`,
          },
        };
      }
      if (input.media && (input.media.images.length > 0 || input.media.video)) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `Media upload is not supported for ${NETWORK} yet (it needs the Images/Videos upload API). Post without media.`,
          },
        };
      }
      try {
        // Later segments are comments under the main post (LinkedIn's thread style), not new posts.
        const parent = input.root ?? input.replyTo;
        if (parent) return await comment(input, author, parent);
        const res = await http.post('rest/posts', {
          headers: headers(account),
          json: {
            author,
            commentary: escapeLittleText(input.text),
            visibility: 'PUBLIC',
            distribution: {
              feedDistribution: 'MAIN_FEED',
              targetEntities: [],
              thirdPartyDistributionChannels: [],
            },
            lifecycleState: 'PUBLISHED',
            isReshareDisabledByAuthor: false,
          },
        });
        const urn = restliId(res.headers);
        if (!urn) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              status: res.statusCode,
              message: `${NETWORK} accepted the post but did not return its id. Check the ${NETWORK} account before retrying.`,
            },
          };
        }
        return { ok: true, remoteId: urn, url: `https://www.linkedin.com/feed/update/${urn}` };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const parent = remote.meta?.parent;
      const path =
        remote.meta?.kind === 'comment' && parent
          ? `rest/socialActions/${encodeURIComponent(parent)}/comments/${encodeURIComponent(remote.meta.commentId ?? remote.remoteId)}`
          : `rest/posts/${encodeURIComponent(remote.remoteId)}`;
      try {
        await http.delete(path, {
          headers: headers(account),
          ...(parent && account.externalId ? { searchParams: { actor: account.externalId } } : {}),
        });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}

/** Same factory under the plain `create<Platform>Connector` spelling. */
export const createLinkedinConnector = createLinkedInConnector;
