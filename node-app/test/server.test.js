'use strict'

// The HTTP layer end to end, without a database: the app starts while the database is down, answers
// every hostile input with the contract's 4xx, says 503 wherever it would need the database, drains on
// SIGTERM, and runs as a cluster. (The live-database behaviour is in integration.test.js.)

const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { startApp, stopApp } = require('../testing/server')
const { request, rawRequest } = require('../testing/http')
const { readBody, STALLED } = require('../src/http/body')
const { PassThrough } = require('node:stream')
const { assertWire, assertError, assertHostile } = require('../testing/expect')
const cases = require('../testing/hostile-cases')

const TIMEOUT = { timeout: 120_000 }

// A port with nothing listening on it: connections are refused at once.
async function closedPort() {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// A "database" that accepts connections and never says a word: checkouts hang until the 5 s timeout.
async function silentServer() {
  const sockets = new Set()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return {
    port: server.address().port,
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

test('database down', TIMEOUT, async (t) => {
  const dbPort = await closedPort()
  const app = await startApp({ DATABASE_URL: `postgresql://bidbench:pw@127.0.0.1:${dbPort}/bidbench` })
  t.after(() => stopApp(app))

  await t.test('starts anyway; the start-up line masks the password', () => {
    assert.equal(app.info.impl, 'node')
    assert.equal(app.info.db, `postgresql://bidbench:***@127.0.0.1:${dbPort}/bidbench`)
    assert.equal(app.info.pg_native, false)
    assert.equal(app.info.node_workers, 0)
    assert.doesNotMatch(app.logs(), /:pw@/)
  })

  await t.test('/health is 200, /ready and every database route 503', async () => {
    const health = await request(app.port, { path: '/health' })
    assertWire(health)
    assert.equal(health.body, '{"status":"ok"}')
    assert.match(health.headers['server-timing'], /^db;dur=0\.000, /)
    for (const path of ['/ready', '/regions', '/categories', '/categories/1/items', '/items/1', '/items/1/bids', '/users/1']) {
      const response = await request(app.port, { path })
      assertWire(response)
      assertError(response, 503, 'database unavailable')
    }
    const created = await request(app.port, { method: 'POST', path: '/users', headers: { 'Content-Type': 'application/json' }, body: '{"nickname":"abc","region_id":1}' })
    assertError(created, 503, 'database unavailable')
  })

  await t.test('hostile inputs get exactly the contract 4xx', async (t2) => {
    for (const testCase of cases) {
      await t2.test(testCase.name, async () => {
        assertHostile(await request(app.port, testCase.request), testCase, { live: false })
      })
    }
  })

  // Step 0 (contract "Request syntax"): whether llhttp or the app refuses it, the answer is the
  // contract's JSON 400 with Server-Timing, never Node's bare 400/431 or a silent close (issue #31).
  await t.test('request syntax: the contract 400 for what the parser or the app refuses', async (t2) => {
    const big = 'a'.repeat(20_000)
    const raws = {
      'two Host headers': 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
      'no Host in HTTP/1.1': 'GET /health HTTP/1.1\r\n\r\n',
      'CONNECT to an authority': 'CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n',
      'CONNECT to a path': 'CONNECT /health HTTP/1.1\r\nHost: a\r\n\r\n',
      'HTTP/0.9 form': 'GET /health\r\n\r\n',
      'HTTP/2.0': 'GET /health HTTP/2.0\r\nHost: a\r\n\r\n',
      'HTTP/1.2': 'GET /health HTTP/1.2\r\nHost: a\r\n\r\n',
      'unknown method': 'FOO /health HTTP/1.1\r\nHost: a\r\n\r\n',
      'lowercase method': 'get /health HTTP/1.1\r\nHost: a\r\n\r\n',
      'a 20 KB header': `GET /health HTTP/1.1\r\nHost: a\r\nX-Big: ${big}\r\n\r\n`,
      'a NUL in a header': 'GET /health HTTP/1.1\r\nHost: a\r\nX: a\u0000b\r\n\r\n',
      // An encoded NUL in the path is a malformed target, not an unknown route or an invalid id (issue #42).
      'an encoded NUL after an id': 'GET /items/1%00 HTTP/1.1\r\nHost: a\r\n\r\n',
      'an encoded NUL as the id': 'GET /items/%00 HTTP/1.1\r\nHost: a\r\n\r\n',
      'an encoded NUL after a route': 'GET /health%00 HTTP/1.1\r\nHost: a\r\n\r\n',
      'an encoded NUL before a too-large body': 'POST /users%00 HTTP/1.1\r\nHost: a\r\nContent-Length: 70000\r\n\r\n',
      // Raw bytes outside ASCII anywhere in the target (llhttp refuses them), sent as UTF-8 or as they are.
      'a fullwidth digit as the id': 'GET /items/\uFF11 HTTP/1.1\r\nHost: a\r\n\r\n',
      'an Arabic-Indic digit as the id': 'GET /items/\u0661 HTTP/1.1\r\nHost: a\r\n\r\n',
      'a fullwidth digit in limit': 'GET /categories/1/items?limit=\uFF15 HTTP/1.1\r\nHost: a\r\n\r\n',
      'a raw 0xFF in the path': Buffer.concat([Buffer.from('GET /items/'), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: a\r\n\r\n')]),
      'a raw 0xFF in an ignored parameter': Buffer.concat([Buffer.from('GET /health?x='), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: a\r\n\r\n')]),
    }
    for (const [name, raw] of Object.entries(raws)) {
      await t2.test(name, async () => {
        const response = await rawRequest(app.port, raw)
        assertWire(response)
        assertError(response, 400, 'bad request')
      })
    }
  })

  await t.test('an encoded NUL in the query is opaque bytes like any other', async () => {
    assertWire(await rawRequest(app.port, 'GET /health?x=%00 HTTP/1.1\r\nHost: a\r\n\r\n'))
    assertError(await rawRequest(app.port, 'GET /items/1/bids?limit=%00 HTTP/1.1\r\nHost: a\r\n\r\n'), 400, 'invalid query parameter: limit')
  })

  // A body shorter than its Content-Length, then the client's half-close: the contract allows 400 or a
  // close without an answer (nginx's only choice); Node can still answer, so it does.
  await t.test('a body cut short by a half-close is 400', async () => {
    const socket = net.connect(app.port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    let received = ''
    socket.setEncoding('utf8').on('data', (d) => (received += d))
    socket.end('POST /users HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"nickname"')
    await new Promise((resolve) => socket.once('close', resolve))
    assert.match(received, /^HTTP\/1\.1 400 /)
    assert.ok(received.endsWith('{"error":{"code":"bad_request","message":"bad request"}}'), received)
  })

  await t.test('a body that stalls is cut after the stall timeout with 408', async () => {
    const req = new PassThrough()
    req.write('{"a"')
    const outcome = await new Promise((resolve) => readBody(req, 65536, resolve, 50))
    assert.equal(outcome, STALLED)
  })

  await t.test('keep-alive: many requests on one connection', async () => {
    const socket = net.connect(app.port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    let received = ''
    socket.setEncoding('utf8').on('data', (d) => (received += d))
    for (let i = 0; i < 5; i++) socket.write(`GET /health HTTP/1.1\r\nHost: x\r\n\r\n`)
    socket.write(`GET /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc`)
    socket.write(`GET /health HTTP/1.1\r\nHost: x\r\n\r\n`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    socket.destroy()
    assert.equal(received.match(/HTTP\/1\.1 200 OK/g).length, 6)
    assert.equal(received.match(/HTTP\/1\.1 404 Not Found/g).length, 1)
  })

  await t.test('SIGTERM: exit 0', async () => {
    assert.equal(await stopApp(app), 0)
  })
})

test('SERVER_TIMING=0 removes the header; LOG_LEVEL=debug logs each request', TIMEOUT, async (t) => {
  const dbPort = await closedPort()
  const app = await startApp({ DATABASE_URL: `postgresql://u@127.0.0.1:${dbPort}/d`, SERVER_TIMING: '0', LOG_LEVEL: 'debug' })
  t.after(() => stopApp(app))
  assert.equal(app.info.server_timing, false)
  assert.equal(app.info.log_level, 'debug')
  const health = await request(app.port, { path: '/health' })
  assertWire(health, { serverTiming: false })
  const error = await request(app.port, { path: '/items/x' })
  assertWire(error, { serverTiming: false })
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.match(app.logs(), /DEBUG GET \/health 200 [0-9.]+ms/)
  assert.match(app.logs(), /DEBUG GET \/items\/x 400 [0-9.]+ms/)
})

for (const native of ['0', '1']) {
  test(`PG_NATIVE=${native}: a hung database gives 503 after the 5 s checkout timeout, and SIGTERM drains`, TIMEOUT, async (t) => {
    const db = await silentServer()
    t.after(() => db.close())
    const app = await startApp({ DATABASE_URL: `postgresql://u:p@127.0.0.1:${db.port}/d`, PG_NATIVE: native })
    assert.equal(app.info.pg_native, native === '1')
    const started = Date.now()
    const pending = request(app.port, { path: '/regions', timeoutMs: 15_000 })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const exited = stopApp(app) // SIGTERM while the request is in flight
    const response = await pending
    const elapsed = Date.now() - started
    assertError(response, 503, 'database unavailable')
    // pg hands the 5 s to libpq as connect_timeout=5, which libpq counts in whole wall-clock seconds:
    // when the connect's first step crosses a second boundary, pg-native gives up after 4 s. Either way
    // the app waited for a timeout rather than failing fast.
    const atLeast = native === '1' ? 3900 : 4500
    assert.ok(elapsed >= atLeast && elapsed < 12_000, `503 after ${elapsed} ms`)
    assert.equal(response.headers.connection, 'close', 'a draining server closes kept-alive connections')
    assert.equal(await exited, 0)
  })
}

test('NODE_WORKERS=2: one start-up line from the primary, workers serve, SIGTERM stops all', TIMEOUT, async (t) => {
  const dbPort = await closedPort()
  const app = await startApp({ DATABASE_URL: `postgresql://u@127.0.0.1:${dbPort}/d`, NODE_WORKERS: '2', DB_POOL_SIZE: '3' })
  t.after(() => stopApp(app))
  assert.equal(app.info.node_workers, 2)
  assert.equal(app.info.db_connections_max, 6)
  for (let i = 0; i < 10; i++) {
    const health = await request(app.port, { path: '/health' })
    assert.equal(health.status, 200)
  }
  assertError(await request(app.port, { path: '/ready' }), 503, 'database unavailable')
  assert.equal(await stopApp(app), 0)
  assert.equal(app.startLines.length, 1)
})

test('BIDBENCH_UNFAIR_PER_FIELD=1: a loud warning naming it, the start-up line says so, the database is down', TIMEOUT, async (t) => {
  const dbPort = await closedPort()
  const app = await startApp({ DATABASE_URL: `postgresql://u@127.0.0.1:${dbPort}/d`, BIDBENCH_UNFAIR_PER_FIELD: '1' })
  t.after(() => stopApp(app))
  assert.equal(app.info.unfair_per_field, true)
  assert.equal(app.info.unfair_unsorted, false)
  // stderr is its own pipe: the warning, written before the start-up line, may reach us after it.
  for (let i = 0; i < 100 && (app.logs().match(/!{78}/g) ?? []).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  const warnings = app.logs().split('\n').filter((line) => / WARN /.test(line)).map((line) => line.replace(/^\S+ WARN /, ''))
  assert.deepEqual(warnings, [
    '!'.repeat(78),
    'BIDBENCH_UNFAIR_PER_FIELD=1: GET /items/{id} reads each field with its own SELECT.',
    'This is a deliberately unequal variant for negative controls; its numbers compare nothing.',
    '!'.repeat(78),
  ])
  assertError(await request(app.port, { path: '/items/5' }), 503, 'database unavailable')
})

test('bad configuration fails at start-up with a message', TIMEOUT, async () => {
  await assert.rejects(startApp({ DB_POOL_SIZE: 'lots' }), /DB_POOL_SIZE must be an integer/)
  await assert.rejects(startApp({ LOG_LEVEL: 'verbose' }), /LOG_LEVEL must be one of/)
  await assert.rejects(startApp({ BIDBENCH_UNFAIR_PER_FIELD: 'yes' }), /BIDBENCH_UNFAIR_PER_FIELD must be 0 or 1, got "yes"/)
})
