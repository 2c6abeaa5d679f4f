import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createFacebookConnector } from '../src/facebook.connector.js';
import { createInstagramConnector } from '../src/instagram.connector.js';
import { createLinkedInConnector } from '../src/linkedin.connector.js';
import { createThreadsConnector } from '../src/threads.connector.js';
import { createTwitterConnector } from '../src/twitter.connector.js';

// The API refuses over-long texts before a publish, so these connectors send whatever they are given; if
// that check ever lets one through, the network refuses it. Against the simulator's mirror of each
// network's limit, the refusal must come back as `rejected` (never retried) carrying the network's words.

let running: TRunningSim;
beforeAll(async () => {
  running = await startNetworkSim();
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const account = (platform: TConnectorAccount['platform'], externalId: string): TConnectorAccount => ({
  id: `acc-${platform}`,
  platform,
  accountName: 'sps',
  externalId,
  instanceUrl: null,
  token: `${platform}-token`,
});
const input = (acc: TConnectorAccount, text: string, extra: Partial<TPublishInput> = {}): TPublishInput => ({
  account: acc,
  text,
  media: null,
  replyTo: null,
  root: null,
  idempotencyKey: `k-${acc.platform}`,
  ...extra,
});

async function refusal(connector: TNetworkConnector, publish: TPublishInput) {
  const outcome = await connector.publish(publish);
  if (outcome.ok) throw new Error(`${publish.account.platform} took an over-long text`);
  return outcome.failure;
}

describe('an over-long text that reached the network', () => {
  it('X: 281 weighted characters are rejected with X’s words', async () => {
    const x = createTwitterConnector({ baseUrl: running.baseUrls.twitter, timeoutMs: 2000 });
    const failure = await refusal(x, input(account('twitter', '42'), '日'.repeat(140) + 'a'));
    expect(failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(failure.body).toContain('Your Tweet text is too long.');
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
  });

  it('Threads: 501 characters are rejected when the container is made', async () => {
    const threads = createThreadsConnector({ baseUrl: running.baseUrls.threads, timeoutMs: 2000 });
    const failure = await refusal(threads, input(account('threads', '17841400000'), '😀'.repeat(126)));
    expect(failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(failure.body).toContain('"code":100');
    expect(running.sim.requests.some((r) => r.path.includes('threads_publish'))).toBe(false);
  });

  it('Instagram: a caption with 31 hashtags (which the API does not count) is rejected', async () => {
    const ig = createInstagramConnector({ baseUrl: running.baseUrls.instagram, timeoutMs: 2000 });
    const caption = Array.from({ length: 31 }, (_, i) => `#tag${i}`).join(' ');
    const media = { images: [{ url: 'https://cdn.example/a.jpg' }], video: null };
    const failure = await refusal(ig, input(account('instagram', '17841400000000001'), caption, { media }));
    expect(failure.kind).toBe('rejected');
    expect(failure.body).toContain('The caption has 31 hashtags; at most 30 are allowed.');
    expect(running.sim.postsOf('instagram')).toHaveLength(0);
  });

  it('Facebook: 63,207 characters are rejected', async () => {
    const fb = createFacebookConnector({ baseUrl: running.baseUrls.facebook, timeoutMs: 2000 });
    const failure = await refusal(fb, input(account('facebook', '1122334455'), 'a'.repeat(63_207)));
    expect(failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(running.sim.postsOf('facebook')).toHaveLength(0);
  });

  it('LinkedIn: 3,001 characters of commentary are rejected with 422', async () => {
    const li = createLinkedInConnector({ baseUrl: running.baseUrls.linkedin, timeoutMs: 2000 });
    const failure = await refusal(li, input(account('linkedin', 'urn:li:person:abc123'), 'a'.repeat(3001)));
    expect(failure).toMatchObject({ kind: 'rejected', status: 422 });
    expect(failure.body).toContain('/commentary');
    expect(running.sim.postsOf('linkedin')).toHaveLength(0);
  });
});
