'use strict'

// The effective configuration, read once from the environment (contract/README.md, Configuration).
// Every knob is validated here so that a typo fails at start-up instead of silently benchmarking a default.

const LOG_LEVELS = ['error', 'warn', 'info', 'debug']

class ConfigError extends Error {}

function integer(env, name, fallback, min, max) {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got ${JSON.stringify(raw)}`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(`${name} must be in ${min}..${max}, got ${raw}`)
  return value
}

function flag(env, name, fallback) {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const lowered = raw.trim().toLowerCase()
  if (lowered === '1' || lowered === 'true') return true
  if (lowered === '0' || lowered === 'false') return false
  throw new ConfigError(`${name} must be 0 or 1, got ${JSON.stringify(raw)}`)
}

// The connection string for display: the password becomes *** (docs/design.md §2.5: never log a password).
function maskedDatabaseUrl(env) {
  const url = env.DATABASE_URL
  if (url) {
    try {
      const parsed = new URL(url)
      if (parsed.password) parsed.password = '***'
      return parsed.toString()
    } catch {
      // Not a WHATWG URL (e.g. a bare libpq key=value string): mask anything that looks like a password.
      return url.replace(/(:\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/(password\s*=\s*)\S+/gi, '$1***')
    }
  }
  // Without DATABASE_URL node-postgres reads the standard PG* variables; show what it will use.
  const user = env.PGUSER || env.USER || ''
  const auth = env.PGPASSWORD ? `${user}:***` : user
  return `postgresql://${auth}@${env.PGHOST || 'localhost'}:${env.PGPORT || 5432}/${env.PGDATABASE || user}`
}

function load(env = process.env) {
  const logLevel = (env.LOG_LEVEL || 'info').trim().toLowerCase()
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(env.LOG_LEVEL)}`)
  }
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    // undefined lets node-postgres fall back to PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE itself.
    databaseUrl: env.DATABASE_URL || undefined,
    dbDisplay: maskedDatabaseUrl(env),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 10000),
    nodeWorkers: integer(env, 'NODE_WORKERS', 0, 0, 1024),
    pgNative: flag(env, 'PG_NATIVE', false),
    logLevel,
    serverTiming: flag(env, 'SERVER_TIMING', true),
    unfairUnsorted: flag(env, 'BIDBENCH_UNFAIR_UNSORTED', false),
    unfairPerField: flag(env, 'BIDBENCH_UNFAIR_PER_FIELD', false),
  })
}

module.exports = { load, ConfigError, maskedDatabaseUrl, LOG_LEVELS }
