// Fault injection for tests and chaos runs of the local stack: requests matching a rule are delayed or
// answered with a 409, a 429 (with Retry-After, as API Priority and Fairness sends it) or a 500; watch
// streams can be cut, or stalled (open, delivering nothing). Faults apply to HTTP requests, and stalls
// also to the in-process watches that pass their Faults (`nlc simulate`'s inProcessWatch); the
// in-process store itself is never faulty.
import type { Verb } from './resources.js';

export interface FaultMatch {
  readonly verb?: Verb | readonly Verb[];
  /** Plural resource name: "nodes", "pods", "leases". */
  readonly resource?: string;
  /** "status" for the status subresource; "" for the main resource only. */
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The identity's user name. */
  readonly user?: string;
}

export type FaultAction =
  /** Holds the request `ms` (real time), and until `until` settles, before serving it. */
  | { readonly kind: 'delay'; readonly ms?: number; readonly until?: Promise<unknown> }
  /** 409 Conflict, as a lost optimistic-lock race answers. */
  | { readonly kind: 'conflict' }
  /** 429 TooManyRequests with a Retry-After header. */
  | { readonly kind: 'tooManyRequests'; readonly retryAfterSeconds?: number }
  /** 500 InternalError. */
  | { readonly kind: 'internalError'; readonly message?: string }
  /**
   * Cuts matching watch streams after `afterEvents` events (0: right after the headers). `reset`
   * destroys the connection (client-node reports an error); `end` closes the stream cleanly (a watch
   * timeout looks like this; client-node's informer re-watches from its last resourceVersion).
   */
  | { readonly kind: 'dropWatch'; readonly afterEvents?: number; readonly mode?: 'reset' | 'end' };

export type FaultRule = FaultAction & {
  readonly match?: FaultMatch;
  /** How many matching requests the rule affects; unlimited when omitted. */
  readonly times?: number;
  /** Matching requests to let through before the rule applies (0 when omitted): "the k-th request". */
  readonly after?: number;
};

export interface RequestInfo {
  readonly verb: Verb;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly user: string;
}

interface ActiveRule {
  readonly rule: FaultRule;
  remaining: number;
  skip: number;
}

export interface OpenWatch {
  readonly info: RequestInfo;
  close(mode: 'reset' | 'end'): void;
}

function matches(match: FaultMatch | undefined, info: RequestInfo): boolean {
  if (match === undefined) return true;
  if (match.verb !== undefined) {
    const verbs: readonly Verb[] = typeof match.verb === 'string' ? [match.verb] : match.verb;
    if (!verbs.includes(info.verb)) return false;
  }
  if (match.resource !== undefined && match.resource !== info.resource) return false;
  if (match.subresource !== undefined && match.subresource !== info.subresource) return false;
  if (match.namespace !== undefined && match.namespace !== info.namespace) return false;
  if (match.name !== undefined && match.name !== info.name) return false;
  if (match.user !== undefined && match.user !== info.user) return false;
  return true;
}

export class Faults {
  private rules: ActiveRule[] = [];
  private readonly watches = new Set<OpenWatch>();
  private stalls: { readonly match: FaultMatch | undefined }[] = [];
  private held = 0;

  /** Adds a rule; returns a function that removes it. */
  inject(rule: FaultRule): () => void {
    const active: ActiveRule = {
      rule,
      remaining: rule.times ?? Number.POSITIVE_INFINITY,
      skip: rule.after ?? 0,
    };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  /** Removes every rule and ends every stall. */
  clear(): void {
    this.rules = [];
    this.stalls = [];
  }

  /** Cuts every open watch stream matching `match` now; returns how many. */
  dropWatches(match?: FaultMatch, mode: 'reset' | 'end' = 'reset'): number {
    const targets = [...this.watches].filter((watch) => matches(match, watch.info));
    for (const watch of targets) watch.close(mode);
    return targets.length;
  }

  /**
   * Stalls the watch streams matching `match` from now until the returned function is called: open
   * ones and ones opened meanwhile stay open and deliver nothing, not even bookmarks, as a stuck stream
   * or a stuck watch cache does. What happens meanwhile is never delivered on those streams, even after
   * the stall ends (they go on with later events); lists, and watches opened after the stall, are
   * served normally, so a client that relists sees everything.
   *
   * @example
   * const end = faults.stallWatches({ resource: 'leases' });
   * // … the lease watches are silent …
   * end();
   */
  stallWatches(match?: FaultMatch): () => void {
    const stall = { match };
    this.stalls.push(stall);
    return () => {
      this.stalls = this.stalls.filter((s) => s !== stall);
    };
  }

  /** @internal Whether a watch stream of this request delivers nothing right now. */
  stalled(info: RequestInfo): boolean {
    return this.stalls.some((stall) => matches(stall.match, info));
  }

  /** @internal The rules that apply to a request, each use counted. */
  take(info: RequestInfo): FaultRule[] {
    const hits: FaultRule[] = [];
    for (const active of this.rules) {
      if (active.remaining <= 0 || !matches(active.rule.match, info)) continue;
      if (active.rule.kind === 'dropWatch' && info.verb !== 'watch') continue;
      if (active.skip > 0) {
        active.skip--;
        continue;
      }
      active.remaining--;
      hits.push(active.rule);
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return hits;
  }

  /** How many requests a delay rule holds right now. */
  pending(): number {
    return this.held;
  }

  /** @internal Waits out a delay rule, counted in {@link pending}. */
  async hold(fault: Extract<FaultAction, { kind: 'delay' }>): Promise<void> {
    this.held++;
    try {
      if (fault.ms !== undefined) await new Promise((resolve) => setTimeout(resolve, fault.ms));
      if (fault.until !== undefined) await fault.until.catch(() => undefined);
    } finally {
      this.held--;
    }
  }

  /** @internal */
  trackWatch(watch: OpenWatch): () => void {
    this.watches.add(watch);
    return () => this.watches.delete(watch);
  }
}
