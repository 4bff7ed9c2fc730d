// DynamoDB's expression language, parsed: condition (and filter) expressions, key conditions, update
// and projection expressions, each parsed once per distinct text (a store sends the same few texts
// with different placeholders). Names and values stay placeholders in the tree and are resolved per
// request (expressions.ts), so a parse is shared by every request that sends the same text.

/** An expression DynamoDB would refuse: the message says what and where. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
}

// ---------------------------------------------------------------------------------------------------
// Tokens

type Token =
  | { readonly kind: 'name'; readonly text: string } // #alias
  | { readonly kind: 'value'; readonly text: string } // :placeholder
  | { readonly kind: 'word'; readonly text: string } // identifier or keyword
  | { readonly kind: 'int'; readonly text: string }
  | { readonly kind: 'punct'; readonly text: string };

const TOKEN =
  /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[()[\],.=<>+-]))/y;

function tokenize(text: string, what: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(text);
    if (m === null)
      throw new ExpressionError(`${what}: invalid syntax at '${text.slice(at).trim().slice(0, 20)}'`);
    at = TOKEN.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'name', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'value', text: m[2] });
    else if (m[3] !== undefined) tokens.push({ kind: 'word', text: m[3] });
    else if (m[4] !== undefined) tokens.push({ kind: 'int', text: m[4] });
    else tokens.push({ kind: 'punct', text: m[5] ?? '' });
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------------
// Trees

/** A document path: its first element and `.name` / `[index]` steps; names as written (#alias or bare). */
export interface Path {
  readonly kind: 'path';
  readonly steps: readonly (string | number)[];
}
export type Operand =
  | Path
  | { readonly kind: 'value'; readonly placeholder: string }
  | { readonly kind: 'size'; readonly path: Path };
export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type Condition =
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly operand: Condition }
  | { readonly kind: 'compare'; readonly op: Comparator; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'between'; readonly operand: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: 'in'; readonly operand: Operand; readonly list: readonly Operand[] }
  | { readonly kind: 'function'; readonly name: ConditionFunction; readonly args: readonly Operand[] };
export type ConditionFunction =
  'attribute_exists' | 'attribute_not_exists' | 'attribute_type' | 'begins_with' | 'contains';

export type SetValue =
  | Operand
  | { readonly kind: 'plus' | 'minus'; readonly left: SetValue; readonly right: SetValue }
  | { readonly kind: 'if_not_exists'; readonly path: Path; readonly fallback: SetValue }
  | { readonly kind: 'list_append'; readonly left: SetValue; readonly right: SetValue };

export interface Update {
  readonly set: readonly { readonly path: Path; readonly value: SetValue }[];
  readonly remove: readonly Path[];
  readonly add: readonly { readonly path: Path; readonly value: Operand }[];
  readonly delete: readonly { readonly path: Path; readonly value: Operand }[];
}

/** A parsed expression and the placeholders it uses (checked against the request's maps). */
export interface Parsed<T> {
  readonly tree: T;
  readonly names: ReadonlySet<string>;
  readonly values: ReadonlySet<string>;
}

// ---------------------------------------------------------------------------------------------------
// Parser (recursive descent; precedence: comparisons, NOT, AND, OR)

const CONDITION_FUNCTIONS = new Set<string>([
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
]);
const COMPARATORS = new Set<string>(['=', '<>', '<', '<=', '>', '>=']);

class Parser {
  private i = 0;
  readonly names = new Set<string>();
  readonly values = new Set<string>();
  private readonly tokens: Token[];

  constructor(
    text: string,
    private readonly what: string,
  ) {
    this.tokens = tokenize(text, what);
    if (this.tokens.length === 0) throw new ExpressionError(`${what}: the expression is empty`);
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.i + offset];
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.kind === 'word' && t.text.toUpperCase() === word;
  }

  private isPunct(text: string): boolean {
    const t = this.peek();
    return t?.kind === 'punct' && t.text === text;
  }

  private fail(expected: string): never {
    const t = this.peek();
    throw new ExpressionError(
      `${this.what}: expected ${expected} ${t === undefined ? 'at the end' : `at '${t.text}'`}`,
    );
  }

  private expectPunct(text: string): void {
    if (!this.isPunct(text)) this.fail(`'${text}'`);
    this.i++;
  }

  end(): void {
    if (this.peek() !== undefined) this.fail('the end of the expression');
  }

  path(): Path {
    const steps: (string | number)[] = [this.element()];
    for (;;) {
      if (this.isPunct('.')) {
        this.i++;
        steps.push(this.element());
      } else if (this.isPunct('[')) {
        this.i++;
        const t = this.peek();
        if (t?.kind !== 'int') this.fail('a list index');
        this.i++;
        steps.push(Number(t.text));
        this.expectPunct(']');
      } else return { kind: 'path', steps };
    }
  }

  private element(): string {
    const t = this.peek();
    if (t?.kind === 'name') this.names.add(t.text);
    else if (t?.kind !== 'word') this.fail('an attribute name');
    this.i++;
    return t.text;
  }

  operand(): Operand {
    const t = this.peek();
    if (t?.kind === 'value') {
      this.i++;
      this.values.add(t.text);
      return { kind: 'value', placeholder: t.text };
    }
    if (t?.kind === 'word' && t.text === 'size' && this.peek(1)?.text === '(') {
      this.i += 2;
      const path = this.path();
      this.expectPunct(')');
      return { kind: 'size', path };
    }
    return this.path();
  }

  condition(): Condition {
    let left = this.conjunction();
    while (this.isWord('OR')) {
      this.i++;
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isWord('AND')) {
      this.i++;
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (this.isWord('NOT')) {
      this.i++;
      return { kind: 'not', operand: this.negation() };
    }
    return this.comparison();
  }

  private comparison(): Condition {
    if (this.isPunct('(')) {
      this.i++;
      const inner = this.condition();
      this.expectPunct(')');
      return inner;
    }
    const t = this.peek();
    if (t?.kind === 'word' && CONDITION_FUNCTIONS.has(t.text) && this.peek(1)?.text === '(') {
      this.i += 2;
      const args = [this.operand()];
      while (this.isPunct(',')) {
        this.i++;
        args.push(this.operand());
      }
      this.expectPunct(')');
      const arity = t.text === 'attribute_exists' || t.text === 'attribute_not_exists' ? 1 : 2;
      if (args.length !== arity)
        throw new ExpressionError(`${this.what}: ${t.text} takes ${arity} argument${arity === 1 ? '' : 's'}`);
      if (args[0]?.kind !== 'path') throw new ExpressionError(`${this.what}: ${t.text} needs a path first`);
      return { kind: 'function', name: t.text as ConditionFunction, args };
    }
    const operand = this.operand();
    const next = this.peek();
    if (next?.kind === 'punct' && COMPARATORS.has(next.text)) {
      this.i++;
      return { kind: 'compare', op: next.text as Comparator, left: operand, right: this.operand() };
    }
    if (this.isWord('BETWEEN')) {
      this.i++;
      const low = this.operand();
      if (!this.isWord('AND')) this.fail('AND');
      this.i++;
      return { kind: 'between', operand, low, high: this.operand() };
    }
    if (this.isWord('IN')) {
      this.i++;
      this.expectPunct('(');
      const list = [this.operand()];
      while (this.isPunct(',')) {
        this.i++;
        list.push(this.operand());
      }
      this.expectPunct(')');
      return { kind: 'in', operand, list };
    }
    return this.fail('a comparator, BETWEEN or IN');
  }

  update(): Update {
    const set: { path: Path; value: SetValue }[] = [];
    const remove: Path[] = [];
    const add: { path: Path; value: Operand }[] = [];
    const del: { path: Path; value: Operand }[] = [];
    const seen = new Set<string>();
    while (this.peek() !== undefined) {
      const clause = this.peek()?.kind === 'word' ? (this.peek()?.text.toUpperCase() ?? '') : '';
      if (!['SET', 'REMOVE', 'ADD', 'DELETE'].includes(clause)) this.fail('SET, REMOVE, ADD or DELETE');
      if (seen.has(clause)) throw new ExpressionError(`${this.what}: the ${clause} section appears twice`);
      seen.add(clause);
      this.i++;
      do {
        if (clause === 'SET') {
          const path = this.path();
          this.expectPunct('=');
          set.push({ path, value: this.setValue() });
        } else if (clause === 'REMOVE') remove.push(this.path());
        else {
          const path = this.path();
          const value = this.operand();
          if (value.kind !== 'value')
            throw new ExpressionError(`${this.what}: ${clause} takes a value placeholder`);
          (clause === 'ADD' ? add : del).push({ path, value });
        }
      } while (this.isPunct(',') && ++this.i > 0);
    }
    return { set, remove, add, delete: del };
  }

  private setValue(): SetValue {
    const left = this.setOperand();
    if (this.isPunct('+') || this.isPunct('-')) {
      const kind = this.peek()?.text === '+' ? 'plus' : 'minus';
      this.i++;
      return { kind, left, right: this.setOperand() };
    }
    return left;
  }

  private setOperand(): SetValue {
    const t = this.peek();
    if (
      t?.kind === 'word' &&
      (t.text === 'if_not_exists' || t.text === 'list_append') &&
      this.peek(1)?.text === '('
    ) {
      this.i += 2;
      if (t.text === 'if_not_exists') {
        const path = this.path();
        this.expectPunct(',');
        const fallback = this.setValue();
        this.expectPunct(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      const left = this.setValue();
      this.expectPunct(',');
      const right = this.setValue();
      this.expectPunct(')');
      return { kind: 'list_append', left, right };
    }
    const operand = this.operand();
    if (operand.kind === 'size')
      throw new ExpressionError(`${this.what}: size() is not allowed in an update`);
    return operand;
  }

  projection(): Path[] {
    const paths = [this.path()];
    while (this.isPunct(',')) {
      this.i++;
      paths.push(this.path());
    }
    return paths;
  }
}

const cache = new Map<string, Parsed<unknown>>();

function parsed<T>(kind: string, text: string, what: string, parse: (p: Parser) => T): Parsed<T> {
  const key = `${kind}\u0000${text}`;
  const known = cache.get(key);
  if (known !== undefined) return known as Parsed<T>;
  const parser = new Parser(text, what);
  const tree = parse(parser);
  parser.end();
  const result: Parsed<T> = { tree, names: parser.names, values: parser.values };
  // The texts a program sends are few; a bound keeps a caller that builds unique texts from growing it.
  if (cache.size >= 10_000) cache.clear();
  cache.set(key, result);
  return result;
}

export const parseCondition = (text: string, what: string): Parsed<Condition> =>
  parsed('condition', text, what, (p) => p.condition());
export const parseUpdate = (text: string, what: string): Parsed<Update> =>
  parsed('update', text, what, (p) => p.update());
export const parseProjection = (text: string, what: string): Parsed<Path[]> =>
  parsed('projection', text, what, (p) => p.projection());
