// `nlc status` during a relay outage, on the local stack and the real clock, as an operator would see it
// from another terminal (the stack found through its stack.json, `--data-dir`): the relay stops (the
// live view's `r`), digests stop, and `nlc status` must make that visible (the last digest's age grows
// past the grace period) without any node turning Unknown, since without digests the controller cannot
// tell silent nodes from a silent relay (docs/architecture.md#observation-gap). When a new relay
// starts, digests resume, the monitor records the observation gap and gives every node a fresh probe,
// and still nobody is marked Unknown.
//
// Short periods make it quick (monitor period 1 s, grace 4 s). Nothing is asserted on timing: every
// check polls for its condition with a generous bound.
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../shared/present/statusReport.js';
import { demoCluster } from '../../local/stack/demoCluster.js';
import type { LocalStack } from '../../local/stack/stack.js';
import { ClusterSubject } from '../../shared/decisionContract.js';
import { runCli } from '../integration/cli/helpers.js';
import { eventually, startTestStack, type TestStack } from '../helpers/localStack.js';

const GraceSeconds = 4;
const Unreachable = 'node.kubernetes.io/unreachable';

let harness: TestStack;
let stack: LocalStack;
let core: CoreV1Api;

beforeAll(async () => {
  harness = await startTestStack({
    settings: {
      nodeMonitorPeriod: '1s',
      nodeMonitorGracePeriod: `${GraceSeconds}s`,
      nodeStartupGracePeriod: '5s',
    },
    cluster: demoCluster({ nodesPerZone: 2, podsPerNode: 1 }),
  });
  stack = harness.stack;
  core = stack.kubeConfig().makeApiClient(CoreV1Api);
}, 240_000);

afterAll(async () => {
  await harness.dispose();
}, 60_000);

interface Status {
  readonly report: StatusReport;
  /** The human form's "Last digest" age, in seconds; undefined when the line is missing. */
  readonly shownAge: number | undefined;
  /** The human form flags the age as late (older than the grace period). */
  readonly shownLate: boolean;
}

/** `nlc status` from another terminal: the stack found through its data directory's stack.json. */
async function status(): Promise<Status> {
  const json = await runCli(['status', '--data-dir', stack.dataDir, '-o', 'json']);
  const human = await runCli(['status', '--data-dir', stack.dataDir]);
  expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
  expect({ code: human.code, stderr: human.stderr }).toEqual({ code: 0, stderr: '' });
  const age = /^Last digest: +(?:(\d+)m)?(\d+)s ago( \(late: .*\))?$/m.exec(human.stdout);
  return {
    report: JSON.parse(json.stdout) as StatusReport,
    shownAge: age === null ? undefined : Number(age[1] ?? 0) * 60 + Number(age[2]),
    shownLate: age?.[3] !== undefined,
  };
}

const readyOf = (node: V1Node): string | undefined =>
  node.status?.conditions?.find((c) => c.type === 'Ready')?.status;

/** Every node as the API has it and as `nlc status` shows it: all Ready=True, none tainted. */
async function expectNobodyUnknown(report: StatusReport): Promise<void> {
  const nodes = (await core.listNode()).items;
  expect(nodes.map((n) => [n.metadata?.name, readyOf(n), (n.spec?.taints ?? []).map((t) => t.key)])).toEqual(
    nodes.map((n) => [n.metadata?.name, 'True', []]),
  );
  expect(report.nodes.map((n) => [n.name, n.ready, n.taints])).toEqual(
    report.nodes.map((n) => [n.name, 'True', []]),
  );
  expect(report.nodes.length).toBe(nodes.length);
  expect(nodes.some((n) => (n.spec?.taints ?? []).some((t) => t.key === Unreachable))).toBe(false);
}

let lastBeforeOutage: StatusReport;

describe('nlc status while the local stack runs without its relay', () => {
  it('shows a fresh last digest and every node Ready while the relay runs', async () => {
    const { report, shownAge } = await eventually(
      'every zone Normal, every node Ready, a fresh digest',
      async () => {
        const s = await status();
        const fresh = s.report.lastDigestAgeSeconds !== null && s.report.lastDigestAgeSeconds <= GraceSeconds;
        const up =
          s.report.zones.length === 3 &&
          s.report.zones.every((z) => z.state === 'Normal') &&
          s.report.nodes.length === 6 &&
          s.report.nodes.every((n) => n.ready === 'True');
        return fresh && up ? s : undefined;
      },
    );
    expect(shownAge).toBeDefined();
    expect(report.nodeMonitorGracePeriodSeconds).toBe(GraceSeconds);
    await expectNobodyUnknown(report);
  }, 120_000);

  it('shows the last digest ageing past the grace period once the relay stops, and nobody Unknown', async () => {
    await stack.relay.stop();
    expect(stack.relay.running()).toBe(false);
    // Past the grace period, no digest can still be on its way: from here the tables stay as they are.
    const stopped = await eventually('the last digest older than the grace period', async () => {
      const s = await status();
      return (s.report.lastDigestAgeSeconds ?? 0) > GraceSeconds ? s : undefined;
    });
    lastBeforeOutage = stopped.report;
    const later = await eventually('the last digest older still', async () => {
      const s = await status();
      const age = s.report.lastDigestAgeSeconds ?? 0;
      return age >= (stopped.report.lastDigestAgeSeconds ?? 0) + GraceSeconds && (s.shownAge ?? 0) >= age
        ? s
        : undefined;
    });
    // No digest was processed meanwhile: the same one, only older, in both output forms.
    expect(later.report.lastSequence).toBe(stopped.report.lastSequence);
    expect(later.report.observedAt).toBe(stopped.report.observedAt);
    expect(later.shownAge).toBeGreaterThan(2 * GraceSeconds);
    // Flagged: older than the grace period the monitor runs with (stored with the digest).
    expect([stopped.report.lastDigestLate, later.report.lastDigestLate, later.shownLate]).toEqual([
      true,
      true,
      true,
    ]);
    // The kubelets still run, the controller marks nobody Unknown for the relay's silence.
    await expectNobodyUnknown(later.report);
  }, 120_000);

  it('after a new relay starts: a fresh digest, the observation gap recorded, still nobody Unknown', async () => {
    await stack.relay.start();
    const resumed = await eventually('a digest after the outage', async () => {
      const s = await status();
      const newer = (s.report.observedAt ?? '') > (lastBeforeOutage.observedAt ?? '');
      return newer && (s.report.lastDigestAgeSeconds ?? Infinity) <= GraceSeconds ? s : undefined;
    });
    const trail = await stack.stores.decisions.query(stack.config.cluster, ClusterSubject, { limit: 50 });
    expect(trail.some((d) => d.what === 'observationGap')).toBe(true);
    // A grace period of passes after the first digest: a node the gap had aged would be Unknown by now.
    const settled = await eventually('a grace period of digests after the outage', async () => {
      const s = await status();
      const since = Date.parse(s.report.observedAt ?? '') - Date.parse(resumed.report.observedAt ?? '');
      return since > 2 * GraceSeconds * 1000 && (s.shownAge ?? Infinity) <= GraceSeconds ? s : undefined;
    });
    expect([settled.report.lastDigestLate, settled.shownLate]).toEqual([false, false]);
    await expectNobodyUnknown(settled.report);
  }, 120_000);
});
