package tally

import (
	"fmt"
	"math"
)

// Merge pools the summaries of several driver processes (the shards of one distributed run) into one.
// Counts and rates add up; percentiles come from the merged histograms, so they are exact.
func Merge(parts []*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to merge")
	}
	first := parts[0]
	total := New(nil)
	settings := map[string]any{}
	for k, v := range first.Settings {
		settings[k] = v
	}
	var rate, users, offered float64
	var shards int
	var partial bool
	started, measureStart := math.Inf(1), 0.0
	var runS float64
	var seeds []any
	for i, p := range parts {
		if p.Schema != SchemaVersion {
			return nil, fmt.Errorf("input %d: schema %d, want %d", i+1, p.Schema, SchemaVersion)
		}
		if p.Plan != nil {
			return nil, fmt.Errorf("input %d is a request plan, not a measurement", i+1)
		}
		if math.Abs(p.WindowS-first.WindowS) > 1e-9 {
			return nil, fmt.Errorf("input %d measured %g s, input 1 %g s: not shards of one run", i+1, p.WindowS, first.WindowS)
		}
		t, err := FromSummary(p)
		if err != nil {
			return nil, fmt.Errorf("input %d: %v", i+1, err)
		}
		total.Add(t)
		rate += number(p.Settings["rate"])
		users += number(p.Settings["users"])
		if p.OfferedRPS != nil {
			offered += *p.OfferedRPS
		}
		shards += max(p.Shards, 1)
		partial = partial || p.Partial
		started = math.Min(started, p.StartedAtUnix)
		measureStart = math.Max(measureStart, p.MeasureStartUnix)
		runS = math.Max(runS, p.TestRunDurationS)
		seeds = append(seeds, p.Settings["seed"])
	}
	if first.Settings["rate"] != nil {
		settings["rate"] = rate
	}
	if first.Settings["users"] != nil {
		settings["users"] = users
	}
	settings["shard_seeds"] = seeds
	delete(settings, "shard_index")
	meta := Meta{
		DriverVersion: first.DriverVersion, Settings: settings, OpenItems: first.OpenItems, Partial: partial,
		Shards: shards, StartedAtUnix: started, MeasureStartUnix: measureStart, WindowS: first.WindowS,
		WarmupS: first.Warmup.WindowS, ExpectedStatus: map[string]int{}, InvalidTypes: map[string]bool{},
		TestRunDurationS: runS,
	}
	if first.OfferedRPS != nil {
		meta.OfferedRPS = &offered
	}
	for _, p := range parts {
		for name, ts := range p.PerType {
			if ts.ExpectedStatus != 0 {
				meta.ExpectedStatus[name] = ts.ExpectedStatus
				meta.InvalidTypes[name] = true
			}
		}
	}
	return Summarize(total, meta), nil
}

func number(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return 0
}
