// Package tally counts what the driver measured, per request type, in HDR histograms that several
// driver processes can merge into exact percentiles, and turns the counts into the JSON summary.
package tally

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to 10 minutes, to 3 significant digits.
const (
	histMin    = 1
	histMax    = 600_000_000
	histDigits = 3
)

// NewHist returns an empty latency histogram (µs).
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histMin {
		us = histMin
	}
	if us > histMax {
		us = histMax
	}
	_ = h.RecordValue(us)
}

// Type is the tally of one request type in the measurement window.
type Type struct {
	Requests, OK, AppErrors, SysErrors, Over1s int64
	// Statuses counts responses by status code; 0 is no response (timeout, refused, reset).
	Statuses map[int]int64
	// Latency runs from each request's intended send time (the open model's schedule, so a stalled
	// target cannot hide its backlog: coordinated omission corrected); LatencySent from the actual
	// send; LatencyExpected is Latency over the responses that are not system errors.
	Latency, LatencySent, LatencyExpected *hdrhistogram.Histogram
	// Server-Timing db and app durations, µs.
	STDB, STApp *hdrhistogram.Histogram
}

// NewType returns an empty per-type tally.
func NewType() *Type {
	return &Type{
		Statuses: map[int]int64{}, Latency: NewHist(), LatencySent: NewHist(), LatencyExpected: NewHist(),
		STDB: NewHist(), STApp: NewHist(),
	}
}

// Warm is the warm-up's tally, kept apart from the measurement.
type Warm struct {
	Requests, SysErrors int64
	Latency             *hdrhistogram.Histogram
}

// Tally is one driver's (or several merged drivers') measurement.
type Tally struct {
	Types       []string
	PerType     []*Type
	Warm        Warm
	Errors      map[string]int64
	LateSends   int64
	MaxInflight int64
}

// New returns an empty tally for the given request types.
func New(types []string) *Tally {
	t := &Tally{Types: types, Warm: Warm{Latency: NewHist()}, Errors: map[string]int64{}}
	for range types {
		t.PerType = append(t.PerType, NewType())
	}
	return t
}

// Outcome is one request's result as the tally sees it.
type Outcome struct {
	Type           int
	Status         int // 0: no response
	ErrorClass     string
	Intended, Sent time.Duration // latency from the intended and from the actual send
	DBMicros       int64         // Server-Timing db, -1 when absent
	AppMicros      int64
}

// SystemError is the contract's split: 5xx, no response, and anything not 2xx or 4xx.
func SystemError(status int) bool {
	return status < 200 || (status >= 300 && status < 400) || status >= 500
}

// RecordMeasure adds a request of the measurement window.
func (t *Tally) RecordMeasure(o Outcome) {
	tt := t.PerType[o.Type]
	tt.Requests++
	tt.Statuses[o.Status]++
	switch {
	case SystemError(o.Status):
		tt.SysErrors++
		if o.ErrorClass != "" {
			t.Errors[o.ErrorClass]++
		}
	case o.Status >= 400:
		tt.AppErrors++
	default:
		tt.OK++
	}
	if o.Intended > time.Second {
		tt.Over1s++
	}
	record(tt.Latency, o.Intended)
	record(tt.LatencySent, o.Sent)
	if !SystemError(o.Status) {
		record(tt.LatencyExpected, o.Intended)
	}
	if o.DBMicros >= 0 {
		_ = tt.STDB.RecordValue(min(o.DBMicros, histMax))
	}
	if o.AppMicros >= 0 {
		_ = tt.STApp.RecordValue(min(o.AppMicros, histMax))
	}
}

// RecordWarm adds a request of the warm-up.
func (t *Tally) RecordWarm(status int, intended time.Duration) {
	t.Warm.Requests++
	if SystemError(status) {
		t.Warm.SysErrors++
	}
	record(t.Warm.Latency, intended)
}

// Overall merges the per-type histograms selected by pick.
func (t *Tally) Overall(pick func(*Type) *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	h := NewHist()
	for _, tt := range t.PerType {
		h.Merge(pick(tt))
	}
	return h
}

// Add merges another tally into this one (types are matched by name).
func (t *Tally) Add(o *Tally) {
	for k, name := range o.Types {
		idx := -1
		for j, mine := range t.Types {
			if mine == name {
				idx = j
			}
		}
		if idx < 0 {
			t.Types = append(t.Types, name)
			t.PerType = append(t.PerType, NewType())
			idx = len(t.Types) - 1
		}
		a, b := t.PerType[idx], o.PerType[k]
		a.Requests += b.Requests
		a.OK += b.OK
		a.AppErrors += b.AppErrors
		a.SysErrors += b.SysErrors
		a.Over1s += b.Over1s
		for s, n := range b.Statuses {
			a.Statuses[s] += n
		}
		a.Latency.Merge(b.Latency)
		a.LatencySent.Merge(b.LatencySent)
		a.LatencyExpected.Merge(b.LatencyExpected)
		a.STDB.Merge(b.STDB)
		a.STApp.Merge(b.STApp)
	}
	t.Warm.Requests += o.Warm.Requests
	t.Warm.SysErrors += o.Warm.SysErrors
	t.Warm.Latency.Merge(o.Warm.Latency)
	for c, n := range o.Errors {
		t.Errors[c] += n
	}
	t.LateSends += o.LateSends
	t.MaxInflight += o.MaxInflight
}
