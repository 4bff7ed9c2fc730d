// Shared set-up for the kubelet fleet tests: the API simulator's in-process store and the fleet on one
// virtual scheduler, and a recorder of every node, lease and pod change the store commits.
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import {
  type ApiStatusError,
  type ApiStore,
  type Wire,
  createApiStore,
} from '../../../local/apiserver/index.js';
import { KubeletFleet, type KubeletFleetOptions } from '../../../local/kubelet/index.js';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import { Priority } from '../../../shared/ports/scheduler.js';

export const t0 = Date.parse('2026-01-01T00:00:00Z');
export const seconds = (s: number) => t0 + s * 1000;

export interface RecordedEvent {
  /** Seconds since t0 when the store committed it. */
  readonly t: number;
  readonly kind: 'Node' | 'Lease' | 'Pod';
  readonly type: string;
  /** name, or namespace/name for pods. */
  readonly name: string;
  readonly object: Wire<V1Node> | Wire<V1Lease> | Wire<V1Pod>;
}

export function recordEvents(store: ApiStore, scheduler: VirtualScheduler) {
  const events: RecordedEvent[] = [];
  const from = store.resourceVersion;
  const push =
    (kind: RecordedEvent['kind']) =>
    (event: { type: string; object: Wire<V1Node> | Wire<V1Lease> | Wire<V1Pod> }) => {
      const meta = event.object.metadata;
      const name = kind === 'Pod' ? `${meta?.namespace ?? ''}/${meta?.name ?? ''}` : (meta?.name ?? '');
      events.push({ t: (scheduler.now() - t0) / 1000, kind, type: event.type, name, object: event.object });
    };
  const watches = [
    store.nodes.watch({ resourceVersion: from }, push('Node')),
    store.leases.watch({ resourceVersion: from, namespace: 'kube-node-lease' }, push('Lease')),
    store.pods.watch({ resourceVersion: from }, push('Pod')),
  ];
  return {
    events,
    stop: () => {
      for (const watch of watches) watch.stop();
    },
    of: (kind: RecordedEvent['kind'], name: string) =>
      events.filter((e) => e.kind === kind && e.name === name),
  };
}

export interface Simulation {
  readonly scheduler: VirtualScheduler;
  readonly store: ApiStore;
  readonly fleet: KubeletFleet;
  readonly recorder: ReturnType<typeof recordEvents>;
  readonly apiErrors: string[];
  /** Runs `fn` at t0 + s seconds as a scenario action (before the kubelets' ticks at that instant). */
  at(s: number, fn: () => void): void;
  runUntil(s: number): Promise<void>;
  close(): void;
}

export function simulation(
  options: Partial<Omit<KubeletFleetOptions, 'store' | 'scheduler'>> = {},
): Simulation {
  const scheduler = new VirtualScheduler(t0);
  const store = createApiStore({ clock: scheduler, seed: 7 });
  const apiErrors: string[] = [];
  const fleet = new KubeletFleet({
    store,
    scheduler,
    onApiError: (error: ApiStatusError, where) =>
      apiErrors.push(`${where.node} ${where.action}: ${error.message}`),
    ...options,
  });
  const recorder = recordEvents(store, scheduler);
  return {
    scheduler,
    store,
    fleet,
    recorder,
    apiErrors,
    at: (s, fn) => {
      scheduler.at(seconds(s), Priority.ScenarioAction, fn);
    },
    runUntil: (s) => scheduler.runUntil(seconds(s)),
    close: () => {
      fleet.close();
      recorder.stop();
    },
  };
}

/** Conditions without lastHeartbeatTime: what stays equal across a heartbeat-only post. */
export function withoutHeartbeats(node: Wire<V1Node>) {
  return (node.status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: undefined }));
}

export function condition(node: Wire<V1Node>, type: string) {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** The time of an RFC 3339 string, as seconds since t0. */
export function sinceT0(time: string | undefined): number | undefined {
  return time === undefined ? undefined : (Date.parse(time) - t0) / 1000;
}
