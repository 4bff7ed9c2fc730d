// relay/intern.ts: the informer caches' shared strings must not lose a field the functions read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Interner } from '../../../relay/intern.js';
import * as arb from '../../helpers/eventArbitraries.js';

describe('Interner.pod', () => {
  it('keeps every field of a trimmed pod that a Pod Changed event carries', () => {
    const interner = new Interner();
    fc.assert(
      fc.property(arb.pod, (pod) => {
        expect(interner.pod(pod)).toEqual(pod);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps the DisruptionTarget reason (a shadow tells the cluster's taint evictions by it)", () => {
    const pod = {
      namespace: 'default',
      name: 'web-1',
      uid: 'u1',
      nodeName: 'a-1',
      tolerations: [],
      deletionTimestamp: Date.UTC(2026, 0, 1),
      disruptionTarget: 'DeletionByTaintManager',
    };
    expect(new Interner().pod(pod)).toMatchObject({ disruptionTarget: 'DeletionByTaintManager' });
  });
});
