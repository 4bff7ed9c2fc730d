// `nlc queue` against a seeded local stack: per-zone limiters and entries in processing order, the
// processed-once set, and the taint eviction controller's pending pod deletions (seed.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { QueueReport } from '../../../cli/commands/queue.js';
import { TokenClaimTtl } from '../../../shared/app/drainer.js';
import { tryNext } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { runCli, tableRow } from './helpers.js';
import { CLUSTER, iso, PREFIX, queuedAt, seedStack, t0, type SeededStack } from './seed.js';

let stack: SeededStack;
let target: string[];
beforeAll(async () => {
  stack = await seedStack();
  target = ['--endpoint', stack.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
});
afterAll(async () => {
  await stack.stop();
});

// web-2 tolerates the taint for 30 s, web-1 for 300 s; the taint was seen at t0 + 60 s. The seed's
// last commit ran on a clock that agrees with the relay's, so the relay clock at `at` is `at`.
const at = t0 + 95_000;

describe('nlc queue', () => {
  it('prints each zone: its limiter, its queue in order, its processed-once set', async () => {
    const { code, stdout, stderr } = await runCli(['queue', ...target, '--at', iso(at)]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(
      // The token taken at t0 + 60 s, refilled at 0.01 qps for 35 s.
      `Zone region1:zone-a: limiter 0.01 qps, 0.35 of 1 tokens (bucket last updated ${iso(t0 + 60_000)}); processed once: 1`,
    );
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      '#',
      'NODE',
      'UID',
      'ADDED AT',
      'PROCESS AT',
      'DUE',
      'CLAIMED BY',
    ]);
    expect(tableRow(stdout, '1')).toEqual(['1', 'a-2', 'uid-a-2', iso(queuedAt), iso(queuedAt), 'yes', '-']);
    const zoneB = lines.findIndex((l) => l.startsWith('Zone region1:zone-b'));
    expect(lines[zoneB]).toBe(
      `Zone region1:zone-b: limiter 0.01 qps, 1.00 of 1 tokens (bucket last updated ${iso(t0)}); processed once: 0`,
    );
    expect(lines[zoneB + 1]).toBe('  (queue empty)');
  });

  it('then the pending pod evictions, soonest first, due or not at --at', async () => {
    const { stdout } = await runCli(['queue', ...target, '--at', iso(at)]);
    expect(stdout).toContain(`Pod evictions: 2 pending, 1 due at ${iso(at)}\n`);
    expect(tableRow(stdout, 'POD')).toEqual(['POD', 'NODE', 'FIRE AT', 'IN', 'STATE']);
    const rows = stdout
      .split('\n')
      .filter((l) => l.startsWith('default/'))
      .map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([
      ['default/web-2', 'a-1', iso(t0 + 90_000), 'due', 'waiting'],
      ['default/web-1', 'a-1', iso(t0 + 360_000), '4m25s', 'waiting'],
    ]);
  });

  it('judges due at the wall clock by default: pod evictions on it, zone queues on the relay clock', async () => {
    const early = await runCli(['queue', ...target], { now: t0 + 80_000 });
    // a-2 was queued at t0 + 60 s: due on the relay clock, as the drainer sees it.
    expect(tableRow(early.stdout, '1')?.[5]).toBe('yes');
    expect(early.stdout).toContain('0.20 of 1 tokens');
    expect(early.stdout).toContain(`Pod evictions: 2 pending, 0 due at ${iso(t0 + 80_000)}\n`);
  });

  it("judges the queues at the reader's clock: they are stamped on the functions' clock", async () => {
    const { stdout } = await runCli(['queue', ...target, '-o', 'json'], { now: t0 + 65_000 });
    const report = JSON.parse(stdout) as QueueReport;
    expect(report.at).toBe(iso(t0 + 65_000));
    expect(report.relayAt).toBe(iso(t0 + 65_000));
  });

  it('-o json and -o yaml print the whole report', async () => {
    const { code, stdout } = await runCli(['queue', ...target, '--at', iso(at), '-o', 'json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as QueueReport;
    expect(Object.keys(report)).toEqual(['cluster', 'at', 'relayAt', 'zones', 'podEvictions']);
    expect(report.relayAt).toBe(iso(at));
    expect(report.zones.map((z) => z.zone)).toEqual(['region1:zone-a', 'region1:zone-b']);
    expect(report.zones[0]).toEqual({
      zone: 'region1:zone-a',
      limiter: {
        kind: 'tokenBucket',
        qps: 0.01,
        burst: 1,
        tokens: 0,
        last: iso(t0 + 60_000),
        tokensNow: 0.35,
        at: iso(at),
      },
      entries: [
        {
          position: 1,
          node: 'a-2',
          uid: 'uid-a-2',
          addedAt: iso(queuedAt),
          processAt: iso(queuedAt),
          due: true,
          claim: null,
        },
      ],
      processedOnce: ['a-1'],
    });
    expect(report.podEvictions[0]).toEqual({
      pod: 'default/web-2',
      node: 'a-1',
      createdAt: iso(t0 + 60_000),
      fireAt: iso(t0 + 90_000),
      firesAt: iso(t0 + 90_000),
      state: 'waiting',
      due: true,
      inSeconds: -5,
    });
    const yaml = await runCli(['queue', ...target, '--at', iso(at), '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(report);
  });

  it('exits 2 naming a bad --at', async () => {
    const { code, stderr } = await runCli(['queue', ...target, '--at', 'yesterday']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'error: Invalid options (1 problem):\n- --at: expected an ISO 8601 time like 2026-01-29T09:00:00Z\n',
    );
  });
});

describe('nlc queue, an entry a drainer run holds the token of', () => {
  let claimed: SeededStack;
  let claimedTarget: string[];
  // zone-a's bucket (0.01 qps, its token taken at t0 + 60 s) has a token again from t0 + 160 s.
  const takenAt = t0 + 200_000;
  beforeAll(async () => {
    claimed = await seedStack();
    claimedTarget = ['--endpoint', claimed.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
    // What a drainer run does before its taint write: the token and its claim, in one conditional write.
    const stores = claimed.db.stores();
    const zone = [...(await stores.zoneQueues.loadZoneQueues(CLUSTER)).queues.keys()].find((z) =>
      z.endsWith('zone-a'),
    );
    if (zone === undefined) throw new Error('seed: no zone-a queue');
    const { result } = await stores.zoneQueues.updateZoneQueue(CLUSTER, zone, (q) => {
      if (q === undefined) return { queue: undefined, result: undefined };
      const step = tryNext(q, takenAt, { by: 'run-7f3a', ttl: TokenClaimTtl });
      return { queue: step.queue, result: step.item };
    });
    expect(result?.value).toBe('a-2');
  });
  afterAll(async () => {
    await claimed.stop();
  });

  it('names the run while its claim lasts, and says when it has run out (the next run takes it over)', async () => {
    const during = await runCli(['queue', ...claimedTarget, '--at', iso(takenAt + 5_000)]);
    expect(tableRow(during.stdout, '1')?.slice(1, 2)).toEqual(['a-2']);
    expect(tableRow(during.stdout, '1')?.at(-1)).toBe('run-7f3a');
    const wide = await runCli(['queue', ...claimedTarget, '--at', iso(takenAt + 5_000), '-o', 'wide']);
    expect(tableRow(wide.stdout, '1')?.slice(-2)).toEqual(['run-7f3a', iso(takenAt + TokenClaimTtl)]);
    const after = await runCli(['queue', ...claimedTarget, '--at', iso(takenAt + TokenClaimTtl)]);
    expect(tableRow(after.stdout, '1')?.at(-1)).toBe('run-7f3a (run out)');
    const json = JSON.parse(
      (await runCli(['queue', ...claimedTarget, '--at', iso(takenAt + 5_000), '-o', 'json'])).stdout,
    ) as QueueReport;
    expect(json.zones[0]?.entries[0]?.claim).toEqual({
      by: 'run-7f3a',
      at: iso(takenAt),
      until: iso(takenAt + TokenClaimTtl),
      runOut: false,
    });
  });
});
