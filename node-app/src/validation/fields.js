'use strict'

// Steps 7.4 and 7.5: unknown keys, then every field of the request schema in openapi.yaml `properties`
// order (contract/README.md, Field rules). A schema is an ordered list of [name, check] pairs; the first
// failing field decides the message.

const { errors, missingField, invalidField } = require('../http/errors')

// "Integral value" means the number's value, not its spelling: JSON.parse has already turned 5, 5.0 and
// 5e0 into the same 5, and 1e400 into Infinity, which Number.isInteger rejects.
const integral = (min, max) => (value) =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

// Code points, not UTF-16 units: the string is well formed (the JSON scan rejected lone surrogates), so
// each surrogate pair is one code point and counting the units that are not high surrogates counts them.
function codePointLength(value) {
  let count = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 0xd800 || c > 0xdbff) count++
  }
  return count
}

const text = (min, max) => {
  // A string has at most as many code points as UTF-16 units, and at least one if it has any unit; so
  // with min <= 1 a string short in units needs no counting, which is every realistic title.
  const cheap = min <= 1
  return (value) => {
    if (typeof value !== 'string' || value.includes('\u0000')) return false
    if (cheap && value.length <= max) return value.length >= min
    const length = codePointLength(value)
    return length >= min && length <= max
  }
}

const NICKNAME = /^[A-Za-z0-9_]{3,32}$/

const rules = {
  id: integral(1, 2147483647),
  cents: integral(1, 100000000000),
  durationSeconds: integral(60, 2592000),
  title: text(1, 200),
  description: text(0, 10000),
  nickname: (value) => typeof value === 'string' && NICKNAME.test(value),
}

const schemas = {
  itemCreate: [
    ['seller_id', rules.id],
    ['category_id', rules.id],
    ['title', rules.title],
    ['description', rules.description],
    ['initial_price_cents', rules.cents],
    ['duration_seconds', rules.durationSeconds],
  ],
  itemUpdate: [
    ['title', rules.title],
    ['description', rules.description],
  ],
  bidCreate: [
    ['bidder_id', rules.id],
    ['amount_cents', rules.cents],
  ],
  userCreate: [
    ['nickname', rules.nickname],
    ['region_id', rules.id],
  ],
}

// Precomputed per schema: the set of allowed keys and the prebuilt errors, so validation allocates nothing.
const compiled = new Map()
for (const schema of Object.values(schemas)) {
  compiled.set(schema, {
    allowed: new Set(schema.map(([name]) => name)),
    fields: schema.map(([name, check]) => ({ name, check, missing: missingField(name), invalid: invalidField(name) })),
  })
}

function validateBody(schema, body) {
  const { allowed, fields } = compiled.get(schema)
  // Own enumerable keys only: JSON.parse makes "__proto__" an ordinary own key, so it is unknown too.
  for (const key of Object.keys(body)) {
    if (!allowed.has(key)) throw errors.unknownFields
  }
  for (const field of fields) {
    if (!Object.prototype.hasOwnProperty.call(body, field.name)) throw field.missing
    if (!field.check(body[field.name])) throw field.invalid
  }
  return body
}

module.exports = { schemas, rules, validateBody, codePointLength }
