// The three patch types a real server applies to built-in kinds, by content type: JSON Patch
// (RFC 6902, jsonPatch.ts), JSON Merge Patch (RFC 7386, here: lists are replaced whole) and Strategic
// Merge Patch (strategicMergePatch.ts).
import { type Json, type JsonObject, clone, deleteKey, isObject } from './json.js';
import { applyJsonPatch } from './jsonPatch.js';
import { badRequest } from './status.js';
import { type StrategicSchema, applyStrategicMergePatch } from './strategicMergePatch.js';

export type PatchType = 'json' | 'merge' | 'strategic';

export const patchContentTypes: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

// --- RFC 7386 ------------------------------------------------------------------------------------

export function applyMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) deleteKey(result, key);
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** Applies any of the three patch types; the result must still be an object. */
export function applyPatch(doc: JsonObject, type: PatchType, patch: Json, schema: StrategicSchema): Json {
  switch (type) {
    case 'json':
      return applyJsonPatch(doc, patch);
    case 'merge':
      if (!isObject(patch)) {
        throw badRequest(
          `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
        );
      }
      return applyMergePatch(doc, patch);
    case 'strategic':
      return applyStrategicMergePatch(doc, patch, schema);
  }
}
