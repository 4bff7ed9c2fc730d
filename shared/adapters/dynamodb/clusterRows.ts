// The Zones partition of a cluster as the monitor reads it: the cluster row (last digest, master
// disruption, the metaVersion that fences monitor commits) and each zone row's state group (zone
// state and gauges). The zone rows' queue group belongs to zoneQueues.ts.
import { z } from 'zod';
import type { ZoneState } from '../../domain/types.js';
import type { ClusterMeta, ZoneGaugeValues } from '../../ports/stores.js';
import type { DynamoContext, StoredItem } from './client.js';
import { ClusterRowKey, decodeZone, InstantSchema } from './codec.js';
import { parseItem } from './items.js';

const MetaSchema = z.object({
  // Absent on a row only refused digests have written (recordRefusedDigest): no pass committed yet.
  metaVersion: z.number().optional(),
  lastSequence: z.number().optional(),
  lastObservedAt: InstantSchema.optional(),
  lastLeaderSince: InstantSchema.optional(),
  lastRelayId: z.string().optional(),
  masterDisruption: z.boolean().optional(),
  relayLastSeen: InstantSchema.optional(),
  lastObservingSince: InstantSchema.optional(),
  nodeMonitorGracePeriodMs: z.number().optional(),
  emulationVersion: z.string().optional(),
  dryRun: z.boolean().optional(),
  clusterVersion: z.string().optional(),
  clusterVersionReadAtMs: z.number().optional(),
  updatedAtMs: z.number().optional(),
  healthRowsBehind: z.number().optional(),
  clockOffset: z.number().optional(),
  clockCandidate: z.number().optional(),
  termVerified: z.boolean().optional(),
  leaseWrittenVersion: z.string().optional(),
  refusedDigests: z.number().optional(),
  lastRefusedAtMs: z.number().optional(),
  lastRefusal: z.string().optional(),
  lastRefusedTerm: z.string().optional(),
});

const ZoneStateRowSchema = z.object({
  zone: z.string(),
  stateVersion: z.number().optional(),
  state: z.enum(['Initial', 'Normal', 'PartialDisruption', 'FullDisruption']).optional(),
  size: z.number().optional(),
  unhealthyNodes: z.number().optional(),
  zoneHealth: z.number().optional(),
});

export function metaEqual(a: ClusterMeta, b: ClusterMeta): boolean {
  return (
    a.lastSequence === b.lastSequence &&
    a.lastObservedAt === b.lastObservedAt &&
    a.lastLeaderSince === b.lastLeaderSince &&
    a.lastRelayId === b.lastRelayId &&
    a.masterDisruption === b.masterDisruption &&
    a.relayLastSeen === b.relayLastSeen &&
    a.lastObservingSince === b.lastObservingSince &&
    a.nodeMonitorGracePeriodMs === b.nodeMonitorGracePeriodMs &&
    a.emulationVersion === b.emulationVersion &&
    a.dryRun === b.dryRun &&
    a.clusterVersion === b.clusterVersion &&
    a.clusterVersionReadAt === b.clusterVersionReadAt &&
    a.clockOffset === b.clockOffset &&
    a.clockCandidate === b.clockCandidate &&
    a.termVerified === b.termVerified &&
    a.leaseWrittenVersion === b.leaseWrittenVersion
  );
}

/**
 * The cluster row's fields a quiet pass moves: the digest's position. They may run ahead of the stored
 * row in a warm function (StateAfterPass.positionMayWait); every other field is written when it changes.
 */
export function positionOf(
  meta: ClusterMeta,
): Pick<ClusterMeta, 'lastSequence' | 'lastObservedAt' | 'relayLastSeen'> {
  return {
    ...(meta.lastSequence !== undefined && { lastSequence: meta.lastSequence }),
    ...(meta.lastObservedAt !== undefined && { lastObservedAt: meta.lastObservedAt }),
    ...(meta.relayLastSeen !== undefined && { relayLastSeen: meta.relayLastSeen }),
  };
}

/** metaEqual, but for the position (positionOf): `b` is `a` with only its position moved. */
export function metaEqualButPosition(a: ClusterMeta, b: ClusterMeta): boolean {
  return metaEqual({ ...a, ...positionOf(b) }, b);
}

export function gaugeEqual(a: ZoneGaugeValues | undefined, b: ZoneGaugeValues): boolean {
  return (
    a !== undefined &&
    a.zoneSize === b.zoneSize &&
    a.unhealthyNodes === b.unhealthyNodes &&
    (a.zoneHealth === b.zoneHealth || (Number.isNaN(a.zoneHealth) && Number.isNaN(b.zoneHealth)))
  );
}

/** What the Zones partition of a cluster says. */
export interface ZoneRows {
  readonly meta: ClusterMeta;
  readonly metaVersion: number;
  readonly zoneStates: Map<string, ZoneState>;
  readonly zoneStateVersions: Map<string, number>;
  readonly gauges: Map<string, ZoneGaugeValues>;
  /** Zone rows that carry a queue group, by zone key. */
  readonly queueRows: Map<string, StoredItem>;
}

export function decodeZoneRows(ctx: DynamoContext, cluster: string, rows: readonly StoredItem[]): ZoneRows {
  let meta: ClusterMeta = { masterDisruption: false };
  let metaVersion = 0;
  const zoneStates = new Map<string, ZoneState>();
  const zoneStateVersions = new Map<string, number>();
  const gauges = new Map<string, ZoneGaugeValues>();
  const queueRows = new Map<string, StoredItem>();
  const decoded: [string, z.output<typeof ZoneStateRowSchema>, StoredItem][] = [];
  for (const row of rows) {
    const key = { cluster, zone: String(row.zone) };
    if (row.zone === ClusterRowKey) {
      const m = parseItem(MetaSchema, row, { table: ctx.tables.zones, key });
      metaVersion = m.metaVersion ?? 0;
      meta = {
        ...(m.lastSequence !== undefined && { lastSequence: m.lastSequence }),
        ...(m.lastObservedAt !== undefined && { lastObservedAt: m.lastObservedAt }),
        ...(m.lastLeaderSince !== undefined && { lastLeaderSince: m.lastLeaderSince }),
        ...(m.lastRelayId !== undefined && { lastRelayId: m.lastRelayId }),
        masterDisruption: m.masterDisruption === true,
        ...(m.relayLastSeen !== undefined && { relayLastSeen: m.relayLastSeen }),
        ...(m.lastObservingSince !== undefined && { lastObservingSince: m.lastObservingSince }),
        ...(m.nodeMonitorGracePeriodMs !== undefined && {
          nodeMonitorGracePeriodMs: m.nodeMonitorGracePeriodMs,
        }),
        ...(m.emulationVersion !== undefined && { emulationVersion: m.emulationVersion }),
        ...(m.dryRun !== undefined && { dryRun: m.dryRun }),
        ...(m.clusterVersion !== undefined && { clusterVersion: m.clusterVersion }),
        ...(m.clusterVersionReadAtMs !== undefined && { clusterVersionReadAt: m.clusterVersionReadAtMs }),
        ...(m.updatedAtMs !== undefined && { committedAt: m.updatedAtMs }),
        ...(m.healthRowsBehind !== undefined && { healthRowsBehind: m.healthRowsBehind }),
        ...(m.clockOffset !== undefined && { clockOffset: m.clockOffset }),
        ...(m.clockCandidate !== undefined && { clockCandidate: m.clockCandidate }),
        ...(m.termVerified !== undefined && { termVerified: m.termVerified }),
        ...(m.leaseWrittenVersion !== undefined && { leaseWrittenVersion: m.leaseWrittenVersion }),
        ...(m.refusedDigests !== undefined && { refusedDigests: m.refusedDigests }),
        ...(m.lastRefusedAtMs !== undefined && { lastRefusedAt: m.lastRefusedAtMs }),
        ...(m.lastRefusal !== undefined && { lastRefusal: m.lastRefusal }),
        ...(m.lastRefusedTerm !== undefined && { lastRefusedTerm: m.lastRefusedTerm }),
      };
      continue;
    }
    decoded.push([
      decodeZone(key.zone),
      parseItem(ZoneStateRowSchema, row, { table: ctx.tables.zones, key }),
      row,
    ]);
  }
  decoded.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [zone, row, raw] of decoded) {
    if (row.stateVersion !== undefined) zoneStateVersions.set(zone, row.stateVersion);
    if (row.state !== undefined) zoneStates.set(zone, row.state);
    if (row.size !== undefined && row.unhealthyNodes !== undefined) {
      gauges.set(zone, {
        zoneSize: row.size,
        unhealthyNodes: row.unhealthyNodes,
        zoneHealth: row.zoneHealth ?? Number.NaN,
      });
    }
    if (raw.queueVersion !== undefined) queueRows.set(zone, raw);
  }
  return { meta, metaVersion, zoneStates, zoneStateVersions, gauges, queueRows };
}
