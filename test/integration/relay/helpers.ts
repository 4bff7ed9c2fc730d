// Shared set-up for the relay's integration tests: the API simulator over HTTPS on a virtual clock, the
// relay talking to it through @kubernetes/client-node, and a recording EventSink whose faults the tests
// choose. Time is virtual: the relay's timers (digests, flushes, retries, leader election) fire only
// when a test advances the VirtualScheduler; watch events arrive over real sockets, so tests wait for
// them by polling with a generous bound.
import type { V1Lease } from '@kubernetes/client-node';
import {
  type ApiServerHandle,
  type Identity,
  type StartApiServerOptions,
  startApiServer,
  type Wire,
} from '../../../local/apiserver/index.js';
import { formatMicroTime, formatTime } from '../../../local/apiserver/timestamps.js';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
  type HeartbeatDigest,
  type NodeChanged,
  type OutgoingEvent,
  type PodChanged,
} from '../../../shared/events.js';
import type {
  EventSink,
  PublishFailure,
  PublishOptions,
  PublishResult,
} from '../../../shared/ports/eventSink.js';
import type { RelayLogger } from '../../../relay/logger.js';
import { RelayMetrics } from '../../../relay/metrics.js';
import { createRelay, type Relay, type RelayOptions } from '../../../relay/relay.js';

export const t0 = Date.parse('2026-01-01T00:00:00Z');
export const NodeLeaseNamespace = 'kube-node-lease';
export const RelayNamespace = 'nlc-system';

/** A fault the recording sink applies to one event: the error code to answer with, or undefined. */
export type SinkFault = (event: OutgoingEvent) => { code: string; permanent?: boolean } | undefined;

/** An in-memory EventSink: records every call and every accepted event, fails what it is told to. */
export class RecordingSink implements EventSink {
  /** Every publish call, with what it was given. */
  readonly calls: OutgoingEvent[][] = [];
  /** Every event accepted, in order, with the virtual time it was accepted at. */
  readonly accepted: { readonly event: OutgoingEvent; readonly at: EpochMillis }[] = [];
  /** While true, every event fails with a retryable error (a bus outage). */
  down = false;
  private readonly faults: { fault: SinkFault; times: number }[] = [];

  constructor(private readonly clock: { now(): EpochMillis }) {}

  /** The next `times` events matching `fault` fail with its code. */
  failNext(fault: SinkFault, times = 1): void {
    this.faults.push({ fault, times });
  }

  publish(events: readonly OutgoingEvent[], options: PublishOptions = {}): Promise<PublishResult> {
    this.calls.push([...events]);
    const failed: PublishFailure[] = [];
    events.forEach((event, index) => {
      if (options.signal?.aborted === true) {
        failed.push({ index, event, code: 'Aborted', message: 'aborted', permanent: false });
        return;
      }
      if (this.down) {
        failed.push({ index, event, code: 'ServiceUnavailable', message: 'bus down', permanent: false });
        return;
      }
      for (const entry of this.faults) {
        if (entry.times <= 0) continue;
        const hit = entry.fault(event);
        if (hit === undefined) continue;
        entry.times--;
        failed.push({ index, event, code: hit.code, message: hit.code, permanent: hit.permanent === true });
        return;
      }
      this.accepted.push({ event, at: this.clock.now() });
    });
    return Promise.resolve({ sent: events.length - failed.length, failed, retried: 0, requests: 1 });
  }

  nodeChanges(): NodeChanged[] {
    return this.accepted.flatMap(({ event }) =>
      event.detailType === NodeChangedDetailType ? [event.detail] : [],
    );
  }

  podChanges(): PodChanged[] {
    return this.accepted.flatMap(({ event }) =>
      event.detailType === PodChangedDetailType ? [event.detail] : [],
    );
  }

  digests(): HeartbeatDigest[] {
    return this.accepted.flatMap(({ event }) =>
      event.detailType === HeartbeatDigestDetailType ? [event.detail] : [],
    );
  }
}

/** A logger that keeps what was logged, for assertions on loud logs. */
export class MemoryLogger implements RelayLogger {
  readonly lines: { level: string; message: string; fields: Readonly<Record<string, unknown>> }[] = [];
  debug = this.log('debug');
  info = this.log('info');
  warn = this.log('warn');
  error = this.log('error');

  private log(level: string) {
    return (message: string, fields: Readonly<Record<string, unknown>> = {}) => {
      this.lines.push({ level, message, fields });
    };
  }
}

export interface Sim {
  readonly api: ApiServerHandle;
  readonly scheduler: VirtualScheduler;
}

export async function startSim(options: StartApiServerOptions = {}): Promise<Sim> {
  const scheduler = new VirtualScheduler(t0);
  const api = await startApiServer({ clock: scheduler, ...options });
  api.store.namespaces.create({ metadata: { name: RelayNamespace } });
  return { api, scheduler };
}

export interface TestRelay {
  readonly relay: Relay;
  readonly sink: RecordingSink;
  readonly logger: MemoryLogger;
}

/** A relay against the simulator (a single always-leading replica unless leaderElection is given). */
export function createTestRelay(
  sim: Sim,
  overrides: Partial<RelayOptions> & { token?: string } = {},
): TestRelay {
  const sink = new RecordingSink(sim.scheduler);
  const logger = new MemoryLogger();
  const { token, ...rest } = overrides;
  const relay = createRelay({
    kubeConfig: sim.api.kubeConfig(token),
    cluster: 'test',
    sink,
    scheduler: sim.scheduler,
    nodeMonitorPeriod: 5_000,
    relayId: 'relay-0',
    leaderElection: false,
    logger,
    metrics: new RelayMetrics(),
    // Deterministic jitter: backoffs at the middle of their range.
    random: () => 0.5,
    ...rest,
  });
  return { relay, sink, logger };
}

/**
 * Waits for the relay's first lists, and for every informer to watch, without firing any timer, so a
 * test that starts at t0 keeps the relay's first digest (due at t0) for after the sync.
 */
export async function waitForSync(relay: Relay, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!relay.synced() || !relay.status().informers.every((i) => i.watching)) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the informers to sync');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Polls `condition` in real time (watch events travel over sockets), firing the relay's due timers at
 * the current virtual instant between polls. Fails after `timeoutMs` naming what it waited for.
 */
export async function waitFor(
  sim: Sim,
  condition: () => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sim.scheduler.advance(0);
    if (condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Waits until every informer of the relay has seen every write so far: a BOOKMARK at the store's
 * current resourceVersion goes to each watch, after the events before it on the same stream.
 */
export async function waitForCatchUp(sim: Sim, relay: Relay): Promise<void> {
  const target = Number(sim.api.store.resourceVersion);
  await waitFor(sim, () => relay.status().informers.every((i) => i.watching), 'the relay to watch');
  sim.api.store.sendBookmarks();
  await waitFor(
    sim,
    () => relay.status().informers.every((i) => Number(i.resourceVersion || '0') >= target),
    `the relay to observe resourceVersion ${target}`,
  );
}

/** Advances virtual time in steps, so timers scheduled by callbacks fire within the window too. */
export async function advance(sim: Sim, ms: number, step = 1_000): Promise<void> {
  for (let left = ms; left > 0; left -= step) await sim.scheduler.advance(Math.min(step, left));
}

// ---------------------------------------------------------------------------------------------------
// Objects

export interface NodeSpec {
  readonly zone?: string;
  readonly ready?: 'True' | 'False' | 'Unknown';
  readonly heartbeat?: EpochMillis;
  readonly images?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
}

/** Creates a node with a Ready condition (as its kubelet would post it) and its node Lease. */
export function createNode(sim: Sim, name: string, spec: NodeSpec = {}): void {
  const { store } = sim.api;
  const now = sim.scheduler.now();
  store.nodes.create({
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'topology.kubernetes.io/zone': spec.zone ?? 'zone-a',
        ...spec.labels,
      },
    },
  });
  setReady(sim, name, spec.ready ?? 'True', spec.heartbeat ?? now, spec.images);
  store.leases.create({
    metadata: { name, namespace: NodeLeaseNamespace },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(now) },
  });
}

/** Posts the node's Ready condition with this heartbeat (a kubelet status update). */
export function setReady(
  sim: Sim,
  name: string,
  status: 'True' | 'False' | 'Unknown',
  heartbeat: EpochMillis,
  images?: readonly string[],
): void {
  sim.api.store.nodes.patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status,
            reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
            lastHeartbeatTime: formatTime(heartbeat),
            lastTransitionTime: formatTime(t0),
          },
        ],
        ...(images !== undefined && { images: [{ names: [...images], sizeBytes: 1000 }] }),
      },
    },
    { type: 'strategic', subresource: 'status' },
  );
}

/** A kubelet's lease renewal at `at`. */
export function renewLease(sim: Sim, name: string, at: EpochMillis): void {
  sim.api.store.leases.patch(
    name,
    { spec: { renewTime: formatMicroTime(at) } },
    { type: 'merge', namespace: NodeLeaseNamespace },
  );
}

export function createPod(
  sim: Sim,
  name: string,
  nodeName: string | undefined,
  tolerations: readonly { key: string; operator: string; effect: string; tolerationSeconds?: number }[] = [],
): void {
  sim.api.store.pods.create({
    metadata: { name, namespace: 'default' },
    spec: {
      ...(nodeName !== undefined && { nodeName }),
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
      tolerations: [...tolerations],
    },
  });
}

/** An identity whose token the relay uses, so faults can target one replica (`match.user`). */
export function identity(name: string): Identity {
  return { name, token: `token-${name}` };
}

/** The relay's leader Lease as the API simulator stores it. */
export function relayLease(sim: Sim, name = 'nlc-relay'): Wire<V1Lease> {
  return sim.api.store.leases.get(name, { namespace: RelayNamespace });
}

/** Starts a replica and lets its first election try run. */
export async function startReplica(t: TestRelay): Promise<void> {
  await t.relay.start();
  await waitForSync(t.relay);
}

/**
 * Advances in 500 ms steps, renewing node-a's and node-b's Leases every 10 s as kubelets do, calling
 * `each` after every step.
 */
export async function runRenewing(sim: Sim, ms: number, each: () => void = () => undefined): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 500) {
    await sim.scheduler.advance(500);
    if (elapsed % 10_000 === 0) {
      for (const node of ['node-a', 'node-b']) renewLease(sim, node, sim.scheduler.now());
    }
    each();
  }
}
