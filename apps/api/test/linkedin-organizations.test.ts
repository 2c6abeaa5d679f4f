import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, simControl, simTokens, startConnect } from './oauth-helpers.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/** LinkedIn organization pages: chosen at connect, posted to as `urn:li:organization:<id>`. */
describe('LinkedIn organizations', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(async () => {
    await api.close();
  });

  const redirect = 'https://app.example/cb';
  const accounts = async (key: string) =>
    (await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts as Record<string, unknown>[];
  const publish = async (key: string, text: string) => {
    const post = await createB(api, key, { content: text, platforms: ['linkedin'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
    return settleB(api, key, post.id, 15_000);
  };
  /** The simulated member's own organization (the simulator gives each member one). */
  const orgAcl = (user: string, organizationId: string, extra: Record<string, string> = {}) =>
    simControl(api, '/__sim/linkedin/organizations', { user, organization_id: organizationId, ...extra });

  it('the member connect asks for the member scopes only; target organization asks for the organization scopes too', async () => {
    const { apiKey } = await api.account('pro');
    const member = await startConnect(api, apiKey, { platform: 'linkedin' });
    expect(new URL(member.body.url).searchParams.get('scope')).toBe('openid profile w_member_social');
    const org = await startConnect(api, apiKey, { platform: 'linkedin', target: 'organization' });
    expect(new URL(org.body.url).searchParams.get('scope')).toBe(
      // Exactly what an organization account's calls need (network-permissions.ts): no member scopes.
      'r_organization_admin w_organization_social r_organization_social rw_organization_admin',
    );
  });

  it('connects the organization the member administers and posts as it (author urn:li:organization)', async () => {
    const { apiKey } = await api.account('pro');
    const flow = await connectFlow(
      api,
      apiKey,
      { platform: 'linkedin', redirect_uri: redirect, target: 'organization' },
      'olga',
    );
    const id = accountIdOf(flow);
    const view = (await accounts(apiKey)).find((a) => a.id === id);
    expect(view).toMatchObject({
      platform: 'linkedin',
      account_name: 'olga Company',
      external_id: expect.stringMatching(/^urn:li:organization:\d+$/),
      is_active: true,
    });
    const marker = uniqueMarker('li-org');
    expect((await publish(apiKey, `from the page ${marker}`)).status).toBe('published');
    const [post] = simPosts(api, 'linkedin', marker);
    expect(post?.author).toBe(view?.external_id);
    // Connecting again revives the same account.
    const again = await connectFlow(
      api,
      apiKey,
      { platform: 'linkedin', redirect_uri: redirect, target: 'organization' },
      'olga',
    );
    expect(accountIdOf(again)).toBe(id);
  });

  it('without organization_id every administered organization becomes an account; with it only that one; other roles are not listed', async () => {
    await orgAcl('pete', '5550001', { name: 'Pete Two' });
    await orgAcl('pete', '5550002', { name: 'Pete Analytics', role: 'ANALYST' });
    await orgAcl('pete', '5550003', { name: 'Pete Pending', state: 'REQUESTED' });
    const { apiKey } = await api.account('pro');
    const all = await connectFlow(
      api,
      apiKey,
      { platform: 'linkedin', redirect_uri: redirect, target: 'organization' },
      'pete',
    );
    expect(all.callback.status).toBe(302);
    const location = new URL(String(all.callback.headers.location));
    expect(location.searchParams.get('account_ids')?.split(',')).toHaveLength(2);
    expect((await accounts(apiKey)).map((a) => a.account_name).sort()).toEqual(['Pete Two', 'pete Company']);
    const other = await api.account('pro');
    const one = await connectFlow(
      api,
      other.apiKey,
      { platform: 'linkedin', redirect_uri: redirect, organization_id: 'urn:li:organization:5550001' },
      'pete',
    );
    accountIdOf(one);
    expect((await accounts(other.apiKey)).map((a) => a.external_id)).toEqual(['urn:li:organization:5550001']);
  });

  it('an organization the member does not administer comes back as error=no_organization and connects nothing', async () => {
    await orgAcl('quinn', '5550009', { name: 'Quinn Read Only', role: 'ANALYST' });
    const { apiKey } = await api.account('pro');
    const flow = await connectFlow(
      api,
      apiKey,
      { platform: 'linkedin', redirect_uri: redirect, organization_id: '5550009' },
      'quinn',
    );
    expect(flow.callback.status).toBe(302);
    expect(new URL(String(flow.callback.headers.location)).searchParams.get('error')).toBe('no_organization');
    expect(await accounts(apiKey)).toEqual([]);
  });

  it('a member whose role was revoked after connecting gets LinkedIn 403 on the post (rejected, nothing posted)', async () => {
    await orgAcl('rita', '5550020', { name: 'Rita Ltd' });
    const { apiKey } = await api.account('pro');
    accountIdOf(
      await connectFlow(
        api,
        apiKey,
        { platform: 'linkedin', redirect_uri: redirect, organization_id: '5550020' },
        'rita',
      ),
    );
    await orgAcl('rita', '5550020', { state: 'REVOKED' });
    const marker = uniqueMarker('li-revoked');
    const done = await publish(apiKey, `no longer mine ${marker}`);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.platform_results)).toContain('[/author]');
    expect(simPosts(api, 'linkedin', marker)).toHaveLength(0);
  });

  it('the simulated LinkedIn refuses what LinkedIn refuses: a member token posting as an organization, the ACL finder without r_organization_admin', async () => {
    const { apiKey } = await api.account('pro');
    accountIdOf(await connectFlow(api, apiKey, { platform: 'linkedin', redirect_uri: redirect }, 'sam'));
    const token = (await simTokens(api, 'linkedin')).find(
      (t) => t.user === 'sam' && t.kind === 'access',
    )?.value;
    const headers = {
      authorization: `Bearer ${token}`,
      'linkedin-version': '202607',
      'x-restli-protocol-version': '2.0.0',
      'content-type': 'application/json',
    };
    const post = await fetch(`${api.sim?.url}/linkedin/rest/posts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        author: 'urn:li:organization:5550030',
        commentary: 'not allowed',
        visibility: 'PUBLIC',
        lifecycleState: 'PUBLISHED',
        distribution: { feedDistribution: 'MAIN_FEED' },
      }),
    });
    expect(post.status).toBe(403);
    expect(await post.json()).toEqual({
      status: 403,
      serviceErrorCode: 100,
      code: 'ACCESS_DENIED',
      message: 'Not enough permissions to access: partnerApiPostsExternal.CREATE.20260701',
    });
    const acls = await fetch(
      `${api.sim?.url}/linkedin/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED`,
      { headers },
    );
    expect(acls.status).toBe(403);
    expect(((await acls.json()) as { code: string }).code).toBe('ACCESS_DENIED');
  });

  it('refuses target and organization_id outside LinkedIn, and organization_id with target member, naming the field', async () => {
    const { apiKey } = await api.account('pro');
    const cases: [Record<string, string>, string][] = [
      [{ platform: 'twitter', target: 'organization' }, 'target'],
      [{ platform: 'facebook', organization_id: '1' }, 'organization_id'],
      [{ platform: 'linkedin', target: 'member', organization_id: '1' }, 'organization_id'],
      [{ platform: 'linkedin', organization_id: 'acme' }, 'organization_id'],
      [{ platform: 'linkedin', page_id: '123' }, 'page_id'],
    ];
    for (const [body, field] of cases) {
      const res = await request(api.app).post('/v1/accounts/connect').set(bearer(apiKey)).send(body);
      expect(res.status).toBe(400);
      expect(res.body.details.field).toBe(field);
    }
  });
});
