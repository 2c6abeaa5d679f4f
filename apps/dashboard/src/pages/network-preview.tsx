import {
  measureFor,
  planThreadDelivery,
  THREAD_GROUP,
  type TPlannedItem,
  type TPlatform,
  youtubeDescription,
  youtubeTitle,
} from '@sps/core/browser';

/** How each kind of network receives the texts after the first (the API's THREAD_GROUP). */
const HOW: Record<(typeof THREAD_GROUP)[TPlatform], string> = {
  reply_chain: 'a thread: each reply answers the one before',
  comment: 'separate numbered posts',
  native_message: 'separate numbered messages',
  sequential_counter: 'separate numbered posts',
};

function itemLabel(item: TPlannedItem, total: number): string {
  if (total === 1) return 'Post';
  if (item.replyToSegment === null)
    return item.segmentIndex === 0 ? 'First post' : `Post ${item.segmentIndex + 1}`;
  return `Reply to post ${item.replyToSegment + 1}`;
}

function unitOf(unit: string): string {
  return unit === 'weighted characters' ? 'characters' : unit;
}

/** One network: its texts exactly as the publisher sends them (planThreadDelivery), each counted its way. */
function OneNetwork({ platform, texts }: { platform: TPlatform; texts: string[] }) {
  const items = planThreadDelivery(platform, texts);
  return (
    <section className="preview-network" aria-label={`Preview on ${platform}`}>
      <h4>
        {platform}
        {texts.length > 1 && <span className="preview-how"> · {HOW[THREAD_GROUP[platform]]}</span>}
      </h4>
      <ol>
        {items.map((item) => {
          const measure = measureFor(platform, item.text);
          const over = measure.length > measure.max;
          const count = measure.exact
            ? `${measure.length}/${measure.max} ${unitOf(measure.unit)}`
            : `more than ${measure.max} ${unitOf(measure.unit)}`;
          return (
            <li key={item.segmentIndex} className={over ? 'over' : undefined}>
              <span className="preview-label">{itemLabel(item, items.length)}</span>
              {platform === 'youtube' && (
                <span className="preview-title">Title: {youtubeTitle(item.text)}</span>
              )}
              <p className="preview-text">
                {platform === 'youtube' ? youtubeDescription(item.text) : item.text}
              </p>
              <span className="preview-count">
                {count}
                {over ? ' (too long)' : ''}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}

/**
 * The post as each network will show it: where its thread is cut into posts, the numbering some networks get,
 * and each text's length as that network counts it. Same functions as the API's checks and the publisher.
 */
export function NetworkPreview({ platforms, texts }: { platforms: TPlatform[]; texts: string[] }) {
  if (platforms.length === 0) return <p>Choose a network to see the preview.</p>;
  return (
    <div className="preview">
      {platforms.map((p) => (
        <OneNetwork key={p} platform={p} texts={texts} />
      ))}
    </div>
  );
}
