// `nlc status`: the controller's view of a cluster, read from the state tables (local stack or AWS):
// zones (state, size, unhealthy share, limiter QPS, queue length), then nodes (Ready as the controller
// saved it, its taints, probe age, eviction queue place, exclusion). One consistent read through the
// ControllerStateStore, the same load the monitor starts each pass from.
import { Command } from 'commander';
import { z } from 'zod';
import type { ZoneState } from '../../shared/domain/types.js';
import {
  OUTPUT_FLAGS,
  OUTPUT_HELP,
  OutputFormatSchema,
  renderTable,
  span,
  stdoutPaint,
  writeOutput,
  type CliIo,
  type Colour,
  type Column,
  type CommandContext,
  type Paint,
} from '../../shared/present/output.js';
import { probeAgeCell, qpsCell, tokensCell, zoneCell } from '../../shared/present/present.js';
import {
  buildStatus,
  type NodeEvictionView,
  type NodeStatus,
  type StatusReport,
  type ZoneStatus,
} from '../../shared/present/statusReport.js';
import { parseOptions } from '../errors.js';
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
