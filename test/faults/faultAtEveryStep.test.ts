// Fault: an API answers 409, 429, 500 or nothing at any step of the controller's work, and DynamoDB
// answers 500, throttling, a lost condition or nothing at any of its writes. Whatever step fails, the
// controller must converge to the state it reaches without the fault: nothing lost (node-c is marked
// Unknown, its pod NotReady, the node queued and tainted), nothing half-written, nothing done twice.
//
// The work under fault: node-c goes silent; the pass that marks it Unknown (a status write from a stale
// copy: 409, re-read, write; its pod marked NotReady), the pass that queues it, and the drainer that
// taints it. Each case starts a fresh world, injects ONE fault at the k-th request of that work
// (Kubernetes API: every request; DynamoDB: every write), and goes on as Lambda does: a failed
// invocation is retried (once here, at once), the next digest comes 5 s later, the drainer runs after
// each pass. 35 s later the state must equal the state without a fault.
import {
  ConditionalCheckFailedException,
  InternalServerError,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { runDrainer } from '../../shared/app/drainer.js';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import { positionWriteEvery } from '../../shared/app/monitorSteps.js';
import type { LoadedState, StateStores } from '../../shared/ports/stores.js';
import type { FaultAction } from '../../local/apiserver/faults.js';
import { createPod } from '../helpers/functionsFixture.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
const END = t0 + 90 * S;
let world: World | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

type DynamoFault = 'InternalServerError' | 'Throttling' | 'ConditionalCheckFailed' | 'Timeout';

interface Run {
  readonly world: World;
  /** Kubernetes requests and DynamoDB writes made by the work under fault (from the 55 s pass on). */
  readonly k8sRequests: number;
  readonly dynamoWrites: number;
}

/** A client whose k-th write (from `arm()` on) fails with `fault` (every attempt of the SDK's retries). */
function faultyClient(w: World, fault: DynamoFault | undefined, k: number) {
  const client = w.db.newClient({ maxAttempts: 2 });
  let counting = false;
  let writes = 0;
  let failing = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      const write = /^(Put|Update|Delete|BatchWrite)Item/.test(name);
      if (counting && write && failing === 0) {
        writes++;
        if (fault !== undefined && writes === k) failing = fault === 'ConditionalCheckFailed' ? 1 : 2;
      }
      if (failing > 0 && write) {
        failing--;
        const $metadata = { httpStatusCode: 500 };
        switch (fault) {
          case 'InternalServerError':
            throw new InternalServerError({ message: 'injected', $metadata });
          case 'Throttling':
            throw new ThrottlingException({ message: 'injected', $metadata: { httpStatusCode: 400 } });
          case 'ConditionalCheckFailed':
            throw new ConditionalCheckFailedException({
              message: 'injected',
              $metadata: { httpStatusCode: 400 },
            });
          case 'Timeout':
            throw Object.assign(new Error('injected: socket timeout'), { name: 'TimeoutError' });
          case undefined:
            break;
        }
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: 'injectFaults', priority: 'low' },
  );
  return {
    client,
    arm: () => {
      counting = true;
    },
    writes: () => writes,
  };
}

async function run(options: {
  k8s?: { fault: FaultAction; k: number };
  dynamo?: { fault: DynamoFault; k: number };
}): Promise<Run> {
  const w = await startWorld(testConfig(), { requestTimeoutMs: 300 });
  world = w;
  const faulty = faultyClient(w, options.dynamo?.fault, options.dynamo?.k ?? 0);
  const stores: StateStores = w.db.stores({ clock: { now: () => w.now }, client: faulty.client });
  for (const name of ['node-a', 'node-b', 'node-c']) w.addNode(name);
  createPod(w.api, 'web-1', { nodeName: 'node-c' });
  await w.syncNodeCache();
  const cache: MonitorCache = new Map<string, LoadedState>();
  let sequence = 0;
  let k8sStart = 0;
  for (let t = t0; t <= END; t += 5 * S) {
    w.now = t;
    if (t === t0 + 55 * S) {
      // The work under fault starts with the pass that marks node-c Unknown.
      k8sStart = w.api.requests.length;
      faulty.arm();
      if (options.k8s !== undefined) {
        w.api.faults.inject({ ...options.k8s.fault, after: options.k8s.k - 1, times: 1 });
      }
    }
    const probes = Object.fromEntries(
      ['node-a', 'node-b', 'node-c'].map((n) => [n, n === 'node-c' ? t0 : t - S]),
    );
    const digest = w.digest(++sequence, t, probes);
    const deps = w.monitorDeps({ stores });
    // Lambda: a failed invocation is retried (at once here; the next digest comes anyway).
    await runMonitorPass(deps, digest, { cache }).catch(() => runMonitorPass(deps, digest, { cache }));
    await sync(w);
    const drainer = w.drainerDeps({ stores });
    await runDrainer(drainer, t).catch(() => runDrainer(drainer, t));
    await sync(w);
  }
  return { world: w, k8sRequests: w.api.requests.length - k8sStart, dynamoWrites: faulty.writes() };
}

/** node-taints storing what Node Changed says (its list may meet the fault too: retried, as Lambda would). */
async function sync(w: World): Promise<void> {
  await w.syncNodeCache().catch(() => w.syncNodeCache());
}

/** What the controller should have brought about, read from the API and the tables. */
async function outcome(w: World) {
  const node = w.api.store.nodes.get('node-c');
  const pod = w.api.store.pods.get('web-1', { namespace: 'default' });
  const loaded = await w.stores.controllerState.load('test');
  const queue = [...loaded.state.zoneQueues.values()];
  return {
    ready: node.status?.conditions?.find((c) => c.type === 'Ready')?.status,
    taints: (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort(),
    podReady: pod.status?.conditions?.find((c) => c.type === 'Ready')?.status,
    savedReady: loaded.state.nodeHealth.get('node-c')?.status.find((c) => c.type === 'Ready')?.status,
    queued: queue.flatMap((q) => q.queue.map((v) => v.value)),
    processedOnce: queue.flatMap((q) => q.set).sort(),
    // The stored position: quiet passes leave it unwritten for up to half the grace period, so which
    // digest it names depends on when the last write happened; that it is that recent does not.
    positionRecent: END - (loaded.meta.lastObservedAt ?? 0) < positionWriteEvery(testConfig()),
    // Upstream records the pod's Warning even after a failed write, so a retried MarkPodsNotReady may
    // record it twice: whether it was recorded is the state, not how often.
    podWarned: w.api.store.events
      .list({ namespace: 'default' })
      .items.some((e) => e.reason === 'NodeNotReady' && e.involvedObject.name === 'web-1'),
  };
}

describe('one fault at any step of marking, queueing and tainting a dead node', () => {
  it('converges to the state without the fault, whatever the step and the fault', async () => {
    const calm = await run({});
    const expected = await outcome(calm.world);
    expect(expected).toMatchObject({
      ready: 'Unknown',
      podReady: 'False',
      savedReady: 'Unknown',
      queued: [],
      positionRecent: true,
    });
    // node-taints is not part of this world: the drainer's taint is the controller's only one here.
    expect(expected.taints).toContain('node.kubernetes.io/unreachable:NoExecute');
    const { k8sRequests, dynamoWrites } = calm;
    await calm.world.close();
    world = undefined;

    const k8sFaults: FaultAction[] = [
      { kind: 'conflict' },
      { kind: 'tooManyRequests', retryAfterSeconds: 0 },
      { kind: 'internalError' },
      { kind: 'delay', ms: 400 }, // longer than the adapter's 300 ms request timeout
    ];
    const dynamoFaults: DynamoFault[] = [
      'InternalServerError',
      'Throttling',
      'ConditionalCheckFailed',
      'Timeout',
    ];
    const diverged: string[] = [];
    for (let k = 1; k <= k8sRequests; k++) {
      const fault = k8sFaults[k % k8sFaults.length] ?? { kind: 'internalError' };
      const faulted = await run({ k8s: { fault, k } });
      const got = await outcome(faulted.world);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        diverged.push(`Kubernetes request ${k} (${fault.kind}): ${JSON.stringify(got)}`);
      }
      await faulted.world.close();
      world = undefined;
    }
    for (let k = 1; k <= dynamoWrites; k++) {
      const fault = dynamoFaults[k % dynamoFaults.length] ?? 'InternalServerError';
      const faulted = await run({ dynamo: { fault, k } });
      const got = await outcome(faulted.world);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        diverged.push(`DynamoDB write ${k} (${fault}): ${JSON.stringify(got)}`);
      }
      await faulted.world.close();
      world = undefined;
    }
    console.info(`faults injected: ${k8sRequests} Kubernetes requests, ${dynamoWrites} DynamoDB writes`);
    expect({ k8sRequests, dynamoWrites, diverged }).toEqual({ k8sRequests, dynamoWrites, diverged: [] });
    expect(k8sRequests).toBeGreaterThan(5);
    expect(dynamoWrites).toBeGreaterThan(5);
  }, 600_000);
});
