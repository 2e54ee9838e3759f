'use strict'

// The SQL of src/db/queries.js must be the SQL of contract/queries.sql, statement for statement. The
// deliberately unequal variants are not in the contract: they must stay out of `statements`, come only from
// build() with their knob on, and never replace a contract statement's name or text.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { statements, build, UNSORTED, PER_FIELD } = require('../src/db/queries')

const CONTRACT = path.join(__dirname, '..', '..', 'contract', 'queries.sql')

// name -> statement text, from the `-- name: x` markers of the contract file.
function contractStatements() {
  const out = {}
  let name = null
  let lines = []
  const flush = () => {
    if (name) out[name] = lines.join('\n').trim()
    name = null
    lines = []
  }
  for (const line of fs.readFileSync(CONTRACT, 'utf8').split('\n')) {
    const marker = /^-- name: (\w+)/.exec(line)
    if (marker) {
      flush()
      name = marker[1]
    } else if (name && !line.startsWith('--')) {
      lines.push(line)
      if (line.trimEnd().endsWith(';')) flush()
    }
  }
  flush()
  return out
}

const normalize = (sql) => sql.replace(/\s+/g, ' ').trim()

test('every statement matches contract/queries.sql exactly (whitespace aside)', () => {
  const contract = contractStatements()
  assert.deepEqual(Object.keys(statements).sort(), Object.keys(contract).sort())
  for (const [name, text] of Object.entries(contract)) {
    assert.equal(normalize(statements[name]), normalize(text), name)
    assert.equal(statements[name], text, `${name} is verbatim`)
  }
})

test('prepared statement names are the contract names; the unfair variant renames and drops ORDER BY', () => {
  const fair = build()
  for (const name of Object.keys(statements)) {
    assert.equal(fair[name].name, name)
    assert.equal(fair[name].text, statements[name])
  }
  const unfair = build({ unsorted: true })
  for (const name of UNSORTED) {
    assert.equal(unfair[name].name, `${name}_unsorted`)
    assert.doesNotMatch(unfair[name].text, /ORDER BY/)
    assert.equal(normalize(unfair[name].text), normalize(statements[name].replace(/\s*ORDER BY [^\n;]*/, '')))
  }
  assert.match(unfair.top_bids.text, /ORDER BY amount_cents DESC, id/, 'top bids keep their order')
})

// BIDBENCH_UNFAIR_PER_FIELD's statements, in the order GET /items/{id} sends them (the brief of the variant).
const PER_FIELD_TEXTS = [
  'SELECT id FROM items WHERE id = $1::integer;',
  'SELECT category_id FROM items WHERE id = $1::integer;',
  'SELECT seller_id FROM items WHERE id = $1::integer;',
  'SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1::integer;',
  'SELECT title FROM items WHERE id = $1::integer;',
  'SELECT description FROM items WHERE id = $1::integer;',
  'SELECT initial_price_cents FROM items WHERE id = $1::integer;',
  'SELECT max_bid_cents FROM items WHERE id = $1::integer;',
  'SELECT bid_count FROM items WHERE id = $1::integer;',
  'SELECT start_time FROM items WHERE id = $1::integer;',
  'SELECT end_time FROM items WHERE id = $1::integer;',
]

test('the per-field variant: its own statements, outside the contract, only with the knob on', () => {
  const contract = contractStatements()
  const contractTexts = new Set(Object.values(contract).map(normalize))

  // Off (the default), and with only the unsorted knob, nothing but the contract's names is there.
  assert.deepEqual(Object.keys(build()).sort(), Object.keys(contract).sort())
  assert.deepEqual(Object.keys(build({ unsorted: true })).sort(), Object.keys(contract).sort())

  assert.deepEqual(PER_FIELD.map((s) => s.text), PER_FIELD_TEXTS)
  // Each answers with the one column get_item's row carries under that key (format.itemDetail reads it).
  assert.deepEqual(
    PER_FIELD.map((s) => s.column),
    ['id', 'category_id', 'seller_id', 'nickname', 'title', 'description', 'initial_price_cents', 'max_bid_cents', 'bid_count', 'start_time', 'end_time'],
  )
  for (const s of PER_FIELD) {
    assert.ok(!(s.name in contract), `${s.name} is not a contract name`)
    assert.ok(!contractTexts.has(normalize(s.text)), `${s.name} is not a contract text`)
  }
  assert.equal(new Set(PER_FIELD.map((s) => s.name)).size, PER_FIELD.length, 'one name per text')

  for (const options of [{ perField: true }, { perField: true, unsorted: true }]) {
    const on = build(options)
    const without = build({ unsorted: options.unsorted })
    assert.equal(on.get_item_per_field, PER_FIELD)
    // Every contract statement keeps its name and text: only GET /items/{id} changes what it sends.
    for (const name of Object.keys(contract)) assert.deepEqual(on[name], without[name], name)
    assert.deepEqual(Object.keys(on).sort(), [...Object.keys(contract), 'get_item_per_field'].sort())
    const names = Object.values(on).flatMap((s) => (Array.isArray(s) ? s : [s])).map((s) => s.name)
    assert.equal(new Set(names).size, names.length, 'no prepared statement name is bound to two texts')
  }
})
