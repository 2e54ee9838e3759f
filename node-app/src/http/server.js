'use strict'

// The HTTP server: node:http with the request-handling order of contract/README.md.
//   0 request syntax (400, 417)  1 body size (413)  2 route (404)  3 method (405)  4 path id  5 query
//   6 content type (415)  7 body
//   8 database work (handlers)
// The body is read before routing because a too-large body wins over every other answer, on every route.

const http = require('node:http')
const { performance } = require('node:perf_hooks')
const { HttpError, LIMIT_BYTES, errors } = require('./errors')
const { readBody, hasNoBody, EMPTY, TOO_LARGE, ABORTED, STALLED } = require('./body')
const { serverTiming } = require('./timing')
const { parsePathId, parsePaging, checkContentType } = require('../validation/request')
const { parseJsonObject } = require('../validation/json')
const { validateBody } = require('../validation/fields')
const { errorBody } = require('../format')
const { DbTimer } = require('../db/database')

// Idle keep-alive connections stay open this long (Node's default is 5 s). Load generators reuse
// connections across pauses; a server that closes them first races the client's next request.
const KEEP_ALIVE_TIMEOUT_MS = 30_000

// Step 0, the part llhttp lets through (contract/README.md, "Request syntax"). llhttp already refuses
// unknown and lowercase method tokens, malformed header sections and HTTP/1.2 or 3.0 (see clientError);
// CONNECT never reaches the request handler (see the 'connect' listener).
function syntaxError(req) {
  // llhttp takes HTTP/0.9 (no version) and HTTP/2.0 request lines; the contract serves 1.1 and 1.0 only.
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor > 1) return errors.badSyntax
  // Exactly one Host in HTTP/1.1 (RFC 9112 §3.2); Node would take the first of two. rawHeaders holds every
  // field as sent, names at even indexes.
  let hosts = 0
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++
  }
  if (hosts > 1 || (hosts === 0 && req.httpVersionMinor === 1)) return errors.badSyntax
  return null
}

// The raw target for routing: the origin form as is; an absolute-form target (http://host:port/path?q) by
// its path and query, its authority winning over Host (RFC 9112 §3.2.2), as Jetty and nginx route it.
// Anything else (the asterisk form `*`) is null: 400.
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/

function routableTarget(url) {
  if (url.charCodeAt(0) === 47 /* / */) return url
  const authority = ABSOLUTE_FORM.exec(url)
  if (authority === null) return null
  const rest = url.slice(authority[0].length)
  return rest === '' || rest.charCodeAt(0) === 63 /* ? */ ? `/${rest}` : rest
}

// An encoded NUL in the path (before the first '?') is a malformed target (contract, "Request syntax"):
// nginx refuses it while it decodes the path for itself and Jetty the same, before any app code runs, so
// it cannot be an ordinary unknown route or invalid id in one app only. In the query it is opaque bytes.
function nulInPath(target) {
  const nul = target.indexOf('%00')
  if (nul === -1) return false
  const q = target.indexOf('?')
  return q === -1 || nul < q
}

function declaredTooLarge(headers) {
  const declared = headers['content-length']
  return declared !== undefined && Number(declared) > LIMIT_BYTES
}

// gated: requests are held until server.open() (cluster workers; see cluster.js).
function createServer({ router, logger, serverTimingEnabled, gated = false }) {
  // The clock runs for Server-Timing, and for the debug log's durations; otherwise not at all.
  const clock = serverTimingEnabled || logger.debugEnabled

  function send(exchange, status, payload, extraHeaders) {
    const { req, res } = exchange
    const json = JSON.stringify(payload)
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) }
    if (serverTimingEnabled) headers['Server-Timing'] = serverTiming(exchange.timer.ms, exchange.start)
    if (extraHeaders !== undefined) Object.assign(headers, extraHeaders)
    // While shutting down, a kept-alive connection is closed after its in-flight response.
    if (server.draining) headers.Connection = 'close'
    res.writeHead(status, headers)
    res.end(json)
    if (logger.debugEnabled) {
      logger.debug(`${req.method} ${req.url} ${status} ${(performance.now() - exchange.start).toFixed(3)}ms`)
    }
  }

  function sendError(exchange, err) {
    if (!(err instanceof HttpError)) {
      logger.error(`internal error on ${exchange.req.method} ${exchange.req.url}: ${err && err.stack ? err.stack : err}`)
      err = errors.internal
    }
    send(exchange, err.status, errorBody(err.code, err.message), err.headers)
  }

  // The last line of defence: whatever goes wrong while answering, the client gets a 500 (or, if the
  // response had already started, its connection is closed) and nothing escapes as an unhandled error.
  function guarded(exchange, write) {
    try {
      write()
    } catch (failure) {
      logger.error(`cannot answer ${exchange.req.method} ${exchange.req.url}: ${failure && failure.stack}`)
      try {
        if (exchange.res.headersSent) exchange.res.destroy()
        else send(exchange, errors.internal.status, errorBody(errors.internal.code, errors.internal.message))
      } catch {
        exchange.res.destroy()
      }
    }
  }

  const respond = (exchange, result) => guarded(exchange, () => send(exchange, result.status, result.body))
  const fail = (exchange, err) => guarded(exchange, () => sendError(exchange, err))

  // 413: answered at once. The connection is closed afterwards, so the unread rest of the body is not
  // parsed as a next request and nobody waits for a body that will never be read; the close lingers so
  // that the client gets to read the 413 (see lingerOnClose).
  function sendTooLarge(exchange) {
    const err = errors.payloadTooLarge
    lingerOnClose(exchange.req.socket)
    send(exchange, err.status, errorBody(err.code, err.message), { Connection: 'close' })
  }

  // 408 for a body that stalled: the rest of it will never be read, so the connection is closed after.
  function sendTimeout(exchange) {
    const err = errors.requestTimeout
    send(exchange, err.status, errorBody(err.code, err.message), { Connection: 'close' })
  }

  // Steps 2 to 7: everything that decides the request from its head and body, before any database work.
  function handle(exchange, body) {
    const { req } = exchange
    const url = exchange.target
    const q = url.indexOf('?')
    const match = router.match(q === -1 ? url : url.slice(0, q))
    if (match === null) throw errors.routeNotFound
    const action = match.route.methods.get(req.method)
    if (action === undefined) throw match.route.notAllowed
    const request = { timer: exchange.timer, id: 0, limit: 0, offset: 0, body: null }
    if (match.rawId !== undefined) request.id = parsePathId(match.rawId)
    if (action.paged) {
      const paging = parsePaging(q === -1 ? '' : url.slice(q + 1))
      request.limit = paging.limit
      request.offset = paging.offset
    }
    if (action.body !== undefined) {
      checkContentType(req.headers['content-type'])
      request.body = validateBody(action.body, parseJsonObject(body))
    }
    return action.handler(request)
  }

  function dispatch(exchange, body) {
    let pending
    try {
      pending = handle(exchange, body)
    } catch (err) {
      fail(exchange, err)
      return
    }
    // Handlers are async; every rejection ends up here, never as an unhandled rejection.
    pending.then(
      (result) => respond(exchange, result),
      (err) => fail(exchange, err),
    )
  }

  function onRequest(req, res) {
    const exchange = { req, res, start: clock ? performance.now() : 0, timer: new DbTimer(clock), target: null }
    exchange.target = routableTarget(req.url)
    const syntax = exchange.target === null || nulInPath(exchange.target) ? errors.badSyntax : syntaxError(req)
    if (syntax !== null) {
      // The request may carry a body nobody will read: close after the answer, as the parser does.
      fail(exchange, new HttpError(syntax.status, syntax.code, syntax.message, { Connection: 'close' }))
      return
    }
    if (declaredTooLarge(req.headers)) {
      sendTooLarge(exchange)
      return
    }
    if (hasNoBody(req.headers)) {
      dispatch(exchange, EMPTY)
      return
    }
    readBody(req, LIMIT_BYTES, (outcome) => {
      if (outcome === ABORTED) return
      if (outcome === TOO_LARGE) sendTooLarge(exchange)
      else if (outcome === STALLED) sendTimeout(exchange)
      else dispatch(exchange, outcome)
    })
  }

  // A cluster worker starts serving only once the primary has printed the start-up line, so nobody can
  // see the app ready before the line is there. Requests that arrive in that gap (milliseconds) wait.
  let held = gated ? [] : null
  function admit(req, res) {
    if (held === null) onRequest(req, res)
    else held.push([req, res])
  }

  // requireHostHeader off: a missing or doubled Host is checked in syntaxError, so that it gets the
  // contract's JSON 400 (Node's own answer is a bare, chunked 400).
  const server = http.createServer({ requireHostHeader: false }, admit)
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  server.draining = false
  server.open = () => {
    const waiting = held || []
    held = null
    for (const [req, res] of waiting) onRequest(req, res)
  }

  // `Expect: 100-continue`: only invite the body when its declared size is acceptable; a too-large one
  // gets its 413 without the client ever sending it.
  server.on('checkContinue', (req, res) => {
    if (!declaredTooLarge(req.headers)) res.writeContinue()
    admit(req, res)
  })

  // An Expect other than 100-continue (step 0): 417 with the contract's body. Node's default is a bare 417.
  server.on('checkExpectation', (req, res) => {
    const exchange = { req, res, start: clock ? performance.now() : 0, timer: new DbTimer(clock), target: null }
    const { status, code, message } = errors.expectationFailed
    fail(exchange, new HttpError(status, code, message))
  })

  // CONNECT goes to the 'connect' event, never to the request handler; without a listener Node closes
  // the socket without a word (issue #31). This service is no proxy: 400, then close.
  server.on('connect', (req, socket) => {
    answerOnSocket(socket, errors.badSyntax, clock ? performance.now() : 0)
  })

  // What llhttp refuses never becomes a request (an unknown or lowercase method, another HTTP version,
  // a malformed header section, a head above 16 KiB): the contract's JSON answer on the bare socket, then
  // close. A Content-Length beyond 2^64 is still a declared body above the limit (413); Node's request
  // timeout is a 408.
  server.on('clientError', (err, socket) => {
    if (!socket.writable || socket.bytesWritten > 0) {
      socket.destroy() // mid-response or gone: there is no clean place for an answer
      return
    }
    const start = clock ? performance.now() : 0
    if (err.reason === 'Content-Length overflow' || err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
      answerOnSocket(socket, errors.payloadTooLarge, start)
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answerOnSocket(socket, errors.requestTimeout, start)
    } else {
      answerOnSocket(socket, errors.badSyntax, start)
    }
  })

  // A complete response written on a socket that has no ServerResponse, then a lingering close.
  function answerOnSocket(socket, err, start) {
    const json = JSON.stringify(errorBody(err.code, err.message))
    const timing = serverTimingEnabled ? `Server-Timing: ${serverTiming(0, start)}\r\n` : ''
    socket.end(
      `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\n${timing}Date: ${new Date().toUTCString()}\r\n` +
        `Connection: close\r\n\r\n${json}`,
    )
    linger(socket)
  }

  return server
}

// Lingering close, as nginx does after an error answer: when a client is still sending a body that will
// not be read, closing the socket outright makes the kernel answer the unread bytes with a reset, and a
// reset can destroy the 413 in the client's receive buffer before the client reads it (the load driver then
// records status 0, no response; about 1 request in 40 past the limit without this). So the socket is only half-closed after
// the response (FIN); what the client still sends is read and discarded until it closes its side, goes
// quiet for LINGER_IDLE_MS, or LINGER_MAX_MS have passed. Node calls socket.destroySoon() once a
// `Connection: close` response is finished; that call is replaced for this one socket.
const LINGER_IDLE_MS = 1000
const LINGER_MAX_MS = 5000

function lingerOnClose(socket) {
  socket.destroySoon = function lingeringClose() {
    this.end()
    linger(this)
  }
}

// After end(): drain and discard until the client closes, goes quiet, or time is up.
function linger(socket) {
  const limit = setTimeout(() => socket.destroy(), LINGER_MAX_MS)
  socket.setTimeout(LINGER_IDLE_MS, () => socket.destroy())
  socket.once('end', () => socket.destroy()) // the client has closed its side: nothing more will come
  socket.once('close', () => clearTimeout(limit))
  socket.resume()
}

module.exports = { createServer, nulInPath, KEEP_ALIVE_TIMEOUT_MS }
