// shared/app/leaseConfirmation.ts: upstream's lease confirmation (PR #138698, v1.37) on the relay's
// lease cache. The cluster port is a table of Lease versions (reads counted); the API-backed path is
// tested in test/integration/functions/monitor.test.ts.
import { describe, expect, it } from 'vitest';
import {
  compareResourceVersion,
  confirmLeases,
  type LeaseConfirmationInput,
} from '../../../shared/app/leaseConfirmation.js';
import type { ReadResult } from '../../../shared/domain/effects.js';

/** The API's node Leases by node, and the reads made. */
function apiWith(leases: Record<string, string | Error>) {
  const reads: string[] = [];
  const cluster = {
    getNodeLeaseVersion: (node: string): Promise<ReadResult<string>> => {
      reads.push(node);
      const lease = leases[node];
      if (lease === undefined)
        return Promise.resolve({ ok: false, reason: 'NotFound', message: `lease ${node} not found` });
      if (lease instanceof Error)
        return Promise.resolve({ ok: false, reason: 'Failed', message: lease.message });
      return Promise.resolve({ ok: true, value: lease });
    },
  };
  return { cluster, reads };
}

type InputOverrides = Omit<Partial<LeaseConfirmationInput>, 'candidates'> & { candidates?: string[] };
const input = (over: InputOverrides): LeaseConfirmationInput => ({
  written: over.written,
  digest: over.digest ?? { leaseVersions: new Map(), leaseResourceVersion: '100' },
  candidates: () => over.candidates ?? [],
});

describe('compareResourceVersion (upstream resourceversion.CompareResourceVersion)', () => {
  it.each([
    ['100', '99', 1],
    ['99', '100', -1],
    ['100', '100', 0],
    ['123', '124', -1],
    ['18446744073709551616', '18446744073709551615', 1],
    ['abc', '1', undefined],
    ['01', '1', undefined],
    ['', '1', undefined],
    ['1', '-1', undefined],
  ] as const)('%s vs %s: %s', (a, b, want) => {
    expect(compareResourceVersion(a, b)).toBe(want);
  });
});

describe('confirmLeases', () => {
  it('reads the Lease of each node about to be marked and proceeds when the relay has the same version', async () => {
    const { cluster, reads } = apiWith({ 'a-1': '41', 'a-2': '42' });
    const result = await confirmLeases(
      { cluster },
      input({
        digest: {
          leaseVersions: new Map([
            ['a-1', '41'],
            ['a-2', '42'],
          ]),
          leaseResourceVersion: '50',
        },
        candidates: ['a-1', 'a-2'],
      }),
    );
    expect(result).toEqual({
      kind: 'proceed',
      written: undefined,
      confirmed: ['a-1', 'a-2'],
      unconfirmed: [],
    });
    expect(reads).toEqual(['a-1', 'a-2']);
  });

  it('reads nothing when no node is about to be marked', async () => {
    const { cluster, reads } = apiWith({});
    expect(await confirmLeases({ cluster }, input({}))).toMatchObject({ kind: 'proceed' });
    expect(reads).toEqual([]);
  });

  it('holds at the first node whose API Lease is not the relay copy, recording the live version', async () => {
    const { cluster, reads } = apiWith({ 'a-1': '57', 'a-2': '42' });
    const result = await confirmLeases(
      { cluster },
      input({
        digest: {
          leaseVersions: new Map([
            ['a-1', '41'],
            ['a-2', '42'],
          ]),
          leaseResourceVersion: '50',
        },
        candidates: ['a-1', 'a-2'],
      }),
    );
    expect(result).toEqual({ kind: 'stale', written: '57', node: 'a-1', cached: '41', live: '57' });
    // Upstream short-circuits: no read for the nodes after it.
    expect(reads).toEqual(['a-1']);
  });

  it('a node the relay names no version for (silent under 15 s: a short grace period) is marked unconfirmed, without a read', async () => {
    const { cluster, reads } = apiWith({ 'a-1': '41' });
    const result = await confirmLeases(
      { cluster },
      input({ digest: { leaseVersions: new Map(), leaseResourceVersion: '50' }, candidates: ['a-1'] }),
    );
    expect(result).toEqual({ kind: 'proceed', written: undefined, confirmed: [], unconfirmed: ['a-1'] });
    expect(reads).toEqual([]);
  });

  it('a node without a Lease in the API is marked (NotFound is no failure)', async () => {
    const { cluster } = apiWith({});
    const result = await confirmLeases(
      { cluster },
      input({
        digest: { leaseVersions: new Map([['a-1', '41']]), leaseResourceVersion: '50' },
        candidates: ['a-1'],
      }),
    );
    expect(result).toMatchObject({ kind: 'proceed', confirmed: ['a-1'] });
  });

  it('a failed read holds the pass, naming the node and the error', async () => {
    const { cluster } = apiWith({ 'a-1': new Error('503 Service Unavailable') });
    const result = await confirmLeases(
      { cluster },
      input({ digest: { leaseVersions: new Map([['a-1', '41']]) }, candidates: ['a-1'] }),
    );
    expect(result).toEqual({
      kind: 'lookupFailed',
      written: undefined,
      node: 'a-1',
      message: '503 Service Unavailable',
    });
  });

  it('a relay that sends no versions cannot be checked: the nodes are marked, unconfirmed, without reads', async () => {
    const { cluster, reads } = apiWith({ 'a-1': '41' });
    const result = await confirmLeases({ cluster }, input({ digest: {}, candidates: ['a-1'] }));
    expect(result).toEqual({ kind: 'proceed', written: undefined, confirmed: [], unconfirmed: ['a-1'] });
    expect(reads).toEqual([]);
  });

  describe('EnsureReady: a recorded version holds every pass until the relay has synced it', () => {
    it.each([
      { synced: '56', want: 'waiting' },
      { synced: '57', want: 'proceed' },
      { synced: '90', want: 'proceed' },
      // Upstream skips a cache that synced nothing, or versions that do not compare.
      { synced: undefined, want: 'proceed' },
      { synced: 'opaque', want: 'proceed' },
    ])('synced $synced against written 57: $want', async ({ synced, want }) => {
      const { cluster, reads } = apiWith({ 'a-1': '41' });
      const result = await confirmLeases(
        { cluster },
        input({
          written: '57',
          digest: {
            leaseVersions: new Map([['a-1', '41']]),
            ...(synced !== undefined && { leaseResourceVersion: synced }),
          },
          candidates: ['a-1'],
        }),
      );
      expect(result.kind).toBe(want);
      if (want === 'waiting') {
        expect(result).toEqual({ kind: 'waiting', written: '57', synced });
        expect(reads).toEqual([]);
      } else {
        expect(result).toMatchObject({ cleared: '57', confirmed: ['a-1'] });
      }
    });
  });
});
