// `nlc queue`: what is waiting to happen. Per zone, the rate-limited NoExecute tainting queue (upstream
// zoneNoExecuteTainter; zonePodEvictor in legacy mode): its token bucket, its entries in processing
// order and the processed-once set; then the taint eviction controller's pending pod deletions.
// Read through ZoneQueueStore.loadZoneQueues, PodEvictionStore.list and the cluster row, the drainer's
// own reads, all on the functions' clock.
import { Command } from 'commander';
import { z } from 'zod';
import type { EpochMillis } from '../../shared/domain/types.js';
import type { LoadedZoneQueues, PodEviction } from '../../shared/ports/stores.js';
import { parseOptions } from '../errors.js';
import { naturalCompare } from '../../shared/present/names.js';
import {
  OUTPUT_FLAGS,
  OUTPUT_HELP,
  OutputFormatSchema,
  decimal,
  isoTime,
  renderTable,
  span,
  stdoutPaint,
  writeOutput,
  type CliIo,
  type Column,
  type CommandContext,
  type Paint,
} from '../../shared/present/output.js';
import { limiterView, zoneCell, zoneName, type LimiterView } from '../../shared/present/present.js';
import {
  addStoreOptions,
  resolveTarget,
  StoreOptionsSchema,
  withEnvDefaults,
  withStores,
  type RawStoreOptions,
} from '../stores.js';

export const QueueOptionsSchema = StoreOptionsSchema.safeExtend({
  at: z.iso
    .datetime({ offset: true, error: 'expected an ISO 8601 time like 2026-01-29T09:00:00Z' })
    .transform((text) => Date.parse(text))
    .optional(),
  output: OutputFormatSchema,
});
export type QueueOptions = z.output<typeof QueueOptionsSchema>;

// ---------------------------------------------------------------------------------------------------
// The report (`-o json|yaml`: a public interface)

export interface QueueEntryView {
  /** 1-based, in processing order (processAt, then insertion order). */
  readonly position: number;
  readonly node: string;
  readonly uid: string;
  readonly addedAt: string | null;
  readonly processAt: string | null;
  /** processAt is not after `relayAt`: the next drainer run takes it, if the limiter has a token. */
  readonly due: boolean;
  /**
   * The token a drainer run spent on the entry while its taint write has no recorded outcome (null:
   * none). Until `until` no other run takes the entry; from then on (`runOut`) the next run takes it
   * over without a token (docs/state.md, EvictionQueue `claim`).
   */
  readonly claim: {
    readonly by: string;
    readonly at: string | null;
    readonly until: string | null;
    readonly runOut: boolean;
  } | null;
}

export interface ZoneQueueView {
  readonly zone: string;
  readonly limiter: LimiterView;
  readonly entries: readonly QueueEntryView[];
  /** Upstream UniqueQueue.set minus the queue: processed once (tainted), not queued again until removed. */
  readonly processedOnce: readonly string[];
}

export interface PodEvictionView {
  /** namespace/name */
  readonly pod: string;
  readonly node: string;
  readonly createdAt: string | null;
  /** When the deletion was meant to run (upstream TimedWorker.FireAt). */
  readonly fireAt: string | null;
  /**
   * When it actually runs: upstream's timer waits fireAt − createdAt from when the work is added, so a
   * late add fires late (an upstream quirk kept: shared/domain/timedWorkerQueue.ts).
   */
  readonly firesAt: string | null;
  /** waiting (on its timer) or firing (the deletion is running). */
  readonly state: 'waiting' | 'firing';
  readonly due: boolean;
  /** firesAt − at, seconds (negative: overdue). */
  readonly inSeconds: number;
}

export interface QueueReport {
  readonly cluster: string;
  /** The instant "due" is judged at: the wall clock (the drainer's), or --at. */
  readonly at: string;
  /**
   * The instant the zone queues and limiters are judged at: `at` itself, since they run on the
   * functions' clock (docs/architecture.md#digest-time). Kept for readers of the JSON, which had the
   * relay's clock here before.
   */
  readonly relayAt: string;
  readonly zones: readonly ZoneQueueView[];
  readonly podEvictions: readonly PodEvictionView[];
}

export function buildQueue(
  loaded: LoadedZoneQueues,
  evictions: readonly PodEviction[],
  at: EpochMillis,
): QueueReport {
  // The queues are stamped on the functions' clock (docs/architecture.md#digest-time), the reader's too.
  const relayAt = at;
  const zones = [...loaded.queues]
    .map(([key, queue]): ZoneQueueView => {
      const queued = new Set(queue.queue.map((v) => v.value));
      return {
        zone: zoneName(key),
        limiter: limiterView(queue.limiter, relayAt),
        entries: queue.queue.map((v, index) => ({
          position: index + 1,
          node: v.value,
          uid: v.uid,
          addedAt: isoTime(v.addedAt),
          processAt: isoTime(v.processAt),
          due: v.processAt <= relayAt,
          claim:
            v.claim === undefined
              ? null
              : {
                  by: v.claim.by,
                  at: isoTime(v.claim.at),
                  until: isoTime(v.claim.until),
                  runOut: relayAt >= v.claim.until,
                },
        })),
        processedOnce: queue.set.filter((name) => !queued.has(name)).sort(naturalCompare),
      };
    })
    .sort((a, b) => naturalCompare(a.zone, b.zone));
  const podEvictions = [...evictions]
    .sort((a, b) => a.firesAt - b.firesAt || naturalCompare(a.key, b.key))
    .map((e): PodEvictionView => ({
      pod: e.key,
      node: e.nodeName,
      createdAt: isoTime(e.createdAt),
      fireAt: isoTime(e.fireAt),
      firesAt: isoTime(e.firesAt),
      state: e.firing ? 'firing' : 'waiting',
      due: e.firesAt <= at,
      inSeconds: Math.round((e.firesAt - at) / 1000),
    }));
  return {
    cluster: loaded.cluster,
    at: isoTime(at) ?? '',
    relayAt: isoTime(relayAt) ?? '',
    zones,
    podEvictions,
  };
}

// ---------------------------------------------------------------------------------------------------
// Human output

function limiterLine(limiter: LimiterView): string {
  if (limiter.kind === 'never') return 'limiter never (qps 0: no tainting in this zone)';
  return `limiter ${decimal(limiter.qps)} qps, ${limiter.tokensNow.toFixed(2)} of ${limiter.burst} tokens (bucket last updated ${limiter.last ?? '-'})`;
}

const ENTRY_COLUMNS: readonly Column<QueueEntryView>[] = [
  { header: '#', value: (e) => String(e.position), align: 'right' },
  { header: 'node', value: (e) => e.node },
  { header: 'uid', value: (e) => e.uid },
  { header: 'added at', value: (e) => e.addedAt ?? '-' },
  { header: 'process at', value: (e) => e.processAt ?? '-' },
  { header: 'due', value: (e) => (e.due ? 'yes' : 'no'), colour: (e) => (e.due ? 'yellow' : undefined) },
  {
    header: 'claimed by',
    value: (e) => (e.claim === null ? '-' : `${e.claim.by}${e.claim.runOut ? ' (run out)' : ''}`),
    colour: (e) => (e.claim?.runOut === true ? 'yellow' : undefined),
  },
  { header: 'claimed until', value: (e) => e.claim?.until ?? '-', wide: true },
];

const EVICTION_COLUMNS: readonly Column<PodEvictionView>[] = [
  { header: 'pod', value: (e) => e.pod },
  { header: 'node', value: (e) => e.node },
  { header: 'fire at', value: (e) => e.fireAt ?? '-' },
  {
    header: 'in',
    value: (e) => (e.due ? 'due' : span(e.inSeconds * 1000)),
    colour: (e) => (e.due ? 'yellow' : undefined),
    align: 'right',
  },
  { header: 'state', value: (e) => e.state },
  { header: 'created at', value: (e) => e.createdAt ?? '-', wide: true },
  { header: 'fires at', value: (e) => e.firesAt ?? '-', wide: true },
];

export function renderQueue(report: QueueReport, wide: boolean, paint: Paint): string {
  const sections: string[] = [];
  if (report.zones.length === 0) sections.push(`No zone queues stored for cluster ${report.cluster}.\n`);
  for (const zone of report.zones) {
    const head = `${paint('bold', `Zone ${zoneCell(zone.zone)}`)}: ${limiterLine(zone.limiter)}; processed once: ${zone.processedOnce.length}`;
    const body =
      zone.entries.length === 0
        ? '  (queue empty)\n'
        : renderTable(ENTRY_COLUMNS, zone.entries, { wide, paint });
    sections.push(`${head}\n${body}`);
  }
  const due = report.podEvictions.filter((e) => e.due).length;
  const evictions =
    report.podEvictions.length === 0
      ? `${paint('bold', 'Pod evictions')}: none pending\n`
      : `${paint('bold', 'Pod evictions')}: ${report.podEvictions.length} pending, ${due} due at ${report.at}\n` +
        renderTable(EVICTION_COLUMNS, report.podEvictions, { wide, paint });
  sections.push(evictions);
  return sections.join('\n');
}

/**
 * Reads every zone queue and the pending pod evictions, and prints them. Returns the exit code.
 *
 * @example
 * await runQueue(parseOptions(QueueOptionsSchema, { endpoint, at: '2026-01-29T09:05:00Z' }), io); // 0
 */
export async function runQueue(options: QueueOptions, io: CliIo): Promise<number> {
  const target = await resolveTarget(options, io.env);
  const [queues, evictions] = await withStores(target, io.env, (stores) =>
    Promise.all([stores.zoneQueues.loadZoneQueues(target.cluster), stores.podEvictions.list(target.cluster)]),
  );
  const report = buildQueue(queues, evictions, options.at ?? io.clock.now());
  await writeOutput(io, options.output, report, () =>
    renderQueue(report, options.output === 'wide', stdoutPaint(io)),
  );
  return 0;
}

export const QUEUE_HELP = `
Per zone: the token bucket (QPS, tokens now of burst, when a token was last taken; "never" = no
tainting), the queue in processing order (a due entry is taken by the next drainer run when a token
is available) and the processed-once set (tainted nodes, not queued again until they recover). Then
the pending pod deletions of the taint eviction controller. "Due" is judged at the wall clock's now
(--at to choose), as the drainer judges it on its own clock: the queues, tokens and pod deletions are
all stamped on the functions' clock. "Claimed by" names the drainer run that spent a token on an entry
and has not recorded its taint write yet; "(run out)": that run is late (15 s), and the next run takes
the entry over without spending another token (-o wide: until when).
-o json|yaml: cluster, at, relayAt (= at), zones[] {zone, limiter, entries[] {position, node, uid,
addedAt, processAt, due, claim {by, at, until, runOut} | null}, processedOnce[]}, podEvictions[] {pod,
node, createdAt, fireAt, firesAt, state, due, inSeconds}.

Examples:
  nlc queue                                      # next to a running npm start
  nlc queue --stage prod --region eu-west-1 --at 2026-01-29T09:05:00Z -o yaml`;

export function queueCommand(ctx: CommandContext): Command {
  return addStoreOptions(new Command('queue'))
    .description('per-zone eviction queues and pending pod evictions')
    .option('--at <time>', 'judge what is due at this ISO 8601 time (default: now)')
    .option(OUTPUT_FLAGS, OUTPUT_HELP)
    .addHelpText('after', QUEUE_HELP)
    .action(async (opts: RawStoreOptions & { at?: string; output?: string }) => {
      const options = parseOptions(QueueOptionsSchema, withEnvDefaults(opts, ctx.io.env));
      ctx.exitCode = await runQueue(options, ctx.io);
    });
}
