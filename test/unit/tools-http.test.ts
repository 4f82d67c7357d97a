import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isBlockedAddress, runHttpTool, type HttpToolOptions } from '../../actors/tools/index.js';
import type { HttpToolSpec } from '../../actors/language/index.js';
import { CaptureLog } from '../fixtures/tools/capture-log.js';
import { FakeApi } from '../fixtures/tools/fake-api.js';
import { InMemoryToolSecrets } from '../fixtures/tools/memory-secrets.js';

// The fake API (a local HTTP server standing in for the tool's third-party API) listens on
// 127.0.0.1, so these calls allow private addresses unless a test checks the refusal.
const SECRET = 'sk_live_very_secret_value_42';

describe('HTTP tools', () => {
  let api: FakeApi;
  let log: CaptureLog;
  let secrets: InMemoryToolSecrets;
  let options: HttpToolOptions;

  before(async () => {
    api = await FakeApi.start();
  });
  after(async () => {
    await api.close();
  });

  const spec = (over: Partial<HttpToolSpec>): HttpToolSpec => ({ kind: 'http', name: 'billing', params: {}, method: 'GET', url: `${api.base}/echo`, headers: {}, timeoutMs: 2000, async: false, ...over });
  const fresh = (): void => {
    log = new CaptureLog();
    secrets = new InMemoryToolSecrets({ billing: { api_key: SECRET, unused: 'never-asked' } });
    options = { secrets, allowPrivateNetwork: true, log };
  };

  test('renders URL, headers and JSON body with params and secrets; the secret reaches the API but no log', async () => {
    fresh();
    const result = await runHttpTool(spec({
      method: 'POST',
      url: `${api.base}/echo/invoices/{{params.id}}?q={{params.q}}`,
      headers: { Authorization: 'Bearer {{secrets.api_key}}', 'X-Customer': '{{params.customer}}' },
      body: '{"note": "{{params.note}}", "amount": {{params.amount}}, "urgent": {{params.urgent}}}',
    }), { id: 'a/b?c', q: 'x y&z=1', customer: 'Ada', note: 'say "hi"\nnow', amount: 12.5, urgent: true }, options);
    assert.equal(result.ok, true, JSON.stringify(result));
    const echoed = (result as { result: { status: number; body: { url: string; headers: Record<string, string>; body: string } } }).result;
    assert.equal(echoed.status, 200);
    // Placeholders in the URL are percent-encoded: no extra path segment, no extra query parameter.
    assert.equal(echoed.body.url, '/echo/invoices/a%2Fb%3Fc?q=x%20y%26z%3D1');
    assert.equal(echoed.body.headers['authorization'], `Bearer ${SECRET}`);
    assert.equal(echoed.body.headers['x-customer'], 'Ada');
    assert.equal(echoed.body.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(echoed.body.body), { note: 'say "hi"\nnow', amount: 12.5, urgent: true });
    assert.deepEqual(secrets.asked, ['billing.api_key'], 'only the secrets the templates use are resolved');
    assert.ok(log.lines.length > 0, 'the call is logged');
    assert.ok(!log.text.includes(SECRET), 'the secret value is in no log line');
    assert.ok(!log.text.includes('Bearer'), 'rendered headers are in no log line');
  });

  test('a text response answers { status, body: text }', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/text` }), {}, options);
    assert.deepEqual(result, { ok: true, result: { status: 200, body: 'plain words' } });
  });

  test('a missing secret is an error naming the secret, and nothing is sent', async () => {
    fresh();
    const before = api.received.length;
    const result = await runHttpTool(spec({ headers: { Authorization: 'Bearer {{secrets.other_key}}' } }), {}, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /secret "other_key" of tool billing is not set/);
    assert.equal(api.received.length, before);
  });

  test('a non-2xx status is an error with the status, and the secret the API echoed is not in it', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/status/503`, headers: { Authorization: 'Bearer {{secrets.api_key}}' } }), {}, options);
    assert.equal(result.ok, false);
    const failure = result as { error: string; status: number };
    assert.equal(failure.status, 503);
    assert.match(failure.error, /answered HTTP 503/);
    assert.ok(!JSON.stringify(result).includes(SECRET));
    assert.ok(!log.text.includes(SECRET));
  });

  test('a 404 is an error with status 404', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/status/404` }), {}, options);
    assert.deepEqual({ ok: result.ok, status: (result as { status?: number }).status }, { ok: false, status: 404 });
  });

  test('an API slower than the timeout is a timeout error', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/slow`, timeoutMs: 200 }), {}, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /did not answer within 200 ms/);
  });

  test('a response over the size limit is an error, counted while reading (no content-length)', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/big` }), {}, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /larger than 1048576 bytes/);
    const small = await runHttpTool(spec({ url: `${api.base}/big` }), {}, { ...options, maxResponseBytes: 3 * 1024 * 1024 });
    assert.equal(small.ok, true, 'the same response passes a larger limit');
    assert.equal(((small as { result: { body: string } }).result.body).length, 2 * 1024 * 1024);
  });

  test('a declared content-length over the limit is refused before reading', async () => {
    fresh();
    const result = await runHttpTool(spec({ url: `${api.base}/big-declared` }), {}, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /larger than 1048576 bytes/);
  });

  test('a header value with a line break (header injection through a param) is refused', async () => {
    fresh();
    const before = api.received.length;
    const result = await runHttpTool(spec({ headers: { 'X-Customer': '{{params.customer}}' } }), { customer: 'Ada\r\nX-Admin: yes' }, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /header X-Customer .* line break/);
    assert.equal(api.received.length, before);
  });

  test('a body that does not render to JSON is refused', async () => {
    fresh();
    const result = await runHttpTool(spec({ method: 'POST', body: '{"n": {{params.n}}' }), { n: 1 }, options);
    assert.equal(result.ok, false);
    assert.match((result as { error: string }).error, /did not render to valid JSON/);
  });

  describe('SSRF guard (private networks not allowed)', () => {
    const refused = async (url: string): Promise<void> => {
      fresh();
      const before = api.received.length;
      const result = await runHttpTool(spec({ url }), {}, { ...options, allowPrivateNetwork: false });
      assert.equal(result.ok, false, `${url} must be refused`);
      assert.match((result as { error: string }).error, /private, loopback or link-local address/);
      assert.equal(api.received.length, before, 'nothing reached the server');
    };

    test('127.0.0.1 is refused without PARLEY_TOOLS_ALLOW_PRIVATE, and allowed with it', async () => {
      await refused(`${api.base}/echo`);
      fresh();
      const allowed = await runHttpTool(spec({}), {}, options);
      assert.equal(allowed.ok, true);
    });

    test('localhost (a name resolving to loopback) is refused at connect time', async () => {
      await refused(`http://localhost:${api.port}/echo`);
    });

    test('IPv6 loopback, IPv4-mapped loopback and the cloud metadata address are refused', async () => {
      await refused(`http://[::1]:${api.port}/echo`);
      await refused(`http://[::ffff:127.0.0.1]:${api.port}/echo`);
      await refused('http://169.254.169.254/latest/meta-data/');
      await refused(`http://0.0.0.0:${api.port}/echo`);
    });

    test('only http and https URLs are called', async () => {
      fresh();
      for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://127.0.0.1/']) {
        const result = await runHttpTool(spec({ url }), {}, options);
        assert.equal(result.ok, false);
        assert.match((result as { error: string }).error, /only call http or https URLs/);
      }
    });

    test('isBlockedAddress covers private, loopback, link-local and embedded-IPv4 ranges, not public ones', () => {
      for (const ip of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '224.0.0.1']) {
        assert.equal(isBlockedAddress(ip), true, ip);
      }
      for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34']) assert.equal(isBlockedAddress(ip), false, ip);
    });
  });
});
