// The HTTP behaviour of every Kubernetes API call: a timeout per attempt, the caller's abort signal, and
// retries of throttling (429, honouring Retry-After), server errors (5xx), timeouts and broken
// connections with capped exponential backoff and jitter. Other 4xx answers are never retried here (409
// is retried one level up, by RetryOnConflict, only where upstream does it).
//
// How: @kubernetes/client-node 1.4.0 sends every request through a pluggable `HttpLibrary` (its default
// is node-fetch) and accepts one per call in the request options (`{ httpApi }`). This module wraps the
// default library; node-fetch honours `RequestContext.setSignal`, so the per-attempt timeout is
// `AbortSignal.timeout` joined with the caller's signal by `AbortSignal.any`.
//
// Retrying non-idempotent requests is safe here because of how the adapter writes: patches carry a
// resourceVersion precondition (a repeat answers 409) or set fixed values, a repeated DELETE answers 404
// or the same terminating pod, and Event names are unique (a repeat answers 409 AlreadyExists).
import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { setTimeout as sleepTimer } from 'node:timers/promises';
import {
  IsomorphicFetchHttpLibrary,
  wrapHttpLibrary,
  type HttpLibrary,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { newTokenBucketRateLimiter, reserve, type RateLimiter } from '../../domain/tokenBucket.js';
import type { EpochMillis, Millis } from '../../domain/types.js';
import { ClusterTransportError } from '../../errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first one included (1 = never retry). */
  readonly maxAttempts: number;
  /** Backoff before the first retry; doubles per retry. */
  readonly baseDelayMs: Millis;
  /** Backoff cap. */
  readonly maxDelayMs: Millis;
  /**
   * A Retry-After longer than this is not waited for: the call fails at once, and the controller's next
   * pass retries (a Lambda invocation should not sleep through its budget).
   */
  readonly maxRetryAfterMs: Millis;
}

/** Four attempts over about 1.4 s of backoff; Retry-After up to 10 s is honoured. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 10_000,
});

/** One retry about to happen, for logs and metrics. */
export interface RetryNotice {
  readonly request: string;
  /** The attempt that failed (1-based). */
  readonly attempt: number;
  readonly delayMs: Millis;
  /** The HTTP status that caused it, or the transport failure. */
  readonly cause: number | 'timeout' | 'network';
}

export interface HttpBehaviour {
  /** Timeout of one attempt: sending the request and reading the whole response. */
  readonly requestTimeoutMs: Millis;
  readonly retry: RetryPolicy;
  /** Waits between attempts; rejects when `signal` aborts. Injected so tests do not wait. */
  readonly sleep: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1): the jitter source. */
  readonly random: () => number;
  /** Wall clock, to read a Retry-After given as an HTTP date. */
  readonly now: () => EpochMillis;
  readonly onRetry?: (notice: RetryNotice) => void;
  /** Shares keep-alive connections between calls (see createAgentPool). */
  readonly agents?: AgentPool;
  /** Paces every attempt, retries included (client-go's rest.Config QPS/Burst); none: unpaced. */
  readonly throttle?: RequestThrottle;
  /**
   * Sends one attempt; client-node's node-fetch library by default. `nlc simulate` passes one that
   * serves the request in process (local/simulate/transport.ts), so calls need no socket.
   */
  readonly transport?: HttpLibrary;
}

/**
 * client-go's client-side rate limiter (flowcontrol.NewTokenBucketRateLimiter(QPS, Burst), whose Wait
 * every request makes before each attempt): one per adapter, shared by all its calls, so a function
 * never sends its API server more than `burst` requests at once and `qps` a second after that.
 */
export interface RequestThrottle {
  /** Waits for this attempt's turn; rejects when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void>;
  /** Attempts paced so far, and the time they spent waiting for their turn. */
  readonly stats: () => { readonly requests: number; readonly waitedMs: Millis };
}

/**
 * A RequestThrottle over the token bucket of shared/domain/tokenBucket.ts, on `now` and `sleep`.
 *
 * @example
 * const throttle = createRequestThrottle({ qps: 20, burst: 30, now: Date.now, sleep: abortableSleep });
 * await throttle.wait(signal); // immediate for the first 30, then 50 ms apart
 */
export function createRequestThrottle(options: {
  readonly qps: number;
  readonly burst: number;
  readonly now: () => EpochMillis;
  readonly sleep: (ms: Millis, signal?: AbortSignal) => Promise<void>;
}): RequestThrottle {
  let limiter: RateLimiter = newTokenBucketRateLimiter(options.qps, options.burst, options.now());
  let requests = 0;
  let waitedMs = 0;
  return {
    async wait(signal) {
      const turn = reserve(limiter, options.now());
      limiter = turn.limiter;
      requests++;
      if (turn.waitMs <= 0) return;
      // qps > 0 is validated (kubeApiQps), so every wait is finite; a bad caller fails loudly.
      if (!Number.isFinite(turn.waitMs)) throw new RangeError('request throttle: a qps of 0 never admits');
      waitedMs += turn.waitMs;
      await options.sleep(turn.waitMs, signal);
    },
    stats: () => ({ requests, waitedMs }),
  };
}

/** Keep-alive agents shared by the calls of one adapter. */
export interface AgentPool {
  /** The pooled agent standing in for the one client-node made for this request. */
  reuse(agent: HttpAgent | HttpsAgent | undefined): HttpAgent | HttpsAgent | undefined;
}

// Agents for superseded TLS settings (a rotated client certificate) are closed beyond this many.
const MAX_POOLED_AGENTS = 4;

function tlsKey(options: HttpsAgent['options']): string {
  const text = (value: unknown): unknown =>
    Buffer.isBuffer(value) ? value.toString('base64') : Array.isArray(value) ? value.map(text) : value;
  const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername, ciphers } = options;
  const material = JSON.stringify(
    [ca, cert, key, pfx, passphrase, rejectUnauthorized, servername, ciphers].map(text),
  );
  return createHash('sha256').update(material).digest('hex');
}

/**
 * client-node 1.4.0 builds a new http(s).Agent, without keep-alive, for every request
 * (KubeConfig.applySecurityAuthentication), so each call would pay a new TCP and TLS handshake. The pool
 * swaps it for a keep-alive agent with the same TLS settings, shared by all calls with those settings.
 * Proxy agents are left alone. Idle pooled sockets are unref'd by Node, so they keep no process alive.
 */
export function createAgentPool(): AgentPool {
  const pool = new Map<string, HttpAgent | HttpsAgent>();
  const pooled = (key: string, make: () => HttpAgent | HttpsAgent) => {
    let agent = pool.get(key);
    if (agent === undefined) {
      agent = make();
      pool.set(key, agent);
      for (const [oldKey, old] of pool) {
        if (pool.size <= MAX_POOLED_AGENTS) break;
        pool.delete(oldKey);
        old.destroy();
      }
    }
    return agent;
  };
  return {
    reuse(agent) {
      if (agent?.constructor === HttpsAgent) {
        const { options } = agent;
        return pooled(`https:${tlsKey(options)}`, () => new HttpsAgent({ ...options, keepAlive: true }));
      }
      if (agent?.constructor === HttpAgent) return pooled('http', () => new HttpAgent({ keepAlive: true }));
      return agent;
    },
  };
}

/** The default sleep: a timer that an abort signal cancels. */
export const abortableSleep = (ms: Millis, signal?: AbortSignal): Promise<void> =>
  sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

/** 429 (throttled) and every 5xx are worth another attempt; other answers are final. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * The wait a Retry-After header asks for: delta-seconds or an HTTP date (RFC 9110 §10.2.3). Undefined
 * when absent or unreadable; never negative.
 *
 * @example
 * parseRetryAfter('3', now); // 3000
 */
export function parseRetryAfter(value: string | undefined, now: EpochMillis): Millis | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates name the day and month ("Wed, 01 May 2024 10:00:05 GMT"); Date.parse alone would also
  // take "-1" as a year.
  const date = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Capped exponential backoff with "equal jitter": half of the capped delay is fixed, half random, so
 * concurrent callers spread out but none retries immediately.
 *
 * @example
 * retryDelay(1, DEFAULT_RETRY_POLICY, () => 0); // 100 (half of 200)
 */
export function retryDelay(retry: number, policy: RetryPolicy, random: () => number): Millis {
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(capped / 2 + (random() * capped) / 2);
}

function describe(request: RequestContext): string {
  const url = new URL(request.getUrl());
  return `${request.getHttpMethod()} ${url.pathname}`;
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

const base = new IsomorphicFetchHttpLibrary();

/**
 * The HttpLibrary for one API call: per-attempt timeout, caller signal, retries. Create one per call
 * (it carries the call's signal) and pass it as `{ httpApi }` in the request options.
 */
export function resilientHttpLibrary(behaviour: HttpBehaviour, signal?: AbortSignal): HttpLibrary {
  const { retry, requestTimeoutMs } = behaviour;
  const transport = behaviour.transport ?? base;
  // A function, not a narrowed property: the signal can abort while we await.
  const aborted = (): boolean => signal?.aborted === true;
  const send = async (request: RequestContext): Promise<ResponseContext> => {
    const what = describe(request);
    const agent = behaviour.agents?.reuse(request.getAgent());
    if (agent !== undefined) request.setAgent(agent);
    for (let attempt = 1; ; attempt++) {
      if (aborted()) throw new ClusterTransportError('aborted', what, attempt - 1, 'aborted by the caller');
      if (behaviour.throttle !== undefined) {
        try {
          await behaviour.throttle.wait(signal);
        } catch (error) {
          throw new ClusterTransportError(
            'aborted',
            what,
            attempt - 1,
            'aborted by the caller while throttled',
            {
              cause: error,
            },
          );
        }
      }
      const timeout = AbortSignal.timeout(requestTimeoutMs);
      request.setSignal(signal === undefined ? timeout : AbortSignal.any([signal, timeout]));
      let cause: RetryNotice['cause'];
      let delayMs: Millis | undefined;
      try {
        const response = await transport.send(request).toPromise();
        if (!isRetryableStatus(response.httpStatusCode) || attempt >= retry.maxAttempts) return response;
        const retryAfter = parseRetryAfter(response.headers['retry-after'], behaviour.now());
        if (retryAfter !== undefined && retryAfter > retry.maxRetryAfterMs) return response;
        // Drain the answer we are discarding so its socket is released.
        await response.body.text().catch(() => undefined);
        cause = response.httpStatusCode;
        delayMs = retryAfter;
      } catch (error) {
        if (aborted()) {
          throw new ClusterTransportError('aborted', what, attempt, 'aborted by the caller', {
            cause: error,
          });
        }
        let failure: ClusterTransportError;
        if (timeout.aborted && isAbortError(error)) {
          cause = 'timeout';
          failure = new ClusterTransportError(
            'timeout',
            what,
            attempt,
            `no response within ${requestTimeoutMs} ms`,
            {
              cause: error,
            },
          );
        } else if (error instanceof Error && error.name === 'FetchError') {
          cause = 'network';
          failure = new ClusterTransportError('network', what, attempt, error.message, { cause: error });
        } else {
          throw error;
        }
        if (attempt >= retry.maxAttempts) throw failure;
      }
      const wait = delayMs ?? retryDelay(attempt, retry, behaviour.random);
      behaviour.onRetry?.({ request: what, attempt, delayMs: wait, cause });
      try {
        await behaviour.sleep(wait, signal);
      } catch (error) {
        throw new ClusterTransportError('aborted', what, attempt, 'aborted by the caller while backing off', {
          cause: error,
        });
      }
    }
  };
  return wrapHttpLibrary({ send });
}
