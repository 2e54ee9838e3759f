package pace

import (
	"math"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// hitsBy counts how many requests a vegeta pacer releases by elapsed time t.
func hitsBy(p vegeta.Pacer, t time.Duration) uint64 {
	var hits uint64
	var now time.Duration
	for now <= t {
		wait, stop := p.Pace(now, hits)
		if stop {
			break
		}
		if wait > 0 {
			now += wait
			if now > t {
				break
			}
		}
		hits++
	}
	return hits
}

func TestConstantMatchesVegeta(t *testing.T) {
	ours := New(Segment{10 * time.Second, 250, 250})
	theirs := vegeta.ConstantPacer{Freq: 250, Per: time.Second}
	for _, at := range []time.Duration{time.Second, 3500 * time.Millisecond, 9 * time.Second} {
		a, b := hitsBy(ours, at), hitsBy(theirs, at)
		if diff := int64(a) - int64(b); diff < -1 || diff > 1 {
			t.Errorf("by %v: ours %d, vegeta's %d", at, a, b)
		}
	}
}

func TestLinearRampMatchesVegeta(t *testing.T) {
	// From 100 to 1100 req/s over 10 s: vegeta's LinearPacer with slope 100 req/s per s.
	ours := New(Segment{10 * time.Second, 100, 1100})
	theirs := vegeta.LinearPacer{StartAt: vegeta.ConstantPacer{Freq: 100, Per: time.Second}, Slope: 100}
	for _, at := range []time.Duration{time.Second, 5 * time.Second, 9 * time.Second} {
		a, b := hitsBy(ours, at), hitsBy(theirs, at)
		if diff := int64(a) - int64(b); diff < -2 || diff > 2 {
			t.Errorf("by %v: ours %d, vegeta's %d", at, a, b)
		}
	}
}

func TestDueInvertsArrivals(t *testing.T) {
	s := New(Segment{2 * time.Second, 10, 400}, Segment{3 * time.Second, 400, 400}, Segment{time.Second, 400, 50})
	total := s.Arrivals(s.Length())
	if math.Abs(total-(2*205+3*400+225)) > 1e-6 {
		t.Fatalf("total arrivals %v", total)
	}
	var last time.Duration
	for n := uint64(0); n < uint64(total); n++ {
		due, ok := s.Due(n)
		if !ok {
			t.Fatalf("request %d has no due time before %v", n, total)
		}
		if due < last {
			t.Fatalf("request %d due at %v, before request %d at %v", n, due, n-1, last)
		}
		if got := s.Arrivals(due); math.Abs(got-float64(n)) > 1e-6 {
			t.Fatalf("request %d due at %v where arrivals are %v", n, due, got)
		}
		last = due
	}
	if _, ok := s.Due(uint64(total) + 1); ok {
		t.Fatal("a request past the schedule's end has a due time")
	}
}

func TestRequestCountOverAWindow(t *testing.T) {
	s := New(Segment{20 * time.Second, 300, 300})
	n := uint64(0)
	for {
		if _, ok := s.Due(n); !ok {
			break
		}
		n++
	}
	if n != 6000 {
		t.Fatalf("20 s at 300 req/s scheduled %d requests, want 6000", n)
	}
}

func TestRateAndStop(t *testing.T) {
	// A warm-up ramp, a held rate, a zero-length leg (dropped) and a ramp down to nothing.
	s := New(Segment{time.Second, 20, 200}, Segment{0, 999, 999}, Segment{2 * time.Second, 200, 200}, Segment{time.Second, 200, 0})
	if s.Length() != 4*time.Second {
		t.Fatalf("length %v", s.Length())
	}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 20}, {500 * time.Millisecond, 110}, {time.Second, 200}, {2500 * time.Millisecond, 200}, {3500 * time.Millisecond, 100}, {5 * time.Second, 0}} {
		if got := s.Rate(c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("rate at %v: %v, want %v", c.at, got, c.want)
		}
	}
	total := uint64(math.Round(s.Arrivals(s.Length())))
	if total != 110+400+100 {
		t.Fatalf("%d arrivals, want 610", total)
	}
	// Pace releases exactly the scheduled requests, then stops.
	if got := hitsBy(s, time.Hour); got != total {
		t.Errorf("Pace released %d requests, want %d", got, total)
	}
	if wait, stop := s.Pace(time.Hour, total); !stop || wait != 0 {
		t.Errorf("after the last request Pace says wait %v, stop %v", wait, stop)
	}
	// A request due in the future is waited for; one overdue is released at once (a negative wait).
	due, _ := s.Due(300)
	if wait, stop := s.Pace(due-time.Millisecond, 300); stop || wait != time.Millisecond {
		t.Errorf("1 ms before request 300: wait %v, stop %v", wait, stop)
	}
	if wait, _ := s.Pace(due+time.Second, 300); wait > 0 {
		t.Errorf("an overdue request waits %v", wait)
	}
}

func TestEmptySchedule(t *testing.T) {
	s := New(Segment{0, 100, 100}, Segment{time.Second, 0, 0})
	if _, ok := s.Due(0); ok {
		t.Error("a schedule at 0 req/s has a request due")
	}
	if _, stop := s.Pace(0, 0); !stop {
		t.Error("Pace of an empty schedule does not stop")
	}
}

func TestShiftedSchedulesInterleaveEvenlyAtEveryRate(t *testing.T) {
	// A ramp, a held rate and a ramp down: two drivers on one clock, phases 0 and 0.5.
	base := New(Segment{2 * time.Second, 50, 400}, Segment{2 * time.Second, 400, 400}, Segment{time.Second, 400, 100})
	half := base.Shifted(0.5)
	if base.Length() != half.Length() || base.Arrivals(base.Length()) != half.Arrivals(half.Length()) {
		t.Fatal("shifting changed the profile")
	}
	for n := uint64(0); ; n++ {
		a, okA := base.Due(n)
		next, okNext := base.Due(n + 1)
		b, okB := half.Due(n)
		if !okNext || !okB {
			break
		}
		if !okA || b <= a || b >= next {
			t.Fatalf("request %d: shifted due %v, not between %v and %v", n, b, a, next)
		}
		// Halfway in arrivals: the cumulative count at the shifted due time is n + 0.5.
		if got := base.Arrivals(b); math.Abs(got-(float64(n)+0.5)) > 1e-6 {
			t.Fatalf("request %d shifted to where arrivals are %v, want %v", n, got, float64(n)+0.5)
		}
	}
	// At a held rate the shift is half an interval exactly: 400 req/s, 1.25 ms.
	n := uint64(base.Arrivals(3 * time.Second))
	a, _ := base.Due(n)
	b, _ := half.Due(n)
	if d := b - a; d < 1249*time.Microsecond || d > 1251*time.Microsecond {
		t.Fatalf("at 400 req/s the shifted request is %v later, want 1.25 ms", d)
	}
}
