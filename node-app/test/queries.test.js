'use strict'

// The SQL of src/db/queries.js must be the SQL of contract/queries.sql, statement for statement.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { statements, build, UNSORTED } = require('../src/db/queries')

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
