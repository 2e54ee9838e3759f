'use strict'

// Shared assertions: the wire rules every response must follow, and the hostile-case verdicts.

const assert = require('node:assert/strict')

const SERVER_TIMING = /^db;dur=[0-9]+\.[0-9]{3}, app;dur=[0-9]+\.[0-9]{3}$/
const CODES = { 400: 'bad_request', 404: 'not_found', 405: 'method_not_allowed', 408: 'request_timeout', 409: 'conflict', 413: 'payload_too_large', 415: 'unsupported_media_type', 417: 'expectation_failed', 500: 'internal_error', 503: 'db_unavailable' }

// Wire rules (contract/README.md): exact Content-Type, a Content-Length, a Date, Server-Timing unless off,
// compact JSON.
function assertWire(response, { serverTiming = true, method = 'GET' } = {}) {
  assert.equal(response.headers['content-type'], 'application/json')
  assert.ok(response.headers.date, 'Date header')
  assert.equal(response.headers['transfer-encoding'], undefined, 'no chunked responses')
  if (method !== 'HEAD') {
    assert.equal(Number(response.headers['content-length']), Buffer.byteLength(response.body))
    assert.equal(JSON.stringify(JSON.parse(response.body)), response.body, 'compact JSON')
  }
  if (serverTiming) assert.match(response.headers['server-timing'] ?? '', SERVER_TIMING)
  else assert.equal(response.headers['server-timing'], undefined)
}

function assertError(response, status, message) {
  assert.equal(response.status, status, `status for ${response.body}`)
  assert.equal(response.body, JSON.stringify({ error: { code: CODES[status], message } }))
}

// One hostile case. live: the database answers (db cases get their db verdict) or is down (they get 503).
function assertHostile(response, testCase, { live }) {
  const method = testCase.request.method ?? 'GET'
  assertWire(response, { method })
  if (testCase.status === null) {
    if (live) assertError(response, testCase.db.status, testCase.db.message)
    else assertError(response, 503, 'database unavailable')
    return
  }
  if (testCase.message !== null) assertError(response, testCase.status, testCase.message)
  else assert.equal(response.status, testCase.status)
  if (testCase.allow) assert.equal(response.headers.allow, testCase.allow)
}

module.exports = { assertWire, assertError, assertHostile, SERVER_TIMING }
