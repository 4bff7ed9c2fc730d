// Reading a request: its body (bounded, as kube-apiserver's 3 MiB limit), its query parameters
// (booleans, integers, dryRun, selectors) and the DeleteOptions a delete carries in body or query.
import type { IncomingMessage } from 'node:http';
import { type Json, type JsonObject, getNumber, getString, isObject, parseJson } from './json.js';
import type { DeleteOptions } from './registry.js';
import type { ResourceDef } from './resources.js';
import { ApiStatusError, badRequest } from './status.js';

const maxBodyBytes = 3 * 1024 * 1024;

/** A JSON body for a create or update; an empty or unparsable one is a 400 naming the kind. */
export function parseBody(text: string, def: ResourceDef): Json {
  if (text.trim() === '')
    throw badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: empty body`,
    );
  const body = parseJson(text);
  if (body === undefined) {
    throw badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: json parse error: invalid character`,
    );
  }
  return body;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new ApiStatusError({ ...badRequest('request entity too large').status, code: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

export function boolParam(value: string | null): boolean {
  return value === 'true' || value === '1';
}

export function intParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`invalid value for ${name}: ${raw}`);
  return Number(raw);
}

export function dryRunParam(params: URLSearchParams, body?: JsonObject): boolean {
  const values = [...params.getAll('dryRun')];
  const fromBody = body?.dryRun;
  if (Array.isArray(fromBody)) for (const v of fromBody) if (typeof v === 'string') values.push(v);
  for (const value of values) {
    if (value !== 'All')
      throw badRequest(`Invalid dry run value: ${JSON.stringify(value)}; supported values: "All"`);
  }
  return values.length > 0;
}

export function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null || value === '' ? {} : ({ [key]: value } as Record<K, string>);
}

export function optionalNumber<K extends string>(
  key: K,
  value: number | undefined,
): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

export function deleteOptions(body: JsonObject, params: URLSearchParams): DeleteOptions {
  const grace = getNumber(body, ['gracePeriodSeconds']) ?? intParam(params, 'gracePeriodSeconds');
  const preconditions = isObject(body.preconditions) ? body.preconditions : undefined;
  const uid = getString(preconditions, ['uid']);
  const resourceVersion = getString(preconditions, ['resourceVersion']);
  return {
    ...(grace !== undefined && { gracePeriodSeconds: grace }),
    ...((uid !== undefined || resourceVersion !== undefined) && {
      preconditions: {
        ...(uid !== undefined && { uid }),
        ...(resourceVersion !== undefined && { resourceVersion }),
      },
    }),
    dryRun: dryRunParam(params, body),
  };
}
