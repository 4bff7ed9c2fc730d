// shared/present/output.ts: table layout, colour policy, structured output.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseOptions } from '../../../cli/errors.js';
import {
  colourEnabled,
  OutputFormatSchema,
  painter,
  renderStructured,
  renderTable,
  span,
  type Column,
} from '../../../shared/present/output.js';

interface Row {
  readonly name: string;
  readonly count: number;
}
const columns: readonly Column<Row>[] = [
  { header: 'name', value: (r) => r.name, colour: (r) => (r.count > 9 ? 'red' : undefined) },
  { header: 'count', value: (r) => String(r.count), align: 'right' },
  { header: 'note', value: (r) => `${r.name}!`, wide: true },
];
const rows: readonly Row[] = [
  { name: 'a', count: 1 },
  { name: 'longer-name', count: 12 },
];

describe('renderTable', () => {
  it('upper-cases headers, pads left-aligned cells, right-aligns numbers, three spaces apart', () => {
    expect(renderTable(columns, rows, { wide: false, paint: painter(false) })).toBe(
      ['NAME          COUNT', 'a                 1', 'longer-name      12', ''].join('\n'),
    );
  });

  it('shows wide-only columns with -o wide, with no trailing spaces', () => {
    const text = renderTable(columns, rows, { wide: true, paint: painter(false) });
    expect(text).toBe(
      [
        'NAME          COUNT   NOTE',
        'a                 1   a!',
        'longer-name      12   longer-name!',
        '',
      ].join('\n'),
    );
  });

  it('colours after padding, so colour never moves a column', () => {
    const text = renderTable(columns, rows, { wide: false, paint: painter(true) });
    expect(text.split('\n')[2]).toBe('\u001b[31mlonger-name\u001b[39m      12');
  });

  it('prints only the header for no rows', () => {
    expect(renderTable(columns, [], { wide: false, paint: painter(false) })).toBe('NAME   COUNT\n');
  });
});

describe('colourEnabled', () => {
  it.each([
    { name: 'a terminal, NO_COLOR unset', tty: true, env: {}, want: true },
    {
      name: 'a terminal, NO_COLOR empty (no-color.org: only a non-empty value disables)',
      tty: true,
      env: { NO_COLOR: '' },
      want: true,
    },
    { name: 'a terminal, NO_COLOR=1', tty: true, env: { NO_COLOR: '1' }, want: false },
    { name: 'a pipe or a file', tty: false, env: {}, want: false },
  ])('$name: $want', ({ tty, env, want }) => {
    expect(colourEnabled({ write: () => true, isTTY: tty }, env)).toBe(want);
  });
});

describe('renderStructured and span', () => {
  it('writes JSON and YAML of the same data', async () => {
    const data = { zones: [{ zone: 'r:z', qps: 0.1 }], at: null };
    expect(JSON.parse(await renderStructured(data, 'json'))).toEqual(data);
    expect(parseYaml(await renderStructured(data, 'yaml'))).toEqual(data);
  });

  it.each([
    [70_000, '1m10s'],
    [400, '0s'],
    [3_600_000, '1h'],
    [undefined, '-'],
  ])('span(%s) is %s', (ms, text) => {
    expect(span(ms)).toBe(text);
  });
});

describe('OutputFormatSchema', () => {
  const schema = z.object({ output: OutputFormatSchema });
  const problem = (output: string): string => {
    try {
      parseOptions(schema, { output });
    } catch (error) {
      return error instanceof z.ZodError
        ? `${String(error.issues[0]?.path[0])}: ${error.issues[0]?.message}`
        : '';
    }
    return 'accepted';
  };

  it('names the flag, echoes the bad value and lists the valid ones', () => {
    expect(problem('xml')).toBe('--output: "xml" is not an output format: expected json, yaml or wide');
    expect(problem('wide')).toBe('accepted');
  });

  it('cuts a long value', () => {
    expect(problem('x'.repeat(100))).toBe(
      `--output: "${'x'.repeat(40)}…" is not an output format: expected json, yaml or wide`,
    );
  });
});
