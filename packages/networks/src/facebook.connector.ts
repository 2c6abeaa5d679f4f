import { type Got, HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';

const NETWORK = 'Facebook';
/** Graph API throttling codes: answered as HTTP 400/403, not 429. */
const RATE_LIMIT_CODES = new Set([4, 17, 32, 613]);

function graphCode(body: unknown): number | undefined {
  return (body as { error?: { code?: number } } | null)?.error?.code;
}

/** Graph announces when throttling ends in minutes, inside a JSON usage header. */
function regainAccessMs(headers: Record<string, string | string[] | undefined>): number | undefined {
  for (const name of ['x-business-use-case-usage', 'x-page-usage', 'x-app-usage']) {
    const raw = headers[name];
    if (typeof raw !== 'string') continue;
    const minutes = [...raw.matchAll(/"estimated_time_to_regain_access"\s*:\s*(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    if (minutes.length > 0) return Math.max(...minutes) * 60_000;
  }
  return undefined;
}

function classify(err: unknown): TNetworkFailure {
  const failure = classifyHttpError(err, {
    network: NETWORK,
    // Code 190 (OAuthException) is an invalid or expired token, even when answered with HTTP 400.
    isAuthError: (_status, body) => graphCode(body) === 190,
  });
  if (failure.kind === 'rejected' && err instanceof HTTPError) {
    const code = graphCode(err.response.body);
    if (code !== undefined && RATE_LIMIT_CODES.has(code)) {
      const after = regainAccessMs(err.response.headers);
      return {
        ...failure,
        kind: 'rate_limited',
        ...(after !== undefined ? { retryAfterMs: after } : {}),
        message: `${NETWORK} rate limit reached (code ${code}). The post will be retried${after !== undefined ? ` in ${Math.ceil(after / 1000)} s` : ' later'}.`,
      };
    }
  }
  return failure;
}

export function createFacebookConnector(options: TConnectorOptions): TNetworkConnector {
  const http: Got = createHttpClient(
    options.baseUrl ?? 'https://graph.facebook.com/v21.0',
    options.timeoutMs,
  );
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const postTo = (account: TConnectorAccount, path: string, json: Record<string, unknown>) =>
    http.post(path, { headers: auth(account), json }).json<{ id: string; post_id?: string }>();

  /** Posts to the page: text (Facebook previews links itself), one photo, several photos, or a video. */
  async function pagePost(input: TPublishInput, pageId: string): Promise<string> {
    const { account } = input;
    const page = encodeURIComponent(pageId);
    const images = input.media?.images ?? [];
    const video = input.media?.video;
    if (video) {
      const res = await postTo(account, `${page}/videos`, { file_url: video.url, description: input.text });
      return res.id;
    }
    const [first] = images;
    if (images.length === 1 && first) {
      const res = await postTo(account, `${page}/photos`, { url: first.url, caption: input.text });
      return res.post_id ?? res.id;
    }
    const attached: { media_fbid: string }[] = [];
    for (const image of images) {
      // Unpublished photos become part of the one feed post below instead of separate posts.
      const res = await postTo(account, `${page}/photos`, { url: image.url, published: false });
      attached.push({ media_fbid: res.id });
    }
    const res = await postTo(account, `${page}/feed`, {
      message: input.text,
      ...(attached.length > 0 ? { attached_media: attached } : {}),
    });
    return res.id;
  }

  return {
    platform: 'facebook',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const pageId = account.externalId;
      if (!pageId) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account ${account.accountName} has no page id. Reconnect it with the page id.`,
          },
        };
      }
      try {
        // Later segments are comments under the main post (Facebook's thread style), not new page posts.
        const parent = input.root ?? input.replyTo;
        if (parent) {
          const image = input.media?.images[0];
          const res = await postTo(account, `${encodeURIComponent(parent.remoteId)}/comments`, {
            message: input.text,
            ...(image ? { attachment_url: image.url } : {}),
          });
          const commentId = res.id.split('_').pop() ?? res.id;
          return {
            ok: true,
            remoteId: res.id,
            url: `https://www.facebook.com/${parent.remoteId}?comment_id=${commentId}`,
            meta: { kind: 'comment', parent: parent.remoteId },
          };
        }
        const id = await pagePost(input, pageId);
        return { ok: true, remoteId: id, url: `https://www.facebook.com/${id}` };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      try {
        await http.delete(encodeURIComponent(remote.remoteId), { headers: auth(account) });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
