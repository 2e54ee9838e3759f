'use strict'

const test = require('node:test')
const assert = require('node:assert/strict')
const { Router } = require('../src/http/router')
const { routes } = require('../src/routes')

// The route table needs a database only when a handler runs; matching never calls one.
const router = new Router(routes({ sql: {} }))

test('every route of the contract, with its Allow order', () => {
  const expected = {
    '/health': 'GET',
    '/ready': 'GET',
    '/regions': 'GET',
    '/categories': 'GET',
    '/categories/{id}/items': 'GET',
    '/items': 'POST',
    '/items/{id}': 'GET, PUT, DELETE',
    '/items/{id}/bids': 'GET, POST',
    '/users': 'POST',
    '/users/{id}': 'GET',
  }
  for (const [path, allow] of Object.entries(expected)) {
    const match = router.match(path.replace('{id}', '12'))
    assert.ok(match, path)
    assert.equal(match.route.path, path)
    assert.equal(match.route.notAllowed.headers.Allow, allow)
    assert.equal(match.rawId, path.includes('{id}') ? '12' : undefined)
  }
})

test('raw paths: no decoding, no normalization, any non-empty id segment', () => {
  for (const path of ['', '/', '/regions/', '//regions', '/items//bids', '/items/', '/items/1/', '/items/1/bids/', '/Items/1', '/%72egions', '/items/1/bids/2', '/categories/1', 'regions', '/users/1/x']) {
    assert.equal(router.match(path), null, JSON.stringify(path))
  }
  assert.equal(router.match('/items/abc').rawId, 'abc', 'validated later, after the method')
  assert.equal(router.match('/items/%31/bids').rawId, '%31')
  assert.equal(router.match('/categories/-1/items').route.path, '/categories/{id}/items')
})

test('paged routes and body schemas', () => {
  const action = (path, method) => router.match(path).route.methods.get(method)
  assert.equal(action('/categories/1/items', 'GET').paged, true)
  assert.equal(action('/items/1/bids', 'GET').paged, true)
  assert.equal(action('/items/1/bids', 'POST').paged, undefined)
  assert.equal(action('/items/1', 'GET').paged, undefined)
  for (const [path, method] of [['/items', 'POST'], ['/items/1', 'PUT'], ['/items/1/bids', 'POST'], ['/users', 'POST']]) {
    assert.ok(action(path, method).body, `${method} ${path} has a body schema`)
  }
  assert.equal(action('/items/1', 'DELETE').body, undefined)
  assert.equal(router.match('/health').route.methods.get('HEAD'), undefined)
})
