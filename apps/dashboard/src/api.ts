// The dashboard's one way to the server: same-origin JSON calls to /dashboard/api, the session cookie sent by
// the browser, the CSRF token added to every state-changing call. Errors keep the API's words and its `fix`.

const BASE = '/dashboard/api';
let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** The session's CSRF token, for the calls made without `api` (uploads with progress). */
export function currentCsrfToken(): string {
  return csrfToken;
}

export interface TApiIssue {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fix: string | undefined,
    readonly issues: TApiIssue[],
    readonly field: string | undefined,
  ) {
    super(message);
  }

  /** The message for one form field, if the API named it. */
  forField(field: string): string | undefined {
    const issue = this.issues.find((i) => i.field === field || i.field.startsWith(`${field}.`));
    if (issue) return `${issue.message}${this.fix ? ` ${this.fix}` : ''}`;
    if (this.field === field) return `${this.message}${this.fix ? `. ${this.fix}` : ''}`;
    return undefined;
  }

  /** What a person reads: the message, and what to do about it. */
  get readable(): string {
    return this.fix ? `${this.message}. ${this.fix}` : this.message;
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const details = (data['details'] ?? {}) as { fix?: string; issues?: TApiIssue[]; field?: string };
    // Variant B errors are {error, code, details}; Variant A's (the /a routes) are {error, fix?, details?}.
    const fix = (data['fix'] as string | undefined) ?? details.fix;
    throw new ApiError(
      res.status,
      String(data['error'] ?? `HTTP ${res.status}`),
      fix,
      details.issues ?? [],
      details.field,
    );
  }
  return data as T;
}

export interface TAccountView {
  id: string;
  name: string;
  email: string;
  plan: string;
}

export interface TSessionView {
  account: TAccountView;
  csrf_token: string;
}

export interface TPostView {
  id: string;
  content: string;
  platforms: string[];
  status: string;
  scheduled_for: string | null;
  published_at: string | null;
  created_at: string;
  media?: {
    images: { url: string; alt_text?: string }[];
    video: { url: string; thumbnail_url?: string } | null;
  } | null;
  segments?: { content: string; media_urls?: string[] }[] | null;
  first_comment?: string;
  platform_results?: Record<string, { success: boolean; post_id?: string; url?: string; error?: string }>;
}

export interface TSocialAccountView {
  id: string;
  platform: string;
  account_name: string;
  external_id: string | null;
  instance_url: string | null;
  is_active: boolean;
  needs_reauth: boolean;
  token_expires_at: string | null;
  /** The scopes the network granted; null when unknown (connected with a token from outside). */
  permissions: string[] | null;
  /** Scopes the service asks for that the grant lacks. */
  reconnect_to_grant: string[];
  connected_at: string;
  disconnected_at: string | null;
}

/** How the server connects a network (`GET /dashboard/api/connect-options`). */
export type TConnectOption =
  | { platform: string; method: 'credentials'; fields: { name: string; required: boolean }[] }
  | {
      platform: string;
      method: 'authorization_page';
      needs: 'instance' | 'page_id' | 'organization' | null;
      missing: string[];
      error?: string;
    };
