import express, { type RequestHandler } from 'express';

/**
 * JSON bodies up to `limit`. Bodies with another content type are left unparsed (the route then sees
 * no object and answers a validation error naming `body`).
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] });
}

/** Path ids are UUIDs; anything else cannot name a post of this account, so it is a 404, not a 400. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
