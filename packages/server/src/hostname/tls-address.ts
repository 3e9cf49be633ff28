/** A TLS tunnel's address from its hostname's public HTTPS URL: `tls://host:port`, the port always shown (443 too). */
export function tlsUrl(publicUrl: string): string {
  const url = new URL(publicUrl);
  return `tls://${url.hostname}:${url.port === '' ? '443' : url.port}`;
}
