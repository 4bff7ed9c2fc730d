// cli/errors.ts: the one funnel's exit codes and messages.
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { explainStoreError, handleError, parseOptions, StoreUnreachableError } from '../../../cli/errors.js';
import { ConfigError, NlcError, StoreError } from '../../../shared/errors.js';

class ScenarioError extends NlcError {}

function capture() {
  let text = '';
  return { stream: { write: (s: string) => (text += s) }, text: () => text };
}

describe('handleError', () => {
  it.each<{ name: string; error: unknown; code: number }>([
    {
      name: 'a ZodError',
      error: new z.ZodError([{ code: 'custom', path: ['--limit'], message: 'bad', input: 0 }]),
      code: 2,
    },
    { name: 'a ConfigError', error: new ConfigError([{ path: 'NLC_DRY_RUN', message: 'bad' }]), code: 2 },
    { name: 'a ScenarioError', error: new ScenarioError('scenario.nodes[0].zone: bad'), code: 2 },
    { name: 'a StoreError', error: new StoreError({ table: 't' }, 'throttled', 'Rate exceeded'), code: 1 },
    { name: 'anything else', error: new Error('boom'), code: 1 },
    { name: 'a thrown string', error: 'boom', code: 1 },
    {
      name: '--help (commander, exit 0)',
      error: new CommanderError(0, 'commander.helpDisplayed', ''),
      code: 0,
    },
    {
      name: 'an unknown option (commander)',
      error: new CommanderError(1, 'commander.unknownOption', ''),
      code: 2,
    },
  ])('$name exits $code', ({ error, code }) => {
    expect(handleError(error, capture().stream)).toBe(code);
  });

  it('prints one message; the stack only with verbose', () => {
    const quiet = capture();
    handleError(new Error('boom'), quiet.stream);
    expect(quiet.text()).toBe('error: boom\n');
    const verbose = capture();
    handleError(new Error('boom', { cause: new Error('root') }), verbose.stream, { verbose: true });
    expect(verbose.text()).toMatch(/^error: boom\nError: boom\n {4}at [\s\S]*Caused by:\nError: root/);
  });

  it('formats a ZodError one field per line', () => {
    const out = capture();
    handleError(
      new z.ZodError([
        { code: 'custom', path: ['--limit'], message: 'too big', input: 0 },
        { code: 'custom', path: [], message: 'bad', input: 0 },
      ]),
      out.stream,
    );
    expect(out.text()).toBe('error: Invalid options (2 problems):\n- --limit: too big\n- (input): bad\n');
  });
});

describe('parseOptions', () => {
  it('names options by flag and arguments by name', () => {
    const schema = z.object({ node: z.string().min(1, 'empty'), tablesPrefix: z.string().min(3, 'short') });
    expect(() => parseOptions(schema, { node: '', tablesPrefix: 'x' }, { node: 'NODE' })).toThrow(
      expect.objectContaining({
        issues: [
          expect.objectContaining({ path: ['NODE'], message: 'empty' }),
          expect.objectContaining({ path: ['--tables-prefix'], message: 'short' }),
        ],
      }),
    );
  });
});

describe('explainStoreError', () => {
  const failed = (cause: unknown) => new StoreError({ table: 'nlc-dev-zones' }, 'failed', 'x', { cause });
  const named = (name: string, extra: object = {}) => Object.assign(new Error(name), { name, ...extra });

  it.each([
    {
      name: 'connection refused',
      cause: named('Error', { code: 'ECONNREFUSED' }),
      says: 'no answer (ECONNREFUSED)',
    },
    { name: 'DNS failure', cause: named('Error', { code: 'ENOTFOUND' }), says: 'no answer (ENOTFOUND)' },
    { name: 'timeout', cause: named('TimeoutError'), says: 'the request timed out' },
    { name: 'no credentials', cause: named('CredentialsProviderError'), says: 'no AWS credentials found' },
    {
      name: 'no table',
      cause: named('ResourceNotFoundException'),
      says: 'table nlc-dev-zones does not exist',
    },
  ])('$name', ({ cause, says }) => {
    const error = explainStoreError(failed(cause), 'http://127.0.0.1:8000');
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect((error as Error).message).toContain(
      `cannot read the state tables at http://127.0.0.1:8000: ${says}`,
    );
  });

  it('leaves other errors alone', () => {
    const other = failed(named('ValidationException'));
    expect(explainStoreError(other, 'x')).toBe(other);
    const throttled = new StoreError({ table: 't' }, 'throttled', 'x');
    expect(explainStoreError(throttled, 'x')).toBe(throttled);
  });
});
