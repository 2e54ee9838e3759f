// Package pace is the open model's arrival schedule: a piecewise-linear rate profile (the warm-up's
// ramp, the held rate, a fault run's stages) that knows when each request is due. It satisfies
// vegeta's Pacer interface, and its tests check it against vegeta's own constant and linear pacers.
package pace

import (
	"math"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Segment is a stretch of the profile whose rate moves linearly from From to To req/s.
type Segment struct {
	Length   time.Duration
	From, To float64
}

// Schedule maps request numbers to due times: request n is due when the profile's cumulative
// arrivals reach n (request 0 at the start).
type Schedule struct {
	segments []Segment
	starts   []time.Duration // each segment's start
	before   []float64       // arrivals before each segment
	total    time.Duration
	phase    float64 // a share of an interval: request n is due when the arrivals reach n + phase
}

var _ vegeta.Pacer = (*Schedule)(nil)

// New builds a schedule; segments of zero length are dropped.
func New(segments ...Segment) *Schedule {
	s := &Schedule{}
	arrivals := 0.0
	for _, seg := range segments {
		if seg.Length <= 0 {
			continue
		}
		s.segments = append(s.segments, seg)
		s.starts = append(s.starts, s.total)
		s.before = append(s.before, arrivals)
		s.total += seg.Length
		arrivals += seg.Length.Seconds() * (seg.From + seg.To) / 2
	}
	return s
}

// Shifted is the schedule with every request due `phase` of an interval later (0 <= phase < 1): at
// any rate, even a changing one, request n then falls that share of the way to request n+1's due time
// in the unshifted schedule. Two drivers on one clock with phases 0 and 0.5 interleave evenly.
func (s *Schedule) Shifted(phase float64) *Schedule {
	shifted := *s
	shifted.phase = phase
	return &shifted
}

// Length is the schedule's total duration.
func (s *Schedule) Length() time.Duration { return s.total }

// Arrivals is the cumulative number of arrivals by elapsed time t.
func (s *Schedule) Arrivals(t time.Duration) float64 {
	for k := len(s.segments) - 1; k >= 0; k-- {
		if t >= s.starts[k] {
			seg := s.segments[k]
			x := min(t-s.starts[k], seg.Length).Seconds()
			slope := (seg.To - seg.From) / seg.Length.Seconds()
			return s.before[k] + seg.From*x + slope*x*x/2
		}
	}
	return 0
}

// Due is when request n is due, and false once the schedule has ended before it.
func (s *Schedule) Due(n uint64) (time.Duration, bool) {
	target := float64(n) + s.phase
	for k, seg := range s.segments {
		length := seg.Length.Seconds()
		inside := target - s.before[k]
		capacity := length * (seg.From + seg.To) / 2
		if inside >= capacity {
			continue
		}
		// Solve From*x + a*x^2 = inside for x, in the form that stays exact when a -> 0.
		a := (seg.To - seg.From) / length / 2
		x := 2 * inside / (seg.From + math.Sqrt(seg.From*seg.From+4*a*inside))
		if inside == 0 {
			x = 0
		}
		return s.starts[k] + time.Duration(x*float64(time.Second)), true
	}
	return 0, false
}

// Pace is vegeta's Pacer: the wait until the next request is due (0 or less: now), or stop.
func (s *Schedule) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due, ok := s.Due(hits)
	if !ok {
		return 0, true
	}
	return due - elapsed, false
}

// Rate is vegeta's Pacer: the instantaneous rate at elapsed, req/s.
func (s *Schedule) Rate(elapsed time.Duration) float64 {
	for k := len(s.segments) - 1; k >= 0; k-- {
		if elapsed >= s.starts[k] {
			seg := s.segments[k]
			if elapsed-s.starts[k] > seg.Length {
				return 0
			}
			return seg.From + (seg.To-seg.From)*(elapsed-s.starts[k]).Seconds()/seg.Length.Seconds()
		}
	}
	return 0
}
