// Keeps credentials out of error messages, cause chains and logs (a thrown error reaches CloudWatch,
// the dead-letter queues and the Decisions trail). Every error that passes through the cluster
// credentials code leaves it through redactError: a fresh chain of plain errors whose messages and
// stacks are redacted, and which carries none of the original objects' other fields (js-yaml's `mark`
// holds the whole input, an SDK error's `$response` the raw body, a ConditionalCheckFailed its item).
//
// Three layers, each enough for what it covers:
// 1. parser errors (YAML, JSON) lose their text altogether: they quote the input they failed on, and a
//    quote may be cut anywhere inside a token. What is kept is the reason and the line and column;
// 2. the known secrets (the values of the kubeconfig being loaded, its user's token, key and password)
//    are replaced wherever they appear, in full or as a fragment of 12 characters or more;
// 3. patterns catch credentials that are not known in advance: `Bearer …`, EKS tokens, PEM private
//    keys, presigned-URL signatures and values under credential-like keys (`token: …`, `"password":…`).
// Messages stay useful: they keep the field names and the problem, never the value.

/** What replaces a credential. */
export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are credentials, in YAML, JSON, headers, query strings and credential files
 * (case-insensitive; each also with `_` for `-`).
 */
const SECRET_KEY_NAMES = [
  'token',
  'id-token',
  'refresh-token',
  'access-token',
  'client-key-data',
  'client-key',
  'keyData',
  'key-data',
  'password',
  'passwd',
  'secret',
  'client-secret',
  'authorization',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-credential',
  'SecretString',
  'SecretBinary',
  'secretAccessKey',
  'secret-access-key',
  'sessionToken',
  'session-token',
  'apiKey',
  'api-key',
  'aws-secret-access-key',
  'aws-session-token',
];
const SECRET_KEYS = [...new Set(SECRET_KEY_NAMES.flatMap((key) => [key, key.replace(/-/g, '_')]))];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// `token: abc`, `"token":"abc"`, `token=abc` (query strings), `'password': 'x y'`.
const KEY_VALUE = new RegExp(
  `(["']?)\\b(${SECRET_KEYS.map(escapeRegExp).join('|')})\\1(\\s*[:=]\\s*)("(?:[^"\\\\]|\\\\.)*"?|'[^']*'?|[^\\s,;&}\\]]+)`,
  'gi',
);
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
const EKS_TOKEN = /k8s-aws-v1\.[A-Za-z0-9_-]*/g;
const ACCESS_KEY_ID = /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g;
// A long unbroken run of base64 or hex that mixes letters and digits: key material, tokens, signatures.
// '/' is left out, so file paths stay readable.
const LONG_OPAQUE = /[A-Za-z0-9+_=-]{40,}/g;
// Runs that may be fragments of a known secret.
const RUN = /[A-Za-z0-9+/=_.:-]{12,}/g;
/** Known secrets shorter than this are not searched for: they would match ordinary words. */
const MIN_SECRET_LENGTH = 6;

function isOpaque(run: string): boolean {
  return /[0-9]/.test(run) && /[A-Za-z]/.test(run);
}

/**
 * `text` with every credential replaced by {@link REDACTED}: the given `secrets` (in full, or a
 * fragment of 12 characters or more of one), and whatever the patterns recognise.
 *
 * @example
 * redact('request failed: Authorization: Bearer abc.def'); // 'request failed: Authorization: Bearer [REDACTED]'
 * redact('bad user sk-1234 here', ['sk-1234']); // 'bad user [REDACTED] here'
 */
export function redact(text: string, secrets: Iterable<string> = []): string {
  const known = [...new Set(secrets)]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of known) out = out.split(secret).join(REDACTED);
  if (known.length > 0) {
    out = out.replace(RUN, (run) => {
      // The run may hold a fragment of a secret, or a secret glued to other characters.
      if (known.some((s) => s.includes(run))) return REDACTED;
      return run;
    });
  }
  return out
    .replace(PRIVATE_KEY, REDACTED)
    .replace(EKS_TOKEN, `k8s-aws-v1.${REDACTED}`)
    .replace(AUTH_SCHEME, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(KEY_VALUE, (match, quote: string, key: string, separator: string, value: string) =>
      // Already redacted, or an auth scheme whose credential the previous step redacted.
      value.startsWith('[REDACTED') || /^["']?(Bearer|Basic)$/i.test(value)
        ? match
        : `${quote}${key}${quote}${separator}${REDACTED}`,
    )
    .replace(ACCESS_KEY_ID, REDACTED)
    .replace(LONG_OPAQUE, (run) => (isOpaque(run) ? REDACTED : run));
}

/**
 * The values of kubeconfig text worth hiding, found without parsing it (the text may be malformed):
 * every value under a credential key, and every long word that is not a plain name (key material, the
 * lines of a block scalar, a secret under an ordinary key such as an exec plugin's env `value`).
 * Ordinary values (names, `true`, a word such as `production`) are left out: they would be redacted
 * from every message that happens to contain the same word.
 *
 * @example
 * secretsOfText('users:\n- name: u\n  user: { token: abcdef123456 }'); // ['abcdef123456']
 */
export function secretsOfText(text: string): string[] {
  const found = new Set<string>();
  const secretKey = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));
  const pair = /([\w.-]+)["']?\s*:\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,{}[\]#"']+)/g;
  for (const match of text.matchAll(pair)) {
    const key = (match[1] ?? '').toLowerCase();
    const value = (match[2] ?? '').replace(/^["']|["']$/g, '');
    if (secretKey.has(key) && value.length >= 4) found.add(value);
  }
  for (const word of text.split(/[\s"',{}[\]]+/)) {
    if (word.length >= 16 && !word.endsWith(':') && !/^[A-Za-z-]+$/.test(word)) found.add(word);
  }
  return [...found];
}

/** The credentials of a kubeconfig user, as client-node holds them. */
export interface UserCredentials {
  readonly token?: string | undefined;
  readonly password?: string | undefined;
  readonly keyData?: string | undefined;
  readonly authProvider?: unknown;
  readonly exec?: unknown;
}

/** The values of a user's credential fields (token, password, key, auth-provider config, exec env). */
export function secretsOfUser(user: UserCredentials | null | undefined): string[] {
  if (user === null || user === undefined) return [];
  const found: string[] = [];
  for (const value of [user.token, user.password, user.keyData]) {
    if (typeof value === 'string' && value !== '') found.push(value);
  }
  const collect = (value: unknown, depth: number): void => {
    if (depth > 4) return;
    if (typeof value === 'string') found.push(value);
    else if (Array.isArray(value)) for (const item of value) collect(item, depth + 1);
    else if (typeof value === 'object' && value !== null)
      for (const item of Object.values(value)) collect(item, depth + 1);
  };
  const provider = user.authProvider as { config?: unknown } | undefined;
  collect(provider?.config, 0);
  const exec = user.exec as { env?: unknown } | undefined;
  collect(exec?.env, 0);
  return found;
}

/**
 * The message of a parser error, without the input it quotes; undefined for other errors. js-yaml's
 * reason may still name a tag or an alias of the input, so it is redacted too.
 */
function parserMessage(error: Error, secrets: readonly string[]): string | undefined {
  const mark: unknown = Reflect.get(error, 'mark');
  if (error.name === 'YAMLException' || (typeof mark === 'object' && mark !== null)) {
    const reason: unknown = Reflect.get(error, 'reason');
    const line: unknown = typeof mark === 'object' && mark !== null ? Reflect.get(mark, 'line') : undefined;
    const column: unknown =
      typeof mark === 'object' && mark !== null ? Reflect.get(mark, 'column') : undefined;
    const where =
      typeof line === 'number' && typeof column === 'number'
        ? ` at line ${line + 1}, column ${column + 1}`
        : '';
    const why = typeof reason === 'string' && reason !== '' ? redact(reason, secrets) : 'not valid YAML';
    return `${why}${where} (the parser's excerpt of the input is withheld)`;
  }
  if (error instanceof SyntaxError) {
    return "not valid JSON (the parser's message is withheld: it quotes the input)";
  }
  return undefined;
}

const MAX_CAUSE_DEPTH = 8;

/**
 * A fresh copy of `error` and its cause chain that is safe to log: each link an Error with the
 * original's name, a redacted message (parser errors: the reason and position only), a stack of the
 * original's frames under that message, and a `code` such as ENOENT; nothing else of the original.
 *
 * @example
 * const safe = redactError(error, secretsOfText(text));
 * throw new ClusterAuthError(source, `not a readable kubeconfig (${describeError(safe)})`, { cause: safe });
 */
export function redactError(error: unknown, secrets: Iterable<string> = [], depth = 0): Error {
  const list = [...secrets];
  if (!(error instanceof Error)) return new Error(redact(String(error), list));
  const message = parserMessage(error, list) ?? redact(error.message, list);
  const cause: unknown = error.cause;
  const copy =
    cause !== undefined && depth < MAX_CAUSE_DEPTH
      ? new Error(message, { cause: redactError(cause, list, depth + 1) })
      : new Error(message);
  copy.name = error.name;
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  copy.stack = [`${copy.name}: ${message}`, ...frames.map((line) => redact(line, list))].join('\n');
  const code: unknown = Reflect.get(error, 'code');
  if (typeof code === 'string' && /^[A-Za-z0-9_.]{1,64}$/.test(code)) Reflect.set(copy, 'code', code);
  return copy;
}

/** `Name: message` of an error, for embedding in another message. */
export function describeError(error: Error): string {
  return `${error.name}: ${error.message}`;
}
