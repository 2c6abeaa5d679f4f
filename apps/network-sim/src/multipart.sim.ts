import type { Request } from 'express';

/**
 * Parses a multipart/form-data body (kept raw by the server's catch-all parser) with the platform's own
 * WHATWG `Response.formData()`, as Discord, Slack's upload host and Telegram receive files. Null when the
 * request is not multipart.
 */
export async function readForm(req: Request): Promise<FormData | null> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data') || !Buffer.isBuffer(req.body)) return null;
  try {
    return await new Response(req.body, { headers: { 'content-type': type } }).formData();
  } catch {
    return null;
  }
}

/** A file part's name, type and bytes. */
export async function fileOf(
  part: ReturnType<FormData['get']>,
): Promise<{ name: string; type: string; bytes: Buffer } | null> {
  if (!part || typeof part === 'string') return null;
  return { name: part.name, type: part.type, bytes: Buffer.from(await part.arrayBuffer()) };
}
