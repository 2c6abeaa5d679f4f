import { z } from 'zod';
import { OAuthError, type TConnectedIdentity } from './oauth-types.js';

// A network's answer is input like any other: a field of another type, or of any length, must not reach a
// string method or the database. Identities and credential checks are parsed here with zod.

/** A network-side id: a string, or a whole number as networks often send (kept as its decimal text). */
export const ZNetworkId = z.union([
  z.string().trim().min(1).max(256),
  z.number().int().safe().nonnegative().transform(String),
]);
/** A name, handle or title as a network shows it. */
export const ZNetworkName = z.string().trim().min(1).max(512);
/** A token or secret a network hands out (JWTs included). */
export const ZNetworkToken = z.string().min(1).max(16_384);

/**
 * One field of an identity answer as a bounded string, by what it is (`… id`: an id, `… token`: a token,
 * else a name); an answer without it, or with another type, cannot be used.
 */
export function answerField(value: unknown, what: string): string {
  const schema = what.endsWith('id') ? ZNetworkId : what.endsWith('token') ? ZNetworkToken : ZNetworkName;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new OAuthError('invalid', `The network's answer has no usable ${what}`, 'bad_answer');
}

/** The first problem of an answer, in words: `handle: expected string, received number`. */
export function answerProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'unexpected answer';
  const path = issue.path.map(String).join('.');
  return `${path || 'answer'}: ${issue.message}`.slice(0, 200);
}

/** Parses `body` with `schema`, or throws what `fail` makes of the problem. */
export function parseAnswer<S extends z.ZodType>(
  schema: S,
  body: unknown,
  fail: (problem: string) => Error,
): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw fail(answerProblem(parsed.error));
  return parsed.data;
}

/** An OAuth network's answer that cannot be used: the connect fails (`exchange_failed`), never a 500. */
export function unusableAnswer(network: string, what: string) {
  return (problem: string) =>
    new OAuthError('invalid', `${network}'s ${what} could not be used (${problem})`, 'bad_answer');
}

const ZConnectedIdentity = z.object({
  externalId: z.string().min(1).max(512),
  accountName: z.string().min(1).max(512),
  credentials: z.object({ token: z.string().min(1) }).loose(),
});

/** The last check before identities are stored, whichever provider made them. */
export function checkedIdentities(
  network: string,
  identities: readonly TConnectedIdentity[],
  fail: (problem: string) => Error = unusableAnswer(network, 'answer'),
): TConnectedIdentity[] {
  return identities.map((identity) => {
    parseAnswer(ZConnectedIdentity, identity, fail);
    return identity;
  });
}
