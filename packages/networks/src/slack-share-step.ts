import type { TConnectorAccount, TMedia, TProcessingWait, TPublishProgress } from './connector.js';
import { runToEnd, stillProcessing, type TStepResult, waitSince } from './processing-step.js';
import { type createSlackFiles, SLACK_SHARE_WAIT } from './slack-files.js';
import type { createSlackShareHistory } from './slack-share-history.js';

const NETWORK = 'Slack';

export interface TSlackShare {
  account: TConnectorAccount;
  media: TMedia | null;
  text: string;
  channel: string;
  threadTs: string | undefined;
  progress: TPublishProgress | undefined;
}

/**
 * The message that shares the files, and its ts once Slack shows the share. Unlike the other networks'
 * waits, this one comes after the call that posts: files.completeUploadExternal writes the message, and
 * its ts appears in files.info `shares` only once sharing completes, asynchronously
 * (https://docs.slack.dev/reference/methods/files.completeUploadExternal: "Finishes an upload started with
 * files.getUploadURLExternal", channel_id "where the file will be shared";
 * https://docs.slack.dev/messaging/working-with-files/#uploading_files; Slack's answer in
 * https://github.com/slackapi/bolt-js/issues/2115). So the progress is saved right after the completion
 * (the file ids and the wait's start), before anything else: the message exists, and a later call only
 * looks for its ts, one files.info read per call (no worker slot waits, DESIGN invariant 10), never
 * sharing again. Nothing is saved before the completion: an interrupted completion is read back from the
 * channel, as any unanswered send. Past the deadline the wait is a transient failure whose progress keeps
 * the file ids but not the start, so the retry looks again in a wait of its own. Before that failure the
 * message is looked for in the channel's history by its file id (slack-share-history.ts), from when the
 * completion was sent (`sharedAt`, kept across retries): found, its ts is the post's; not found or not
 * readable (no history scope), the failure is today's, saying why. Direct calls without progress check in
 * memory and sleep between checks.
 */
export function createSlackShareStep(
  files: ReturnType<typeof createSlackFiles>,
  findShare: ReturnType<typeof createSlackShareHistory>,
  wait: TProcessingWait | undefined,
) {
  return async function sharedMessage(
    share: TSlackShare,
  ): Promise<TStepResult<{ ts: string; fileIds: string }>> {
    const { account, channel } = share;
    return runToEnd<{ ts: string; fileIds: string }>(share.progress, async (kept) => {
      const saved = kept.saved?.sharedFile ? kept.saved : null;
      let fileId = saved?.sharedFile ?? '';
      let fileIds = saved?.fileIds ?? '';
      let since = waitSince(saved);
      let sinceSaved = Boolean(saved?.waitSince);
      let sharedAt = saved?.sharedAt ?? '';
      if (!fileId) {
        if (!share.media) {
          return {
            kind: 'failed',
            failure: { kind: 'rejected', message: `${NETWORK} got no files to share.` },
          };
        }
        const uploaded = await files.upload(account, share.media);
        if (!uploaded.ok) return { kind: 'failed', failure: uploaded.failure };
        // Slack stamps the message's ts while handling the call: the time before it bounds the history search.
        sharedAt = String(Date.now());
        const shared = await files.complete(account, uploaded.value, channel, share.text, share.threadTs);
        if (!shared.ok) return { kind: 'failed', failure: shared.failure };
        fileId = uploaded.value[0]?.id ?? '';
        fileIds = uploaded.value.map((f) => f.id).join(',');
        since = Date.now();
        // The message exists now: a retry only looks for its ts, it never shares again.
        await kept.save({ sharedFile: fileId, fileIds, sharedAt, waitSince: String(since) });
        sinceSaved = true;
      }
      const found = await files.shareCheck(account, fileId, channel);
      // A failed read keeps the progress: the message exists, the retry asks about the same file.
      if (found.state === 'failed') return { kind: 'failed', failure: found.failure };
      if (found.state === 'ready') return { kind: 'ready', value: { ts: found.ts, fileIds } };
      const next = stillProcessing(
        { network: NETWORK, defaults: SLACK_SHARE_WAIT, wait },
        since,
        'the share of the files',
      );
      const keep = { sharedFile: fileId, fileIds, ...(sharedAt ? { sharedAt } : {}) };
      if (next.kind === 'failed') {
        const inHistory = await findShare(account, {
          fileId,
          channel,
          threadTs: share.threadTs,
          sharedAt: Number(sharedAt) || undefined,
        });
        if (inHistory.state === 'found') return { kind: 'ready', value: { ts: inHistory.ts, fileIds } };
        await kept.save(keep);
        return {
          kind: 'failed',
          failure: { ...next.failure, message: next.failure.message + inHistory.note },
        };
      }
      if (!sinceSaved) await kept.save({ ...keep, waitSince: String(since) });
      return next;
    });
  };
}
