// One Kubernetes API call as the cluster adapter makes it (cluster.ts): timeout and retries
// (resilientHttp.ts), and a failure returned as a value whose message names what was being done to which
// object, with the V1Status the API server sent.
import {
  ApiException,
  setHeaderOptions,
  type ConfigurationOptions,
  type CoreV1Api,
  type PatchStrategy,
} from '@kubernetes/client-node';
import type { FailureReason, WriteResult } from '../../domain/effects.js';
import type { Millis } from '../../domain/types.js';
import { ClusterTransportError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Mapped } from './mapping.js';
import { resilientHttpLibrary, type HttpBehaviour } from './resilientHttp.js';
import type { Backoff } from './retryOnConflict.js';

export type Failure = Extract<WriteResult, { readonly ok: false }>;
export type Outcome<T> = { readonly ok: true; readonly value: T } | Failure;

export const OK: WriteResult = Object.freeze({ ok: true });

export function fail(reason: FailureReason, message: string): Failure {
  return { ok: false, reason, message };
}

export function quote(name: string): string {
  return JSON.stringify(name);
}

// The V1Status a Kubernetes API error carries in its body, as far as messages need it.
function statusDetail(error: ApiException<unknown>): string {
  let body: unknown = error.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // A non-JSON body (a proxy's HTML page): shown as text below.
    }
  }
  const status =
    typeof body === 'object' && body !== null ? (body as { reason?: unknown; message?: unknown }) : {};
  const reason = typeof status.reason === 'string' && status.reason !== '' ? ` ${status.reason}` : '';
  const message =
    typeof status.message === 'string' && status.message !== ''
      ? status.message
      : typeof body === 'string' && body !== ''
        ? body.slice(0, 200)
        : 'no details';
  return `HTTP ${error.code}${reason}: ${message}`;
}

/** A thrown client or transport error as a result value naming what was being done to which object. */
export function toFailure(action: string, error: unknown): Failure {
  if (error instanceof ApiException) {
    const code = (error as ApiException<unknown>).code;
    const reason: FailureReason = code === 404 ? 'NotFound' : code === 409 ? 'Conflict' : 'Failed';
    return fail(reason, `${action}: ${statusDetail(error as ApiException<unknown>)}`);
  }
  if (error instanceof ClusterTransportError) return fail('Failed', `${action}: ${error.message}`);
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return fail('Failed', `${action}: ${detail}`);
}

export function fromMapped<T>(mapped: Mapped<T>): Outcome<T> {
  return mapped.ok ? mapped : fail('Failed', mapped.message);
}

/** One API call with timeout and retries; its failure as a value. */
export type ApiCall = <T>(
  action: string,
  signal: AbortSignal | undefined,
  request: (options: ConfigurationOptions) => Promise<T>,
  patch?: PatchStrategy,
) => Promise<Outcome<T>>;

/** The API calls of one adapter, over its HTTP behaviour. */
export function createApiCall(behaviour: HttpBehaviour): ApiCall {
  return async (action, signal, request, patch) => {
    const base: ConfigurationOptions = { httpApi: resilientHttpLibrary(behaviour, signal) };
    try {
      return {
        ok: true,
        value: await request(patch === undefined ? base : setHeaderOptions('Content-Type', patch, base)),
      };
    } catch (error) {
      return toFailure(action, error);
    }
  };
}

/** What the node and pod writes share of one adapter (nodeWrites.ts, podWrites.ts). */
export interface ApiContext {
  readonly core: CoreV1Api;
  readonly call: ApiCall;
  /** Stamps TimeAdded of taints given without one and pod condition transitions. */
  readonly clock: Clock;
  /** Waits between the taint read-modify-write's tries. */
  readonly sleep: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  /** Backoff of the taint read-modify-write on 409. */
  readonly taintBackoff: Backoff;
}
