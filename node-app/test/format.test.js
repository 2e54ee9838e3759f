'use strict'

const test = require('node:test')
const assert = require('node:assert/strict')
const format = require('../src/format')
const { errors, bidTooLow, missingField, invalidField, methodNotAllowed } = require('../src/http/errors')
const { serverTiming } = require('../src/http/timing')
const { performance } = require('node:perf_hooks')

const ts = (iso) => new Date(iso)

test('timestamps: UTC, always three millisecond digits, Z', () => {
  assert.equal(format.timestamp(ts('2026-11-21T14:21:00.123Z')), '2026-11-21T14:21:00.123Z')
  assert.equal(format.timestamp(ts('2026-11-21T14:21:00Z')), '2026-11-21T14:21:00.000Z')
  assert.equal(format.timestamp(ts('2036-01-01T00:00:00.5+02:00')), '2035-12-31T22:00:00.500Z')
  assert.equal(format.timestamp(ts('2025-03-01T09:05:07.007-05:30')), '2025-03-01T14:35:07.007Z')
})

test('item record: field order of openapi.yaml, integers stay integers', () => {
  const row = {
    // column order of the statement deliberately shuffled: the output order must not depend on it
    end_time: ts('2036-01-02T03:04:05.006Z'),
    description: 'd',
    id: 7,
    title: 't\u{1F600}"\\',
    category_id: 2,
    seller_id: 3,
    initial_price_cents: 100000000000,
    max_bid_cents: 0,
    bid_count: 0,
    start_time: ts('2026-01-02T03:04:05Z'),
  }
  const json = JSON.stringify(format.itemRecord(row))
  assert.equal(
    json,
    '{"id":7,"category_id":2,"seller_id":3,"title":"t\u{1F600}\\"\\\\","description":"d","initial_price_cents":100000000000,' +
      '"max_bid_cents":0,"bid_count":0,"start_time":"2026-01-02T03:04:05.000Z","end_time":"2036-01-02T03:04:05.006Z"}',
  )
})

test('item detail: seller_nickname from u.nickname, top bids in order', () => {
  const bidRow = { id: 9, item_id: 7, bidder_id: 4, amount_cents: 250, created_at: ts('2026-01-01T00:00:00.001Z') }
  const detail = format.itemDetail(
    { id: 7, category_id: 2, seller_id: 3, nickname: 'seller_1', title: 't', description: '', initial_price_cents: 1, max_bid_cents: 250, bid_count: 1, start_time: ts('2026-01-01T00:00:00Z'), end_time: ts('2026-02-01T00:00:00Z') },
    [bidRow],
  )
  assert.deepEqual(Object.keys(detail), ['id', 'category_id', 'seller_id', 'seller_nickname', 'title', 'description', 'initial_price_cents', 'max_bid_cents', 'bid_count', 'start_time', 'end_time', 'top_bids'])
  assert.equal(detail.seller_nickname, 'seller_1')
  assert.equal(JSON.stringify(detail.top_bids), '[{"id":9,"item_id":7,"bidder_id":4,"amount_cents":250,"created_at":"2026-01-01T00:00:00.001Z"}]')
})

test('pages, users, lists, deleted', () => {
  const summary = { id: 1, category_id: 2, seller_id: 3, title: 't', description: 'not in a summary', initial_price_cents: 5, max_bid_cents: 6, bid_count: 1, start_time: ts('2026-01-01T00:00:00Z'), end_time: ts('2036-01-01T00:00:00Z') }
  const page = format.itemPage([summary], 20, 0)
  assert.deepEqual(Object.keys(page), ['items', 'limit', 'offset'])
  assert.deepEqual(Object.keys(page.items[0]), ['id', 'category_id', 'seller_id', 'title', 'initial_price_cents', 'max_bid_cents', 'bid_count', 'start_time', 'end_time'])
  assert.equal(JSON.stringify(format.bidPage([], 100, 10000)), '{"bids":[],"limit":100,"offset":10000}')
  assert.equal(
    JSON.stringify(format.user({ rating: -4, created_at: ts('2024-10-26T01:29:37.974Z'), region_id: 7, nickname: 'user7', id: 7 })),
    '{"id":7,"nickname":"user7","region_id":7,"rating":-4,"created_at":"2024-10-26T01:29:37.974Z"}',
  )
  assert.equal(JSON.stringify(format.region({ name: 'Alabama', id: 1 })), '{"id":1,"name":"Alabama"}')
  assert.equal(JSON.stringify(format.deleted(5)), '{"id":5,"deleted":true}')
})

test('error bodies: one shape, exact codes and messages', () => {
  const body = (err) => JSON.stringify(format.errorBody(err.code, err.message))
  assert.equal(body(errors.routeNotFound), '{"error":{"code":"not_found","message":"route not found"}}')
  assert.equal(body(errors.payloadTooLarge), '{"error":{"code":"payload_too_large","message":"request body exceeds 65536 bytes"}}')
  assert.equal(body(errors.unsupportedMediaType), '{"error":{"code":"unsupported_media_type","message":"content type must be application/json"}}')
  assert.equal(body(errors.dbUnavailable), '{"error":{"code":"db_unavailable","message":"database unavailable"}}')
  assert.equal(body(errors.internal), '{"error":{"code":"internal_error","message":"internal error"}}')
  assert.equal(body(bidTooLow(100000000001)), '{"error":{"code":"conflict","message":"bid must be at least 100000000001 cents"}}')
  assert.equal(body(missingField('seller_id')), '{"error":{"code":"bad_request","message":"missing field: seller_id"}}')
  assert.equal(body(invalidField('amount_cents')), '{"error":{"code":"bad_request","message":"invalid field: amount_cents"}}')
  const notAllowed = methodNotAllowed('GET, PUT, DELETE')
  assert.equal(notAllowed.status, 405)
  assert.deepEqual(notAllowed.headers, { Allow: 'GET, PUT, DELETE' })
  assert.equal(body(notAllowed), '{"error":{"code":"method_not_allowed","message":"method not allowed"}}')
  const statuses = Object.fromEntries(Object.values(errors).map((e) => [e.code, e.status]))
  assert.deepEqual(statuses, { not_found: 404, conflict: 409, payload_too_large: 413, unsupported_media_type: 415, bad_request: 400, request_timeout: 408, expectation_failed: 417, db_unavailable: 503, internal_error: 500 })
})

test('Server-Timing: db and app in milliseconds with three decimals', () => {
  const header = serverTiming(1.23456, performance.now() - 2)
  assert.match(header, /^db;dur=1\.235, app;dur=[0-9]+\.[0-9]{3}$/)
  assert.match(serverTiming(0, performance.now()), /^db;dur=0\.000, app;dur=0\.[0-9]{3}$/)
})
