'use strict'

// Step 7.1 to 7.3 of the request-handling order: the body must be UTF-8, then strict JSON, then an object.
//
// JSON.parse is already RFC 8259 strict about syntax (no comments, no trailing commas, only JSON
// whitespace around the value). What it lets through, and the contract rejects, is checked by one scan
// of the text before parsing:
//   - nesting deeper than 32 containers,
//   - an unpaired UTF-16 surrogate escape ("\ud800") in any string. This must look at the text, not the
//     parsed value: with duplicate keys the last one wins, so an earlier bad value would vanish.
// A leading BOM is valid UTF-8 but not JSON whitespace, so JSON.parse rejects it, as the contract wants.

const { errors } = require('../http/errors')

const MAX_DEPTH = 32

// fatal: reject invalid UTF-8 (overlongs, surrogates, truncated sequences) instead of substituting
// U+FFFD; ignoreBOM: keep a BOM in the text so that JSON parsing rejects it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function decodeUtf8(buffer) {
  try {
    return utf8.decode(buffer)
  } catch {
    throw errors.notUtf8
  }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LOWER_U = 0x75

function hex4(text, at) {
  if (at + 4 > text.length) return -1
  const digits = text.slice(at, at + 4)
  return /^[0-9a-fA-F]{4}$/.test(digits) ? parseInt(digits, 16) : -1
}

// True when the text nests at most MAX_DEPTH containers and pairs every surrogate escape. Invalid JSON
// may pass this scan; JSON.parse rejects it next.
function withinDepthAndPaired(text) {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === QUOTE) {
        inString = false
      } else if (c === BACKSLASH) {
        if (text.charCodeAt(i + 1) !== LOWER_U) {
          i++ // a one-character escape such as \" or \\; skip the escaped character
          continue
        }
        const unit = hex4(text, i + 2)
        if (unit >= 0xdc00 && unit <= 0xdfff) return false // a low surrogate with no high one before it
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // a high surrogate must be followed at once by an escaped low surrogate
          if (text.charCodeAt(i + 6) !== BACKSLASH || text.charCodeAt(i + 7) !== LOWER_U) return false
          const low = hex4(text, i + 8)
          if (low < 0xdc00 || low > 0xdfff) return false
          i += 11
        } else {
          i += 5
        }
      }
    } else if (c === QUOTE) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) return false
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return true
}

// Decodes and parses a request body; returns the JSON object or throws the contract's 400.
function parseJsonObject(buffer) {
  const text = decodeUtf8(buffer)
  if (!withinDepthAndPaired(text)) throw errors.notJson
  let value
  try {
    value = JSON.parse(text)
  } catch {
    throw errors.notJson
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errors.notObject
  return value
}

module.exports = { parseJsonObject, decodeUtf8, withinDepthAndPaired, MAX_DEPTH }
