'use strict'

// Steps 4 to 6 of the request-handling order (contract/README.md): path id, paging query, content type.
// All three work on raw strings: no percent-decoding, no normalization, so that every app sees the
// same bytes and reaches the same verdict.

const { errors } = require('../http/errors')

const ID_PATTERN = /^[0-9]{1,10}$/
const PAGING_PATTERN = /^[0-9]{1,9}$/
const MAX_ID = 2147483647

function parsePathId(raw) {
  if (!ID_PATTERN.test(raw)) throw errors.invalidPathId
  const id = Number(raw)
  if (id < 1 || id > MAX_ID) throw errors.invalidPathId
  return id
}

// One paging parameter: undefined when absent, null when it must be rejected (repeated or malformed).
function pagingValue(rawValues, min, max, fallback) {
  if (rawValues === undefined) return fallback
  if (rawValues.length !== 1) return null
  const raw = rawValues[0]
  if (raw === undefined || !PAGING_PATTERN.test(raw)) return null
  const value = Number(raw)
  return value < min || value > max ? null : value
}

// The raw query string is split on '&' and each part at its first '='. URLSearchParams is not used on
// purpose: it percent-decodes and keeps the last of repeated names, and the contract wants neither.
function parsePaging(rawQuery) {
  let limits
  let offsets
  if (rawQuery) {
    for (const part of rawQuery.split('&')) {
      const eq = part.indexOf('=')
      const name = eq === -1 ? part : part.slice(0, eq)
      // A part without '=' has no value at all, which fails the digit pattern below.
      const value = eq === -1 ? undefined : part.slice(eq + 1)
      if (name === 'limit') (limits ??= []).push(value)
      else if (name === 'offset') (offsets ??= []).push(value)
    }
  }
  const limit = pagingValue(limits, 1, 100, 20)
  if (limit === null) throw errors.invalidLimit
  const offset = pagingValue(offsets, 0, 10000, 0)
  if (offset === null) throw errors.invalidOffset
  return { limit, offset }
}

// The media type is what comes before any ';', trimmed of HTTP whitespace (space, tab) and compared
// case-insensitively; parameters such as charset are ignored. String#trim is not used: it would also strip
// Unicode spaces (U+00A0) that Java's and PHP's trims keep.
const OWS = /^[ \t]+|[ \t]+$/g

function checkContentType(header) {
  if (header === undefined) throw errors.unsupportedMediaType
  const semicolon = header.indexOf(';')
  const mediaType = (semicolon === -1 ? header : header.slice(0, semicolon)).replace(OWS, '').toLowerCase()
  if (mediaType !== 'application/json') throw errors.unsupportedMediaType
}

module.exports = { parsePathId, parsePaging, checkContentType, MAX_ID }
