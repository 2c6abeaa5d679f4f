import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { generateApiKey } from '@sps/core';
import type { TAccountRepository, TAuthenticatedKey } from '@sps/db';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { ApiKeyVerifier } from '../src/http/auth.js';

/** The accounts repository as the verifier uses it, with lookups the test answers by hand. */
function controlledAccounts() {
  const pending: ((key: TAuthenticatedKey | null) => void)[] = [];
  let lookups = 0;
  const accounts = {
    findActiveKey: () =>
      new Promise<TAuthenticatedKey | null>((resolve) => {
        lookups += 1;
        pending.push(resolve);
      }),
    touchKey: async () => undefined,
  } as unknown as TAccountRepository;
  return {
    accounts,
    lookups: () => lookups,
    /** Answers the oldest lookup still waiting. */
    answer(key: TAuthenticatedKey | null) {
      const next = pending.shift();
      if (!next) throw new Error('no lookup is waiting');
      next(key);
    },
  };
}

/** A stand-in for the dedicated Redis subscriber: the test delivers eviction messages itself. */
function fakeSubscriber() {
  const emitter = new EventEmitter() as EventEmitter & { subscribe: (channel: string) => Promise<number> };
  emitter.subscribe = async () => 1;
  return emitter;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('API key cache and revocations', () => {
  it('a lookup that began before a revocation and ends after its eviction is not cached', async () => {
    const { key, hash } = generateApiKey();
    const record: TAuthenticatedKey = {
      keyId: 'k1',
      accountId: 'a1',
      plan: 'pro',
      hash,
      lastUsedAt: new Date(),
    };
    const control = controlledAccounts();
    const verifier = new ApiKeyVerifier(
      control.accounts,
      { ttlMs: 60_000, lookupConcurrency: 2 },
      pino({ level: 'silent' }),
    );
    const subscriber = fakeSubscriber();
    await verifier.listen(subscriber as unknown as Redis, 'test');

    // A request starts its lookup while the key is still valid ...
    const inFlight = verifier.verify(key);
    await tick();
    expect(control.lookups()).toBe(1);
    // ... the key is revoked and every API process evicts it ...
    subscriber.emit('message', ApiKeyVerifier.channel('test'), hash);
    // ... then the lookup returns what it read before the revocation.
    control.answer(record);
    expect(await inFlight).toMatchObject({ keyId: 'k1' });

    // The next request must not be answered from a cache entry made from that stale read.
    const next = verifier.verify(key);
    await tick();
    expect(control.lookups()).toBe(2);
    control.answer(null);
    expect(await next).toBeNull();
  });

  it('a lookup with no eviction meanwhile is cached as before', async () => {
    const { key, hash } = generateApiKey();
    const control = controlledAccounts();
    const verifier = new ApiKeyVerifier(
      control.accounts,
      { ttlMs: 60_000, lookupConcurrency: 2 },
      pino({ level: 'silent' }),
    );
    const first = verifier.verify(key);
    await tick();
    control.answer({ keyId: 'k2', accountId: 'a2', plan: 'free', hash, lastUsedAt: new Date() });
    await first;
    expect(await verifier.verify(key)).toMatchObject({ keyId: 'k2' });
    expect(control.lookups()).toBe(1);
  });
});
