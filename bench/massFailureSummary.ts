// How long a mass failure took to mark, from bench/massFailure.ts's result: shared by its own Markdown
// and bench/scale.ts's report (which reads the same result as JSON), so both extrapolate alike.

/** The part of a measured pass the span needs. */
export interface MarkingPassRow {
  readonly at: number;
  readonly wallMs: number;
  readonly apiMs: number;
  readonly apiRequests: number;
  readonly marked: number;
}

/** The part of one qps's result the span needs (optional fields are absent from the JSON when unset). */
export interface MarkingResult {
  readonly rows: readonly MarkingPassRow[];
  readonly failed: number;
  readonly firstDue?: number | undefined;
  readonly lastMarked?: number | undefined;
}

export type MarkingSpan =
  | { readonly kind: 'measured'; readonly seconds: number; readonly passes: number }
  | {
      /** Stopped early (--max-marking-passes): the marking rate so far, carried to every failed node. */
      readonly kind: 'extrapolated';
      readonly seconds: number;
      readonly passes: number;
      readonly markedSoFar: number;
      readonly passesRun: number;
    }
  | { readonly kind: 'none'; readonly passes: number };

/** Passes that made API requests: the marking passes. */
export const markingPasses = <R extends MarkingPassRow>(rows: readonly R[]): R[] =>
  rows.filter((row) => row.apiRequests > 0);

/** Grace expiry to the last node marked: measured, or extrapolated when the run was stopped early. */
export function markingSpan(r: MarkingResult): MarkingSpan {
  const marking = markingPasses(r.rows);
  if (r.lastMarked !== undefined && r.firstDue !== undefined)
    return { kind: 'measured', seconds: (r.lastMarked - r.firstDue) / 1000, passes: marking.length };
  const first = marking[0];
  const last = marking.at(-1);
  const markedSoFar = marking.reduce((n, row) => n + row.marked, 0);
  if (first === undefined || last === undefined || markedSoFar === 0)
    return { kind: 'none', passes: marking.length };
  const scale = r.failed / markedSoFar;
  return {
    kind: 'extrapolated',
    seconds: ((last.at + last.wallMs + last.apiMs - first.at) * scale) / 1000,
    passes: Math.ceil(marking.length * scale),
    markedSoFar,
    passesRun: marking.length,
  };
}
