import type { TTokenRepository } from '@sps/db';
import type { Logger } from 'pino';
import type { TMailer } from './mailer.js';

const BATCH = 50;

/**
 * E-mails the owner once per account a network's refusal disconnected. The webhooks worker already
 * has the mailer and a tick that runs every second; the publisher (which disconnects) stays free of
 * SMTP. A notice is claimed (marked sent) before its mail goes out and put back if sending fails, so
 * processes never send it twice; a crash between the claim and the send loses that one mail.
 */
export async function sendReauthNotices(deps: {
  tokens: TTokenRepository;
  mailer: TMailer;
  logger: Logger;
}): Promise<number> {
  const notices = await deps.tokens.claimReauthNotices(BATCH);
  for (const notice of notices) {
    try {
      await deps.mailer.send({
        to: notice.ownerEmail,
        subject: `Reconnect your ${notice.platform} account ${notice.accountName}`,
        text: [
          `Your ${notice.platform} account ${notice.accountName} was disconnected: ${notice.platform} no longer accepts its authorization (it was revoked, expired or the password changed).`,
          'Posts to it fail until you connect it again. Reconnecting keeps the same account and its history:',
          `POST /v1/accounts/connect with {"platform": "${notice.platform}"} and open the returned url`,
          `(connected account id ${notice.id}).`,
        ].join('\n'),
      });
    } catch (error) {
      deps.logger.error(
        { socialAccountId: notice.id, err: (error as Error).message },
        'could not e-mail the owner',
      );
      await deps.tokens.releaseReauthNotice(notice.id).catch(() => undefined);
    }
  }
  return notices.length;
}
