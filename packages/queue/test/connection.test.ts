import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ZRedisClusterNodes } from '@sps/core';
import { Cluster, Redis } from 'ioredis';
import {
  bullPrefix,
  ClusterSubscriber,
  createQueues,
  createRedisFactory,
  deleteKeysMatching,
  type TRedis,
} from '../src/index.js';

// Runs on the plain Redis of REDIS_URL, and on the cluster of REDIS_CLUSTER_NODES when `.ci/run` sets it.
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const clusterNodes = ZRedisClusterNodes.parse(process.env.REDIS_CLUSTER_NODES);
const factory = createRedisFactory({ url, clusterNodes });
const live = new URL(url);
const liveNode = { host: live.hostname, port: Number(live.port || 6379) };
const prefix = `sps-conn-${randomBytes(4).toString('hex')}`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
async function ready(redis: TRedis): Promise<TRedis> {
  if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
  return redis;
}

describe('REDIS_CLUSTER_NODES', () => {
  it('parses host:port lists, IPv6 in brackets, and names a bad entry', () => {
    expect(ZRedisClusterNodes.parse(undefined)).toBeUndefined();
    expect(ZRedisClusterNodes.parse(' ')).toBeUndefined();
    expect(ZRedisClusterNodes.parse('10.0.0.5:7000, redis-2.internal:7001,[::1]:7002')).toEqual([
      { host: '10.0.0.5', port: 7000 },
      { host: 'redis-2.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    for (const bad of ['10.0.0.5', 'redis://a:7000', 'a:0', 'a:70000', 'a:7000,b'])
      expect(ZRedisClusterNodes.safeParse(bad).error?.issues[0]?.message).toMatch(/is not host:port/);
  });

  it('makes a Cluster client when nodes are given and a plain one otherwise', async () => {
    const plain = createRedisFactory({ url }).producer({ lazyConnect: true });
    const cluster = createRedisFactory({ url, clusterNodes: [liveNode] }).producer({ lazyConnect: true });
    expect(plain).toBeInstanceOf(Redis);
    expect(cluster).toBeInstanceOf(Cluster);
    plain.disconnect();
    cluster.disconnect();
  });
});

describe('the connection factory on this Redis', () => {
  let redis: TRedis;
  beforeAll(() => {
    redis = factory.worker();
  });
  afterAll(async () => {
    await deleteKeysMatching(redis, `*${prefix}*`);
    await redis.quit();
  });

  it('keeps every key of a queue in one hash slot, so BullMQ scripts work on a cluster', async () => {
    expect(bullPrefix(prefix)).toBe(`{${prefix}}`);
    const queues = createQueues(redis, prefix);
    try {
      await queues.publish.add(
        'publish',
        { postId: 'x', attempt: 1 },
        { jobId: 'publish-x-1', delay: 60_000 },
      );
      expect(await queues.publish.getJobCounts('delayed')).toEqual({ delayed: 1 });
    } finally {
      await queues.close();
    }
  });

  it('deletes a prefix that spans many slots, on every master of a cluster', async () => {
    const keys = Array.from({ length: 50 }, (_, i) => `${prefix}:spread:${i}`);
    for (const key of keys) await redis.set(key, '1');
    expect(await deleteKeysMatching(redis, `${prefix}:spread:*`)).toBe(50);
    for (const key of keys) expect(await redis.exists(key)).toBe(0);
  });
});

describe('one-shot connections (the admin CLI)', () => {
  it('publishes a pipelined batch that a subscriber of the same Redis or cluster hears', async () => {
    const channel = `${prefix}:evict`;
    const subscriber = factory.subscriber();
    subscriber.on('error', () => undefined);
    const heard: string[] = [];
    subscriber.on('message', (_c, m) => heard.push(m));
    const shot = factory.oneShot();
    try {
      await subscriber.subscribe(channel);
      await shot.connect();
      const batch = shot.pipeline();
      for (const hash of ['h1', 'h2']) batch.publish(channel, hash);
      await batch.exec();
      await until('both messages', () => heard.length === 2);
      expect(heard).toEqual(['h1', 'h2']);
    } finally {
      shot.disconnect();
      await subscriber.quit();
    }
  });
});

describe('ClusterSubscriber', () => {
  let publisher: TRedis;
  beforeAll(() => {
    publisher = createRedisFactory({ url }).worker();
  });
  afterAll(() => publisher.quit());

  it('moves past a node that does not answer, subscribes, and says ready again after it lost its node', async () => {
    const channel = `${prefix}:chan`;
    const name = `${prefix}-sub`;
    // The first node is down: the subscriber must move on to the next one by itself.
    const subscriber = new ClusterSubscriber([{ host: '127.0.0.1', port: 1 }, liveNode], name);
    subscriber.on('error', () => undefined);
    let readies = 0;
    const messages: string[] = [];
    subscriber.on('ready', () => {
      readies += 1;
    });
    subscriber.on('message', (_c, m) => messages.push(m));
    try {
      await subscriber.subscribe(channel);
      await ready(publisher);
      await until('the first message', async () => {
        await publisher.publish(channel, 'one');
        return messages.includes('one');
      });
      const readiesBefore = readies;
      // Drop its connection as a failing node would: it must come back (past the dead node) subscribed.
      await until('its connection to be killed', async () => (await killByName(name)) > 0);
      await until('ready after the loss', () => readies > readiesBefore);
      await until('a message after the loss', async () => {
        await publisher.publish(channel, 'two');
        return messages.includes('two');
      });
    } finally {
      await subscriber.quit();
    }
  });

  async function killByName(name: string): Promise<number> {
    const list = String(await publisher.client('LIST'));
    let killed = 0;
    for (const line of list.split('\n')) {
      if (!line.includes(` name=${name} `)) continue;
      const id = /\bid=(\d+)/.exec(line)?.[1];
      if (id) killed += Number(await publisher.client('KILL', 'ID', id));
    }
    return killed;
  }
});
