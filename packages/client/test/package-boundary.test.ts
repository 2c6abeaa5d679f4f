import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

// The package is published on its own: it must not reach into the monorepo or need a runtime dependency.

const PACKAGE_DIR = resolve(import.meta.dirname, '..');
const SRC = join(PACKAGE_DIR, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the client package stands alone', () => {
  it('imports only its own files and node: built-ins', () => {
    const outside: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier = ''] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        const ownFile =
          specifier.startsWith('.') && !relative(SRC, resolve(file, '..', specifier)).startsWith('..');
        if (!ownFile && !specifier.startsWith('node:'))
          outside.push(`${relative(PACKAGE_DIR, file)}: ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('has no runtime dependencies and is publishable', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.private).toBeUndefined();
    expect(manifest.name).toBe('@social-posts/client');
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
  });
});
