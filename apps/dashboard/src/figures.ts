// The engagement figures as the API names them (GET /v1/posts/{id}/metrics, GET /v1/analytics), and how
// the dashboard labels them. A network that does not report a figure answers null: shown as "—", never 0.

export const FIGURES = [
  'impressions',
  'views',
  'likes',
  'reposts',
  'replies',
  'quotes',
  'bookmarks',
  'clicks',
] as const;
export type TFigure = (typeof FIGURES)[number];
export type TFigures = Record<TFigure, number | null>;

export const FIGURE_LABELS: Record<TFigure, string> = {
  impressions: 'Impressions',
  views: 'Views',
  likes: 'Likes',
  reposts: 'Reposts',
  replies: 'Replies',
  quotes: 'Quotes',
  bookmarks: 'Bookmarks',
  clicks: 'Clicks',
};

/** One collection in a post's history: its figures, or what kept them from being read. */
export type THistoryPoint = (TFigures & { collected_at: string }) | { collected_at: string; error: string };

/**
 * `GET /v1/posts/{id}/metrics?history=true`: per network, its latest figures or what kept them from being
 * read, and every collection (`history`, oldest first).
 */
export interface TPostMetrics {
  post_id: string;
  platforms: Record<
    string,
    | (TFigures & { collected_at: string | null; history?: THistoryPoint[] })
    | { error: string; history?: THistoryPoint[] }
  >;
}

export interface TTopPost extends TFigures {
  post_id: string;
  text: string;
  published_at: string;
  platforms: string[];
  engagement: number;
}

/** `GET /v1/analytics`. */
export interface TAnalyticsView {
  from: string;
  to: string;
  platform: string | null;
  totals: TFigures & { posts: number };
  platforms: Record<string, TFigures & { posts: number }>;
  days: (TFigures & { date: string; posts: number })[];
  top_posts: TTopPost[];
}

export const figureText = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : value.toLocaleString();
