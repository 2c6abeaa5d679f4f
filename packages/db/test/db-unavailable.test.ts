import { describe, expect, it } from '@jest/globals';
import { Prisma } from '../src/generated/prisma/client.js';
import { createDb, isDbUnavailable } from '../src/index.js';

const known = (code: string) =>
  new Prisma.PrismaClientKnownRequestError('boom', { code, clientVersion: Prisma.prismaVersion.client });

describe('isDbUnavailable', () => {
  it('takes pool, transaction and connection failures for "try again later"', () => {
    for (const code of ['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034']) {
      expect(isDbUnavailable(known(code))).toBe(true);
    }
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(isDbUnavailable(new Error('wrapped', { cause: socket }))).toBe(true);
  });

  it('leaves request errors and bugs alone', () => {
    for (const code of ['P2002', 'P2025', 'P2003']) expect(isDbUnavailable(known(code))).toBe(false);
    expect(isDbUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDbUnavailable(null)).toBe(false);
    expect(isDbUnavailable('P2028')).toBe(false);
  });

  it('recognises a real unreachable database', async () => {
    const db = createDb('postgresql://postgres@127.0.0.1:1/none', { poolMax: 1 });
    const error = await db.$queryRaw`SELECT 1`.then(
      () => null,
      (e: unknown) => e,
    );
    await db.$disconnect();
    expect(error).not.toBeNull();
    expect(isDbUnavailable(error)).toBe(true);
  });
});

describe('isDbUnavailable with driver adapter errors', () => {
  const adapter = (cause: object) =>
    new Prisma.PrismaClientKnownRequestError('raw query failed', {
      code: 'P2010',
      clientVersion: Prisma.prismaVersion.client,
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
    });

  it('reads the adapter kind and the SQLSTATE', () => {
    expect(isDbUnavailable(adapter({ kind: 'TooManyConnections' }))).toBe(true);
    expect(isDbUnavailable(adapter({ kind: 'postgres', code: '40P01' }))).toBe(true);
    expect(isDbUnavailable(adapter({ kind: 'postgres', code: '57P01' }))).toBe(true);
    expect(isDbUnavailable(adapter({ kind: 'postgres', code: '22P02' }))).toBe(false);
    expect(isDbUnavailable(adapter({ kind: 'UniqueConstraintViolation' }))).toBe(false);
  });
});
