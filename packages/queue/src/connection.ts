import { EventEmitter } from 'node:events';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';

/**
 * A connection to the deployment's Redis: one server (`REDIS_URL`) or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`). Both speak the same commands; on a cluster every command that names several
 * keys must keep them in one hash slot (BullMQ's keys share the `{prefix}` tag, every other command of
 * the service names one key).
 */
export type TRedis = Redis | Cluster;

export interface TRedisNode {
  host: string;
  port: number;
}

/** Where Redis is: `clusterNodes` (when set and not empty) wins over `url`. */
export interface TRedisTarget {
  url: string;
  clusterNodes?: readonly TRedisNode[] | undefined;
}

/** What a caller may tune per connection; the rest (retries, offline queue) follows the connection's role. */
export interface TConnectionOptions {
  lazyConnect?: boolean;
  connectionName?: string;
}

/**
 * BullMQ prefix with a Redis Cluster hash tag, so every key of a queue lands in one slot
 * (`{sps}:publish:…`).
 */
export function bullPrefix(queuePrefix: string): string {
  return queuePrefix.startsWith('{') ? queuePrefix : `{${queuePrefix}}`;
}

/** Hands out the connections every process needs, for one server or a cluster alike. */
export interface TRedisFactory {
  readonly isCluster: boolean;
  /** Workers block on Redis and must retry forever (BullMQ requires `maxRetriesPerRequest: null`). */
  worker(options?: TConnectionOptions): TRedis;
  /** Producers in the API fail fast when Redis is down, so a request answers 503 instead of hanging. */
  producer(options?: TConnectionOptions): TRedis;
  /** One command batch and done (the admin CLI): no retries, no reconnection, a short connect timeout. */
  oneShot(options?: { connectTimeoutMs?: number }): TRedis;
  /** A dedicated pub/sub connection that says `ready` on every (re)subscription; see TSubscriber. */
  subscriber(connectionName?: string): TSubscriber;
}

export function createRedisFactory(target: TRedisTarget): TRedisFactory {
  const nodes = target.clusterNodes && target.clusterNodes.length > 0 ? target.clusterNodes : null;
  const cluster = (clusterOptions: ClusterOptions, redisOptions: RedisOptions, o: TConnectionOptions) =>
    new Cluster(nodes as TRedisNode[], {
      ...clusterOptions,
      ...(o.lazyConnect ? { lazyConnect: true } : {}),
      redisOptions: { ...redisOptions, ...(o.connectionName ? { connectionName: o.connectionName } : {}) },
    });
  return {
    isCluster: nodes !== null,
    worker(o = {}) {
      const redisOptions: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true };
      return nodes ? cluster({}, redisOptions, o) : new Redis(target.url, { ...redisOptions, ...o });
    },
    producer(o = {}) {
      return nodes
        ? cluster({ enableOfflineQueue: false }, { maxRetriesPerRequest: 1 }, o)
        : new Redis(target.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...o });
    },
    oneShot({ connectTimeoutMs = 2000 } = {}) {
      // No INFO round trip before the first command: one batch is all such a connection does.
      const redisOptions: RedisOptions = {
        maxRetriesPerRequest: 0,
        connectTimeout: connectTimeoutMs,
        retryStrategy: () => null,
        enableReadyCheck: false,
      };
      return nodes
        ? cluster({ clusterRetryStrategy: () => null, enableReadyCheck: false }, redisOptions, {
            lazyConnect: true,
          })
        : new Redis(target.url, { ...redisOptions, lazyConnect: true });
    },
    subscriber(connectionName) {
      if (!nodes)
        return new Redis(target.url, {
          maxRetriesPerRequest: null,
          ...(connectionName ? { connectionName } : {}),
        });
      return new ClusterSubscriber(nodes, connectionName);
    },
  };
}

/**
 * A dedicated connection to the same Redis or cluster as `redis`, for SUBSCRIBE: retries for ever and queues
 * commands while it connects.
 */
export function duplicateForSubscribe(redis: TRedis, connectionName?: string): TRedis {
  return duplicateWith(redis, { enableOfflineQueue: true }, { maxRetriesPerRequest: null }, connectionName);
}

/**
 * A copy of `redis` with some options changed: a Cluster's `duplicate` takes start-up nodes first and its
 * nodes' options apart, a Redis's takes them all in one.
 */
function duplicateWith(
  redis: TRedis,
  clusterLevel: ClusterOptions & RedisOptions,
  nodeLevel: RedisOptions,
  connectionName: string | undefined,
): TRedis {
  const named = connectionName ? { connectionName } : {};
  if (redis instanceof Cluster)
    return redis.duplicate([], {
      ...clusterLevel,
      redisOptions: { ...redis.options.redisOptions, ...nodeLevel, ...named },
    });
  return redis.duplicate({ ...clusterLevel, ...nodeLevel, ...named });
}

/**
 * A second connection to the same Redis or cluster as `redis` whose commands issued in one turn of the event
 * loop go out in one write (ioredis auto-pipelining). For small commands that many jobs issue together
 * (the publisher's lane places, taken and given back by a batch of posts at once): on a busy box each
 * socket write costs more than the command. Not for BullMQ's own connections, which manage their commands.
 */
export function duplicatePipelined(redis: TRedis, connectionName?: string): TRedis {
  return duplicateWith(redis, { enableAutoPipelining: true }, {}, connectionName);
}

/**
 * A pub/sub connection. `ready` is emitted on every (re)connection after which the subscriptions are in
 * place again: messages published while it was away are lost, and a listener (the API key cache) must
 * treat `ready` after the first as "forget what you cached".
 */
export interface TSubscriber {
  on(event: 'ready', listener: () => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  quit(): Promise<unknown>;
}

/** Pause before moving to the next node after one was lost (a short one: every moment away loses messages). */
const NEXT_NODE_DELAY_MS = 200;
/** Longest pause between attempts once every node has failed in a row (the whole cluster is unreachable). */
const MAX_RETRY_DELAY_MS = 5_000;

/**
 * Classic PUBLISH reaches every node of a Redis Cluster (the cluster bus forwards it), so subscribing on
 * any one node hears every message. This holds one plain connection to one node at a time and moves on
 * to the next node when it is lost, subscribing again there and emitting `ready`. (ioredis's own Cluster
 * subscriber moves too, but silently: nothing would tell the listener that messages were missed.)
 */
export class ClusterSubscriber extends EventEmitter implements TSubscriber {
  private readonly channels = new Set<string>();
  private current: Redis | null = null;
  private index = 0;
  /** Connections in a row that never became ready. */
  private failures = 0;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly nodes: readonly TRedisNode[],
    private readonly connectionName?: string,
  ) {
    super();
    this.connect();
  }

  async subscribe(channel: string): Promise<unknown> {
    this.channels.add(channel);
    if (this.current?.status === 'ready') return this.current.subscribe(channel);
    // Not connected yet: the next connection subscribes to it; wait for that.
    await new Promise<void>((resolve) => this.once('ready', resolve));
    return 1;
  }

  async quit(): Promise<unknown> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const connection = this.current;
    this.current = null;
    if (connection) await connection.quit().catch(() => connection.disconnect());
    return 'OK';
  }

  private connect(): void {
    if (this.closed) return;
    const node = this.nodes[this.index % this.nodes.length] as TRedisNode;
    const connection = new Redis({
      host: node.host,
      port: node.port,
      lazyConnect: true,
      // This class picks the next node itself.
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      ...(this.connectionName ? { connectionName: this.connectionName } : {}),
    });
    this.current = connection;
    let subscribed = false;
    connection.on('error', (error: Error) => {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    });
    connection.on('message', (channel: string, message: string) => this.emit('message', channel, message));
    connection.once('end', () => {
      if (this.current !== connection || this.closed) return;
      this.current = null;
      this.index += 1;
      if (!subscribed) this.failures += 1;
      // Each node gets a quick try; once all failed in a row, back off (doubling, up to 5 s).
      const rounds = Math.floor(this.failures / this.nodes.length);
      const delay = Math.min(MAX_RETRY_DELAY_MS, NEXT_NODE_DELAY_MS * 2 ** Math.min(rounds, 5));
      this.timer = setTimeout(() => this.connect(), delay);
    });
    connection
      .connect()
      .then(async () => {
        if (this.channels.size > 0) await connection.subscribe(...this.channels);
        subscribed = true;
        this.failures = 0;
        if (this.current === connection) this.emit('ready');
      })
      .catch(() => {
        // A connection that failed has ended already; disconnecting it again would arm a 2 s timer in ioredis.
        if (connection.status !== 'end') connection.disconnect();
      });
  }
}

/**
 * The servers holding keys: every master of a cluster, or the one server. Commands that see one node's keys
 * only (SCAN, KEYS, FLUSHALL, a keyless script) must run on each of them.
 */
export function masterNodes(redis: TRedis): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Every key matching `pattern`, on one server or across a cluster's masters (tests and benches). */
export async function keysMatching(redis: TRedis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for (const server of masterNodes(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

/**
 * Deletes every key matching `pattern` (tests and benches cleaning their prefix). On a cluster each master
 * is scanned on its own (SCAN and KEYS see one node's keys only) and keys are deleted one by one, as a
 * multi-key DEL across slots is refused.
 */
export async function deleteKeysMatching(redis: TRedis, pattern: string): Promise<number> {
  let deleted = 0;
  for (const server of masterNodes(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      const batch = server.pipeline();
      for (const key of keys) batch.unlink(key);
      await batch.exec();
      deleted += keys.length;
    } while (cursor !== '0');
  }
  return deleted;
}
