'use strict'

// A tiny router over raw paths (contract/README.md, Routes): no percent-decoding and no normalization, so a
// trailing slash, a doubled slash or an empty segment is simply an unknown route. `{id}` matches any one
// non-empty segment; the value is validated later, after the method check, as the handling order says.

const { methodNotAllowed } = require('./errors')

class Router {
  // routes: [{ path: '/items/{id}', methods: { GET: action, PUT: action, ... } }], methods in Allow order.
  constructor(routes) {
    this.exact = new Map()
    this.patterns = []
    for (const { path, methods } of routes) {
      const route = {
        path,
        methods: new Map(Object.entries(methods)),
        // Built once: the 405 for this route, with its Allow header.
        notAllowed: methodNotAllowed(Object.keys(methods).join(', ')),
      }
      if (path.includes('{')) {
        const segments = path.split('/')
        this.patterns.push({ route, segments, param: segments.findIndex((s) => s.startsWith('{')) })
      } else {
        this.exact.set(path, route)
      }
    }
  }

  // Returns { route, rawId } or null. path is the raw request path, everything before the first '?'.
  match(path) {
    const exact = this.exact.get(path)
    if (exact !== undefined) return { route: exact, rawId: undefined }
    const segments = path.split('/')
    for (const { route, segments: pattern, param } of this.patterns) {
      if (pattern.length !== segments.length || segments[param] === '') continue
      let same = true
      for (let i = 0; i < pattern.length; i++) {
        if (i !== param && pattern[i] !== segments[i]) {
          same = false
          break
        }
      }
      if (same) return { route, rawId: segments[param] }
    }
    return null
  }
}

module.exports = { Router }
