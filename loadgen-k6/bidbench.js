// bidbench load script for k6 (SPEC §5). Every input comes from BB_* environment variables, documented
// in loadgen-k6/README.md together with the JSON summary this script writes (the harness parses it).
//
// Design, in short:
// - Two scenarios: `warm` (warm-up) then `measure` (startTime = warm-up). The summary reads only
//   measurement-window data: k6's own http_req_duration / http_reqs as sub-metrics on {scenario:measure}
//   (and the request type), plus the custom bb_* metrics, which only the `measure` function records.
// - Request i of a scenario is a pure function of (BB_SEED, scenario, i): the type, target, ids and bodies
//   come from an integer hash of the iteration number, not from a per-VU random stream, so the request
//   sequence is reproducible whatever VU runs it (STEP: reproducible load). Bid amounts and new nicknames
//   are the only time-derived parts. BB_PLAN=N writes the first N requests instead of running load.
// - The hot path is cheap (README "Overhead"): no response bodies, no JSON parsing, precomputed params and
//   URL prefixes, the request type set as a VU tag (one property write, no per-request tag map), latency and
//   status classes from k6's built-in metrics (split in Go by sub-metrics), and per request only two custom
//   samples (Server-Timing db, app) plus one more for a 4xx.

import http from 'k6/http';
import exec from 'k6/execution';
import { randomSeed, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';

// ---------------------------------------------------------------------------------------------------
// The mixes: request type -> weight (integers; a type's share is weight / sum). Reads vs writes:
//   browse  read-only (RUBiS browsing mix)
//   bid     write-heavy: mostly place_bid, plus item detail
//   mixed   85 % reads / 15 % writes (RUBiS bidding mix)
//   payload POST /items with a body of exactly BB_PAYLOAD_BYTES bytes
// BB_INVALID_SHARE of all requests are replaced by a draw from INVALID_MIX (expected status in INVALID_EXPECT).
export const MIXES = {
  browse: { list_categories: 10, list_category_items: 30, get_item: 35, list_item_bids: 15, get_user: 10 },
  bid: { place_bid: 80, get_item: 20 },
  mixed: {
    list_categories: 5, list_category_items: 25, get_item: 35, list_item_bids: 10, get_user: 10,
    place_bid: 9, create_user: 2, create_item: 2, update_item: 2,
  },
  payload: { payload: 1 },
};
export const INVALID_MIX = {
  invalid_json: 1, invalid_route: 1, invalid_id: 1, invalid_paging: 1, invalid_content_type: 1,
};
export const INVALID_EXPECT = {
  invalid_json: 400, invalid_route: 404, invalid_id: 400, invalid_paging: 400, invalid_content_type: 415,
};
// ---------------------------------------------------------------------------------------------------

const E = __ENV;

function envNumber(name, dflt, min, max, integer) {
  const raw = E[name];
  if (raw === undefined || raw === '') return dflt;
  const value = Number(raw);
  if (!isFinite(value) || (integer && Math.floor(value) !== value) || value < min || value > max) {
    throw new Error(`${name}=${raw}: expected ${integer ? 'an integer' : 'a number'} in ${min}..${max}`);
  }
  return value;
}

// k6-style durations ("500ms", "10s", "1m30s", "1h") to seconds.
function durationSeconds(name, text) {
  const units = { ms: 0.001, s: 1, m: 60, h: 3600 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    if (match.index !== consumed) break;
    total += parseFloat(match[1]) * units[match[2]];
    consumed = re.lastIndex;
  }
  if (/^\d+(\.\d+)?$/.test(text)) return parseFloat(text);
  if (consumed !== text.length || text.length === 0) throw new Error(`${name}=${text}: not a duration like 10s or 1m30s`);
  return total;
}

const TARGETS = (E.BB_TARGETS || 'http://127.0.0.1:8080').split(',').map((t) => t.trim().replace(/\/+$/, '')).filter((t) => t);
const MIX = E.BB_MIX || 'browse';
const MODEL = E.BB_MODEL || 'open';
const RATE = envNumber('BB_RATE', 100, 0.01, 1e7, false);
// k6 rates are integers per timeUnit: a fractional rate (a bisection step, say 1234.5/s) becomes 123450 per 100 s.
const RATE_PER_UNIT = Number.isInteger(RATE) ? RATE : Math.round(RATE * 100);
const RATE_UNIT = Number.isInteger(RATE) ? '1s' : '100s';
const USERS = envNumber('BB_USERS', 10, 1, 1e6, true);
const THINK_MS = envNumber('BB_THINK_MS', 0, 0, 3.6e6, false);
const THINK_DIST = E.BB_THINK_DIST || 'const';
const WARMUP = E.BB_WARMUP || '10s';
const DURATION = E.BB_DURATION || '20s';
const WARMUP_S = durationSeconds('BB_WARMUP', WARMUP);
const DURATION_S = durationSeconds('BB_DURATION', DURATION);
const INVALID_SHARE = envNumber('BB_INVALID_SHARE', 0, 0, 1, false);
const SCALE = envNumber('BB_SCALE', 1, 1, 1e5, true);
const SEED = envNumber('BB_SEED', 42, 0, 2147483647, true);
const SUMMARY = E.BB_SUMMARY || '';
const TIMEOUT = E.BB_TIMEOUT || '10s';
const TIMEOUT_S = durationSeconds('BB_TIMEOUT', TIMEOUT);
const REQUEST_TIMEOUT_CODE = 1050; // k6's error_code for a request that hit BB_TIMEOUT
// Leaves room within setupTimeout (120 s) for the open-item pages after the last probe.
const SETUP_PROBE_BUDGET_S = 60;
const PAYLOAD_BYTES = envNumber('BB_PAYLOAD_BYTES', 1024, 1, 1 << 26, true);
const LATENCY_BOUND_MS = envNumber('BB_LATENCY_BOUND_MS', 200, 1, 600000, false);
// A cold instance hit at full rate builds a backlog it needs many seconds to drain (measured: node at 0.25 CPU,
// 300 req/s, p99 above 2 s for the first 9 s), so the open-model warm-up ramps the arrival rate from a tenth
// of BB_RATE to BB_RATE over this share of the warm-up and holds BB_RATE for the rest. 0: constant.
const WARMUP_RAMP = envNumber('BB_WARMUP_RAMP', 0.5, 0, 1, false);
// Where that ramp starts, req/s (default: a tenth of BB_RATE). A warm instance moved to a new rate (the next
// probe of a capacity search) ramps from the rate it was running at.
const WARMUP_FROM = envNumber('BB_WARMUP_FROM', RATE / 10, 0, 1e7, false);
const SETUP_PAGES = envNumber('BB_SETUP_PAGES', 3, 0, 100, true);
const PLAN = envNumber('BB_PLAN', 0, 0, 1e6, true);
// Fault runs (harness/faults/): one log line per request, and an arrival-rate profile for the measurement.
const TRACE = E.BB_TRACE === '1';
const STAGES = parseStages(E.BB_STAGES || '');

// BB_STAGES="10s:100,1s:400,60s:400,1s:100,20s:100": the measurement's arrival rate ramps linearly to each
// stage's rate over the stage's duration (k6 ramping-arrival-rate, starting at BB_RATE). Empty: constant.
function parseStages(text) {
  if (text === '') return null;
  return text.split(',').map((part) => {
    const colon = part.indexOf(':');
    const target = colon > 0 ? Number(part.substring(colon + 1)) : NaN;
    if (!(target >= 0) || !isFinite(target)) throw new Error(`BB_STAGES: ${part} is not DURATION:RATE`);
    return { duration: part.substring(0, colon).trim(), target: Math.round(target) };
  });
}

if (TARGETS.length === 0) throw new Error('BB_TARGETS: at least one base URL is needed');
if (!MIXES[MIX]) throw new Error(`BB_MIX=${MIX}: expected one of ${Object.keys(MIXES).join(', ')}`);
if (MODEL !== 'open' && MODEL !== 'closed') throw new Error(`BB_MODEL=${MODEL}: expected open or closed`);
if (THINK_DIST !== 'const' && THINK_DIST !== 'exp') throw new Error(`BB_THINK_DIST=${THINK_DIST}: expected const or exp`);
// k6 scenarios last at least 1 s.
if (DURATION_S < 1) throw new Error(`BB_DURATION=${DURATION}: must be at least 1s`);
if (WARMUP_S !== 0 && WARMUP_S < 1) throw new Error(`BB_WARMUP=${WARMUP}: must be 0s or at least 1s`);

// Open model: Little's law says rate x latency VUs are busy; pre-allocate for BB_LATENCY_BOUND_MS and allow
// ten times that (capped at 5000) before k6 has to drop iterations. BB_MAX_VUS overrides the cap.
const PEAK_RATE = STAGES ? Math.max(RATE, ...STAGES.map((st) => st.target)) : RATE;
const PRE_VUS = envNumber('BB_PREALLOCATED_VUS', Math.ceil((PEAK_RATE * LATENCY_BOUND_MS) / 1000) + 10, 1, 1e6, true);
const MAX_VUS = Math.max(PRE_VUS, envNumber('BB_MAX_VUS', Math.max(PRE_VUS, Math.min(10 * PRE_VUS, 5000)), 1, 1e6, true));

// Seeded data ranges (harness/db/generator.py): users 1..10000*S, items 1..15000*S, categories 1..20 (20 has
// no open items), regions 1..20.
const N_USERS = 10000 * SCALE;
const N_ITEMS = 15000 * SCALE;
const N_CATEGORIES = 20;
const N_OPEN_CATEGORIES = 19;
const N_REGIONS = 20;
const BODY_LIMIT = 65536;

randomSeed(SEED); // Nothing below uses Math.random; the sequence comes from iteration hashes (see header).

// ----- request types -------------------------------------------------------------------------------
const VALID_TYPES = Object.keys(MIXES[MIX]);
const INVALID_TYPES = INVALID_SHARE > 0 ? Object.keys(INVALID_MIX) : [];
const TYPES = VALID_TYPES.concat(INVALID_TYPES);

// Integer codes for the builder's switch (cheaper than comparing strings in the hot path).
const LIST_CATEGORIES = 0;
const LIST_CATEGORY_ITEMS = 1;
const GET_ITEM = 2;
const LIST_ITEM_BIDS = 3;
const GET_USER = 4;
const PLACE_BID = 5;
const CREATE_USER = 6;
const CREATE_ITEM = 7;
const UPDATE_ITEM = 8;
const PAYLOAD = 9;
const INVALID_JSON = 10;
const INVALID_ROUTE = 11;
const INVALID_ID = 12;
const INVALID_PAGING = 13;
const INVALID_CONTENT_TYPE = 14;
const CODE_OF = {
  list_categories: LIST_CATEGORIES, list_category_items: LIST_CATEGORY_ITEMS, get_item: GET_ITEM,
  list_item_bids: LIST_ITEM_BIDS, get_user: GET_USER, place_bid: PLACE_BID, create_user: CREATE_USER,
  create_item: CREATE_ITEM, update_item: UPDATE_ITEM, payload: PAYLOAD, invalid_json: INVALID_JSON,
  invalid_route: INVALID_ROUTE, invalid_id: INVALID_ID, invalid_paging: INVALID_PAGING,
  invalid_content_type: INVALID_CONTENT_TYPE,
};
const CODES = TYPES.map((t) => {
  if (CODE_OF[t] === undefined) throw new Error(`unknown request type ${t} in a mix`);
  return CODE_OF[t];
});

function weightTable(weights, offset) {
  const table = [];
  Object.keys(weights).forEach((t, k) => { for (let w = 0; w < weights[t]; w++) table.push(offset + k); });
  return table;
}
const VALID_TABLE = weightTable(MIXES[MIX], 0);
const INVALID_TABLE = weightTable(INVALID_MIX, VALID_TYPES.length);
const INVALID_THRESHOLD = Math.floor(INVALID_SHARE * 4294967296); // compared with a uint32 hash

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const PARAMS_PLAIN = { timeout: TIMEOUT };
const PARAMS_JSON = { timeout: TIMEOUT, headers: JSON_HEADERS };
const PARAMS_TEXT = { timeout: TIMEOUT, headers: { 'Content-Type': 'text/plain' } };
const JSON_TYPES = ['place_bid', 'create_user', 'create_item', 'update_item', 'payload', 'invalid_json'];
const PARAMS = TYPES.map((t) => {
  if (t === 'invalid_content_type') return PARAMS_TEXT;
  // Traced runs read the body of a bid (its id), so the harness can check every 201 has its row.
  if (TRACE && t === 'place_bid') return { timeout: TIMEOUT, headers: JSON_HEADERS, responseType: 'text' };
  return JSON_TYPES.indexOf(t) >= 0 ? PARAMS_JSON : PARAMS_PLAIN;
});

// Per-target URL prefixes, built once.
const PFX = TARGETS.map((b) => ({
  categories: `${b}/categories`,
  categoryItems: `${b}/categories/`,
  items: `${b}/items`,
  item: `${b}/items/`,
  user: `${b}/users/`,
  users: `${b}/users`,
  unknown: `${b}/no-such-route/`,
}));

// A body of exactly PAYLOAD_BYTES bytes: a valid item, padded with spaces (JSON whitespace) before the final
// brace. Past 65536 bytes the same construction must be answered with 413.
const PAYLOAD_CORE = '{"seller_id":1,"category_id":1,"title":"payload","description":"","initial_price_cents":1000,"duration_seconds":86400';
if (MIX === 'payload' && PAYLOAD_BYTES < PAYLOAD_CORE.length + 1) {
  throw new Error(`BB_PAYLOAD_BYTES=${PAYLOAD_BYTES}: the smallest valid body is ${PAYLOAD_CORE.length + 1} bytes`);
}
const PAYLOAD_BODY = MIX === 'payload' ? PAYLOAD_CORE + ' '.repeat(PAYLOAD_BYTES - PAYLOAD_CORE.length - 1) + '}' : null;
const INVALID_JSON_BODY = '{"seller_id":1,"category_id":';
const INVALID_CT_BODY = '{"nickname":"plaintext","region_id":1}';
const UPDATE_BODY_HEAD = '{"title":"bidbench update ';
const UPDATE_BODY_TAIL = '","description":"updated by the bidbench load generator"}';

// ----- deterministic per-iteration randomness ------------------------------------------------------
function mix32(x) {
  x = Math.imul(x ^ (x >>> 16), 0x21f0aaad);
  x = Math.imul(x ^ (x >>> 15), 0x735a2d97);
  return (x ^ (x >>> 15)) >>> 0;
}
const WARM_SALT = mix32(SEED ^ 0x5bd1e995);
const MEASURE_SALT = mix32(SEED ^ 0x27d4eb2f);

// Bid amounts grow with the wall clock, a quarter cent per ms since 2026-01-01, from 200000 cents (above every
// seeded maximum, <= 110000): so a bid normally beats the item's current maximum, also when earlier runs
// bid on the same database, and amounts stay below the contract's 1e11 until 2038 (seeded open auctions
// end in 2036).
const BID_EPOCH_MS = Date.UTC(2026, 0, 1);

// State shared between build() and the caller (module-level, so the hot path allocates no request object).
let OPEN = ''; // open item ids, fixed-width zero-padded decimal (from setup data)
let OPEN_W = 1;
let OPEN_N = 0;
let RUN_TAG = '';
let READY = false;
let K = 0;
let METHOD = 'GET';
let URL = '';
let BODY = null;

function adopt(data) {
  OPEN = data.open;
  OPEN_W = data.openWidth;
  OPEN_N = data.openCount;
  RUN_TAG = data.runTag;
  READY = true;
}

function openItem(r) {
  if (OPEN_N === 0) return 1 + (r % N_ITEMS);
  const j = (r % OPEN_N) * OPEN_W;
  return parseInt(OPEN.substring(j, j + OPEN_W), 10);
}

// Fills K, METHOD, URL, BODY for iteration i of the scenario with the given salt.
function build(i, salt, saltChar) {
  const h = mix32((i + salt) | 0);
  const r1 = mix32(h ^ 0x9e3779b9);
  const r2 = mix32(h + 0x7f4a7c15);
  const p = PFX[i % PFX.length];
  K = h < INVALID_THRESHOLD ? INVALID_TABLE[r1 % INVALID_TABLE.length] : VALID_TABLE[r1 % VALID_TABLE.length];
  METHOD = 'GET';
  BODY = null;
  switch (CODES[K]) {
    case LIST_CATEGORIES:
      URL = p.categories;
      break;
    case LIST_CATEGORY_ITEMS:
      URL = `${p.categoryItems}${1 + (r2 % N_CATEGORIES)}/items?limit=20&offset=${20 * ((r2 >>> 8) % 5)}`;
      break;
    case GET_ITEM:
      URL = p.item + (1 + (r2 % N_ITEMS));
      break;
    case LIST_ITEM_BIDS:
      URL = `${p.item}${1 + (r2 % N_ITEMS)}/bids`;
      break;
    case GET_USER:
      URL = p.user + (1 + (r2 % N_USERS));
      break;
    case PLACE_BID: {
      // Normally above the item's maximum: see BID_EPOCH_MS. 409 when a concurrent bid overtook it.
      const amount = 200000 + Math.floor((Date.now() - BID_EPOCH_MS) / 4);
      METHOD = 'POST';
      URL = `${p.item}${openItem(r2)}/bids`;
      BODY = `{"bidder_id":${1 + (mix32(r2) % N_USERS)},"amount_cents":${amount}}`;
      break;
    }
    case CREATE_USER:
      METHOD = 'POST';
      URL = p.users;
      BODY = `{"nickname":"bb${RUN_TAG}${saltChar}${i.toString(36)}","region_id":${1 + (r2 % N_REGIONS)}}`;
      break;
    case CREATE_ITEM:
      METHOD = 'POST';
      URL = p.items;
      BODY = `{"seller_id":${1 + (r2 % N_USERS)},"category_id":${1 + (mix32(r2) % N_OPEN_CATEGORIES)},"title":"bidbench item ${i}","description":"created by the bidbench load generator","initial_price_cents":${100 + (r2 % 10000)},"duration_seconds":604800}`;
      break;
    case UPDATE_ITEM:
      METHOD = 'PUT';
      URL = p.item + (1 + (r2 % N_ITEMS));
      BODY = UPDATE_BODY_HEAD + i + UPDATE_BODY_TAIL;
      break;
    case PAYLOAD:
      METHOD = 'POST';
      URL = p.items;
      BODY = PAYLOAD_BODY;
      break;
    case INVALID_JSON:
      METHOD = 'POST';
      URL = p.items;
      BODY = INVALID_JSON_BODY;
      break;
    case INVALID_ROUTE:
      URL = p.unknown + (r2 % 1000);
      break;
    case INVALID_ID:
      URL = `${p.item}x${r2 % 1000}`;
      break;
    case INVALID_PAGING:
      URL = `${p.categoryItems}${1 + (r2 % N_CATEGORIES)}/items?limit=0`;
      break;
    case INVALID_CONTENT_TYPE:
      METHOD = 'POST';
      URL = p.users;
      BODY = INVALID_CT_BODY;
      break;
    default:
      throw new Error(`no builder for request type ${TYPES[K]}`);
  }
}

// ----- metrics (measure scenario only) ---------------------------------------------------------------
// Latency and counts come from k6's http_req_duration / http_reqs, split by sub-metrics (see thresholds).
// System errors are the responses k6 marks unexpected (status 0, 1xx, 3xx, 5xx: see setResponseCallback);
// application exceptions (4xx) are counted here; ok (2xx) is the rest.
const M_DB = new Trend('bb_st_db', true);
const M_APP = new Trend('bb_st_app', true);
const M_APPERR = new Counter('bb_app_errors');
const M_OVER_1S = new Counter('bb_over_1s'); // RUBiS QoS: the share of responses slower than one second
let VU_TAGS = null; // exec.vu.tags, fetched on a VU's first iteration (not available in init)

function record(res) {
  const s = res.status;
  if (s >= 400 && s < 500) M_APPERR.add(1);
  if (res.timings.duration > 1000) M_OVER_1S.add(1);
  const st = res.headers['Server-Timing'];
  if (st === undefined) return;
  // Fast path for the contract's exact form "db;dur=X, app;dur=Y" (3x cheaper in k6's JS engine than a
  // search for each name); anything else goes through the general parse.
  const c = st.indexOf(',', 8);
  if (c > 0 && st.charCodeAt(0) === 100 && st.charCodeAt(6) === 61 && st.charCodeAt(c + 2) === 97) {
    const db = Number(st.substring(7, c));
    const app = Number(st.substring(c + 10));
    if (db === db && app === app) {
      M_DB.add(db);
      M_APP.add(app);
      return;
    }
  }
  const a = st.indexOf('db;dur=');
  if (a >= 0) {
    const v = parseFloat(st.substring(a + 7));
    if (v === v) M_DB.add(v);
  }
  const b = st.indexOf('app;dur=');
  if (b >= 0) {
    const v = parseFloat(st.substring(b + 8));
    if (v === v) M_APP.add(v);
  }
}

// ----- options ------------------------------------------------------------------------------------------
// Responses that count as "expected" for k6's own http_req_failed: everything but system errors.
http.setResponseCallback(http.expectedStatuses({ min: 200, max: 299 }, { min: 400, max: 499 }));

function scenario(execName, startTime, duration, gracefulStop) {
  const common = { exec: execName, startTime, gracefulStop };
  if (MODEL === 'open' && STAGES && execName === 'measure') {
    return Object.assign(common, {
      executor: 'ramping-arrival-rate', startRate: Math.round(RATE), timeUnit: '1s', stages: STAGES,
      preAllocatedVUs: PRE_VUS, maxVUs: MAX_VUS,
    });
  }
  if (MODEL === 'open' && execName === 'warm' && WARMUP_RAMP > 0) {
    const rampS = Math.max(1, Math.round(WARMUP_S * WARMUP_RAMP));
    const stages = [{ duration: `${rampS}s`, target: RATE_PER_UNIT }];
    if (WARMUP_S > rampS) stages.push({ duration: `${Math.round((WARMUP_S - rampS) * 1000)}ms`, target: RATE_PER_UNIT });
    return Object.assign(common, {
      executor: 'ramping-arrival-rate', startRate: Math.max(1, Math.round((WARMUP_FROM * RATE_PER_UNIT) / RATE)), timeUnit: RATE_UNIT,
      stages, preAllocatedVUs: PRE_VUS, maxVUs: MAX_VUS,
    });
  }
  if (MODEL === 'open') {
    return Object.assign(common, {
      executor: 'constant-arrival-rate', rate: RATE_PER_UNIT, timeUnit: RATE_UNIT, duration,
      preAllocatedVUs: PRE_VUS, maxVUs: MAX_VUS,
    });
  }
  return Object.assign(common, { executor: 'constant-vus', vus: USERS, duration });
}

const scenarios = {};
if (PLAN > 0) {
  scenarios.plan = { executor: 'shared-iterations', exec: 'planned', vus: 1, iterations: 1 };
} else {
  // The warm-up stops without grace, so its VUs (and their keep-alive connections) carry over into the
  // measurement instead of k6 allocating a second set; its few in-flight requests at the boundary are cut.
  if (WARMUP_S > 0) scenarios.warm = scenario('warm', '0s', WARMUP, '0s');
  scenarios.measure = scenario('measure', WARMUP, DURATION, `${Math.ceil(TIMEOUT_S) + 1}s`);
}

// The statuses the contract can answer (0 = no response: timeout or connection error), counted per status in
// the measurement window (overall, and per type for the payload mix, whose outcome per size is the point).
const STATUSES = [0, 200, 201, 400, 404, 405, 409, 413, 415, 500, 503];
const STATUS_TYPES = TYPES.indexOf('payload') >= 0 ? ['payload'] : [];

// Always-true thresholds: they only make k6 keep these sub-metrics (measurement window, per type) for the summary.
function summaryThresholds() {
  const t = {
    'dropped_iterations{scenario:measure}': ['count>=0'],
    'iteration_duration{scenario:measure}': ['max>=0'],
    'http_req_duration{scenario:measure}': ['max>=0'],
    'http_req_duration{scenario:measure,expected_response:true}': ['max>=0'],
    'http_reqs{scenario:measure,expected_response:false}': ['count>=0'],
    'http_req_duration{scenario:warm}': ['max>=0'],
    'http_reqs{scenario:warm,expected_response:false}': ['count>=0'],
  };
  for (const status of STATUSES) {
    t[`http_reqs{scenario:measure,status:${status}}`] = ['count>=0'];
    for (const type of STATUS_TYPES) t[`http_reqs{scenario:measure,type:${type},status:${status}}`] = ['count>=0'];
  }
  for (const type of TYPES) {
    t[`http_req_duration{scenario:measure,type:${type}}`] = ['max>=0'];
    t[`http_reqs{scenario:measure,type:${type},expected_response:false}`] = ['count>=0'];
    t[`bb_app_errors{type:${type}}`] = ['count>=0'];
    t[`bb_st_db{type:${type}}`] = ['max>=0'];
    t[`bb_st_app{type:${type}}`] = ['max>=0'];
  }
  return t;
}

export const options = {
  scenarios,
  discardResponseBodies: true,
  // Fewer system tags: no per-URL tag sets (thousands of distinct ids), less work per sample.
  systemTags: ['status', 'method', 'scenario', 'expected_response', 'error_code'],
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)', 'count'],
  thresholds: summaryThresholds(),
  setupTimeout: '120s',
};

// ----- lifecycle -----------------------------------------------------------------------------------------
const USES_OPEN_ITEMS = TYPES.indexOf('place_bid') >= 0;

export function setup() {
  const t0 = Date.now();
  const ids = [];
  let source = 'range';
  let k6Version = 'unknown';
  const base = TARGETS[0];
  const params = { responseType: 'text', timeout: TIMEOUT, tags: { type: 'setup' }, headers: { 'X-Bidbench-Phase': 'setup' } };
  // An instance still working off a backlog (an overloaded pre-warm, a previous window) answers late, not
  // never: a timed-out probe is retried while the setup budget lasts; a refused connection fails at once.
  let probe = http.get(`${base}/categories`, params);
  while (probe.error_code === REQUEST_TIMEOUT_CODE && Date.now() - t0 < 1000 * SETUP_PROBE_BUDGET_S) {
    probe = http.get(`${base}/categories`, params);
  }
  const ua = probe.request && probe.request.headers && probe.request.headers['User-Agent'];
  const m = ua && /k6\/(\S+)/.exec(String(ua));
  if (m) k6Version = `v${m[1]}`;
  if (PLAN === 0 && probe.status !== 200) {
    throw new Error(`setup: GET ${base}/categories answered ${probe.status} ${probe.error || ''}: is the target up?`);
  }
  if (USES_OPEN_ITEMS && probe.status === 200) {
    for (let c = 1; c <= N_OPEN_CATEGORIES; c++) {
      for (let page = 0; page < SETUP_PAGES; page++) {
        const r = http.get(`${base}/categories/${c}/items?limit=100&offset=${100 * page}`, params);
        if (r.status !== 200) break;
        let items = [];
        try {
          items = JSON.parse(r.body).items || [];
        } catch (e) {
          break;
        }
        for (const it of items) ids.push(it.id);
        if (items.length < 100) break;
      }
    }
    if (ids.length > 0) source = 'setup';
  }
  ids.sort((a, b) => a - b);
  const width = String(Math.max(1, ...ids.slice(-1))).length;
  const open = ids.map((id) => String(id).padStart(width, '0')).join('');
  const data = {
    t0, runTag: (t0 % 60466176).toString(36), k6Version,
    open, openWidth: width, openCount: ids.length, openSource: source,
  };
  if (PLAN > 0) {
    adopt(data);
    const plan = [];
    for (let i = 0; i < PLAN; i++) {
      build(i, MEASURE_SALT, 'm');
      plan.push({ i, type: TYPES[K], method: METHOD, url: URL, body: BODY });
    }
    data.plan = plan;
  }
  return data;
}

function thinkTime(i, salt) {
  if (THINK_MS <= 0) return;
  if (THINK_DIST === 'const') { sleep(THINK_MS / 1000); return; }
  const u = (mix32((i ^ salt) + 0x632be5ab) + 0.5) / 4294967296; // (0, 1)
  sleep((-Math.log(u) * THINK_MS) / 1000);
}

// exec.scenario is costly to fetch (tens of µs: it builds a new object) but the fetched object is live, so each
// scenario function fetches it once per VU.
let WARM_SCENARIO = null;
let MEASURE_SCENARIO = null;

// One line per request for fault runs (BB_TRACE=1), parsed by harness/faults/timeline.py:
// bbt <w|m> <end ms since epoch> <duration ms> <status> <k6 error code> <type> <target index> <bid id or ->
function trace(phase, i, res) {
  let bid = '-';
  if (res.status === 201 && CODES[K] === PLACE_BID && typeof res.body === 'string') {
    const m = /^\{"id":(\d+)/.exec(res.body);
    if (m) bid = m[1];
  }
  console.log(`bbt ${phase} ${Date.now()} ${res.timings.duration.toFixed(3)} ${res.status} ${res.error_code || 0} ${TYPES[K]} ${i % TARGETS.length} ${bid}`);
}

export function warm(data) {
  if (!READY) adopt(data);
  if (WARM_SCENARIO === null) {
    WARM_SCENARIO = exec.scenario;
    VU_TAGS = exec.vu.tags;
  }
  const i = WARM_SCENARIO.iterationInTest;
  build(i, WARM_SALT, 'w');
  VU_TAGS.type = TYPES[K];
  const res = http.request(METHOD, URL, BODY, PARAMS[K]);
  if (TRACE) trace('w', i, res);
  if (MODEL === 'closed') thinkTime(i, WARM_SALT);
}

export function measure(data) {
  if (!READY) adopt(data);
  if (MEASURE_SCENARIO === null) {
    MEASURE_SCENARIO = exec.scenario;
    if (VU_TAGS === null) VU_TAGS = exec.vu.tags;
  }
  const i = MEASURE_SCENARIO.iterationInTest;
  build(i, MEASURE_SALT, 'm');
  VU_TAGS.type = TYPES[K]; // tags this request's samples and the bb_* samples below
  const res = http.request(METHOD, URL, BODY, PARAMS[K]);
  record(res);
  if (TRACE) trace('m', i, res);
  if (MODEL === 'closed') thinkTime(i, MEASURE_SALT);
}

export function planned() {}

// ----- summary -------------------------------------------------------------------------------------------
function r3(x) { return x === undefined || x === null || !isFinite(x) ? null : Math.round(x * 1000) / 1000; }

function metricValues(data, name) {
  const m = data.metrics[name];
  return m ? m.values : null;
}

function latency(v) {
  if (!v || !v.count) return null;
  return {
    mean: r3(v.avg), p50: r3(v.med), p90: r3(v['p(90)']), p95: r3(v['p(95)']), p99: r3(v['p(99)']),
    p999: r3(v['p(99.9)']), max: r3(v.max),
  };
}

function short(v) {
  if (!v || !v.count) return null;
  return { mean: r3(v.avg), p50: r3(v.med), p99: r3(v['p(99)']) };
}

function count(data, name) {
  const v = metricValues(data, name);
  return v ? v.count : 0;
}

// {"201": 598, "413": 2, "other": 0}: non-zero counts of the known statuses; "other" for the rest.
function statuses(data, total, typeFilter) {
  const out = {};
  let known = 0;
  for (const status of STATUSES) {
    const n = count(data, `http_reqs{scenario:measure,${typeFilter}status:${status}}`);
    if (n > 0) out[String(status)] = n;
    known += n;
  }
  out.other = total - known;
  return out;
}

function serverTiming(data, dbName, appName) {
  const db = metricValues(data, dbName);
  const app = metricValues(data, appName);
  return { samples: db ? db.count : 0, db: short(db), app: short(app) };
}

export function handleSummary(data) {
  const setupData = data.setup_data || {};
  const settings = {
    targets: TARGETS, mix: MIX, mix_weights: MIXES[MIX], model: MODEL,
    rate: MODEL === 'open' ? RATE : null, users: MODEL === 'closed' ? USERS : null,
    think_ms: MODEL === 'closed' ? THINK_MS : null, think_dist: MODEL === 'closed' ? THINK_DIST : null,
    warmup: WARMUP, duration: DURATION, warmup_s: WARMUP_S, duration_s: DURATION_S,
    warmup_ramp: MODEL === 'open' && WARMUP_S > 0 ? WARMUP_RAMP : null,
    warmup_from: MODEL === 'open' && WARMUP_S > 0 && WARMUP_RAMP > 0 ? WARMUP_FROM : null,
    invalid_share: INVALID_SHARE, invalid_mix: INVALID_SHARE > 0 ? INVALID_MIX : null,
    scale: SCALE, seed: SEED, timeout: TIMEOUT,
    payload_bytes: MIX === 'payload' ? PAYLOAD_BYTES : null,
    payload_over_limit: MIX === 'payload' ? PAYLOAD_BYTES > BODY_LIMIT : null,
    pre_allocated_vus: MODEL === 'open' ? PRE_VUS : null, max_vus: MODEL === 'open' ? MAX_VUS : null,
    latency_bound_ms: MODEL === 'open' ? LATENCY_BOUND_MS : null, setup_pages: SETUP_PAGES,
    stages: STAGES, trace: TRACE,
  };
  const out = {
    schema: 1,
    script: 'bidbench.js',
    k6_version: setupData.k6Version || 'unknown',
    settings,
    open_items: { count: setupData.openCount || 0, source: USES_OPEN_ITEMS ? setupData.openSource || 'range' : 'unused' },
  };
  if (PLAN > 0) {
    out.plan = setupData.plan || [];
    const body = `${JSON.stringify(out, null, 1)}\n`;
    return SUMMARY ? { [SUMMARY]: body, stdout: `bidbench: plan of ${out.plan.length} requests -> ${SUMMARY}\n` } : { stdout: body };
  }

  const perType = {};
  let ok = 0;
  let app = 0;
  let sys = 0;
  let invalid = 0;
  for (const t of TYPES) {
    const lat = metricValues(data, `http_req_duration{scenario:measure,type:${t}}`);
    const n = lat ? lat.count : 0;
    const appErrors = count(data, `bb_app_errors{type:${t}}`);
    const sysErrors = count(data, `http_reqs{scenario:measure,type:${t},expected_response:false}`);
    const entry = {
      requests: n,
      ok: n - appErrors - sysErrors,
      app_errors: appErrors,
      sys_errors: sysErrors,
      latency_ms: latency(lat),
      server_timing_ms: serverTiming(data, `bb_st_db{type:${t}}`, `bb_st_app{type:${t}}`),
    };
    if (INVALID_EXPECT[t]) entry.expected_status = INVALID_EXPECT[t];
    if (STATUS_TYPES.indexOf(t) >= 0) entry.statuses = statuses(data, n, `type:${t},`);
    perType[t] = entry;
    ok += entry.ok;
    app += entry.app_errors;
    sys += entry.sys_errors;
    if (INVALID_EXPECT[t]) invalid += entry.requests;
  }
  const lat = metricValues(data, 'http_req_duration{scenario:measure}');
  const requests = lat ? lat.count : 0;
  const iter = metricValues(data, 'iteration_duration{scenario:measure}');
  const warmLat = metricValues(data, 'http_req_duration{scenario:warm}');
  const vusMax = metricValues(data, 'vus_max');
  const vus = metricValues(data, 'vus');
  Object.assign(out, {
    window_s: DURATION_S,
    requests, ok, app_errors: app, sys_errors: sys, over_1s: count(data, 'bb_over_1s'),
    statuses: statuses(data, requests, ''),
    throughput: { ok_rps: r3(ok / DURATION_S), all_rps: r3(requests / DURATION_S) },
    offered_rps: MODEL === 'open' ? RATE : null,
    dropped_iterations: count(data, 'dropped_iterations{scenario:measure}'),
    dropped_iterations_total: count(data, 'dropped_iterations'),
    vus_max: vusMax ? vusMax.max : null,
    vus_peak: vus ? vus.max : null,
    iteration_ms: iter && iter.count ? { mean: r3(iter.avg), p99: r3(iter['p(99)']), max: r3(iter.max) } : null,
    latency_ms: latency(lat),
    latency_expected_ms: latency(metricValues(data, 'http_req_duration{scenario:measure,expected_response:true}')),
    server_timing_ms: serverTiming(data, 'bb_st_db', 'bb_st_app'),
    invalid: { requests: invalid, share: requests ? r3(invalid / requests) : null },
    per_type: perType,
    warmup: {
      window_s: WARMUP_S,
      requests: warmLat ? warmLat.count : 0,
      sys_errors: count(data, 'http_reqs{scenario:warm,expected_response:false}'),
      latency_ms: short(warmLat),
    },
    test_run_duration_s: r3(data.state.testRunDurationMs / 1000),
  });
  const l = out.latency_ms || {};
  const line = `bidbench: ${requests} requests in ${DURATION_S}s (ok ${ok}, app ${app}, sys ${sys}), ` +
    `${out.throughput.ok_rps} ok/s, p50 ${l.p50} ms, p99 ${l.p99} ms, dropped ${out.dropped_iterations}` +
    `${SUMMARY ? ` -> ${SUMMARY}` : ''}\n`;
  const body = `${JSON.stringify(out, null, 1)}\n`;
  return SUMMARY ? { [SUMMARY]: body, stdout: line } : { stdout: body };
}
