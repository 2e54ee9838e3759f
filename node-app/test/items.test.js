'use strict'

// GET /items/{id} with and without BIDBENCH_UNFAIR_PER_FIELD, against a scripted session: which statements
// go out, in which order, and that the answer does not depend on the knob. integration.test.js does the
// same against the real database.

const test = require('node:test')
const assert = require('node:assert/strict')
const queries = require('../src/db/queries')
const { errors } = require('../src/http/errors')
const itemHandlers = require('../src/handlers/items')

const ROW = Object.freeze({
  id: 7,
  category_id: 3,
  seller_id: 11,
  nickname: 'seller "eleven"',
  title: 'caf\u00e9 \u{1F600}',
  description: 'line\nbreak',
  initial_price_cents: 100000000000,
  max_bid_cents: 1500,
  bid_count: 2,
  start_time: new Date('2026-11-21T14:21:00.123Z'),
  end_time: new Date('2026-11-22T14:21:00.000Z'),
})
const BIDS = [
  { id: 2, item_id: 7, bidder_id: 4, amount_cents: 1500, created_at: new Date('2026-11-21T15:00:00.001Z') },
  { id: 1, item_id: 7, bidder_id: 5, amount_cents: 1000, created_at: new Date('2026-11-21T14:30:00.000Z') },
]

// A db whose session answers get_item with ROW, each per-field statement with ROW's one column (until the
// item "disappears" after `vanishAfter` statements), and top_bids with BIDS. `sent` lists statement names.
function scriptedDb({ perField, vanishAfter = Infinity, exists = true }) {
  const sql = queries.build({ perField })
  const sent = []
  const session = {
    async query(statement, values) {
      assert.deepEqual(values, [ROW.id])
      assert.equal(typeof statement.text, 'string')
      sent.push(statement.name)
      if (statement.name === 'top_bids') return BIDS
      const found = exists && sent.length <= vanishAfter
      if (statement.name === 'get_item') return found ? [{ ...ROW }] : []
      const field = queries.PER_FIELD.find((s) => s.name === statement.name)
      assert.ok(field, `unexpected statement ${statement.name}`)
      return found ? [{ [field.column]: ROW[field.column] }] : []
    },
  }
  return { sent, db: { sql, withSession: (timer, fn) => fn(session) } }
}

const get = (db) => itemHandlers(db).get({ id: ROW.id, timer: { enabled: false, ms: 0 } })

test('knob off: get_item, then top_bids, nothing else', async () => {
  const { db, sent } = scriptedDb({ perField: false })
  const response = await get(db)
  assert.equal(response.status, 200)
  assert.deepEqual(sent, ['get_item', 'top_bids'])
})

test('knob on: eleven single-column SELECTs in order, then top_bids; the same answer, byte for byte', async () => {
  const honest = scriptedDb({ perField: false })
  const unfair = scriptedDb({ perField: true })
  const expected = await get(honest.db)
  const actual = await get(unfair.db)
  assert.deepEqual(unfair.sent, [...queries.PER_FIELD.map((s) => s.name), 'top_bids'])
  assert.equal(unfair.sent.length, 12)
  assert.equal(actual.status, expected.status)
  assert.equal(JSON.stringify(actual.body), JSON.stringify(expected.body))
  assert.equal(actual.body.seller_nickname, ROW.nickname)
  assert.equal(actual.body.start_time, '2026-11-21T14:21:00.123Z')
})

test('knob on: no item is a 404 after the first statement alone', async () => {
  const { db, sent } = scriptedDb({ perField: true, exists: false })
  await assert.rejects(get(db), (err) => err === errors.itemNotFound)
  assert.deepEqual(sent, ['get_item_field_id'])
})

test('knob on: an item deleted between two statements is a 404, and top_bids never runs', async () => {
  for (const vanishAfter of [1, 3, 4, 10]) {
    const { db, sent } = scriptedDb({ perField: true, vanishAfter })
    await assert.rejects(get(db), (err) => err === errors.itemNotFound, `vanished after ${vanishAfter}`)
    assert.deepEqual(sent, queries.PER_FIELD.slice(0, vanishAfter + 1).map((s) => s.name))
  }
})
