import type { TNetworkFailure, TPublishProgress } from './connector.js';
import { META_CONTAINER_WAIT, type TContainerStatusSpec } from './graph-api.js';
import { truncateBody } from './http-client.js';
import { stillProcessing, type TStepResult, waitSince } from './processing-step.js';

// Meta's container flow (Instagram, Threads) as resumable steps: containers are made once, their ids kept
// in the segment's progress while Meta processes them, and each call checks their status once.
// https://developers.facebook.com/docs/instagram-platform/content-publishing#troubleshooting
// https://developers.facebook.com/docs/threads/troubleshooting#publishing-does-not-return-a-media-id

type TParams = Record<string, unknown>;

export interface TContainerPlan {
  /** Carousel items, each its own container (none for a single item or a text post). */
  children: TParams[];
  /** The container to publish, given the children's ids. */
  main: (childIds: string[]) => TParams;
}

export interface TContainerSteps {
  spec: TContainerStatusSpec;
  /** Makes one container and answers its id (throws the network's failure). */
  create: (params: TParams) => Promise<string>;
}

/** One status read: FINISHED, still processing, or Meta's reason it will never be (ERROR, EXPIRED). */
async function containerState(
  spec: TContainerStatusSpec,
  id: string,
): Promise<'ready' | 'pending' | { failure: TNetworkFailure }> {
  const body = await spec.http
    .get(encodeURIComponent(id), {
      searchParams: { fields: `${spec.stateField},${spec.detailField}` },
      headers: spec.headers,
    })
    .json<Record<string, unknown>>();
  const state = body[spec.stateField];
  if (state === 'FINISHED') return 'ready';
  if (state === 'ERROR' || state === 'EXPIRED') {
    const detail = body[spec.detailField];
    return {
      failure: {
        kind: 'rejected',
        body: truncateBody(body),
        message: `${spec.network} could not prepare the media (${state}${typeof detail === 'string' && detail !== state ? `: ${detail}` : ''}). Check the media and retry.`,
      },
    };
  }
  return 'pending';
}

const list = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : []);

/**
 * Brings the segment's containers one step further: makes what is not made yet, checks once what is not
 * FINISHED, and answers the id to publish when all are; while Meta processes, it saves the ids and the
 * wait's start and answers `pending`. The progress is cleared before the id is answered: the publish call
 * that follows may post, so an interrupted one is settled by reading the account back, never by resuming.
 * A failed status read or create throws (the caller classifies it).
 */
export async function stepContainers(
  steps: TContainerSteps,
  plan: TContainerPlan,
  progress: TPublishProgress,
): Promise<TStepResult<string>> {
  const saved = progress.saved?.waitSince ? progress.saved : null;
  const since = waitSince(saved);
  const budget = { network: steps.spec.network, defaults: META_CONTAINER_WAIT, wait: steps.spec.wait };
  const finished = new Set(list(saved?.finished));
  let children = list(saved?.children);
  if (children.length !== plan.children.length) {
    children = [];
    for (const params of plan.children) children.push(await steps.create(params));
  }
  const state = () => ({
    waitSince: String(since),
    children: children.join(','),
    finished: [...finished].join(','),
  });
  const end = async (failure: TNetworkFailure): Promise<TStepResult<string>> => {
    if (saved) await progress.save(null);
    return { kind: 'failed', failure };
  };
  for (const id of children) {
    if (finished.has(id)) continue;
    const found = await containerState(steps.spec, id);
    if (typeof found === 'object') return end(found.failure);
    if (found === 'ready') finished.add(id);
  }
  const waitingChild = children.find((id) => !finished.has(id));
  if (waitingChild) {
    const next = stillProcessing(budget, since, `the media container ${waitingChild}`);
    if (next.kind === 'failed') return end(next.failure);
    await progress.save(state());
    return next;
  }
  const main = saved?.container ?? (await steps.create(plan.main(children)));
  const found = await containerState(steps.spec, main);
  if (typeof found === 'object') return end(found.failure);
  if (found === 'pending') {
    const next = stillProcessing(budget, since, `the media container ${main}`);
    if (next.kind === 'failed') return end(next.failure);
    await progress.save({ ...state(), container: main });
    return next;
  }
  if (saved) await progress.save(null);
  return { kind: 'ready', value: main };
}
