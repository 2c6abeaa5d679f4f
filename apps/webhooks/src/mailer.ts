import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface TMail {
  to: string;
  subject: string;
  text: string;
}

export interface TMailer {
  send(mail: TMail): Promise<void>;
  close(): void;
}

/** Owner e-mails over `SMTP_URL`; without one they are logged (recipient and subject, never secrets). */
export function createMailer(options: {
  smtpUrl?: string | undefined;
  from: string;
  logger: Logger;
}): TMailer {
  const { smtpUrl, from, logger } = options;
  if (!smtpUrl) {
    return {
      async send(mail) {
        logger.info({ to: mail.to, subject: mail.subject }, 'e-mail not sent (SMTP_URL unset)');
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      logger.info({ to: mail.to, subject: mail.subject }, 'e-mail sent');
    },
    close() {
      transport.close();
    },
  };
}
