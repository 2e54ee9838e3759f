'use strict'

// Step 0 on the request target (contract "Request syntax"): an encoded NUL in the path, not in the query.

const test = require('node:test')
const assert = require('node:assert/strict')
const { nulInPath } = require('../src/http/server')

test('an encoded NUL in the path is malformed; in the query it is not', () => {
  assert.equal(nulInPath('/items/1%00'), true)
  assert.equal(nulInPath('/items/%00'), true)
  assert.equal(nulInPath('/health%00?limit=1'), true)
  assert.equal(nulInPath('/health?x=%00'), false)
  assert.equal(nulInPath('/items/1/bids?limit=%00'), false)
  assert.equal(nulInPath('/items/1%01'), false)
  assert.equal(nulInPath('/items/1%000'), true)
})
