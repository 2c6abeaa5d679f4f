import { createHash } from 'node:crypto';
import type { Router } from 'express';
import { codePoints, findLinks } from './links.sim.js';
import { numericIdOf, simUserOf } from './oauth/oauth-store.js';
import {
  answerOrHang,
  networkMiddleware,
  type SimState,
  type TErrorRenderer,
  type TSimPost,
} from './sim-state.js';
import { X_TEXT_MAX, xTextLength } from './text-limits.sim.js';
import {
  invalidRequest,
  mediaIdsProblem,
  registerTwitterMediaRoutes,
  requireBearer,
  type TSimXMediaStore,
} from './twitter-media.sim.js';

/** X API v2 errors are RFC 7807-ish problem documents; rate limits announce the reset as epoch seconds. */
const renderTwitterError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      res
        .status(401)
        .json({ title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
      return;
    case 'rate_limited': {
      const reset = Math.floor(Date.now() / 1000) + (fault.retryAfterSeconds ?? 1);
      res
        .status(429)
        .set({
          'x-rate-limit-limit': '100',
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': String(reset),
        })
        .json({ title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 });
      return;
    }
    case 'rejected':
      res.status(400).json({
        errors: [{ message: 'The `text` field is invalid.', parameters: {} }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      });
      return;
    default:
      res.status(503).json({
        title: 'Service Unavailable',
        detail: 'Service Unavailable',
        type: 'about:blank',
        status: 503,
      });
  }
};

const X_TOO_LONG =
  'Your Tweet text is too long. For more information on how Twitter determines text length see https://github.com/twitter/twitter-text.';

/** A link of a stored tweet, as `entities.urls` gives it. */
interface TUrlEntity {
  start: number;
  end: number;
  url: string;
  expanded_url: string;
  display_url: string;
  media_key?: string;
}

/** What the simulator keeps of a tweet beside its text. */
interface TTweetExtras {
  media_ids: string[];
  uploads: { bytes: number; sha256: string | null; type: string | null }[];
  poll: unknown;
  urls: TUrlEntity[];
  /** The text as it was sent (before t.co), for the duplicate rule. */
  source: string;
}

/**
 * X refuses a text the same author posted recently. X does not document the window; the simulator uses a
 * day (modeled). Body as X answers it (https://github.com/akrherz/iembot/issues/163).
 */
const DUPLICATE_WINDOW_MS = 24 * 60 * 60_000;
const DUPLICATE_BODY = {
  detail: 'You are not allowed to create a Tweet with duplicate content.',
  type: 'about:blank',
  title: 'Forbidden',
  status: 403,
};

const tco = (seed: string) =>
  `https://t.co/${createHash('sha256').update(seed).digest('base64url').replace(/[-_]/g, 'x').slice(0, 10)}`;
const display = (target: string) => {
  const bare = target.replace(/^https?:\/\//i, '');
  return bare.length > 23 ? `${bare.slice(0, 22)}…` : bare;
};

/**
 * X stores a tweet with every link rewritten to a 23-character t.co address and a t.co link to the media
 * appended when media is attached; `entities.urls` names each target (`expanded_url`, with `http://` added
 * to a link typed without a scheme) at its code-point offsets.
 * https://docs.x.com/x-api/fundamentals/data-dictionary
 */
function shorten(id: string, user: string, text: string, mediaIds: string[]) {
  let out = '';
  let cursor = 0;
  const urls: TUrlEntity[] = [];
  const append = (url: string, entity: Omit<TUrlEntity, 'start' | 'end' | 'url'>) => {
    const start = codePoints(out, out.length);
    out += url;
    urls.push({ start, end: start + url.length, url, ...entity });
  };
  for (const [i, link] of findLinks(text).entries()) {
    out += text.slice(cursor, link.start);
    append(tco(`${id}:${i}`), { expanded_url: link.target, display_url: display(link.target) });
    cursor = link.end;
  }
  out += text.slice(cursor);
  if (mediaIds.length > 0) {
    out += out === '' ? '' : ' ';
    const url = tco(`${id}:media`);
    append(url, {
      expanded_url: `https://x.com/${user}/status/${id}/photo/1`,
      display_url: `pic.x.com/${url.slice(13)}`,
      media_key: `3_${mediaIds[0]}`,
    });
  }
  return { text: out, urls };
}

interface TTweetBody {
  text?: string;
  reply?: { in_reply_to_tweet_id?: string };
  media?: { media_ids?: string[] };
  poll?: { options?: string[]; duration_minutes?: number };
}

export function registerTwitterSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'twitter', renderTwitterError));

  // The duplicate rule's index: an author's tweets by the text they were sent with. Benches connect every
  // account with a token from outside, which all map to one simulated user, so scanning that user's
  // timeline on each tweet made a 10,000-post burst quadratic (50 of the simulator's 53 CPU seconds).
  const bySource = new Map<string, TSimPost[]>();
  const media: TSimXMediaStore = new Map();
  registerTwitterMediaRoutes(router, sim, media);

  router.post('/2/tweets', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as TTweetBody;
    const text = typeof body.text === 'string' ? body.text : '';
    const replyTo = body.reply?.in_reply_to_tweet_id ?? null;
    const mediaIds = body.media?.media_ids ?? [];
    if (xTextLength(text) > X_TEXT_MAX) {
      // X's words for an over-long text, as clients report them (tweepy: "400 Bad Request\nYour Tweet text is
      // too long. For more information…"; https://github.com/gundogan8/FotBot/issues/22). Some report the same
      // message with 403 Forbidden; the connector takes any 4xx as a refusal.
      invalidRequest(res, X_TOO_LONG);
      return;
    }
    const mediaProblem = Array.isArray(mediaIds)
      ? mediaIdsProblem(media, mediaIds)
      : 'Your media IDs are invalid.';
    if (mediaProblem) {
      invalidRequest(res, mediaProblem, { 'media.media_ids': mediaIds });
      return;
    }
    if (replyTo && !sim.getPost('twitter', replyTo)) {
      res.status(400).json({
        errors: [{ message: 'Your Tweet cannot be replied to.', parameters: {} }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      });
      return;
    }
    const user = simUserOf(sim, 'twitter', req);
    const author = numericIdOf(user, 19);
    const recent = Date.now() - DUPLICATE_WINDOW_MS;
    const sameText = `${author}\n${text}`;
    if (
      text !== '' &&
      (bySource.get(sameText) ?? []).some(
        // Still held (not deleted, not wiped by a reset) and inside the window.
        (p) => sim.getPost('twitter', p.remoteId) === p && !p.deleted && Date.parse(p.at) >= recent,
      )
    ) {
      res.status(403).json(DUPLICATE_BODY);
      return;
    }
    const id = sim.nextNumericId();
    const shown = shorten(id, user, text, mediaIds);
    const extras: TTweetExtras = {
      media_ids: mediaIds,
      // What X assembled for each attached media (tests compare it with the uploaded file).
      uploads: mediaIds.map((m) => {
        const item = media.get(m);
        return { bytes: item?.received ?? 0, sha256: item?.sha256 ?? null, type: item?.type ?? null };
      }),
      poll: body.poll ?? null,
      urls: shown.urls,
      source: text,
    };
    const tweet = sim.addPost({
      platform: 'twitter',
      remoteId: id,
      text: shown.text,
      replyTo,
      media: extras,
      idempotencyKey: null,
      author,
    });
    if (text !== '') {
      const same = (bySource.get(sameText) ?? []).filter((p) => sim.getPost('twitter', p.remoteId) === p);
      bySource.set(sameText, [...same, tweet]);
    }
    answerOrHang(res, () =>
      res.status(201).json({ data: { id, text: shown.text, edit_history_tweet_ids: [id] } }),
    );
  });

  /**
   * The user Post timeline, newest first: `start_time` (RFC 3339, inclusive), `max_results` 5-100 (10 by
   * default), `pagination_token` from `meta.next_token`, `tweet.fields` choosing the extra fields.
   * https://docs.x.com/x-api/posts/timelines/introduction
   */
  router.get('/2/users/:id/tweets', (req, res) => {
    if (!requireBearer(req, res)) return;
    const max = req.query.max_results === undefined ? 10 : Number(req.query.max_results);
    if (!Number.isInteger(max) || max < 5 || max > 100) {
      invalidRequest(
        res,
        `The \`max_results\` query parameter value [${String(req.query.max_results)}] is not between 5 and 100`,
        { max_results: [String(req.query.max_results)] },
      );
      return;
    }
    const start = typeof req.query.start_time === 'string' ? Date.parse(req.query.start_time) : undefined;
    if (start !== undefined && Number.isNaN(start)) {
      invalidRequest(res, 'Invalid start_time', { start_time: [String(req.query.start_time)] });
      return;
    }
    const offset = typeof req.query.pagination_token === 'string' ? Number(req.query.pagination_token) : 0;
    const fields = new Set(String(req.query['tweet.fields'] ?? '').split(','));
    const all = sim.timelineOf('twitter', req.params.id, start);
    const page = all.slice(offset, offset + max);
    const shape = (p: TSimPost) => {
      const extras = p.media as Partial<TTweetExtras> | null;
      const mediaIds = extras?.media_ids ?? [];
      const urls = extras?.urls ?? [];
      return {
        id: p.remoteId,
        text: p.text,
        edit_history_tweet_ids: [p.remoteId],
        ...(fields.has('created_at') ? { created_at: p.at } : {}),
        ...(fields.has('referenced_tweets') && p.replyTo
          ? { referenced_tweets: [{ type: 'replied_to', id: p.replyTo }] }
          : {}),
        ...(fields.has('attachments') && mediaIds.length > 0
          ? { attachments: { media_keys: mediaIds.map((m) => `3_${m}`) } }
          : {}),
        ...(fields.has('entities') && urls.length > 0 ? { entities: { urls } } : {}),
      };
    };
    const more = offset + max < all.length;
    res.json({
      ...(page.length > 0 ? { data: page.map(shape) } : {}),
      meta: {
        result_count: page.length,
        ...(page.length > 0 ? { newest_id: page[0]?.remoteId, oldest_id: page.at(-1)?.remoteId } : {}),
        ...(more ? { next_token: String(offset + max) } : {}),
      },
    });
  });

  router.delete('/2/tweets/:id', (req, res) => {
    if (!requireBearer(req, res)) return;
    const post = sim.getPost('twitter', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({
        title: 'Not Found Error',
        detail: 'Could not find tweet.',
        type: 'about:blank',
        status: 404,
      });
      return;
    }
    post.deleted = true;
    res.json({ data: { deleted: true } });
  });
}
