// shared/app/dispatch.ts: the one routing the Lambda shells and `nlc simulate` share. What a function
// accepts and the served-cluster check happen before any I/O (the dependencies here throw if touched);
// the drainer's waits come back as steps that runSteps sleeps through.
import { describe, expect, it } from 'vitest';
import {
  Dispatch,
  newWarmState,
  type FunctionDeps,
  type FunctionInput,
  type RelayInput,
} from '../../../shared/app/dispatch.js';
import { runSteps, type Step } from '../../../shared/app/steps.js';
import { UPSTREAM_DEFAULTS } from '../../../shared/config.js';
import { EventParseError } from '../../../shared/errors.js';
import type { NodeChanged, PodChanged } from '../../../shared/events.js';

/** An object any property read of fails: a dependency the input check must not reach. */
const untouchable = (name: string): object =>
  new Proxy(
    {},
    {
      get: (_target, property) => {
        throw new Error(`${name}.${String(property)} touched before the input was checked`);
      },
    },
  );

const deps: FunctionDeps = {
  config: { ...UPSTREAM_DEFAULTS, cluster: 'prod' },
  stores: untouchable('stores') as FunctionDeps['stores'],
  cluster: untouchable('cluster') as FunctionDeps['cluster'],
  observer: untouchable('observer') as FunctionDeps['observer'],
  clock: { now: () => 0 },
};
const ctx = { deps, warm: newWarmState(), remainingMs: () => 60_000 };

const node = {
  name: 'a-1',
  uid: 'u',
  resourceVersion: '1',
  creationTimestamp: 0,
  labels: {},
  taints: [],
  conditions: [],
  unschedulable: false,
} as unknown as NodeChanged['node'];
const nodeChanged = (cluster: string): RelayInput => ({
  'detail-type': 'Node Changed',
  detail: { schemaVersion: 1, cluster, type: 'MODIFIED', node },
});
const podChanged = (cluster: string): RelayInput => ({
  'detail-type': 'Pod Changed',
  detail: {
    schemaVersion: 1,
    cluster,
    type: 'MODIFIED',
    pod: { namespace: 'default', name: 'web-1', uid: 'p', nodeName: 'a-1', tolerations: [] },
  } as unknown as PodChanged,
});
const event = (e: RelayInput): FunctionInput => ({ kind: 'event', event: e });

async function rejection(run: Promise<Step>): Promise<string[]> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EventParseError);
  return (error as EventParseError).issues as string[];
}

describe('Dispatch', () => {
  it.each([
    ['nodeTaints', nodeChanged('staging')],
    ['taintEviction', nodeChanged('staging')],
    ['taintEviction', podChanged('staging')],
    ['podProcessing', podChanged('staging')],
  ] as const)('%s refuses an event for another cluster before any I/O', async (fn, input) => {
    expect(await rejection(Dispatch[fn](ctx, event(input)))).toEqual([
      'detail.cluster: this deployment serves cluster "prod", got "staging"',
    ]);
  });

  it.each([
    ['nodeTaints', event(podChanged('prod')), 'not routed to nodeTaints: "Pod Changed"'],
    ['podProcessing', event(nodeChanged('prod')), 'not routed to podProcessing: "Node Changed"'],
    ['monitorNodeHealth', event(nodeChanged('prod')), 'not routed to monitorNodeHealth: "Node Changed"'],
    ['evictionDrainer', event(nodeChanged('prod')), 'not routed to evictionDrainer: "Node Changed"'],
    ['nodeTaints', { kind: 'schedule' }, 'not routed to nodeTaints: schedule'],
  ] as const)('%s refuses what it is not subscribed to', async (fn, input, issue) => {
    expect(await rejection(Dispatch[fn](ctx, input))).toEqual([`detail-type: ${issue}`]);
  });

  it("refuses the monitor's invoke for another cluster before any I/O", async () => {
    const invoke: FunctionInput = {
      kind: 'invoke',
      invocation: { source: 'nlc.monitor', cluster: 'staging', reason: 'monitorPass' },
    };
    expect(await rejection(Dispatch.evictionDrainer(ctx, invoke))).toEqual([
      'cluster: this deployment serves cluster "prod", got "staging"',
    ]);
  });
});

describe('runSteps', () => {
  it("sleeps through each step's wait, then runs the next, until done", async () => {
    const order: string[] = [];
    const last: Step = { kind: 'done' };
    const second: Step = {
      kind: 'wait',
      ms: 250,
      next: () => {
        order.push('third');
        return Promise.resolve(last);
      },
    };
    const first: Step = {
      kind: 'wait',
      ms: 1_000,
      next: () => {
        order.push('second');
        return Promise.resolve(second);
      },
    };
    await runSteps(first, (ms) => {
      order.push(`sleep ${ms}`);
      return Promise.resolve();
    });
    expect(order).toEqual(['sleep 1000', 'second', 'sleep 250', 'third']);
  });
});
