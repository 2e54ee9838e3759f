'use strict'

// A node:test reporter that prints one summary line at the end of the run, for `./bidbench test`'s table:
//   node --test: 482 tests, 482 passed, 0 failed, 0 cancelled, 0 skipped, 0 todo (12.3 s)
// It runs next to the human-readable spec reporter (see the "test" script in package.json).

module.exports = async function* summaryReporter(source) {
  const counts = {}
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue
    const match = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([0-9.]+)$/.exec(event.data.message)
    if (match) counts[match[1]] = Number(match[2])
  }
  const n = (key) => counts[key] ?? 0
  const seconds = (n('duration_ms') / 1000).toFixed(1)
  yield `node --test: ${n('tests')} tests, ${n('pass')} passed, ${n('fail')} failed, ${n('cancelled')} cancelled, ` +
    `${n('skipped')} skipped, ${n('todo')} todo (${seconds} s)\n`
}
