// Issue 21: permissions the calls after a publish need (delete, reading back a reply, refresh) when the
// account lacks them, and YouTube's lock to private for an unaudited project.
import { beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, simControl } from './oauth-helpers.js';
import { permissionsRig, redirect, text, YT } from './oauth-permissions-rig.js';
import { simPosts, uniqueMarker } from './pipeline-helpers.js';

describe('permissions of the calls after a publish', () => {
  const rig = permissionsRig();
  const { view, loaded, publish, requests } = rig;
  let api: TTestApi;
  let clipUrl: string;
  beforeAll(() => {
    ({ api, clipUrl } = rig);
  });

  it('youtube: an account connected with the old scopes shows youtube.force-ssl to grant; its delete is refused before it is sent', async () => {
    const { apiKey, accountId } = await api.account('pro');
    // As the connect asked before: youtube.upload and youtube.readonly.
    const started = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(apiKey))
      .send({ platform: 'youtube', redirect_uri: redirect });
    const url = new URL(started.body.url as string);
    url.searchParams.set('scope', `${YT('youtube.upload')} ${YT('youtube.readonly')}`);
    const { consent } = await import('./oauth-helpers.js');
    const back = await consent(url.toString(), 'olde');
    const callback = await request(api.app).get(`${back.pathname}${back.search}`);
    const id = new URL(callback.headers.location ?? '').searchParams.get('account_id') ?? '';
    const shown = await view(apiKey, id);
    expect(shown?.reconnect_to_grant).toEqual([YT('youtube.force-ssl')]);

    const m = uniqueMarker('yt-old');
    const done = await publish(apiKey, {
      content: `perm ${m}`,
      platforms: ['youtube'],
      media: { images: [], video: { url: clipUrl } },
    });
    const result = done.platform_results?.youtube;
    if (!result?.success) throw new Error('upload with youtube.upload should work');
    const account = await loaded(accountId, id, 'youtube');
    const connector = api.publisher?.context.connectors.youtube;
    const deletesBefore = requests('youtube', 'DELETE', '/youtube/v3/videos').length;
    const refused = await connector?.delete?.(account, { remoteId: result.post_id });
    expect(refused?.ok ? null : refused?.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('youtube.force-ssl'),
    });
    expect(requests('youtube', 'DELETE', '/youtube/v3/videos').length).toBe(deletesBefore);
    // Unknown grant: Google itself refuses with 403 insufficientPermissions, named the same way.
    const unknown = await connector?.delete?.(
      { ...account, permissions: null },
      { remoteId: result.post_id },
    );
    expect(unknown?.ok ? null : unknown?.failure).toMatchObject({
      kind: 'rejected',
      status: 403,
      message: expect.stringContaining('youtube.force-ssl'),
      body: expect.stringContaining('insufficientPermissions'),
    });
    expect(simPosts(api, 'youtube', m)[0]?.deleted).toBe(false);
  });

  it('youtube: an upload locked to private by an unaudited project is a success with a note', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(await connectFlow(api, apiKey, { platform: 'youtube', redirect_uri: redirect }, 'pria'));
    await simControl(api, '/__sim/youtube/project', { unverified: true });
    try {
      const done = await publish(apiKey, {
        content: `perm ${uniqueMarker('yt-private')}`,
        platforms: ['youtube'],
        media: { images: [], video: { url: clipUrl } },
      });
      expect(done.status).toBe('published');
      expect(done.platform_results?.youtube).toMatchObject({
        success: true,
        note: expect.stringContaining('locked the video to private'),
      });
    } finally {
      await simControl(api, '/__sim/youtube/project', { unverified: false });
    }
  });

  it('threads: threads_delete withheld — Threads refuses the delete (code 10), named, asked once', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'threads', redirect_uri: redirect }, 'tove', 'allow', [
        'threads_delete',
      ]),
    );
    const m = uniqueMarker('th-nodel');
    const done = await publish(apiKey, { ...text(m), platforms: ['threads'] });
    const result = done.platform_results?.threads;
    if (!result?.success) throw new Error('publishing needs no threads_delete');
    const account = await loaded(accountId, id, 'threads');
    const before = requests('threads', 'DELETE', '/').length;
    const refused = await api.publisher?.context.connectors.threads?.delete?.(account, {
      remoteId: result.post_id,
    });
    expect(refused?.ok ? null : refused?.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringMatching(/threads_delete.*reconnect/),
    });
    expect(refused?.ok ? '' : refused?.failure.message).not.toContain('threads_basic');
    expect(requests('threads', 'DELETE', '/').length - before).toBe(1);
    expect(simPosts(api, 'threads', m)[0]?.deleted).toBe(false);
  });

  it('threads: threads_read_replies withheld — reading a reply back is refused by Threads and named', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'threads', redirect_uri: redirect }, 'tara2', 'allow', [
        'threads_read_replies',
      ]),
    );
    const account = await loaded(accountId, id, 'threads');
    const probe = {
      account,
      text: 'a reply',
      root: null,
      mediaCount: 0,
      idempotencyKey: 'k',
      since: new Date(Date.now() - 60_000),
      until: new Date(),
    };
    const connector = api.publisher?.context.connectors.threads;
    // A top-level post is read with threads_basic alone.
    expect((await connector?.findPublished?.({ ...probe, replyTo: null }))?.kind).toBe('absent');
    const reply = await connector?.findPublished?.({ ...probe, replyTo: { remoteId: '1789' } });
    // A person checks (the read-back cannot tell), told which permission is missing.
    expect(reply).toMatchObject({
      kind: 'cannot_tell',
      reason: expect.stringMatching(/threads_read_replies.*reconnect/),
    });
    expect(reply?.kind === 'cannot_tell' ? reply.reason : '').not.toContain('threads_basic');
  });

  it('a refresh stores the grant the refresh answer states', async () => {
    const { apiKey } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'twitter', redirect_uri: redirect }, 'rhea', 'allow', [
        'media.write',
      ]),
    );
    // As if stored before the person's grant changed: the refresh brings back what X says.
    await api.db.socialAccount.update({
      where: { id },
      data: { grantedScopes: 'tweet.read', tokenExpiresAt: new Date(Date.now() - 1000) },
    });
    expect(await api.publisher?.context.tokens.refreshJob(id)).toEqual({
      ok: true,
      token: expect.any(String),
    });
    const shown = await view(apiKey, id);
    expect([...((shown?.permissions ?? []) as string[])].sort()).toEqual(
      ['offline.access', 'tweet.read', 'tweet.write', 'users.read'].sort(),
    );
    expect(shown?.reconnect_to_grant).toEqual(['media.write']);
  });
});
