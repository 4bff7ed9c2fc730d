// Reading items back: one zod parse per item at the edge, with errors that name table and key.
import type { z } from 'zod';
import { StoreError, type StoreItemRef } from '../../errors.js';

/** Parses a stored item; a malformed one is a StoreError naming the item and the first bad field. */
export function parseItem<S extends z.ZodType>(schema: S, item: unknown, ref: StoreItemRef): z.output<S> {
  const result = schema.safeParse(item);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  throw new StoreError(ref, 'failed', `malformed item: ${where}${issue?.message ?? 'invalid'}`, {
    cause: result.error,
  });
}

/** Epoch seconds `ttlSeconds` after `nowMs`, for a TTL attribute. */
export function expiresAt(nowMs: number, ttlSeconds: number): number {
  return Math.floor(nowMs / 1000) + ttlSeconds;
}
