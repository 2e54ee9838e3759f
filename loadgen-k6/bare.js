// A bare k6 GET loop: constant arrival rate on one URL, no tags, no parsing, no custom metrics, k6's
// default options otherwise. It is the baseline for measuring bidbench.js's own per-request CPU cost
// (see README.md, "Overhead"). Environment: BB_URL (default: first of BB_TARGETS + /items/1), BB_RATE
// (default 300), BB_DURATION (default 20s), BB_MAX_VUS (default 100), BB_SUMMARY (optional JSON summary).
import http from 'k6/http';

const E = __ENV;
const URL = E.BB_URL || `${(E.BB_TARGETS || 'http://127.0.0.1:8080').split(',')[0].trim().replace(/\/+$/, '')}/items/1`;
const RATE = parseInt(E.BB_RATE || '300', 10);
const MAX_VUS = parseInt(E.BB_MAX_VUS || '100', 10);

export const options = {
  discardResponseBodies: true,
  scenarios: {
    bare: {
      executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', duration: E.BB_DURATION || '20s',
      preAllocatedVUs: Math.min(MAX_VUS, Math.max(10, Math.ceil(RATE / 10))), maxVUs: MAX_VUS,
    },
  },
};

export default function () {
  http.get(URL);
}

export function handleSummary(data) {
  const m = data.metrics;
  const out = {
    script: 'bare.js', url: URL, rate: RATE,
    requests: m.http_reqs ? m.http_reqs.values.count : 0,
    failed: m.http_req_failed ? m.http_req_failed.values.passes : 0,
    dropped_iterations: m.dropped_iterations ? m.dropped_iterations.values.count : 0,
    latency_ms: m.http_req_duration ? { mean: m.http_req_duration.values.avg, p95: m.http_req_duration.values['p(95)'] } : null,
  };
  const line = `bare: ${out.requests} requests, ${out.failed} failed, ${out.dropped_iterations} dropped\n`;
  return E.BB_SUMMARY ? { [E.BB_SUMMARY]: `${JSON.stringify(out)}\n`, stdout: line } : { stdout: line };
}
