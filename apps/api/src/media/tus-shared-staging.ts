import { Readable } from 'node:stream';
import type { TRedis } from '@sps/queue';
import type { TStorage } from '@sps/storage';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import type { TTusStaging } from './tus-uploads.js';

/** What Redis keeps of an unfinished upload: its declared size, metadata and the pieces already stored. */
interface TStagedUpload {
  size?: number;
  metadata?: Record<string, string | null>;
  creation_date?: string;
  /** Start offset and length of each piece, in order; the upload's offset is where the last one ends. */
  pieces: Array<[number, number]>;
}

const offsetOf = (state: TStagedUpload) => state.pieces.reduce((sum, [, length]) => sum + length, 0);

/**
 * tus staging that every API instance sees, for MEDIA_STORAGE=s3: each PATCH body is stored as one object
 * `tus-staging/<upload id>/<offset>` in the media store, and the upload's state (size, metadata, pieces) is
 * one Redis key `<prefix>:tus:upload:<id>`. tus's lock (RedisLocker) serialises the writes of one upload,
 * so the state is read and written without a transaction. A PATCH cut short keeps what arrived (tus ends the
 * body stream gracefully on abort, and the piece is stored with those bytes).
 *
 * Why not `@tus/s3-store` (S3 multipart parts, no copy at the end): it needs ListParts, which the local S3
 * server the tests and CI use (s3rver) does not implement, and parts under 5 MB need its extra "incomplete
 * part" objects; this store uses only PUT, GET and DELETE of whole objects. The finished upload's pieces are
 * composed into the media object inside the bucket (`TStorage.compose`: UploadPartCopy) in the last PATCH,
 * or streamed through the API where the server does not implement that (s3rver).
 *
 * Unfinished uploads are listed in a sorted set `<prefix>:tus:uploads` (score: creation time) so the hourly
 * sweep finds the expired ones and deletes their pieces (the store cannot list keys).
 */
export class SharedTusStaging extends DataStore implements TTusStaging {
  constructor(
    private readonly deps: { redis: TRedis; storage: TStorage; prefix: string; expirationMs: number },
  ) {
    super();
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration'];
  }

  private stateKey(id: string) {
    return `${this.deps.prefix}:tus:upload:${id}`;
  }
  private get indexKey() {
    return `${this.deps.prefix}:tus:uploads`;
  }
  private pieceKey(id: string, offset: number) {
    return `tus-staging/${id}/${offset}`;
  }

  private async state(id: string): Promise<TStagedUpload> {
    const raw = await this.deps.redis.get(this.stateKey(id));
    if (raw === null) throw ERRORS.FILE_NOT_FOUND;
    return JSON.parse(raw) as TStagedUpload;
  }

  private async save(id: string, state: TStagedUpload) {
    // Kept a day past the expiration so the sweep still finds the pieces of an expired upload.
    await this.deps.redis.set(this.stateKey(id), JSON.stringify(state), 'PX', 2 * this.deps.expirationMs);
  }

  override async create(upload: Upload): Promise<Upload> {
    upload.creation_date = upload.creation_date ?? new Date().toISOString();
    await this.save(upload.id, {
      ...(upload.size !== undefined ? { size: upload.size } : {}),
      ...(upload.metadata ? { metadata: upload.metadata } : {}),
      creation_date: upload.creation_date,
      pieces: [],
    });
    await this.deps.redis.zadd(this.indexKey, Date.parse(upload.creation_date), upload.id);
    return upload;
  }

  override async write(body: Readable, id: string, offset: number): Promise<number> {
    const state = await this.state(id);
    if (offset !== offsetOf(state)) throw ERRORS.INVALID_OFFSET;
    const stored = await this.deps.storage.put(this.pieceKey(id, offset), body).catch(() => {
      throw ERRORS.FILE_WRITE_ERROR;
    });
    if (stored.size === 0) {
      await this.deps.storage.delete(this.pieceKey(id, offset));
      return offset;
    }
    state.pieces.push([offset, stored.size]);
    await this.save(id, state);
    return offset + stored.size;
  }

  override async getUpload(id: string): Promise<Upload> {
    const state = await this.state(id);
    return new Upload({
      id,
      offset: offsetOf(state),
      ...(state.size !== undefined ? { size: state.size } : {}),
      ...(state.metadata ? { metadata: state.metadata } : {}),
      ...(state.creation_date ? { creation_date: state.creation_date } : {}),
    });
  }

  override async declareUploadLength(id: string, length: number): Promise<void> {
    const state = await this.state(id);
    await this.save(id, { ...state, size: length });
  }

  /** The finished upload's bytes: its pieces one after the other, each streamed from the store. */
  async read(id: string): Promise<Readable> {
    const { pieces } = await this.state(id);
    const { storage } = this.deps;
    const keys = pieces.map(([offset]) => this.pieceKey(id, offset));
    async function* bytes() {
      for (const key of keys) yield* await storage.get(key);
    }
    return Readable.from(bytes(), { objectMode: false });
  }

  /** The finished upload's pieces, in order, for the store to copy server-side. */
  async source(id: string): Promise<{ pieces: Array<{ key: string; size: number }> }> {
    const { pieces } = await this.state(id);
    return { pieces: pieces.map(([offset, size]) => ({ key: this.pieceKey(id, offset), size })) };
  }

  override async remove(id: string): Promise<void> {
    const state = await this.state(id);
    await Promise.all(state.pieces.map(([offset]) => this.deps.storage.delete(this.pieceKey(id, offset))));
    await this.deps.redis.del(this.stateKey(id));
    await this.deps.redis.zrem(this.indexKey, id);
  }

  override getExpiration(): number {
    return this.deps.expirationMs;
  }

  override async deleteExpired(): Promise<number> {
    const before = Date.now() - this.deps.expirationMs;
    const expired = await this.deps.redis.zrangebyscore(this.indexKey, 0, before, 'LIMIT', 0, 1000);
    for (const id of expired) {
      await this.remove(id).catch(async () => {
        // State already gone (past its TTL): nothing left to find the pieces by.
        await this.deps.redis.zrem(this.indexKey, id);
      });
    }
    return expired.length;
  }
}
