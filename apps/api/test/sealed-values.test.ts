import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openCredentials, secretBox } from '@sps/core';
import { createSocialAccountRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow } from './oauth-helpers.js';
import { createB, settleB, uniqueMarker } from './pipeline-helpers.js';

describe('sealed secrets: v2 bound to their row, v1 still opening and sealed again on write', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(() => api.close());

  it('credentials stored by a connect are v2 and open only for their own row', async () => {
    const { apiKey } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'twitter', redirect_uri: 'https://app.example/cb' }, 'vera'),
    );
    const row = await api.db.socialAccount.findUniqueOrThrow({ where: { id } });
    expect(row.credentialsEncrypted).toMatch(/^v2\./);
    expect(openCredentials(row.credentialsEncrypted, api.env.encryptionKey, id).token).toEqual(
      expect.any(String),
    );
    // Copied into another tenant's row (a database write an attacker managed), it does not open there.
    const other = await api.account('pro');
    const victimCopy = await api.connect(other.accountId, 'twitter', 'copy');
    expect(() => openCredentials(row.credentialsEncrypted, api.env.encryptionKey, victimCopy)).toThrow();
  });

  it('a webhook secret is v2 and bound to its webhook', async () => {
    const { apiKey } = await api.account('pro');
    const res = await request(api.app)
      .post('/v1/webhooks')
      .set(bearer(apiKey))
      .send({ url: 'https://93.184.216.34/hooks/sealed', events: ['post.published'] });
    expect(res.status).toBe(201);
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.secretEncrypted).toMatch(/^v2\./);
    const own = secretBox.sealContext('webhooks', row.id);
    expect(secretBox.open(row.secretEncrypted, api.env.encryptionKey, own)).toBe(res.body.secret);
    const elsewhere = secretBox.sealContext('webhooks', '00000000-0000-4000-8000-000000000000');
    expect(() => secretBox.open(row.secretEncrypted, api.env.encryptionKey, elsewhere)).toThrow();
  });

  it('a v1 value (stored before) keeps working, and the next write of its row seals it as v2', async () => {
    const { accountId, apiKey } = await api.account('pro');
    // The harness stores credentials as v1, as rows written before this version hold them.
    const id = await api.connect(accountId, 'mastodon', 'old-row');
    const before = await api.db.socialAccount.findUniqueOrThrow({ where: { id } });
    expect(before.credentialsEncrypted).toMatch(/^v1\./);
    const post = await createB(api, apiKey, {
      content: `v1 ${uniqueMarker('seal')}`,
      platforms: ['mastodon'],
    });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    expect((await settleB(api, apiKey, post.id)).status).toBe('published');
    // A reconnect writes the row (as the connect service does): sealed again, bound to it, the token kept.
    await api.db.socialAccount.update({ where: { id }, data: { externalId: 'mona-1' } });
    await createSocialAccountRepository(api.db).connectOrRevive({
      accountId,
      platform: 'mastodon',
      accountName: 'old-row',
      externalId: 'mona-1',
      instanceUrl: before.instanceUrl,
      seal: (previous, socialAccountId) => {
        const opened = openCredentials(previous ?? '', api.env.encryptionKey, socialAccountId);
        return secretBox.seal(
          JSON.stringify(opened),
          api.env.encryptionKey,
          secretBox.sealContext('social_accounts', socialAccountId),
        );
      },
    });
    const after = await api.db.socialAccount.findUniqueOrThrow({ where: { id } });
    expect(after.credentialsEncrypted).toMatch(/^v2\./);
    expect(openCredentials(after.credentialsEncrypted, api.env.encryptionKey, id)).toEqual(
      openCredentials(before.credentialsEncrypted, api.env.encryptionKey, id),
    );
  });
});
