// A local S3 API server for the S3 storage tests and for trying MEDIA_STORAGE=s3 without a cloud account:
// s3rver (npm), a real HTTP server speaking S3's REST API (SigV4 checked, multipart uploads, ranged GETs,
// XML errors), its objects in a directory. See docs (decisions) for why this one.
// Usage: node scripts/s3-test-server.mjs [port] [directory]; prints `listening <endpoint>` when ready.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const port = Number(process.argv[2] ?? 0);
const directory = process.argv[3] ?? mkdtempSync(join(tmpdir(), 's3rver-'));
const server = new S3rver({
  address: '127.0.0.1',
  port,
  silent: true,
  directory,
  configureBuckets: [{ name: 'sps-media' }],
});
const { address, port: bound } = await server.run();
console.log(`listening http://${address}:${bound}`);
const stop = () => server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
