// RFC 6902 (the Appendix A examples), RFC 7386, and the strategic merge patch directives, on plain JSON.
import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../../../local/apiserver/json.js';
import { applyJsonPatch } from '../../../../local/apiserver/jsonPatch.js';
import { applyMergePatch } from '../../../../local/apiserver/patch.js';
import { ApiStatusError } from '../../../../local/apiserver/status.js';
import {
  applyStrategicMergePatch,
  type StrategicSchema,
} from '../../../../local/apiserver/strategicMergePatch.js';

describe('JSON patch (RFC 6902 Appendix A)', () => {
  it.each<{ name: string; doc: JsonObject; patch: Json; want: Json }>([
    {
      name: 'A.1 adding an object member',
      doc: { foo: 'bar' },
      patch: [{ op: 'add', path: '/baz', value: 'qux' }],
      want: { foo: 'bar', baz: 'qux' },
    },
    {
      name: 'A.2 adding an array element',
      doc: { foo: ['bar', 'baz'] },
      patch: [{ op: 'add', path: '/foo/1', value: 'qux' }],
      want: { foo: ['bar', 'qux', 'baz'] },
    },
    {
      name: 'A.3 removing an object member',
      doc: { baz: 'qux', foo: 'bar' },
      patch: [{ op: 'remove', path: '/baz' }],
      want: { foo: 'bar' },
    },
    {
      name: 'A.4 removing an array element',
      doc: { foo: ['bar', 'qux', 'baz'] },
      patch: [{ op: 'remove', path: '/foo/1' }],
      want: { foo: ['bar', 'baz'] },
    },
    {
      name: 'A.5 replacing a value',
      doc: { baz: 'qux', foo: 'bar' },
      patch: [{ op: 'replace', path: '/baz', value: 'boo' }],
      want: { baz: 'boo', foo: 'bar' },
    },
    {
      name: 'A.6 moving a value',
      doc: { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      patch: [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      want: { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    },
    {
      name: 'A.7 moving an array element',
      doc: { foo: ['all', 'grass', 'cows', 'eat'] },
      patch: [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      want: { foo: ['all', 'cows', 'eat', 'grass'] },
    },
    {
      name: 'A.8 testing a value: success',
      doc: { baz: 'qux', foo: ['a', 2, 'c'] },
      patch: [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      want: { baz: 'qux', foo: ['a', 2, 'c'] },
    },
    {
      name: 'A.10 adding a nested member object',
      doc: { foo: 'bar' },
      patch: [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      want: { foo: 'bar', child: { grandchild: {} } },
    },
    {
      name: 'A.12 ~1 and ~0 escapes',
      doc: { 'a/b': 1, 'm~n': 2 },
      patch: [
        { op: 'remove', path: '/a~1b' },
        { op: 'replace', path: '/m~0n', value: 3 },
      ],
      want: { 'm~n': 3 },
    },
    {
      name: 'A.16 adding an array value',
      doc: { foo: ['bar'] },
      patch: [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      want: { foo: ['bar', ['abc', 'def']] },
    },
    {
      name: 'copy',
      doc: { a: { b: 1 } },
      patch: [{ op: 'copy', from: '/a', path: '/c' }],
      want: { a: { b: 1 }, c: { b: 1 } },
    },
    {
      name: 'test compares objects regardless of key order',
      doc: { a: { x: 1, y: 2 } },
      patch: [{ op: 'test', path: '/a', value: { y: 2, x: 1 } }],
      want: { a: { x: 1, y: 2 } },
    },
  ])('$name', ({ doc, patch, want }) => {
    expect(applyJsonPatch(doc, patch)).toEqual(want);
  });

  it.each<{ name: string; doc: JsonObject; patch: Json; message: string }>([
    {
      name: 'A.9 testing a value: error',
      doc: { baz: 'qux' },
      patch: [{ op: 'test', path: '/baz', value: 'bar' }],
      message: 'testing value /baz failed: test operation failed',
    },
    {
      name: 'A.11 ignoring unrecognized elements is fine, an unknown op is not',
      doc: {},
      patch: [{ op: 'frob', path: '/a' }],
      message: 'Unexpected kind: frob',
    },
    {
      name: 'A.13 removing a missing member',
      doc: { a: 1 },
      patch: [{ op: 'remove', path: '/b' }],
      message: 'Unable to remove nonexistent key: b: missing value',
    },
    {
      name: 'adding under a missing parent',
      doc: {},
      patch: [{ op: 'add', path: '/a/b', value: 1 }],
      message: 'add operation does not apply: doc is missing path: "/a/b": missing value',
    },
    {
      name: 'an index past the end',
      doc: { a: [1] },
      patch: [{ op: 'add', path: '/a/2', value: 1 }],
      message: 'Unable to access invalid index: 2: invalid index referenced',
    },
    {
      name: 'a leading zero index',
      doc: { a: [1, 2] },
      patch: [{ op: 'remove', path: '/a/01' }],
      message: 'Unable to access invalid index: 01: invalid index referenced',
    },
  ])('$name is a 422', ({ doc, patch, message }) => {
    try {
      applyJsonPatch(doc, patch);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiStatusError);
      expect((error as ApiStatusError).status).toMatchObject({
        code: 422,
        reason: 'Invalid',
        details: { causes: [{ message }] },
      });
    }
  });

  it('leaves the input untouched when an operation fails halfway', () => {
    const doc = { a: 1 };
    expect(() =>
      applyJsonPatch(doc, [
        { op: 'add', path: '/b', value: 2 },
        { op: 'remove', path: '/c' },
      ]),
    ).toThrow(ApiStatusError);
    expect(doc).toEqual({ a: 1 });
  });

  it('rejects a body that is not a list of operations with 400', () => {
    expect(() => applyJsonPatch({}, { op: 'add' })).toThrow(
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  it.each<{ target: Json; patch: Json; want: Json }>([
    { target: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { target: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { target: { a: 'b' }, patch: { a: null }, want: {} },
    { target: { a: ['b'] }, patch: { a: 'c' }, want: { a: 'c' } },
    { target: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, want: { a: { b: 'd' } } },
    { target: { a: [{ b: 'c' }] }, patch: { a: [1] }, want: { a: [1] } },
    { target: [1, 2], patch: { a: 'b', c: null }, want: { a: 'b' } },
    { target: { e: null }, patch: { a: 1 }, want: { e: null, a: 1 } },
  ])('$target + $patch', ({ target, patch, want }) => {
    expect(applyMergePatch(target, patch)).toEqual(want);
  });
});

describe('strategic merge patch', () => {
  const schema: StrategicSchema = {
    'status.conditions': { mergeKey: 'type' },
    'metadata.finalizers': 'set',
    'spec.containers': { mergeKey: 'name' },
    'spec.containers[].env': { mergeKey: 'name' },
  };
  const apply = (doc: JsonObject, patch: Json) => applyStrategicMergePatch(doc, patch, schema);

  it('merges a keyed list element by element and appends new keys', () => {
    const doc: JsonObject = {
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'a' },
          { type: 'DiskPressure', status: 'False' },
        ],
      },
    };
    expect(
      apply(doc, {
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'PIDPressure', status: 'False' },
          ],
        },
      }),
    ).toEqual({
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'a' },
          { type: 'DiskPressure', status: 'False' },
          { type: 'PIDPressure', status: 'False' },
        ],
      },
    });
  });

  it('replaces lists that have no strategy', () => {
    expect(apply({ spec: { taints: [{ key: 'a' }] } }, { spec: { taints: [{ key: 'b' }] } })).toEqual({
      spec: { taints: [{ key: 'b' }] },
    });
  });

  it('merges nested keyed lists', () => {
    const doc = { spec: { containers: [{ name: 'c', image: 'i:1', env: [{ name: 'A', value: '1' }] }] } };
    const patch = { spec: { containers: [{ name: 'c', env: [{ name: 'B', value: '2' }] }] } };
    expect(apply(doc, patch)).toEqual({
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
        ],
      },
    });
  });

  it('treats a primitive merge list as a set, with $deleteFromPrimitiveList', () => {
    const doc = { metadata: { finalizers: ['a', 'b'] } };
    expect(apply(doc, { metadata: { finalizers: ['b', 'c'] } })).toEqual({
      metadata: { finalizers: ['a', 'b', 'c'] },
    });
    expect(apply(doc, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } })).toEqual({
      metadata: { finalizers: ['b'] },
    });
  });

  it('honours $patch: replace on a map and on a list, and $patch: delete on a map', () => {
    const doc = { spec: { a: 1, b: 2 }, status: { conditions: [{ type: 'A', status: 'True' }] } };
    expect(apply(doc, { spec: { $patch: 'replace', c: 3 } })).toMatchObject({ spec: { c: 3 } });
    expect(apply(doc, { spec: { $patch: 'delete' } })).toEqual({ status: doc.status });
    expect(
      apply(doc, { status: { conditions: [{ $patch: 'replace' }, { type: 'B', status: 'False' }] } }),
    ).toMatchObject({
      status: { conditions: [{ type: 'B', status: 'False' }] },
    });
  });

  it('keeps only the listed keys with $retainKeys', () => {
    expect(apply({ spec: { a: 1, b: 2 } }, { spec: { $retainKeys: ['a', 'c'], c: 3 } })).toEqual({
      spec: { a: 1, c: 3 },
    });
  });

  it('deletes a key with null and never leaves a directive in the result', () => {
    expect(
      apply(
        { spec: { a: 1, b: 2 } },
        { spec: { a: null }, status: { conditions: [{ type: 'X', $patch: 'merge', status: 'True' }] } },
      ),
    ).toEqual({
      spec: { b: 2 },
      status: { conditions: [{ type: 'X', status: 'True' }] },
    });
  });

  it('answers 500 for a keyed-list element without its merge key, as upstream does', () => {
    expect(() => apply({}, { status: { conditions: [{ status: 'True' }] } })).toThrow(
      'does not contain declared merge key: type',
    );
  });
});
