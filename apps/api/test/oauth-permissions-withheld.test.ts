// Issue 21: a permission withheld at connect (or a grant the service does not know): the publish fails
// naming it, before the call is sent or once the network refuses it, and is never retried.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { requestedScopes } from '@sps/core';
import request from 'supertest';
import { bearer, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow } from './oauth-helpers.js';
import { permissionsRig, redirect, text } from './oauth-permissions-rig.js';
import { uniqueMarker } from './pipeline-helpers.js';

describe('permissions withheld: a publish fails naming them', () => {
  const rig = permissionsRig();
  const { view, publish, requests, refusedBeforeSending } = rig;
  let api: TTestApi;
  let clipUrl: string;
  beforeAll(() => {
    ({ api, clipUrl } = rig);
  });

  it('x: tweet.write unticked — the account shows it to grant, and a publish fails before it is sent, never retried', async () => {
    const { apiKey } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'twitter', redirect_uri: redirect }, 'xavi', 'allow', [
        'tweet.write',
      ]),
    );
    const shown = await view(apiKey, id);
    expect(shown?.permissions).not.toContain('tweet.write');
    expect(shown?.reconnect_to_grant).toEqual(['tweet.write']);
    await refusedBeforeSending(
      apiKey,
      'twitter',
      text(uniqueMarker('x-nowrite')),
      '/2/tweets',
      'tweet.write',
    );
  });

  it('x: a grant the service does not know (token from outside) is refused by X, named, and not retried', async () => {
    const { apiKey } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'twitter', redirect_uri: redirect }, 'xeno', 'allow', [
        'tweet.write',
      ]),
    );
    await api.db.socialAccount.update({ where: { id }, data: { grantedScopes: null } });
    expect((await view(apiKey, id))?.permissions).toBeNull();
    const m = uniqueMarker('x-after');
    const before = requests('twitter', 'POST', '/2/tweets').length;
    const done = await publish(apiKey, { ...text(m), platforms: ['twitter'] });
    expect(done.status).toBe('failed');
    const result = done.platform_results?.twitter;
    expect(result && !result.success ? result.error : '').toMatch(/tweet\.write.*reconnect/);
    // X was asked once, answered 403 client-forbidden, and the post was not sent again.
    expect(requests('twitter', 'POST', '/2/tweets').length - before).toBe(1);
  });

  it('linkedin: w_member_social withheld — a member post fails naming it, never sent', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(
      await connectFlow(api, apiKey, { platform: 'linkedin', redirect_uri: redirect }, 'lina', 'allow', [
        'w_member_social',
      ]),
    );
    await refusedBeforeSending(
      apiKey,
      'linkedin',
      text(uniqueMarker('li-nowrite')),
      '/rest/posts',
      'w_member_social',
    );
  });

  it('tiktok: video.publish withheld — a post fails naming it, never sent; the simulator refuses with scope_not_authorized', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(
      await connectFlow(api, apiKey, { platform: 'tiktok', redirect_uri: redirect }, 'toni', 'allow', [
        'video.publish',
      ]),
    );
    await refusedBeforeSending(
      apiKey,
      'tiktok',
      { content: `perm ${uniqueMarker('tt-nopub')}`, media: { images: [], video: { url: clipUrl } } },
      '/init',
      'video.publish',
    );
    const [token] = (
      (await (await fetch(`${api.sim?.url}/__sim/oauth/tokens?platform=tiktok`)).json()) as {
        tokens: { value: string; user: string; kind: string }[];
      }
    ).tokens.filter((t) => t.user === 'toni' && t.kind === 'access');
    const res = await fetch(`${api.sim?.url}/tiktok/v2/post/publish/creator_info/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token?.value}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('scope_not_authorized');
    // username needs user.info.profile, which the service does not ask: TikTok refuses that field.
    const info = await fetch(`${api.sim?.url}/tiktok/v2/user/info/?fields=open_id,username`, {
      headers: { authorization: `Bearer ${token?.value}` },
    });
    expect(info.status).toBe(401);
  });

  it('instagram: instagram_business_content_publish withheld — fails naming it, never sent', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(
      await connectFlow(api, apiKey, { platform: 'instagram', redirect_uri: redirect }, 'inge', 'allow', [
        'instagram_business_content_publish',
      ]),
    );
    await refusedBeforeSending(
      apiKey,
      'instagram',
      {
        content: `perm ${uniqueMarker('ig-nopub')}`,
        media: { images: [{ url: 'https://cdn.example.com/cat.jpg' }] },
      },
      '/media',
      'instagram_business_content_publish',
    );
  });

  it('facebook: pages_manage_posts unticked on the dialog — /me/permissions says so, and a Page post fails naming it', async () => {
    const { apiKey } = await api.account('pro');
    const started = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(apiKey))
      .send({ platform: 'facebook', redirect_uri: redirect });
    const page = await fetch(started.body.url as string);
    expect(await page.text()).toContain('name="granted_scope" value="pages_manage_posts" checked');
    // The person unticks pages_manage_posts and keeps the others.
    const form = new URLSearchParams({ decision: 'allow', sim_user: 'fred', scope_choice: '1' });
    for (const s of requestedScopes('facebook').filter((s) => s !== 'pages_manage_posts'))
      form.append('granted_scope', s);
    const answer = await fetch(started.body.url as string, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const back = new URL(answer.headers.get('location') ?? '');
    const callback = await request(api.app).get(`${back.pathname}${back.search}`);
    const ids = new URL(callback.headers.location ?? '').searchParams.get('account_ids') ?? '';
    const id = ids.split(',')[0] ?? '';
    expect((await view(apiKey, id))?.reconnect_to_grant).toEqual(['pages_manage_posts']);
    await refusedBeforeSending(
      apiKey,
      'facebook',
      text(uniqueMarker('fb-nopost')),
      '/feed',
      'pages_manage_posts',
    );
  });

  it('mastodon: write:statuses withheld — a post fails naming it, never sent', async () => {
    const { apiKey } = await api.account('pro');
    const instance = api.sim?.baseUrls.mastodon ?? '';
    accountIdOf(
      await connectFlow(
        api,
        apiKey,
        { platform: 'mastodon', instance, redirect_uri: redirect },
        'moss',
        'allow',
        ['write:statuses'],
      ),
    );
    await refusedBeforeSending(
      apiKey,
      'mastodon',
      text(uniqueMarker('ma-nowrite')),
      '/api/v1/statuses',
      'write:statuses',
    );
  });

  it('a refused publish for a permission is not retried later either (one attempt, status failed)', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(
      await connectFlow(api, apiKey, { platform: 'twitter', redirect_uri: redirect }, 'xiu', 'allow', [
        'tweet.write',
      ]),
    );
    const m = uniqueMarker('x-once');
    const done = await publish(apiKey, { ...text(m), platforms: ['twitter'] });
    expect(done.status).toBe('failed');
    const targets = await api.db.postTarget.findMany({ where: { postId: done.id } });
    expect(targets.map((t) => [t.status, t.attempts, t.errorKind])).toEqual([['failed', 1, 'rejected']]);
    // A rejected failure ends the job (UnrecoverableError): no retry is queued for this post.
    const jobs = await api.queues.publish.getJobs(['delayed', 'waiting', 'active']);
    expect((jobs ?? []).filter((j) => JSON.stringify(j.data).includes(done.id))).toEqual([]);
  });
});
