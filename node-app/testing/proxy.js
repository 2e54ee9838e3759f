'use strict'

// A TCP proxy in front of the real database, so a test can take "the database" down and bring it back
// without touching the shared server: stop() resets every proxied connection and refuses new ones.

const net = require('node:net')

async function startProxy(targetHost, targetPort) {
  const sockets = new Set()
  let server = null
  let port = 0

  const track = (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }

  const listen = () =>
    new Promise((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost)
        track(client)
        track(upstream)
        client.pipe(upstream)
        upstream.pipe(client)
        client.on('close', () => upstream.destroy())
        upstream.on('close', () => client.destroy())
      })
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        port = server.address().port
        resolve()
      })
    })

  await listen()
  return {
    get port() {
      return port
    },
    // The database "goes down": established connections are closed, new ones refused. (Not
    // socket.resetAndDestroy(): on Node 20 it sometimes leaves the process spinning at exit.)
    stop: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
    // The database "comes back" on the same port.
    start: listen,
  }
}

module.exports = { startProxy }
