/** The admin API as the dashboard calls it: same origin, Bearer admin token. */

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }

  /** The token was refused (401) or the admin API is off (403): no data may be shown. */
  get refused(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export class AdminApi {
  constructor(private readonly token: string) {}

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
    const search = params.toString();
    return this.request<T>('GET', search ? `${path}?${search}` : path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiFailure(0, 'network', `the supervisor did not answer (${error instanceof Error ? error.message : String(error)})`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // A proxy's HTML error page: the status alone tells what happened.
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new ApiFailure(response.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${response.status}`);
    }
    return parsed as T;
  }
}
