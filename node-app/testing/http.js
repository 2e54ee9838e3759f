'use strict'

// A raw HTTP/1.1 client for tests. node:http and fetch would normalize exactly what the hostile cases need
// to send: undecoded paths, invalid UTF-8, a Content-Length without the body, hand-made chunking.

const net = require('node:net')

// request(port, { method, path, headers, body, chunks }) -> { status, headers, body, raw }
// headers: an object or a list of [name, value]; body: string or Buffer sent with a Content-Length unless
// headers set one; chunks: a list of Buffers sent with Transfer-Encoding: chunked.
function request(port, { method = 'GET', path = '/', headers = {}, body, chunks, timeoutMs = 10_000 } = {}) {
  const list = Array.isArray(headers) ? [...headers] : Object.entries(headers)
  const has = (name) => list.some(([key]) => key.toLowerCase() === name)
  list.unshift(['Host', `127.0.0.1:${port}`])
  let payload = Buffer.alloc(0)
  if (chunks) {
    if (!has('transfer-encoding')) list.push(['Transfer-Encoding', 'chunked'])
    const parts = []
    for (const chunk of chunks) {
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'))
    }
    parts.push(Buffer.from('0\r\n\r\n'))
    payload = Buffer.concat(parts)
  } else if (body !== undefined) {
    payload = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')
    if (!has('content-length')) list.push(['Content-Length', String(payload.length)])
  }
  list.push(['Connection', 'close'])
  const head = `${method} ${path} HTTP/1.1\r\n${list.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`

  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const received = []
    let settled = false
    const done = (err, value) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (err) reject(err)
      else resolve(value)
    }
    const timer = setTimeout(() => done(new Error(`no complete response to ${method} ${path} within ${timeoutMs} ms`)), timeoutMs)
    socket.on('connect', () => {
      socket.write(head)
      // A write may fail once the server has answered (413) and closed; the response is what counts.
      if (payload.length) socket.write(payload, () => {})
    })
    socket.on('error', () => {
      const parsed = parse(Buffer.concat(received), method)
      if (parsed) done(null, parsed)
      else done(new Error(`connection error before a complete response to ${method} ${path}`))
    })
    socket.on('data', (data) => {
      received.push(data)
      const parsed = parse(Buffer.concat(received), method)
      if (parsed) done(null, parsed)
    })
    socket.on('end', () => {
      const parsed = parse(Buffer.concat(received), method)
      if (parsed) done(null, parsed)
      else done(new Error(`connection closed before a complete response to ${method} ${path}`))
    })
  })
}

// Parses the first final (non-1xx) response in buffer, or returns null while it is incomplete.
function parse(buffer, method) {
  let start = 0
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n', start)
    if (end === -1) return null
    const lines = buffer.subarray(start, end).toString('latin1').split('\r\n')
    const status = Number(lines[0].split(' ')[1])
    const headers = {}
    const headerList = []
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).toLowerCase()
      const value = line.slice(colon + 1).trim()
      headerList.push([name, value])
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value
    }
    if (status >= 100 && status < 200) {
      start = end + 4
      continue
    }
    const length = method === 'HEAD' ? 0 : Number(headers['content-length'] ?? NaN)
    if (Number.isNaN(length)) throw new Error(`response without Content-Length: ${lines[0]}`)
    const bodyStart = end + 4
    if (buffer.length < bodyStart + length) return null
    const body = buffer.subarray(bodyStart, bodyStart + length).toString('utf8')
    return { status, headers, headerList, body, json: () => JSON.parse(body) }
  }
}

// A convenience for JSON requests with a proper Content-Type.
function json(port, method, path, value) {
  return request(port, {
    method,
    path,
    headers: { 'Content-Type': 'application/json' },
    body: typeof value === 'string' ? value : JSON.stringify(value),
  })
}

// rawRequest(port, bytes) -> the parsed response to bytes sent exactly as given (no Host, nothing added).
function rawRequest(port, bytes, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const received = []
    const timer = setTimeout(() => finish(), timeoutMs)
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      const parsed = parse(Buffer.concat(received), 'GET')
      if (parsed) resolve(parsed)
      else reject(new Error(`no complete response to ${JSON.stringify(String(bytes).slice(0, 60))}`))
    }
    socket.on('connect', () => socket.write(bytes))
    socket.on('data', (data) => {
      received.push(data)
      if (parse(Buffer.concat(received), 'GET')) finish()
    })
    socket.on('error', finish)
    socket.on('end', finish)
  })
}

module.exports = { request, json, rawRequest }
