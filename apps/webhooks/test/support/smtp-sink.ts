import { SMTPServer } from 'smtp-server';

// Test-only SMTP sink on loopback: accepts every message and keeps it.

export interface TMailReceived {
  from: string;
  to: string[];
  raw: string;
}

export interface TSmtpSink {
  url: string;
  messages: TMailReceived[];
  waitFor(count: number, timeoutMs?: number): Promise<TMailReceived[]>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<TSmtpSink> {
  const messages: TMailReceived[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`smtp sink: ${messages.length}/${count} messages`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return messages;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
