import type { LoggerOptions } from 'pino';

/**
 * Fields the server's logger replaces with `[redacted]` wherever they appear at the top level or
 * one level down: agent tokens, session cookies, CSRF tokens and passwords. Nothing should log
 * them in the first place; this is the net under that rule.
 */
export const LOG_REDACTION: NonNullable<LoggerOptions['redact']> = {
  paths: [
    'authorization',
    '*.authorization',
    'headers.authorization',
    'req.headers.authorization',
    'cookie',
    '*.cookie',
    'headers.cookie',
    'req.headers.cookie',
    'headers["set-cookie"]',
    '*.headers["set-cookie"]',
    'headers["x-csrf-token"]',
    '*.headers["x-csrf-token"]',
    'token',
    '*.token',
    'password',
    '*.password',
    'currentPassword',
    '*.currentPassword',
    'newPassword',
    '*.newPassword',
    'csrfToken',
    '*.csrfToken',
  ],
  censor: '[redacted]',
};
