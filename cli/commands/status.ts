// `nlc status`: the controller's view of a cluster, read from the state tables (local stack or AWS):
// zones (state, size, unhealthy share, limiter QPS, queue length), then nodes (Ready as the controller
// saved it, its taints, probe age, eviction queue place, exclusion). One consistent read through the
// ControllerStateStore, the same load the monitor starts each pass from.
import { Command } from 'commander';
import { z } from 'zod';
import { getNodeCondition, type EpochMillis, type ZoneState } from '../../shared/domain/types.js';
import { ownedByNodeController } from '../../shared/domain/taints.js';
import { getZoneKey, isNodeExcludedFromDisruptionChecks } from '../../shared/domain/zones.js';
import type { LoadedState } from '../../shared/ports/stores.js';
import { parseOptions } from '../errors.js';
import { naturalCompare } from '../names.js';
import {
  OUTPUT_FLAGS,
  OUTPUT_HELP,
  OutputFormatSchema,
  isoTime,
  renderTable,
  span,
  stdoutPaint,
  writeOutput,
  type CliIo,
  type Colour,
  type Column,
  type CommandContext,
  type Paint,
} from '../output.js';
import {
  abbreviateTaint,
  limiterView,
  probeAge,
  probeAgeCell,
  probeAgeFields,
  qpsCell,
  queuePlaces,
  tokensCell,
  zoneCell,
  zoneName,
  type LimiterView,
  type ProbeAge,
} from '../present.js';
import {
  addStoreOptions,
  resolveTarget,
  StoreOptionsSchema,
  withEnvDefaults,
  withStores,
  type RawStoreOptions,
} from '../stores.js';

export const StatusOptionsSchema = StoreOptionsSchema.safeExtend({ output: OutputFormatSchema });
export type StatusOptions = z.output<typeof StatusOptionsSchema>;

// ---------------------------------------------------------------------------------------------------
// The report (`-o json|yaml` prints it as is: these field names are a public interface)

export interface ZoneStatus {
  /** `region:zone`; "" for nodes without zone labels. */
  readonly zone: string;
  /** Upstream ZoneState; null when the zone has no counted node any more (its queue stays). */
  readonly state: ZoneState | null;
  /** Counted nodes (node_collector_zone_size); null before the first pass that counted the zone. */
  readonly size: number | null;
  /** Not-ready counted nodes (node_collector_unhealthy_nodes_in_zone). */
  readonly unhealthy: number | null;
  /** unhealthy / size, in percent (0–100, rounded). */
  readonly unhealthyPercent: number | null;
  readonly limiter: LimiterView | null;
  /** Nodes waiting in the zone's NoExecute tainting queue (zonePodEvictor in legacy mode). */
  readonly queueLength: number;
  /** Nodes in the processed-once set only (tainted, or evicted in legacy mode). */
  readonly processedOnce: number;
}

export interface NodeEvictionView {
  /** 1-based place in the zone queue, null when not queued. */
  readonly position: number | null;
  /** When the queue will process it (the functions' clock). */
  readonly processAt: string | null;
  /** In the processed-once set without being queued: already processed. */
  readonly processed: boolean;
  /** Legacy mode only (upstream nodeEvictionMap): unmarked, toBeEvicted, evicted. */
  readonly status: string | null;
}

export interface NodeStatus {
  readonly name: string;
  readonly uid: string | null;
  readonly zone: string;
  /** Ready as the monitor last saved it (the health row), not as the kubelet last posted it. */
  readonly ready: string | null;
  /**
   * Upstream's readyTransitionTimestamp: when the controller saw Ready change, on its clock. Its own
   * Unknown mark is seen in the pass that writes it; a kubelet's change at the next pass, up to a
   * monitor period after the condition's own lastTransitionTime (what the API shows).
   */
  readonly readyTransition: string | null;
  /** The taints this controller owns, abbreviated (`unreachable:NoExecute`). */
  readonly taints: readonly string[];
  /** Every taint on the node copy the controller holds. */
  readonly allTaints: readonly { key: string; value?: string; effect: string; timeAdded?: string | null }[];
  /** The last probe the controller stored (moved onto the functions' clock; only stored when it decides, see probeAge). */
  readonly probeTime: string | null;
  /**
   * How long the node has been silent as the controller sees it (present.ts probeAge): the last
   * digest's observedAt minus probeTime, for a node it holds Ready=Unknown; null otherwise.
   */
  readonly probeAgeSeconds: number | null;
  /** `silent` (probeAgeSeconds is its age), `live` (heard from within the grace period), `unknown`. */
  readonly probe: ProbeAge['kind'];
  readonly leaseRenewTime: string | null;
  readonly eviction: NodeEvictionView;
  /** node.kubernetes.io/exclude-disruption: not counted in zone health. */
  readonly excluded: boolean;
  /** Registered by the controller (RegisteredNode recorded). */
  readonly registered: boolean;
  /** In nodesToRetry (MarkPodsNotReady to retry). */
  readonly retry: boolean;
  /** Gone from the node cache; the controller still holds its health until its next pass. */
  readonly deleted: boolean;
}

export interface StatusReport {
  readonly cluster: string;
  /**
   * The last Heartbeat Digest processed: its observedAt on the functions' clock (the relay's, moved by
   * its term's offset: docs/architecture.md#digest-time) and sequence.
   */
  readonly observedAt: string | null;
  readonly lastSequence: number | null;
  /**
   * Seconds since that digest was committed: the reader's clock against the committing function's, as
   * the schedule's nlc_observation_gap_seconds. A monitor period or so while the relay runs; growing
   * while it is down (no node is marked Unknown meanwhile: docs/architecture.md#observation-gap).
   */
  readonly lastDigestAgeSeconds: number | null;
  /**
   * That age is more than the grace period the monitor runs with (as stored with the digest): the
   * controller is blind, as upstream's would be with its informers stalled. Null when either is unknown.
   */
  readonly lastDigestLate: boolean | null;
  readonly nodeMonitorGracePeriodSeconds: number | null;
  /** The relay term whose digests are accepted (`relayId@leaderSince`), and whether its Lease vouched for it. */
  readonly relayTerm: string | null;
  readonly relayTermVerified: boolean | null;
  /**
   * Digests refused (a deposed leader's, a forged one, a clock beyond tolerance: shared/digestClock.ts),
   * the last one's reason, and how long ago (the reader's clock against the refusing function's).
   */
  readonly refusedDigests: number;
  readonly lastRefusal: string | null;
  readonly lastRefusalAgeSeconds: number | null;
  readonly relayLastSeen: string | null;
  /** The upstream minor the monitor emulates, whether it runs in shadow mode, the API server's /version. */
  readonly emulationVersion: string | null;
  readonly mode: 'shadow' | 'active' | null;
  readonly clusterVersion: string | null;
  readonly masterDisruption: boolean;
  readonly zones: readonly ZoneStatus[];
  readonly nodes: readonly NodeStatus[];
}

/**
 * The report from one consistent load of the controller state. `now` is the reader's wall clock: the
 * limiters' tokens are shown at it, since they refill on the functions' clock.
 */
export function buildStatus(loaded: LoadedState, now: EpochMillis): StatusReport {
  const { state, meta } = loaded;
  // The limiters refill on the functions' clock, which the reader's is taken for.
  const relayNow = now;
  const places = queuePlaces(state.zoneQueues);
  const zoneKeys = [
    ...new Set([...state.zoneStates.keys(), ...loaded.zones.keys(), ...state.zoneQueues.keys()]),
  ];
  const zones = zoneKeys
    .map((key): ZoneStatus => {
      const gauge = loaded.zones.get(key);
      const queue = state.zoneQueues.get(key);
      const queued = new Set(queue?.queue.map((v) => v.value));
      return {
        zone: zoneName(key),
        state: state.zoneStates.get(key) ?? null,
        size: gauge?.zoneSize ?? null,
        unhealthy: gauge?.unhealthyNodes ?? null,
        unhealthyPercent:
          gauge === undefined
            ? null
            : gauge.zoneSize === 0
              ? 0
              : Math.round((100 * gauge.unhealthyNodes) / gauge.zoneSize),
        limiter: queue === undefined ? null : limiterView(queue.limiter, relayNow),
        queueLength: queue?.queue.length ?? 0,
        processedOnce: queue?.set.filter((name) => !queued.has(name)).length ?? 0,
      };
    })
    .sort((a, b) => naturalCompare(a.zone, b.zone));

  const names = [
    ...new Set([...loaded.nodes.keys(), ...state.knownNodes.keys(), ...state.nodeHealth.keys()]),
  ].sort(naturalCompare);
  const nodes = names.map((name): NodeStatus => {
    const node = loaded.nodes.get(name);
    const health = state.nodeHealth.get(name);
    const place = places.get(name);
    const probe = health?.probeTimestamp;
    const ready = health === undefined ? null : (getNodeCondition(health.status, 'Ready')?.status ?? null);
    const age = probeAge({ probeTime: probe, ready }, meta.lastObservedAt);
    return {
      name,
      uid: node?.uid ?? state.knownNodes.get(name) ?? null,
      zone:
        node === undefined
          ? place === undefined
            ? ''
            : zoneName(place.zone)
          : zoneName(getZoneKey(node.labels)),
      ready,
      readyTransition: isoTime(health?.readyTransitionTimestamp),
      taints: (node?.taints ?? []).filter(ownedByNodeController).map(abbreviateTaint),
      allTaints: (node?.taints ?? []).map((t) => ({
        key: t.key,
        ...(t.value !== undefined && { value: t.value }),
        effect: t.effect,
        ...(t.timeAdded !== undefined && { timeAdded: isoTime(t.timeAdded) }),
      })),
      probeTime: isoTime(probe),
      ...probeAgeFields(age),
      leaseRenewTime: isoTime(health?.lease?.renewTime),
      eviction: {
        position: place?.position ?? null,
        processAt: isoTime(place?.processAt ?? undefined),
        processed: place !== undefined && place.position === null,
        status: state.nodeEvictionStatus.get(name) ?? null,
      },
      excluded: node !== undefined && isNodeExcludedFromDisruptionChecks(node),
      registered: state.knownNodes.has(name),
      retry: state.nodesToRetry.has(name),
      deleted: node === undefined,
    };
  });

  const ageMs = meta.committedAt === undefined ? undefined : Math.max(0, now - meta.committedAt);
  const grace = meta.nodeMonitorGracePeriodMs;
  return {
    cluster: loaded.cluster,
    observedAt: isoTime(meta.lastObservedAt),
    lastSequence: meta.lastSequence ?? null,
    lastDigestAgeSeconds: ageMs === undefined ? null : Math.round(ageMs / 1000),
    lastDigestLate: ageMs === undefined || grace === undefined ? null : ageMs > grace,
    nodeMonitorGracePeriodSeconds: grace === undefined ? null : grace / 1000,
    relayTerm:
      meta.lastRelayId === undefined || meta.lastLeaderSince === undefined
        ? null
        : `${meta.lastRelayId}@${isoTime(meta.lastLeaderSince) ?? ''}`,
    relayTermVerified: meta.termVerified ?? null,
    refusedDigests: meta.refusedDigests ?? 0,
    lastRefusal: meta.lastRefusal ?? null,
    lastRefusalAgeSeconds:
      meta.lastRefusedAt === undefined ? null : Math.round(Math.max(0, now - meta.lastRefusedAt) / 1000),
    relayLastSeen: isoTime(meta.relayLastSeen),
    emulationVersion: meta.emulationVersion ?? null,
    mode: meta.dryRun === undefined ? null : meta.dryRun ? 'shadow' : 'active',
    clusterVersion: meta.clusterVersion ?? null,
    masterDisruption: meta.masterDisruption,
    zones,
    nodes,
  };
}

// ---------------------------------------------------------------------------------------------------
// Human output

function stateColour(state: ZoneState | null): Colour | undefined {
  switch (state) {
    case 'Normal':
      return 'green';
    case 'PartialDisruption':
      return 'yellow';
    case 'FullDisruption':
      return 'red';
    case 'Initial':
    case null:
      return undefined;
  }
}

function evictionCell(e: NodeEvictionView): string {
  const parts: string[] = [];
  if (e.status !== null && e.status !== 'unmarked') parts.push(e.status);
  if (e.position !== null) parts.push(`queued #${e.position}`);
  else if (e.processed) parts.push('processed');
  return parts.length === 0 ? '-' : parts.join(', ');
}

const ZONE_COLUMNS: readonly Column<ZoneStatus>[] = [
  { header: 'zone', value: (z) => zoneCell(z.zone) },
  { header: 'state', value: (z) => z.state ?? '-', colour: (z) => stateColour(z.state) },
  { header: 'size', value: (z) => (z.size === null ? '-' : String(z.size)), align: 'right' },
  {
    header: 'unhealthy',
    value: (z) => (z.unhealthy === null ? '-' : `${z.unhealthy} (${z.unhealthyPercent ?? 0}%)`),
    align: 'right',
  },
  { header: 'limiter qps', value: (z) => qpsCell(z.limiter), align: 'right' },
  {
    header: 'tokens',
    value: (z) => tokensCell(z.limiter),
    align: 'right',
    wide: true,
  },
  { header: 'queue', value: (z) => String(z.queueLength), align: 'right' },
  { header: 'processed', value: (z) => String(z.processedOnce), align: 'right', wide: true },
];

const NODE_COLUMNS: readonly Column<NodeStatus>[] = [
  { header: 'node', value: (n) => n.name + (n.deleted ? ' (deleted)' : '') },
  { header: 'zone', value: (n) => zoneCell(n.zone) },
  {
    header: 'ready',
    value: (n) => n.ready ?? '-',
    colour: (n) => (n.ready === 'True' ? 'green' : n.ready === null ? undefined : 'red'),
  },
  { header: 'taints', value: (n) => (n.taints.length === 0 ? '-' : n.taints.join(',')) },
  {
    header: 'probe age',
    value: probeAgeCell,
    align: 'right',
  },
  {
    header: 'eviction',
    value: (n) => evictionCell(n.eviction),
    colour: (n) => (n.eviction.position !== null ? 'yellow' : undefined),
  },
  { header: 'excluded', value: (n) => (n.excluded ? 'yes' : 'no') },
  { header: 'uid', value: (n) => n.uid ?? '-', wide: true },
  { header: 'ready since', value: (n) => n.readyTransition ?? '-', wide: true },
  { header: 'probe', value: (n) => n.probeTime ?? '-', wide: true },
  { header: 'lease', value: (n) => n.leaseRenewTime ?? '-', wide: true },
  { header: 'process at', value: (n) => n.eviction.processAt ?? '-', wide: true },
];

/** "45s ago", flagged once older than the grace period the monitor runs with. */
function digestAge(report: StatusReport, paint: Paint): string {
  const age = `${span((report.lastDigestAgeSeconds ?? 0) * 1000)} ago`;
  if (report.lastDigestLate !== true || report.nodeMonitorGracePeriodSeconds === null) return age;
  const grace = span(report.nodeMonitorGracePeriodSeconds * 1000);
  return `${age} ${paint('red', `(late: more than the ${grace} grace period; is the relay or the bus down?)`)}`;
}

/** The human form: a short header, the zones table, the nodes table. */
export function renderStatus(report: StatusReport, wide: boolean, paint: Paint): string {
  const digest = report.lastSequence === null ? '' : ` (digest #${report.lastSequence})`;
  const header = [
    `Cluster:            ${report.cluster}`,
    `Observed at:        ${report.observedAt ?? 'no digest processed yet'}${digest}`,
    // A stopped relay shows here: the age grows while the tables stay as the last digest left them.
    ...(report.lastDigestAgeSeconds === null ? [] : [`Last digest:        ${digestAge(report, paint)}`]),
    ...(report.relayTerm === null
      ? []
      : [
          `Relay term:         ${report.relayTerm}${report.relayTermVerified === true ? ' (holds the leader Lease)' : report.relayTermVerified === false ? ' (no leader Lease to check)' : ''}`,
        ]),
    ...(report.refusedDigests === 0
      ? []
      : [
          `Refused digests:    ${paint('red', String(report.refusedDigests))}${report.lastRefusal === null ? '' : `, the last ${span((report.lastRefusalAgeSeconds ?? 0) * 1000)} ago: ${report.lastRefusal}`}`,
        ]),
    ...(report.emulationVersion === null
      ? []
      : [
          `Controller:         emulates ${report.emulationVersion}, ${report.mode === 'shadow' ? 'shadow mode (dryRun: writes nothing)' : 'active'}${report.clusterVersion === null ? '' : `; the cluster runs ${report.clusterVersion}`}`,
        ]),
    `Master disruption:  ${report.masterDisruption ? paint('red', 'yes: every zone is FullDisruption, evictions stopped') : 'no'}`,
  ].join('\n');
  if (report.zones.length === 0 && report.nodes.length === 0) {
    return `${header}\n\nNo zones or nodes stored for cluster ${report.cluster} (has the monitor run? check --cluster, --stage).\n`;
  }
  // Tables end with a newline: one more makes the blank line between sections.
  return [
    `${header}\n`,
    renderTable(ZONE_COLUMNS, report.zones, { wide, paint }),
    renderTable(NODE_COLUMNS, report.nodes, { wide, paint }),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------
// The command

/**
 * Reads the tables and prints the report. Returns the exit code.
 *
 * @example
 * await runStatus(parseOptions(StatusOptionsSchema, { endpoint: 'http://127.0.0.1:8000' }), io); // 0
 */
export async function runStatus(options: StatusOptions, io: CliIo): Promise<number> {
  const target = await resolveTarget(options, io.env);
  const loaded = await withStores(target, io.env, (stores) => stores.controllerState.load(target.cluster));
  const report = buildStatus(loaded, io.clock.now());
  await writeOutput(io, options.output, report, () =>
    renderStatus(report, options.output === 'wide', stdoutPaint(io)),
  );
  return 0;
}

export const STATUS_HELP = `
Header: "Last digest" is how long ago the monitor processed the relay's last Heartbeat Digest: about
        a monitor period (5s) while the relay runs. Older than the grace period the monitor runs with,
        it is flagged "late": the relay or the bus is down, nobody is marked Unknown meanwhile, and the
        tables below are as that digest left them. "Observed at" is when the relay built it, on the
        functions' clock. "Relay term" is the relay whose digests count (the one holding the leader
        Lease); "Refused digests" counts the others (a deposed leader's, a forged one, a relay clock
        beyond tolerance), with the last one's reason.
Zones:  ZONE is region:zone ("-": nodes without zone labels). UNHEALTHY counts not-ready nodes the
        zone's health counts (excluded nodes are not). LIMITER QPS is the zone's NoExecute tainting
        rate ("never": no tainting in this zone). TOKENS (-o wide) is its token bucket now, refilled
        since its last use, of its burst. QUEUE is the number of nodes waiting for a taint.
Nodes:  READY is the Ready status the controller last saved (Unknown once the grace period passed).
        TAINTS are the taints the controller owns. PROBE AGE is how long the node has been silent as
        the controller sees it: for a node it marked Ready=Unknown, the last digest's observedAt minus
        the last probe it saw (both moved onto the functions' clock by the relay term's offset, so the
        CLI's clock and bus delays cannot skew it); "live" for a node it heard from within the grace period at its last
        pass (that newer probe is not stored: docs/state.md, "Write on change"); "-" before any pass.
        EVICTION is the node's place in its zone queue ("queued #1"), "processed" once tainted.
-o wide adds tokens, uids, Ready transition, probe, lease and process-at times. READY SINCE is
upstream's readyTransitionTimestamp: when the controller saw Ready change. Its own Unknown mark counts
from that pass; a kubelet's change (a node back Ready) from the next pass, up to a monitor period (5s)
after the condition's lastTransitionTime that the API shows.
-o json|yaml prints the full report: cluster, observedAt, lastSequence, lastDigestAgeSeconds,
lastDigestLate, nodeMonitorGracePeriodSeconds, relayTerm, relayTermVerified, refusedDigests,
lastRefusal, lastRefusalAgeSeconds, relayLastSeen, emulationVersion, mode, clusterVersion,
masterDisruption, zones[] {zone, state, size, unhealthy, unhealthyPercent, limiter,
queueLength, processedOnce}, nodes[] {name, uid, zone, ready, readyTransition, taints, allTaints,
probeTime, probe, probeAgeSeconds, leaseRenewTime, eviction {position, processAt, processed, status},
excluded, registered, retry, deleted}.

Examples:
  nlc status                                     # next to a running npm start
  nlc status --stage prod --region eu-west-1 --cluster prod -o wide`;

export function statusCommand(ctx: CommandContext): Command {
  return addStoreOptions(new Command('status'))
    .description('zones and nodes as the controller sees them, from the state tables')
    .option(OUTPUT_FLAGS, OUTPUT_HELP)
    .addHelpText('after', STATUS_HELP)
    .action(async (opts: RawStoreOptions & { output?: string }) => {
      const options = parseOptions(StatusOptionsSchema, withEnvDefaults(opts, ctx.io.env));
      ctx.exitCode = await runStatus(options, ctx.io);
    });
}
