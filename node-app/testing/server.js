'use strict'

// Starts the app as a child process for tests and waits for its start-up line, which also tells the port
// (tests bind PORT=0, so parallel test files never collide).

const { spawn } = require('node:child_process')
const path = require('node:path')
const readline = require('node:readline')

const ENTRY = path.join(__dirname, '..', 'src', 'main.js')

// Resolves to { child, port, info, logs() }; rejects if the app exits or stays silent for timeoutMs.
function startApp(env = {}, { timeoutMs = 15_000 } = {}) {
  const child = spawn(process.execPath, [ENTRY], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines = []
  const startLines = []
  child.stderr.setEncoding('utf8').on('data', (chunk) => lines.push(chunk))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`app did not print its start-up line within ${timeoutMs} ms:\n${lines.join('')}`))
    }, timeoutMs)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`app exited early (code ${code}, signal ${signal}):\n${lines.join('')}`))
    })
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(`${line}\n`)
      if (!line.startsWith('bidbench-start ')) return
      startLines.push(line)
      if (startLines.length > 1) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      const info = JSON.parse(line.slice('bidbench-start '.length))
      resolve({ child, port: info.port, info, logs: () => lines.join(''), startLines })
    })
  })
}

// Sends SIGTERM and resolves with the exit code (or rejects after timeoutMs).
function stopApp(app, { timeoutMs = 15_000 } = {}) {
  return new Promise((resolve, reject) => {
    if (app.child.exitCode !== null) return resolve(app.child.exitCode)
    const timer = setTimeout(() => {
      app.child.kill('SIGKILL')
      reject(new Error('app did not exit within the timeout after SIGTERM'))
    }, timeoutMs)
    app.child.once('exit', (code) => {
      clearTimeout(timer)
      resolve(code)
    })
    app.child.kill('SIGTERM')
  })
}

module.exports = { startApp, stopApp, ENTRY }
