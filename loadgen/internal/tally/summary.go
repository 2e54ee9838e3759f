package tally

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// SchemaVersion is the summary format's version (1 was the first driver's script; harness/upgrade.py reads it).
const SchemaVersion = 2

// Latency is a latency distribution's figures, ms.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Short is the three figures kept for Server-Timing and the warm-up, ms.
type Short struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// ServerTiming is the Server-Timing figures of the responses that carried the header.
type ServerTiming struct {
	Samples int64  `json:"samples"`
	DB      *Short `json:"db"`
	App     *Short `json:"app"`
}

// Histograms are a type's HDR histograms, V2 compressed and base64-encoded, in µs.
type Histograms struct {
	Latency         string `json:"latency"`
	LatencySent     string `json:"latency_sent"`
	LatencyExpected string `json:"latency_expected"`
	STDB            string `json:"st_db"`
	STApp           string `json:"st_app"`
}

// TypeSummary is one request type's part of the summary.
type TypeSummary struct {
	Requests       int64            `json:"requests"`
	OK             int64            `json:"ok"`
	AppErrors      int64            `json:"app_errors"`
	SysErrors      int64            `json:"sys_errors"`
	Over1s         int64            `json:"over_1s"`
	ExpectedStatus int              `json:"expected_status,omitempty"`
	Statuses       map[string]int64 `json:"statuses"`
	LatencyMS      *Latency         `json:"latency_ms"`
	LatencySentMS  *Latency         `json:"latency_sent_ms"`
	ServerTimingMS ServerTiming     `json:"server_timing_ms"`
	HDR            Histograms       `json:"hdr"`
}

// WarmSummary is the warm-up's part of the summary.
type WarmSummary struct {
	WindowS   float64 `json:"window_s"`
	Requests  int64   `json:"requests"`
	SysErrors int64   `json:"sys_errors"`
	LatencyMS *Short  `json:"latency_ms"`
	HDR       string  `json:"hdr"`
}

// Summary is the driver's JSON result (loadgen/README.md documents every field).
type Summary struct {
	Schema            int                     `json:"schema"`
	Driver            string                  `json:"driver"`
	DriverVersion     string                  `json:"driver_version"`
	Settings          map[string]any          `json:"settings"`
	OpenItems         map[string]any          `json:"open_items"`
	Partial           bool                    `json:"partial"`
	Shards            int                     `json:"shards"`
	StartedAtUnix     float64                 `json:"started_at_unix"`
	MeasureStartUnix  float64                 `json:"measure_start_unix"`
	WindowS           float64                 `json:"window_s"`
	Requests          int64                   `json:"requests"`
	OK                int64                   `json:"ok"`
	AppErrors         int64                   `json:"app_errors"`
	SysErrors         int64                   `json:"sys_errors"`
	Over1s            int64                   `json:"over_1s"`
	Statuses          map[string]int64        `json:"statuses"`
	Errors            map[string]int64        `json:"errors"`
	Throughput        map[string]float64      `json:"throughput"`
	OfferedRPS        *float64                `json:"offered_rps"`
	LateSends         int64                   `json:"late_sends"`
	MaxInflight       int64                   `json:"max_inflight"`
	LatencyMS         *Latency                `json:"latency_ms"`
	LatencySentMS     *Latency                `json:"latency_sent_ms"`
	LatencyExpectedMS *Latency                `json:"latency_expected_ms"`
	ServerTimingMS    ServerTiming            `json:"server_timing_ms"`
	Invalid           map[string]any          `json:"invalid"`
	PerType           map[string]*TypeSummary `json:"per_type"`
	Warmup            WarmSummary             `json:"warmup"`
	TestRunDurationS  float64                 `json:"test_run_duration_s"`
	Plan              []map[string]any        `json:"plan,omitempty"`
	// A ladder's steps and how it ended (BB_STEPS).
	Steps  any            `json:"steps,omitempty"`
	Ladder map[string]any `json:"ladder,omitempty"`
}

func ms(us float64) float64 { return math.Round(us) / 1000 }

func latency(h *hdrhistogram.Histogram) *Latency {
	if h.TotalCount() == 0 {
		return nil
	}
	return &Latency{
		Mean: math.Round(h.Mean()) / 1000, P50: ms(float64(h.ValueAtQuantile(50))),
		P90: ms(float64(h.ValueAtQuantile(90))), P95: ms(float64(h.ValueAtQuantile(95))),
		P99: ms(float64(h.ValueAtQuantile(99))), P999: ms(float64(h.ValueAtQuantile(99.9))),
		Max: ms(float64(h.Max())),
	}
}

func short(h *hdrhistogram.Histogram) *Short {
	if h.TotalCount() == 0 {
		return nil
	}
	return &Short{Mean: math.Round(h.Mean()) / 1000, P50: ms(float64(h.ValueAtQuantile(50))), P99: ms(float64(h.ValueAtQuantile(99)))}
}

func encode(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic(fmt.Sprintf("encoding a histogram: %v", err)) // only on a broken zlib writer
	}
	return string(b)
}

func decode(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHist(), nil
	}
	return hdrhistogram.Decode([]byte(s))
}

func statusKeys(m map[int]int64) map[string]int64 {
	out := map[string]int64{}
	for s, n := range m {
		if n > 0 {
			out[strconv.Itoa(s)] = n
		}
	}
	return out
}

// Meta is what the summary says beyond the tally.
type Meta struct {
	DriverVersion    string
	Settings         map[string]any
	OpenItems        map[string]any
	Partial          bool
	Shards           int
	StartedAtUnix    float64
	MeasureStartUnix float64
	WindowS          float64
	WarmupS          float64
	OfferedRPS       *float64
	ExpectedStatus   map[string]int
	InvalidTypes     map[string]bool
	TestRunDurationS float64
}

// Summarize turns a tally into the summary.
func Summarize(t *Tally, m Meta) *Summary {
	s := &Summary{
		Schema: SchemaVersion, Driver: "bidbench-load", DriverVersion: m.DriverVersion, Settings: m.Settings,
		OpenItems: m.OpenItems, Partial: m.Partial, Shards: max(m.Shards, 1), StartedAtUnix: m.StartedAtUnix,
		MeasureStartUnix: m.MeasureStartUnix, WindowS: m.WindowS, OfferedRPS: m.OfferedRPS,
		LateSends: t.LateSends, MaxInflight: t.MaxInflight, PerType: map[string]*TypeSummary{},
		Errors:           map[string]int64{"timeout": 0, "refused": 0, "reset": 0, "other": 0},
		TestRunDurationS: math.Round(m.TestRunDurationS*1000) / 1000,
	}
	for c, n := range t.Errors {
		s.Errors[c] += n
	}
	all := map[int]int64{}
	var invalid int64
	var stSamples int64
	for k, name := range t.Types {
		tt := t.PerType[k]
		ts := &TypeSummary{
			Requests: tt.Requests, OK: tt.OK, AppErrors: tt.AppErrors, SysErrors: tt.SysErrors, Over1s: tt.Over1s,
			ExpectedStatus: m.ExpectedStatus[name], Statuses: statusKeys(tt.Statuses),
			LatencyMS: latency(tt.Latency), LatencySentMS: latency(tt.LatencySent),
			ServerTimingMS: ServerTiming{Samples: tt.STDB.TotalCount(), DB: short(tt.STDB), App: short(tt.STApp)},
			HDR: Histograms{
				Latency: encode(tt.Latency), LatencySent: encode(tt.LatencySent),
				LatencyExpected: encode(tt.LatencyExpected), STDB: encode(tt.STDB), STApp: encode(tt.STApp),
			},
		}
		s.PerType[name] = ts
		s.Requests += tt.Requests
		s.OK += tt.OK
		s.AppErrors += tt.AppErrors
		s.SysErrors += tt.SysErrors
		s.Over1s += tt.Over1s
		stSamples += tt.STDB.TotalCount()
		for st, n := range tt.Statuses {
			all[st] += n
		}
		if m.InvalidTypes[name] {
			invalid += tt.Requests
		}
	}
	s.Statuses = statusKeys(all)
	window := m.WindowS
	if window <= 0 {
		window = math.NaN()
	}
	s.Throughput = map[string]float64{
		"ok_rps": round3(float64(s.OK) / window), "all_rps": round3(float64(s.Requests) / window),
	}
	s.LatencyMS = latency(t.Overall(func(tt *Type) *hdrhistogram.Histogram { return tt.Latency }))
	s.LatencySentMS = latency(t.Overall(func(tt *Type) *hdrhistogram.Histogram { return tt.LatencySent }))
	s.LatencyExpectedMS = latency(t.Overall(func(tt *Type) *hdrhistogram.Histogram { return tt.LatencyExpected }))
	s.ServerTimingMS = ServerTiming{
		Samples: stSamples,
		DB:      short(t.Overall(func(tt *Type) *hdrhistogram.Histogram { return tt.STDB })),
		App:     short(t.Overall(func(tt *Type) *hdrhistogram.Histogram { return tt.STApp })),
	}
	var share any
	if s.Requests > 0 {
		share = round3(float64(invalid) / float64(s.Requests))
	}
	s.Invalid = map[string]any{"requests": invalid, "share": share}
	s.Warmup = WarmSummary{
		WindowS: m.WarmupS, Requests: t.Warm.Requests, SysErrors: t.Warm.SysErrors,
		LatencyMS: short(t.Warm.Latency), HDR: encode(t.Warm.Latency),
	}
	return s
}

func round3(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1000) / 1000
}

// FromSummary rebuilds the tally a summary was made from (its histograms carry the distributions).
func FromSummary(s *Summary) (*Tally, error) {
	names := make([]string, 0, len(s.PerType))
	for name := range s.PerType {
		names = append(names, name)
	}
	sort.Strings(names)
	t := New(names)
	for k, name := range names {
		ts, tt := s.PerType[name], t.PerType[k]
		tt.Requests, tt.OK, tt.AppErrors, tt.SysErrors, tt.Over1s = ts.Requests, ts.OK, ts.AppErrors, ts.SysErrors, ts.Over1s
		for code, n := range ts.Statuses {
			c, err := strconv.Atoi(code)
			if err != nil {
				return nil, fmt.Errorf("per_type.%s.statuses: %q is not a status code", name, code)
			}
			tt.Statuses[c] = n
		}
		for _, h := range []struct {
			into **hdrhistogram.Histogram
			from string
			name string
		}{
			{&tt.Latency, ts.HDR.Latency, "latency"}, {&tt.LatencySent, ts.HDR.LatencySent, "latency_sent"},
			{&tt.LatencyExpected, ts.HDR.LatencyExpected, "latency_expected"},
			{&tt.STDB, ts.HDR.STDB, "st_db"}, {&tt.STApp, ts.HDR.STApp, "st_app"},
		} {
			decoded, err := decode(h.from)
			if err != nil {
				return nil, fmt.Errorf("per_type.%s.hdr.%s: %v", name, h.name, err)
			}
			// The geometry is fixed, so a decoded histogram merges into a fresh one without loss.
			*h.into = NewHist()
			(*h.into).Merge(decoded)
		}
	}
	t.Warm.Requests, t.Warm.SysErrors = s.Warmup.Requests, s.Warmup.SysErrors
	warm, err := decode(s.Warmup.HDR)
	if err != nil {
		return nil, fmt.Errorf("warmup.hdr: %v", err)
	}
	t.Warm.Latency.Merge(warm)
	for c, n := range s.Errors {
		t.Errors[c] = n
	}
	t.LateSends, t.MaxInflight = s.LateSends, s.MaxInflight
	return t, nil
}

// Marshal writes the summary as indented JSON.
func (s *Summary) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
