/** An API call answered with an error status; `body` is the parsed JSON error. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`API answered ${status}: ${JSON.stringify(body)}`);
  }
}

/** Typed REST client for the control plane (`/v1/...`). Later issues extend it route by route. */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** GET /v1/me */
  me(): Promise<{ id: string; email: string; name: string; plan: string }> {
    return this.call('GET', '/v1/me');
  }

  /** GET /v1/tunnels */
  tunnels(): Promise<{ tunnels: Array<{ id: string; status: string; url: string; hostname: string }> }> {
    return this.call('GET', '/v1/tunnels');
  }

  /** DELETE /v1/tunnels/:id */
  deleteTunnel(id: string): Promise<unknown> {
    return this.call('DELETE', `/v1/tunnels/${encodeURIComponent(id)}`);
  }

  /** Any call; resolves with the parsed JSON body, rejects with ApiError on a non-2xx status. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!response.ok) throw new ApiError(response.status, parsed);
    return parsed as T;
  }
}
