/** One finished visitor request as the agent logs it (the request line of its output). */
export interface RequestLog {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}
