import { describe, expect, it } from '@jest/globals';
import { loadEnv } from '../src/env.js';

const KEY = '55'.repeat(32);

describe('the API environment refuses insecure combinations', () => {
  it('the development key only on loopback: a non-loopback HOST without ENCRYPTION_KEY does not start', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'api.internal']) {
      expect(() => loadEnv({ HOST: host })).toThrow(/ENCRYPTION_KEY is required when HOST/);
    }
    for (const host of ['127.0.0.1', '::1', 'localhost']) expect(loadEnv({ HOST: host }).HOST).toBe(host);
    // Unset: loopback with the development key, every interface with a real key (as before).
    expect(loadEnv({}).HOST).toBe('127.0.0.1');
    expect(loadEnv({ ENCRYPTION_KEY: KEY }).HOST).toBe('0.0.0.0');
    expect(loadEnv({ ENCRYPTION_KEY: KEY, HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
  });

  it('an https PUBLIC_URL needs TRUST_PROXY; cookies are Secure exactly when PUBLIC_URL is https', () => {
    expect(() => loadEnv({ ENCRYPTION_KEY: KEY, PUBLIC_URL: 'https://sps.example' })).toThrow(/TRUST_PROXY/);
    expect(
      loadEnv({ ENCRYPTION_KEY: KEY, PUBLIC_URL: 'https://sps.example', TRUST_PROXY: '1' }).secureCookies,
    ).toBe(true);
    expect(loadEnv({}).secureCookies).toBe(false);
  });

  it('CONNECT_REDIRECT_ORIGINS: origins only; the allowed list is PUBLIC_URL origin plus them', () => {
    const env = loadEnv({
      PUBLIC_URL: 'http://127.0.0.1:3000/base/',
      CONNECT_REDIRECT_ORIGINS: 'https://app.example.com, http://localhost:5173',
    });
    expect(env.redirectOrigins).toEqual([
      'http://127.0.0.1:3000',
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    for (const bad of [
      'https://app.example.com/path',
      'app.example.com',
      'javascript:alert(1)',
      'ftp://x.example',
    ]) {
      expect(() => loadEnv({ CONNECT_REDIRECT_ORIGINS: bad })).toThrow(/CONNECT_REDIRECT_ORIGINS/);
    }
  });
});
