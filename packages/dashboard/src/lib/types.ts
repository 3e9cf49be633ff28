// Wire shapes of the REST API the pages read (the OpenAPI document at /v1/openapi.json is the
// reference; these list only what the dashboard uses).

export type Plan = 'free' | 'pro';

export interface Account {
  id: string;
  email: string;
  name: string;
  plan: Plan;
}

export type SessionState =
  | { signedIn: false; signup: 'open' | 'closed' }
  | { signedIn: true; signup: 'open' | 'closed'; account: Account; csrfToken: string; hasPassword: boolean };

export interface SignedIn {
  account: Account;
  csrfToken: string;
}

interface Amounts {
  domains: number;
  tunnels: number;
  bandwidthBytes: number;
}

export interface Usage {
  plan: Plan;
  limits: Amounts;
  used: Amounts;
}

export interface DailyUsage {
  date: string;
  bandwidthBytes: number;
  requests: number;
  peakTunnels: number;
}

export interface Tunnel {
  id: string;
  status: 'online' | 'offline';
  url: string;
  host: string;
  local: string;
  agentVersion: string;
  agentIp: string;
  createdAt: string;
  updatedAt: string;
}

export interface CapturedRequest {
  id: string;
  tunnelId: string | null;
  timestamp: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  bytes: number;
  ip: string;
  userAgent: string;
  proto: string;
  host: string;
}

export interface RequestPage {
  requests: CapturedRequest[];
  nextCursor: string | null;
}

export interface Key {
  id: string;
  description: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedKey extends Key {
  token: string;
}

export interface Domain {
  id: string;
  host: string;
  state: 'pending' | 'verified';
  verified: boolean;
  txtRecord: { type: 'TXT'; name: string; value: string };
  target: { cname: string | null; a: string[] } | null;
  verifiedAt: string | null;
  createdAt: string;
  certificate: { state: 'none' | 'pending' | 'issued' | 'failed'; error: string | null; expiresAt: string | null };
}

export interface DomainCheck extends Domain {
  verification: { ok: boolean; code: string | null; message: string };
  routing: { pointsAtEdge: boolean; message: string } | null;
}
