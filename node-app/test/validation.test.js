'use strict'

const test = require('node:test')
const assert = require('node:assert/strict')
const { parsePathId, parsePaging, checkContentType } = require('../src/validation/request')
const { parseJsonObject, withinDepthAndPaired } = require('../src/validation/json')
const { validateBody, schemas, rules } = require('../src/validation/fields')

const rejects = (fn, message) => assert.throws(fn, (err) => err.message === message, message)

test('path id: 1..10 ASCII digits, value 1..2147483647', () => {
  assert.equal(parsePathId('1'), 1)
  assert.equal(parsePathId('0000000042'), 42)
  assert.equal(parsePathId('2147483647'), 2147483647)
  for (const raw of ['', '0', '0000000000', '2147483648', '9999999999', '00000000001', '-1', '+1', '1.0', '1e3', 'abc', '%31', ' 1', '١']) {
    rejects(() => parsePathId(raw), 'invalid path parameter: id')
  }
})

test('paging: defaults, bounds, raw splitting, repeats, limit first', () => {
  assert.deepEqual(parsePaging(''), { limit: 20, offset: 0 })
  assert.deepEqual(parsePaging('limit=100&offset=10000'), { limit: 100, offset: 10000 })
  assert.deepEqual(parsePaging('offset=000000007&limit=000000001'), { limit: 1, offset: 7 })
  assert.deepEqual(parsePaging('x=1&&=&Limit=0&limit_=9&%6cimit=0'), { limit: 20, offset: 0 }, 'others are ignored')
  assert.deepEqual(parsePaging('a=b=c&limit=5'), { limit: 5, offset: 0 })
  for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=', 'limit', 'limit=1&limit=1', 'limit=%31', 'limit=1.0', 'limit=0000000001', 'limit= 1', 'limit=5=6', 'offset=x&limit=x']) {
    rejects(() => parsePaging(q), 'invalid query parameter: limit')
  }
  for (const q of ['offset=-1', 'offset=10001', 'offset=', 'offset', 'offset=0&offset=0', 'offset=999999999', 'offset=1e3', 'limit=5&offset=x']) {
    rejects(() => parsePaging(q), 'invalid query parameter: offset')
  }
})

test('content type: media type before ";", trimmed, case-insensitive', () => {
  for (const ok of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', ' application/json ;x', 'application/json;']) {
    checkContentType(ok)
  }
  for (const bad of [undefined, '', 'text/plain', 'application/jsonx', 'application/json-patch+json', 'application/vnd.api+json', 'application /json', 'json', 'application/json\u00a0']) {
    rejects(() => checkContentType(bad), 'content type must be application/json')
  }
})

test('JSON: UTF-8 first, then strict syntax, then an object', () => {
  const parse = (s) => parseJsonObject(Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8'))
  assert.deepEqual(parse(' {"a":1} \n'), { a: 1 })
  assert.deepEqual(parse('{"a":1,"a":2}'), { a: 2 }, 'duplicate keys: the last one wins')
  rejects(() => parse(Buffer.from([0x7b, 0xff, 0x7d])), 'request body is not valid UTF-8')
  rejects(() => parse(Buffer.from([0xed, 0xa0, 0x80])), 'request body is not valid UTF-8')
  rejects(() => parse(Buffer.from([0xc0, 0x80])), 'request body is not valid UTF-8')
  rejects(() => parse(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), 'request body is not valid JSON')
  for (const bad of ['', ' ', '{', '{"a":1,}', '{"a":1}x', "{'a':1}", '{"a":01}', '{"a":.5}', '{"a":NaN}', '{"a":"\t"}', '{"a":1}{}']) {
    rejects(() => parse(bad), 'request body is not valid JSON')
  }
  for (const notObject of ['[]', 'null', 'true', '1', '"x"']) {
    rejects(() => parse(notObject), 'request body must be a JSON object')
  }
})

test('JSON: at most 32 nested containers', () => {
  const nest = (n) => `${'['.repeat(n - 1)}{"a":1}${']'.repeat(n - 1)}`
  assert.equal(withinDepthAndPaired(nest(32)), true)
  assert.equal(withinDepthAndPaired(nest(33)), false)
  assert.equal(withinDepthAndPaired(`{"s":"${'['.repeat(100)}"}`), true, 'brackets inside strings do not nest')
  assert.equal(withinDepthAndPaired(`{"s":"\\"${'['.repeat(100)}"}`), true, 'escaped quotes do not end strings')
  assert.deepEqual(parseJsonObject(Buffer.from(`{"a":${'['.repeat(31)}${']'.repeat(31)}}`)), { a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] })
  rejects(() => parseJsonObject(Buffer.from(`{"a":${'['.repeat(32)}${']'.repeat(32)}}`)), 'request body is not valid JSON')
  rejects(() => parseJsonObject(Buffer.from('['.repeat(60000))), 'request body is not valid JSON')
})

test('JSON: unpaired surrogate escapes anywhere are invalid', () => {
  const bad = ['{"a":"\\ud800"}', '{"a":"\\uDBFF"}', '{"a":"\\udc00"}', '{"a":"x\\ud800y"}', '{"\\ud800":1}', '{"a":"\\ud800\\u0041"}', '{"a":"\\ud800\\ud800"}', '{"a":"\\udc00\\ud800"}', '{"a":"\\ud800","a":"ok"}', '{"a":["\\ud800"]}', '{"a":"\\ud800']
  for (const text of bad) {
    rejects(() => parseJsonObject(Buffer.from(text)), 'request body is not valid JSON')
  }
  assert.deepEqual(parseJsonObject(Buffer.from('{"a":"\\ud83d\\ude00"}')), { a: '\u{1F600}' })
  assert.deepEqual(parseJsonObject(Buffer.from('{"a":"\\\\ud800"}')), { a: '\\ud800' }, 'an escaped backslash is text')
  assert.deepEqual(parseJsonObject(Buffer.from('{"a":"\\u00e9\\uFFFF"}')), { a: '\u00e9\uffff' })
})

test('fields: integral values, ranges, strings in code points, no NUL', () => {
  assert.equal(rules.id(1), true)
  assert.equal(rules.id(5.0), true)
  assert.equal(rules.id(JSON.parse('5e0')), true)
  assert.equal(rules.id(2147483647), true)
  for (const bad of [0, -1, 1.5, 2147483648, Infinity, -Infinity, NaN, '1', true, null, [1], {}]) assert.equal(rules.id(bad), false, String(bad))
  assert.equal(rules.cents(100000000000), true)
  assert.equal(rules.cents(JSON.parse('1e11')), true)
  assert.equal(rules.cents(100000000001), false)
  assert.equal(rules.cents(JSON.parse('1e400')), false)
  assert.equal(rules.durationSeconds(60), true)
  assert.equal(rules.durationSeconds(2592000), true)
  assert.equal(rules.durationSeconds(59), false)
  assert.equal(rules.durationSeconds(2592001), false)
  assert.equal(rules.title('x'), true)
  assert.equal(rules.title(''), false)
  assert.equal(rules.title('x'.repeat(200)), true)
  assert.equal(rules.title('x'.repeat(201)), false)
  assert.equal(rules.title('\u{1F600}'.repeat(200)), true, '200 code points in 400 UTF-16 units')
  assert.equal(rules.title('\u{1F600}'.repeat(201)), false)
  assert.equal(rules.title('a\u0000'), false)
  assert.equal(rules.description(''), true)
  assert.equal(rules.description('\u{10FFFF}'.repeat(10000)), true)
  assert.equal(rules.description('d'.repeat(10001)), false)
  assert.equal(rules.description(5), false)
  assert.equal(rules.nickname('abc'), true)
  assert.equal(rules.nickname('A_z_09'.repeat(5) + 'ab'), true)
  for (const bad of ['ab', 'a'.repeat(33), 'a-b', 'abc\n', 'ab\u00e9', 'abc ', '', 123]) assert.equal(rules.nickname(bad), false, String(bad))
})

test('fields: unknown keys first, then each field in properties order', () => {
  rejects(() => validateBody(schemas.userCreate, { nickname: 1, x: 1 }), 'request body has unknown fields')
  rejects(() => validateBody(schemas.userCreate, JSON.parse('{"__proto__":1}')), 'request body has unknown fields')
  rejects(() => validateBody(schemas.userCreate, {}), 'missing field: nickname')
  rejects(() => validateBody(schemas.userCreate, { region_id: 'x' }), 'missing field: nickname')
  rejects(() => validateBody(schemas.userCreate, { nickname: null }), 'invalid field: nickname')
  rejects(() => validateBody(schemas.userCreate, { nickname: 'abc' }), 'missing field: region_id')
  rejects(() => validateBody(schemas.itemCreate, { seller_id: 1, category_id: 1, title: 't', description: 'd', initial_price_cents: 1 }), 'missing field: duration_seconds')
  rejects(() => validateBody(schemas.itemUpdate, { title: 't' }), 'missing field: description')
  rejects(() => validateBody(schemas.bidCreate, { bidder_id: 1, amount_cents: 0 }), 'invalid field: amount_cents')
  const ok = { nickname: 'abc', region_id: 1 }
  assert.equal(validateBody(schemas.userCreate, ok), ok)
})
