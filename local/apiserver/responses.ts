// Writing an answer: JSON with the headers kube-apiserver sends, and any error as its Status object
// (unexpected errors as 500; a 429 with its Retry-After).
import type { ServerResponse } from 'node:http';
import { ApiStatusError, internalError } from './status.js';

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(text);
}

/** Sends `error` as a Status; answers the HTTP status sent. */
export function sendError(res: ServerResponse, error: unknown): number {
  const apiError =
    error instanceof ApiStatusError
      ? error
      : internalError(error instanceof Error ? error.message : String(error));
  const headers: Record<string, string> = {};
  const retryAfter = apiError.status.details?.retryAfterSeconds;
  if (apiError.code === 429 && retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  sendJson(res, apiError.code, apiError.status, headers);
  return apiError.code;
}
