'use strict'

// A levelled line logger. Lines go straight to the process's stdout/stderr streams, which Node writes
// synchronously for files and pipes (the harness redirects both to app.log), so a crash never loses the
// last lines and the cost of debug logging is paid inside the request it describes (STEP Table 7).

const RANK = { error: 0, warn: 1, info: 2, debug: 3 }

function createLogger(level, { out = process.stdout, err = process.stderr, tag = '' } = {}) {
  const max = RANK[level]
  const prefix = tag ? ` ${tag}` : ''
  const line = (stream, name, message) => {
    stream.write(`${new Date().toISOString()} ${name}${prefix} ${message}\n`)
  }
  return {
    level,
    debugEnabled: max >= RANK.debug,
    error: (message) => line(err, 'ERROR', message),
    warn: (message) => max >= RANK.warn && line(err, 'WARN', message),
    info: (message) => max >= RANK.info && line(out, 'INFO', message),
    debug: (message) => max >= RANK.debug && line(out, 'DEBUG', message),
  }
}

module.exports = { createLogger }
