// The one shape of every Lambda shell: Powertools' logger context and metrics, the parser over the
// whole event (a malformed one is logged naming each field and thrown before any I/O, so Lambda retries
// it and the dead-letter queue keeps it), the served cluster's runtime (built at its first event per
// container), then the function's dispatch (shared/app/dispatch.ts), whose waits the invocation sleeps
// through. One deployment serves several clusters (NLC_CLUSTERS, shared/adapters/clusters.ts).
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import { createRuntimes, type Runtimes } from '../shared/adapters/runtime.js';
import {
  clusterOf,
  Dispatch,
  newWarmState,
  unservedCluster,
  type FunctionDeps,
  type FunctionInput,
  type FunctionName,
  type WarmState,
} from '../shared/app/dispatch.js';
import { runSteps } from '../shared/app/steps.js';
import { EventParseError } from '../shared/errors.js';
import { eventParseErrorFrom } from '../shared/events.js';
import { logger } from '../shared/observability.js';
import { publishMetrics } from './publishMetrics.js';

export interface ShellSpec<S extends z.ZodType> {
  readonly name: FunctionName;
  /** The Decisions' source of this function (the runtime's name for it). */
  readonly source: string;
  /** What the function accepts, whole (envelope included). */
  readonly schema: S;
  /** How a rejected input is named ("Node Changed", "eviction drainer event"). */
  readonly what: string;
  /** The dispatch input a parsed event stands for. */
  readonly input: (event: z.output<S>) => FunctionInput;
  /** Log keys of the event (node, pod, sequence), beside the cluster. */
  readonly keys?: (event: z.output<S>) => Record<string, string | number>;
}

/**
 * The middy handler of one function.
 *
 * @example
 * export const handler = lambdaHandler({ name: 'nodeTaints', source: NodeTaintsSource, schema: NodeChangedEvent, what: NodeChangedDetailType, input: (event) => ({ kind: 'event', event }) });
 */
export function lambdaHandler<S extends z.ZodType>(spec: ShellSpec<S>) {
  // Once per cold start: the settings of every served cluster (a bad one is a ConfigError naming it,
  // before any I/O; not kept, so every invocation reports it). Each cluster's runtime (its credentials
  // and Kubernetes client) and warm state are built at its first event and kept per container.
  let runtimes: Runtimes | undefined;
  const getRuntimes = (): Runtimes => (runtimes ??= createRuntimes(process.env, { source: spec.source }));
  const warmStates = new Map<string, WarmState>();
  const warmOf = (cluster: string): WarmState => {
    let warm = warmStates.get(cluster);
    if (warm === undefined) warmStates.set(cluster, (warm = newWarmState()));
    return warm;
  };
  return middy<unknown, undefined>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(publishMetrics()) // flushes on success and on error
    .use(parser({ schema: spec.schema, safeParse: true }))
    .handler(async (parsed, context: Context, { signal }) => {
      if (!parsed.success) {
        const error = eventParseErrorFrom(parsed.error, spec.what);
        const original: unknown = parsed.originalEvent;
        logger.error('malformed event rejected: nothing written', {
          event: spec.what,
          problems: error.issues,
          detailType:
            typeof original === 'object' && original !== null
              ? Reflect.get(original, 'detail-type')
              : undefined,
        });
        throw error;
      }
      const event = parsed.data as z.output<S>;
      const input = spec.input(event);
      const rts = getRuntimes();
      const target = clusterOf(input);
      logger.appendKeys({ ...(target !== undefined && { cluster: target }), ...spec.keys?.(event) });
      const run = async (cluster: string): Promise<void> => {
        const runtime = rts.runtime(cluster);
        // For a cluster the deployment does not serve: rejected before any I/O, as a malformed event.
        if (runtime === undefined) throw unservedCluster(input, cluster, rts.clusters);
        const rt = await runtime;
        const deps: FunctionDeps = {
          config: rt.config,
          stores: rt.stores,
          cluster: rt.cluster,
          observer: rt.observer,
          clock: rt.clock,
          signal,
          ...(rt.triggerDrainer !== undefined && { triggerDrainer: rt.triggerDrainer }),
        };
        const first = await Dispatch[spec.name](
          {
            deps,
            warm: warmOf(cluster),
            remainingMs: () => context.getRemainingTimeInMillis(),
            invocationId: context.awsRequestId,
          },
          input,
        );
        await runSteps(first, undefined, signal);
      };
      try {
        // An event or an invoke names its cluster; a schedule's tick serves every cluster, in parallel
        // (each cluster's run is its own: one failing does not stop the others).
        if (target !== undefined) await run(target);
        else await forEachCluster(rts.clusters, run);
      } catch (error) {
        if (error instanceof EventParseError)
          logger.error('event rejected: nothing written', { event: spec.what, problems: error.issues });
        throw error;
      }
    });
}

/** How many clusters a schedule's tick runs at once (each mostly waits on DynamoDB and the API). */
export const ScheduleFanOut = 8;

/** Runs `run` for every cluster, at most ScheduleFanOut at once; throws after all ran if any failed. */
async function forEachCluster(
  clusters: readonly string[],
  run: (cluster: string) => Promise<void>,
): Promise<void> {
  const failures: { cluster: string; error: unknown }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < clusters.length; i = next++) {
      const cluster = clusters[i] ?? '';
      try {
        await run(cluster);
      } catch (error) {
        logger.error('scheduled run failed for a cluster', {
          cluster,
          error: error instanceof Error ? error.message : String(error),
        });
        failures.push({ cluster, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ScheduleFanOut, clusters.length) }, worker));
  if (failures.length === 1) throw failures[0]?.error;
  if (failures.length > 1) {
    throw new AggregateError(
      failures.map((f) => f.error),
      `scheduled run failed for clusters ${failures.map((f) => f.cluster).join(', ')}`,
    );
  }
}
