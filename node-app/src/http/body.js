'use strict'

// Reads a request body up to a byte limit (step 1 of the handling order). The body is counted while it
// streams and reading stops as soon as it passes the limit: it is never buffered past it.

const EMPTY = Buffer.alloc(0)

const TOO_LARGE = Symbol('too large')
const ABORTED = Symbol('aborted')
const STALLED = Symbol('stalled')

// A body that goes this long without a byte gets 408 (contract: 30 s, as Jetty's idle timeout and nginx's
// client_body_timeout). Node's own requestTimeout (300 s for the whole request) is far longer.
const STALL_MS = 30_000

// True when the headers promise no body at all, so there is nothing to wait for.
function hasNoBody(headers) {
  const declared = headers['content-length']
  return declared === undefined ? headers['transfer-encoding'] === undefined : declared === '0'
}

// Calls done(body) with a Buffer, or done(TOO_LARGE) / done(STALLED) / done(ABORTED), exactly once.
function readBody(req, limit, done, stallMs = STALL_MS) {
  const chunks = []
  let size = 0
  let finished = false
  // One timer per body being read, restarted by every chunk: a held upload costs a timer, no thread.
  const stall = setTimeout(() => finish(STALLED), stallMs)
  const finish = (outcome) => {
    if (finished) return
    finished = true
    clearTimeout(stall)
    done(outcome)
  }
  req.on('data', (chunk) => {
    if (finished) return // past the limit: the rest is discarded as it arrives, never kept
    stall.refresh()
    size += chunk.length
    if (size > limit) {
      chunks.length = 0
      finish(TOO_LARGE)
      return
    }
    chunks.push(chunk)
  })
  req.on('end', () => finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)))
  // The client went away mid-body: there is no one to answer.
  req.on('error', () => finish(ABORTED))
  req.on('close', () => finish(ABORTED))
}

module.exports = { readBody, hasNoBody, EMPTY, TOO_LARGE, ABORTED, STALLED, STALL_MS }
