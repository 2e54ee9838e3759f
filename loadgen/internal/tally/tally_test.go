package tally

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

var types = []string{"get_item", "place_bid", "invalid_id"}

// outcomes returns n reproducible request outcomes with a long-tailed latency.
func outcomes(seed uint64, n int) []Outcome {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]Outcome, n)
	for i := range out {
		status := []int{200, 201, 404, 409, 503, 0}[r.IntN(6)]
		sent := time.Duration(r.ExpFloat64() * float64(2*time.Millisecond))
		if r.IntN(100) == 0 {
			sent += time.Duration(r.IntN(3000)) * time.Millisecond
		}
		class := ""
		if status == 0 {
			class = []string{"timeout", "refused", "reset"}[r.IntN(3)]
		}
		out[i] = Outcome{
			Type: r.IntN(len(types)), Status: status, ErrorClass: class,
			Intended: sent + time.Duration(r.IntN(5000))*time.Microsecond, Sent: sent,
			DBMicros: int64(r.IntN(900)) - 100, AppMicros: int64(r.IntN(2000)),
		}
	}
	return out
}

func meta(window float64) Meta {
	rate := 100.0
	return Meta{
		DriverVersion: "test", Settings: map[string]any{"rate": 100.0, "users": nil, "seed": 42.0, "shard_index": 0.0},
		Shards: 1, WindowS: window, WarmupS: 1, OfferedRPS: &rate,
		ExpectedStatus: map[string]int{"invalid_id": 400}, InvalidTypes: map[string]bool{"invalid_id": true},
		StartedAtUnix: 1000, MeasureStartUnix: 1001, TestRunDurationS: 3,
	}
}

// roundTrip is what a summary goes through between a shard and `bidbench-load merge`.
func roundTrip(t *testing.T, s *Summary) *Summary {
	t.Helper()
	body, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func TestMergedShardsGiveTheExactPercentiles(t *testing.T) {
	all, a, b := New(types), New(types), New(types)
	for i, o := range outcomes(1, 30_000) {
		all.RecordMeasure(o)
		if i%3 == 0 {
			a.RecordMeasure(o)
		} else {
			b.RecordMeasure(o)
		}
	}
	for i, o := range outcomes(2, 500) {
		all.RecordWarm(o.Status, o.Intended)
		if i%2 == 0 {
			a.RecordWarm(o.Status, o.Intended)
		} else {
			b.RecordWarm(o.Status, o.Intended)
		}
	}
	a.LateSends, b.LateSends, all.LateSends = 3, 4, 7
	a.MaxInflight, b.MaxInflight, all.MaxInflight = 5, 6, 11

	merged, err := Merge([]*Summary{roundTrip(t, Summarize(a, meta(2))), roundTrip(t, Summarize(b, meta(2)))})
	if err != nil {
		t.Fatal(err)
	}
	want := Summarize(all, meta(2))
	if merged.LatencyMS == nil || merged.LatencyMS.P99 < 10 {
		t.Fatalf("merged latency %+v: the long tail is missing", merged.LatencyMS)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"latency_ms", merged.LatencyMS, want.LatencyMS},
		{"latency_sent_ms", merged.LatencySentMS, want.LatencySentMS},
		{"latency_expected_ms", merged.LatencyExpectedMS, want.LatencyExpectedMS},
		{"server_timing_ms", merged.ServerTimingMS, want.ServerTimingMS},
		{"per_type", merged.PerType, want.PerType},
		{"statuses", merged.Statuses, want.Statuses},
		{"errors", merged.Errors, want.Errors},
		{"invalid", merged.Invalid, want.Invalid},
		{"throughput", merged.Throughput, want.Throughput},
		{"warmup", merged.Warmup, want.Warmup},
		{"counts", []int64{merged.Requests, merged.OK, merged.AppErrors, merged.SysErrors, merged.Over1s, merged.LateSends, merged.MaxInflight},
			[]int64{want.Requests, want.OK, want.AppErrors, want.SysErrors, want.Over1s, want.LateSends, want.MaxInflight}},
	} {
		// Compared as JSON: what the harness reads.
		g, _ := json.Marshal(c.got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s of the merged shards:\n%s\nof one tally of everything:\n%s", c.name, g, w)
		}
	}
	if merged.Shards != 2 || merged.Settings["rate"] != 200.0 || *merged.OfferedRPS != 200 || merged.WindowS != 2 {
		t.Errorf("shards %d, rate %v, offered %v, window %v", merged.Shards, merged.Settings["rate"], *merged.OfferedRPS, merged.WindowS)
	}
	if !reflect.DeepEqual(merged.Settings["shard_seeds"], []any{42.0, 42.0}) || merged.Settings["shard_index"] != nil {
		t.Errorf("settings %v", merged.Settings)
	}
}

func TestFromSummaryRebuildsTheTally(t *testing.T) {
	orig := New(types)
	for _, o := range outcomes(3, 2000) {
		orig.RecordMeasure(o)
	}
	s := Summarize(orig, meta(1))
	back, err := FromSummary(roundTrip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	again := Summarize(back, meta(1))
	g, _ := again.Marshal()
	w, _ := s.Marshal()
	if string(g) != string(w) {
		t.Error("a summary rebuilt from its own JSON differs from it")
	}
}

func TestMergeRejectsWhatIsNotShardsOfOneRun(t *testing.T) {
	one := Summarize(New(types), meta(2))
	other := Summarize(New(types), meta(3))
	plan := Summarize(New(types), meta(2))
	plan.Plan = []map[string]any{{"i": 0}}
	oldSchema := Summarize(New(types), meta(2))
	oldSchema.Schema = 1
	broken := roundTrip(t, Summarize(New(types), meta(2)))
	broken.PerType["get_item"].HDR.Latency = "not a histogram"
	for _, c := range []struct {
		parts []*Summary
		want  string
	}{
		{nil, "nothing to merge"},
		{[]*Summary{one, other}, "not shards of one run"},
		{[]*Summary{one, plan}, "plan"},
		{[]*Summary{oldSchema}, "schema"},
		{[]*Summary{one, broken}, "hdr.latency"},
	} {
		if _, err := Merge(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merging %d parts: %v, want an error about %q", len(c.parts), err, c.want)
		}
	}
}

func TestRecordSortsOutcomes(t *testing.T) {
	tl := New([]string{"get_item"})
	for _, o := range []Outcome{
		{Status: 200, Intended: 1500 * time.Millisecond, Sent: time.Millisecond, DBMicros: 250, AppMicros: 750},
		{Status: 404, Intended: 2 * time.Millisecond, Sent: 2 * time.Millisecond, DBMicros: -1, AppMicros: -1},
		{Status: 503, Intended: 3 * time.Millisecond, Sent: 3 * time.Millisecond, DBMicros: -1, AppMicros: -1},
		{Status: 0, ErrorClass: "timeout", Intended: time.Hour, Sent: time.Hour, DBMicros: -1, AppMicros: -1},
		{Status: 302, Intended: 0, Sent: 0, DBMicros: -1, AppMicros: -1},
	} {
		tl.RecordMeasure(o)
	}
	tt := tl.PerType[0]
	if tt.Requests != 5 || tt.OK != 1 || tt.AppErrors != 1 || tt.SysErrors != 3 || tt.Over1s != 2 {
		t.Errorf("counts %+v", tt)
	}
	if tl.Errors["timeout"] != 1 || tt.STDB.TotalCount() != 1 || tt.LatencyExpected.TotalCount() != 2 {
		t.Errorf("errors %v, Server-Timing samples %d, expected-response samples %d", tl.Errors, tt.STDB.TotalCount(), tt.LatencyExpected.TotalCount())
	}
	if top := tt.Latency.Max(); top < 599_000_000 {
		t.Errorf("an hour is recorded as %d µs, want the 10-minute ceiling", top)
	}
}
