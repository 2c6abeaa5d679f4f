import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PLATFORMS, type TPlatform } from '@sps/core';
import { simFiguresOf, startNetworkSim, type TRunningSim, YOUTUBE_SIM_QUOTA_TOKEN } from '@sps/network-sim';
import { createConnectors, type TConnectorAccount, type TNetworkConnector } from '@sps/networks';

// Each network's readMetrics against the simulator: batch sizes, figures in the network's own fields, posts
// it no longer has, and its refusals (missing permission, quota or rate limit). Posts are put into the
// simulator directly; metrics-collect.test.ts publishes through the pipeline.

describe('metrics readers against the simulator', () => {
  let running: TRunningSim;
  let connectors: Partial<Record<TPlatform, TNetworkConnector>>;

  beforeAll(async () => {
    running = await startNetworkSim();
    connectors = createConnectors({ baseUrls: running.baseUrls, timeoutMs: 2000 });
  });
  afterAll(() => running.close());

  const account = (platform: TPlatform, token = 'token-user'): TConnectorAccount => ({
    id: '00000000-0000-4000-8000-000000000001',
    platform,
    accountName: `${platform}-user`,
    externalId: null,
    instanceUrl: null,
    token,
  });
  const reader = (platform: TPlatform) => {
    const c = connectors[platform];
    if (!c?.readMetrics || !c.metricsBatchSize) throw new Error(`${platform} has no reader`);
    return { read: c.readMetrics.bind(c), size: c.metricsBatchSize };
  };
  const calls = (platform: TPlatform, pathPart: string) =>
    running.sim.requests.filter((r) => r.platform === platform && r.path.includes(pathPart)).length;
  const addPosts = (platform: TPlatform, ids: string[]) => {
    for (const remoteId of ids) {
      running.sim.addPost({
        platform,
        remoteId,
        text: 'x',
        replyTo: null,
        media: null,
        idempotencyKey: null,
      });
    }
  };

  it('every network has a reader but Telegram, whose Bot API reports nothing readable', () => {
    const readable = PLATFORMS.filter((p) => connectors[p]?.readMetrics);
    expect(readable).toEqual(PLATFORMS.filter((p) => p !== 'telegram'));
    expect(connectors.telegram?.readMetrics).toBeUndefined();
  });

  it('YouTube: 50 videos per videos.list call with views, likes and comments; gone videos and the quota', async () => {
    const { read, size } = reader('youtube');
    expect(size).toBe(50);
    const ids = Array.from({ length: 50 }, (_, i) => `vid${String(i).padStart(8, '0')}`);
    addPosts('youtube', ids);
    simFiguresOf(running.sim).set('youtube', 'vid00000007', { views: 1200, likes: 30, replies: 4 });
    const before = calls('youtube', '/youtube/v3/videos?');
    const refs = [...ids, 'missingvid1']
      .slice(0, 50)
      .map((remoteId) => ({ remoteId, publishedAt: new Date() }));
    const outcome = await read(account('youtube'), refs);
    expect(calls('youtube', '/youtube/v3/videos?') - before).toBe(1);
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.results.get('vid00000007')).toEqual({
      figures: {
        impressions: null,
        views: 1200,
        likes: 30,
        reposts: null,
        replies: 4,
        quotes: null,
        bookmarks: null,
        clicks: null,
      },
    });
    const gone = await read(account('youtube'), [{ remoteId: 'missingvid1', publishedAt: new Date() }]);
    expect(gone.ok && gone.results.get('missingvid1')).toEqual({
      error: expect.stringMatching(/no longer on YouTube/),
    });
    const quota = await read(account('youtube', YOUTUBE_SIM_QUOTA_TOKEN), refs.slice(0, 1));
    expect(quota.ok).toBe(false);
    if (!quota.ok) expect(quota.failure.kind).toBe('rate_limited');
  });

  it('X: sends at most 100 ids per call (the simulator refuses more, as X does); a refusal fails the batch', async () => {
    const { read, size } = reader('twitter');
    expect(size).toBe(100);
    const refs = Array.from({ length: 101 }, (_, i) => ({
      remoteId: String(9_000 + i),
      publishedAt: new Date(),
    }));
    // The reader never sends more than its batch: 101 refs are cut to 100.
    const outcome = await read(account('twitter'), refs);
    expect(outcome.ok).toBe(true);
    const last = running.sim.requests.filter((r) => r.platform === 'twitter').at(-1);
    expect(new URL(`http://x${last?.path}`).searchParams.get('ids')?.split(',')).toHaveLength(100);
    running.sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1, pathIncludes: '/2/tweets?' });
    const rejected = await read(account('twitter'), refs.slice(0, 1));
    expect(rejected.ok).toBe(false);
    if (!rejected.ok) expect(rejected.failure.kind).toBe('rejected');
  });

  it('Threads: one insights call per post; reposts and shares counted together; a deleted post is gone', async () => {
    const { read, size } = reader('threads');
    expect(size).toBe(1);
    addPosts('threads', ['17890001']);
    simFiguresOf(running.sim).set('threads', '17890001', {
      views: 900,
      likes: 12,
      replies: 3,
      reposts: 2,
      quotes: 1,
    });
    const before = calls('threads', '/insights?');
    const outcome = await read(account('threads'), [
      { remoteId: '17890001', publishedAt: new Date() },
      { remoteId: '17890002', publishedAt: new Date() },
    ]);
    // One post per call: the second ref waits for the next call.
    expect(calls('threads', '/insights?') - before).toBe(1);
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.results.get('17890001')).toEqual({
      figures: {
        impressions: null,
        views: 900,
        likes: 12,
        reposts: 2,
        replies: 3,
        quotes: 1,
        bookmarks: null,
        clicks: null,
      },
    });
    expect(outcome.results.has('17890002')).toBe(false);
    const gone = await read(account('threads'), [{ remoteId: '17890002', publishedAt: new Date() }]);
    expect(gone.ok && gone.results.get('17890002')).toEqual({
      error: expect.stringMatching(/no longer on Threads/),
    });
    running.sim.addFault({
      platform: 'threads',
      kind: 'rate_limited',
      remaining: 1,
      pathIncludes: '/insights',
    });
    const limited = await read(account('threads'), [{ remoteId: '17890001', publishedAt: new Date() }]);
    expect(limited.ok).toBe(false);
    if (!limited.ok) expect(limited.failure.kind).toBe('rate_limited');
  });

  it('TikTok: 20 video ids per video query; a video without its public id yet cannot be read', async () => {
    const { read, size } = reader('tiktok');
    expect(size).toBe(20);
    const ids = Array.from({ length: 20 }, (_, i) => String(7_300_000_000_000_000_000n + BigInt(i)));
    addPosts('tiktok', ids);
    simFiguresOf(running.sim).set('tiktok', ids[3] ?? '', { views: 5000, likes: 70, replies: 8, reposts: 9 });
    const before = calls('tiktok', '/v2/video/query');
    const refs = [...ids.map((remoteId) => ({ remoteId, publishedAt: new Date() }))];
    const outcome = await read(account('tiktok'), [
      ...refs,
      { remoteId: 'v_pub_url~123', publishedAt: new Date() },
    ]);
    expect(calls('tiktok', '/v2/video/query') - before).toBe(1);
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.results.get(ids[3] ?? '')).toEqual({
      figures: {
        impressions: null,
        views: 5000,
        likes: 70,
        reposts: 9,
        replies: 8,
        quotes: null,
        bookmarks: null,
        clicks: null,
      },
    });
    const pending = await read(account('tiktok'), [{ remoteId: 'v_pub_url~123', publishedAt: new Date() }]);
    expect(pending.ok && pending.results.get('v_pub_url~123')).toEqual({
      error: expect.stringMatching(/not made the video public/),
    });
    expect(calls('tiktok', '/v2/video/query') - before).toBe(1);
  });

  it('Instagram and Facebook: one Graph read per post in each network’s fields; a deleted post is gone', async () => {
    const ig = reader('instagram');
    addPosts('instagram', ['18000000001']);
    simFiguresOf(running.sim).set('instagram', '18000000001', {
      views: 300,
      likes: 20,
      replies: 5,
      reposts: 2,
      bookmarks: 6,
    });
    const igRead = await ig.read(account('instagram'), [
      { remoteId: '18000000001', publishedAt: new Date() },
    ]);
    if (!igRead.ok) throw new Error(igRead.failure.message);
    expect(igRead.results.get('18000000001')).toEqual({
      figures: {
        impressions: null,
        views: 300,
        likes: 20,
        reposts: 2,
        replies: 5,
        quotes: null,
        bookmarks: 6,
        clicks: null,
      },
    });
    const fb = reader('facebook');
    addPosts('facebook', ['page-1_1001', 'page-1_1002']);
    simFiguresOf(running.sim).set('facebook', 'page-1_1001', { likes: 11, replies: 4 });
    const fbRead = await fb.read(account('facebook'), [{ remoteId: 'page-1_1001', publishedAt: new Date() }]);
    if (!fbRead.ok) throw new Error(fbRead.failure.message);
    expect(fbRead.results.get('page-1_1001')).toEqual({
      figures: {
        impressions: null,
        views: null,
        likes: 11,
        reposts: 0,
        replies: 4,
        quotes: null,
        bookmarks: null,
        clicks: null,
      },
    });
    const post = running.sim.getPost('facebook', 'page-1_1002');
    if (post) post.deleted = true;
    const gone = await fb.read(account('facebook'), [{ remoteId: 'page-1_1002', publishedAt: new Date() }]);
    expect(gone.ok && gone.results.get('page-1_1002')).toEqual({
      error: expect.stringMatching(/no longer on Facebook/),
    });
  });

  it('LinkedIn: organization share statistics, 20 posts per call; a member account is said not to be read', async () => {
    const { read, size } = reader('linkedin');
    expect(size).toBe(20);
    const org = 'urn:li:organization:42';
    for (const remoteId of ['urn:li:share:501', 'urn:li:ugcPost:502']) {
      running.sim.addPost({
        platform: 'linkedin',
        remoteId,
        text: 'x',
        replyTo: null,
        media: null,
        idempotencyKey: null,
        author: org,
      });
    }
    simFiguresOf(running.sim).set('linkedin', 'urn:li:share:501', {
      impressions: 800,
      clicks: 9,
      likes: 14,
      replies: 2,
      reposts: 1,
    });
    const before = calls('linkedin', 'organizationalEntityShareStatistics');
    const refs = ['urn:li:share:501', 'urn:li:ugcPost:502', 'urn:li:share:503'].map((remoteId) => ({
      remoteId,
      publishedAt: new Date(),
    }));
    const outcome = await read({ ...account('linkedin'), externalId: org }, refs);
    expect(calls('linkedin', 'organizationalEntityShareStatistics') - before).toBe(1);
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.results.get('urn:li:share:501')).toEqual({
      figures: {
        impressions: 800,
        views: null,
        likes: 14,
        reposts: 1,
        replies: 2,
        quotes: null,
        bookmarks: null,
        clicks: 9,
      },
    });
    expect(outcome.results.get('urn:li:ugcPost:502')).toMatchObject({ figures: { likes: 0 } });
    expect(outcome.results.get('urn:li:share:503')).toEqual({
      error: expect.stringMatching(/no statistics/),
    });
    const member = await read({ ...account('linkedin'), externalId: 'urn:li:person:abc' }, refs.slice(0, 1));
    expect(member.ok && member.results.get('urn:li:share:501')).toEqual({
      error: expect.stringMatching(/member/),
    });
    expect(calls('linkedin', 'organizationalEntityShareStatistics') - before).toBe(1);
  });

  it('Discord and Slack: reactions summed as likes, one message per call; deleted messages and a missing scope', async () => {
    addPosts('discord', ['1200000000000000001']);
    simFiguresOf(running.sim).set('discord', '1200000000000000001', { likes: 7 });
    const discord = reader('discord');
    const d = await discord.read({ ...account('discord'), externalId: 'channel-1' }, [
      { remoteId: '1200000000000000001', publishedAt: new Date() },
    ]);
    expect(d.ok && d.results.get('1200000000000000001')).toMatchObject({
      figures: { likes: 7, views: null },
    });
    const dGone = await discord.read({ ...account('discord'), externalId: 'channel-1' }, [
      { remoteId: '1200000000000000009', publishedAt: new Date() },
    ]);
    expect(dGone.ok && dGone.results.get('1200000000000000009')).toEqual({
      error: expect.stringMatching(/no longer on Discord/),
    });
    const dDenied = await discord.read({ ...account('discord'), externalId: 'nohistory-1' }, [
      { remoteId: '1200000000000000001', publishedAt: new Date() },
    ]);
    expect(dDenied.ok).toBe(false);
    if (!dDenied.ok) expect(dDenied.failure.message).toMatch(/Read Message History.*Reconnect/);

    addPosts('slack', ['1732600000.000100']);
    simFiguresOf(running.sim).set('slack', '1732600000.000100', { likes: 3, replies: 2 });
    const slack = reader('slack');
    const s = await slack.read({ ...account('slack'), externalId: 'C123' }, [
      { remoteId: '1732600000.000100', publishedAt: new Date() },
    ]);
    expect(s.ok && s.results.get('1732600000.000100')).toMatchObject({ figures: { likes: 3, replies: 2 } });
    const sDenied = await slack.read({ ...account('slack', 'xoxb-noreactions'), externalId: 'C123' }, [
      { remoteId: '1732600000.000100', publishedAt: new Date() },
    ]);
    expect(sDenied.ok).toBe(false);
    if (!sDenied.ok) expect(sDenied.failure.message).toMatch(/reactions:read.*Reconnect/);
  });
});
