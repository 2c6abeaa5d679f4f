import express, { type RequestHandler } from 'express';

/**
 * JSON bodies up to `limit`. Bodies with another content type are left unparsed (the route then sees
 * no object and answers a validation error naming `body`).
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] });
}
