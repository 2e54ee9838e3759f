'use strict'

// Running the contract's statements: one pool checkout per request, every statement timed for
// Server-Timing (db) and, at LOG_LEVEL=debug, logged with its name and duration. Failures are sorted
// here into "database unavailable" (503) and errors with an SQLSTATE that the handlers map themselves.

const { performance } = require('node:perf_hooks')
const { errors } = require('../http/errors')

// Errors that mean the connection could not be obtained or was lost. Node socket codes come from the
// JavaScript client; SQLSTATE classes come from the server (08 connection exception, 57P01..03 shutdown
// or startup, 53300 too many connections).
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOENT', // a Unix-socket path that is gone while the server is down
])
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])
const SQLSTATE = /^[0-9A-Z]{5}$/
// Errors without a code: pg-pool's checkout timeout, the JavaScript client's "Connection terminated",
// libpq's "server closed the connection unexpectedly" / "no connection to the server" (pg-native).
const UNAVAILABLE_MESSAGE = /timeout exceeded|connection terminated|not queryable|server closed the connection|no connection to the server|could not connect|connection to server|could not send|could not receive|terminating connection/i

function isUnavailable(err) {
  if (!err || typeof err !== 'object') return false
  const code = err.code
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true
    if (SQLSTATE.test(code)) return code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code)
  }
  return typeof err.message === 'string' && UNAVAILABLE_MESSAGE.test(err.message)
}

// Tracks the database time of one request. With SERVER_TIMING=0 and no debug logging there is no clock
// reading at all (the monitor's own cost must be switchable, STEP Table 2).
class DbTimer {
  constructor(enabled) {
    this.enabled = enabled
    this.ms = 0
  }
}

class Session {
  constructor(client, timer, logger) {
    this.client = client
    this.timer = timer
    this.logger = logger
  }

  // Runs one prepared statement and returns its rows.
  async query(statement, values) {
    const result = await this.#run(statement.name, { name: statement.name, text: statement.text, values })
    return result.rows
  }

  // Transaction control is sent as simple-protocol statements, like every driver's begin/commit.
  begin() {
    return this.#run('begin', 'BEGIN')
  }

  commit() {
    return this.#run('commit', 'COMMIT')
  }

  rollback() {
    return this.#run('rollback', 'ROLLBACK')
  }

  async #run(name, query) {
    const timer = this.timer
    if (!timer.enabled) return this.client.query(query)
    const start = performance.now()
    try {
      return await this.client.query(query)
    } finally {
      const ms = performance.now() - start
      timer.ms += ms
      if (this.logger.debugEnabled) this.logger.debug(`sql ${name} ${ms.toFixed(3)}ms`)
    }
  }
}

class Database {
  constructor(pool, statements, logger) {
    this.pool = pool
    this.sql = statements
    this.logger = logger
    this.lastWarning = 0
    this.suppressed = 0
  }

  // While the database is down every request fails the same way; one warning a second says so without
  // turning the log into the bottleneck.
  warnUnavailable(err) {
    const now = Date.now()
    if (now - this.lastWarning < 1000) {
      this.suppressed++
      return
    }
    const more = this.suppressed ? ` (${this.suppressed} similar suppressed)` : ''
    this.logger.warn(`database unavailable: ${err.message}${more}`)
    this.lastWarning = now
    this.suppressed = 0
  }

  // Checks a client out for the duration of fn(session) and always returns it. A client whose connection
  // failed is released with the error, which makes the pool discard it instead of reusing it.
  async withSession(timer, fn) {
    const client = await this.#checkout(timer)
    let failure
    try {
      return await fn(new Session(client, timer, this.logger))
    } catch (err) {
      if (client.bidbenchBroken || isUnavailable(err)) {
        failure = client.bidbenchBroken || err
        this.warnUnavailable(failure)
        throw errors.dbUnavailable
      }
      throw err
    } finally {
      client.release(failure)
    }
  }

  // Runs fn inside BEGIN ... COMMIT. fn returns the response on success, or throws; a thrown HttpError
  // (a 404 or 409 decided inside the transaction) and any other failure roll back first.
  withTransaction(timer, fn) {
    return this.withSession(timer, async (session) => {
      await session.begin()
      let result
      try {
        result = await fn(session)
      } catch (err) {
        // If the connection is gone the rollback fails too; the original error is the one to report.
        if (!session.client.bidbenchBroken && !isUnavailable(err)) await session.rollback()
        throw err
      }
      await session.commit()
      return result
    })
  }

  async #checkout(timer) {
    const start = timer.enabled ? performance.now() : 0
    try {
      return await this.pool.connect()
    } catch (err) {
      // Whatever stops a checkout (refused, reset, auth or startup failure, 5 s timeout) is unavailability.
      this.warnUnavailable(err)
      throw errors.dbUnavailable
    } finally {
      if (timer.enabled) timer.ms += performance.now() - start
    }
  }
}

module.exports = { Database, DbTimer, Session, isUnavailable }
