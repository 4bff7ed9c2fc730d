// The redaction helper every cluster-credentials error passes through (authRedaction.ts): what it
// hides, what it keeps, and that a redacted error carries nothing of the original but safe text.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  redact,
  redactError,
  secretsOfText,
  secretsOfUser,
} from '../../../../shared/adapters/kubernetes/authRedaction.js';
import { everythingSaid } from '../../../helpers/secretLeaks.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6Ik1aQ2Vs.c2VydmljZWFjY291bnQ.sig-7Hq2Zr9Xw';

describe('redact', () => {
  it.each([
    [
      'a bearer token',
      `GET /api/v1/nodes: Authorization: Bearer ${TOKEN}`,
      'Authorization: Bearer [REDACTED]',
    ],
    ['a basic credential', 'header Basic dXNlcjpodW50ZXIy rejected', 'Basic [REDACTED] rejected'],
    [
      'an EKS token',
      `token k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20v`,
      'k8s-aws-v1.[REDACTED]',
    ],
    ['a YAML token field', `  user: { token: ${TOKEN} }`, 'token: [REDACTED] }'],
    ['a JSON password field', '{"password":"hunter2 with spaces"}', '{"password":[REDACTED]}'],
    [
      'a presigned URL signature',
      'https://sts/?X-Amz-Signature=abc123&X-Amz-Date=1',
      'X-Amz-Signature=[REDACTED]&',
    ],
    [
      'an AWS credentials line',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG',
      'aws_secret_access_key = [REDACTED]',
    ],
    ['an access key id', 'credential AKIAIOSFODNN7EXAMPLE expired', 'credential [REDACTED] expired'],
  ])('hides %s', (_what, text, expected) => {
    const out = redact(text);
    expect(out).toContain(expected);
    expect(out).not.toMatch(/hunter2|eyJhbGci|aHR0cHM6|abc123|wJalrXUtnFEMI|AKIAIOSFODNN7|dXNlcjpo/);
  });

  it('hides a PEM private key, whole or cut short', () => {
    const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nq1w2e3\n-----END RSA PRIVATE KEY-----';
    expect(redact(`key: ${key} after`)).toBe(`key: ${REDACTED} after`);
    expect(redact(`excerpt ${key.slice(0, 45)}`)).toBe(`excerpt ${REDACTED}`);
  });

  it('hides known secrets in full and as fragments of 12 characters or more', () => {
    const secret = 'Zx9-known-secret-value-41';
    expect(redact(`value ${secret} here`, [secret])).toBe(`value ${REDACTED} here`);
    // A parser excerpt that cuts the value short.
    expect(redact('near "known-secret-va…"', [secret])).not.toContain('known-secret-va');
    // Short known values are not searched for: they would hit ordinary words.
    expect(redact('the node is ready', ['ready'])).toBe('the node is ready');
  });

  it('keeps what makes a message useful: field names, paths, resource names and ordinary numbers', () => {
    const text =
      'cluster credentials from kubeconfig file "/tmp/nlc-auth-x1/config": users[0].name is missing; ' +
      'GET /api/v1/nodes/node-a: HTTP 401 Unauthorized (3 attempts)';
    expect(redact(text)).toBe(text);
  });
});

describe('secretsOfText', () => {
  it('finds the credentials of malformed kubeconfig text without parsing it, not its names or keys', () => {
    const text = [
      'users:',
      '- name: production',
      '  user: { token: shorttok }',
      '- name: v',
      '  user:',
      '    client-key-data: |',
      '      LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=',
      '    password: "p4ss word"',
      '    exec: { command: aws, env: [{ name: KEY, value: wJalrXUtnFEMIK7MDENGbPxRfiCY1 }] }',
      'clusters:',
      '- cluster: { server: https://k8s.example, insecure-skip-tls-verify: true }',
      '  bad: [unclosed',
    ].join('\n');
    const found = secretsOfText(text);
    expect(found).toEqual(
      expect.arrayContaining([
        'shorttok',
        'LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=',
        'p4ss word',
        'wJalrXUtnFEMIK7MDENGbPxRfiCY1',
      ]),
    );
    for (const plain of ['production', 'insecure-skip-tls-verify', 'client-key-data', 'unclosed']) {
      expect(found).not.toContain(plain);
    }
  });
});

describe('secretsOfUser', () => {
  it('lists the token, password, key and every auth-provider and exec-env value', () => {
    expect(
      secretsOfUser({
        token: 't-1',
        password: 'p-1',
        keyData: 'k-1',
        authProvider: { name: 'oidc', config: { 'id-token': 'i-1', nested: { 'refresh-token': 'r-1' } } },
        exec: { command: 'x', env: [{ name: 'API_KEY', value: 'e-1' }] },
      }).sort(),
    ).toEqual(['API_KEY', 'e-1', 'i-1', 'k-1', 'p-1', 'r-1', 't-1']);
    expect(secretsOfUser(null)).toEqual([]);
  });
});

describe('redactError', () => {
  it("withholds a YAML parser's excerpt of the input and keeps its reason and position", () => {
    let thrown: unknown;
    try {
      // client-node parses kubeconfig text with js-yaml.
      new KubeConfig().loadFromString(
        `users:\n- name: u\n  user:\n    token: ${TOKEN}\n   bad: indentation\n`,
      );
    } catch (error) {
      thrown = error;
    }
    expect(everythingSaid(thrown)).toContain(TOKEN); // the original quotes it (and holds all input in `mark`)
    const safe = redactError(thrown);
    expect(safe.name).toBe('YAMLException');
    expect(safe.message).toMatch(
      /^bad indentation of a mapping entry at line 5, column \d+ \(the parser's excerpt/,
    );
    expect(everythingSaid(safe)).not.toContain(TOKEN.slice(0, 12));
  });

  it("withholds a JSON parser's message, which quotes the input", () => {
    let thrown: unknown;
    try {
      JSON.parse(`{"status":{"token":"${TOKEN}"`);
    } catch (error) {
      thrown = error;
    }
    const safe = redactError(thrown);
    expect(safe).toMatchObject({
      name: 'SyntaxError',
      message: expect.stringMatching(/^not valid JSON/) as string,
    });
    expect(everythingSaid(safe)).not.toContain(TOKEN.slice(-12));
  });

  it('redacts every link of the cause chain and drops every other field of the original', () => {
    const sdk = Object.assign(new Error(`deserialization failed near token: ${TOKEN}`), {
      name: 'SerializationException',
      code: 'ERR_BAD',
      $response: { body: `{"SecretString":"${TOKEN}"}` },
      Item: { token: { S: TOKEN } },
    });
    const outer = new Error('request failed', { cause: sdk });
    const safe = redactError(outer);
    expect(safe.message).toBe('request failed');
    expect(safe.cause).toMatchObject({
      name: 'SerializationException',
      message: 'deserialization failed near token: [REDACTED]',
      code: 'ERR_BAD',
    });
    expect(Object.keys(safe.cause as object)).not.toContain('$response');
    expect(everythingSaid(safe)).not.toContain(TOKEN);
    expect((safe.stack ?? '').split('\n')[0]).toBe('Error: request failed');
  });

  it('turns a thrown non-error into an error with a redacted message', () => {
    expect(redactError(`Bearer ${TOKEN}`).message).toBe('Bearer [REDACTED]');
  });
});
