// Command bidbench-load is bidbench's load driver: an open-model (constant arrival rate, latency from
// each request's intended send time) or closed-model (users with think time) HTTP load on the
// bidbench service, configured by BB_* environment variables, with a JSON summary whose per-type HDR
// histograms merge exactly across processes.
//
// Usage:
//
//	bidbench-load run            send the load the BB_* variables describe
//	bidbench-load merge -o OUT IN...   pool the summaries of several shards into one
//	bidbench-load version
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"bidbench/loadgen/internal/config"
	"bidbench/loadgen/internal/engine"
	"bidbench/loadgen/internal/tally"
)

// Exit codes, one per kind of failure, so the harness can say what went wrong.
const (
	exitOK          = 0
	exitInternal    = 1
	exitBadSetting  = 2
	exitUnreachable = 3
	exitInterrupted = 4
	exitStartMissed = 5
)

const usage = `bidbench-load: the bidbench load driver

  bidbench-load run                  send the load described by the BB_* environment variables
  bidbench-load merge -o OUT IN...   merge shard summaries (or pod logs ending in one) into one
  bidbench-load version

The variables (loadgen/README.md has the full table):
  BB_TARGETS=http://127.0.0.1:8080[,...]  base URLs, round-robin  BB_MIX=browse|bid|mixed|payload|bare
  BB_MODEL=open|closed   BB_RATE=req/s (open)   BB_USERS, BB_THINK_MS, BB_THINK_DIST=const|exp (closed)
  BB_WARMUP=10s BB_WARMUP_RAMP=0.5 BB_WARMUP_FROM=req/s  BB_DURATION=20s  BB_STAGES=10s:100,1s:400,...
  BB_INVALID_SHARE=0..1  BB_PAYLOAD_BYTES  BB_SCALE  BB_SEED  BB_TIMEOUT=10s  BB_PLAN=N (print N requests)
  BB_SUMMARY=path (else stdout)  BB_PROGRESS=path (a JSON line a second)  BB_TRACE=path|1 (a line a request)
  BB_SHARDS=N BB_SHARD_INDEX=i (default JOB_COMPLETION_INDEX)  BB_LATE_BOUND_MS=50  BB_MAX_CONNS=5000
  BB_MIX=bare: GET /health only, no Server-Timing read (the driver's own cost, against any server)
  BB_START_AT=unix seconds (open model: start the schedule then)  BB_PHASE=0..1 (share of an interval)

Exit codes: 0 done, 1 internal error, 2 bad setting, 3 target unreachable at start,
4 interrupted (a partial summary was written), 5 set up only after BB_START_AT had passed.
`

func main() {
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		os.Exit(run())
	case "merge":
		os.Exit(merge(args))
	case "version", "--version":
		fmt.Println("bidbench-load", engine.Version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "bidbench-load: unknown command %q\n\n%s", cmd, usage)
		os.Exit(exitBadSetting)
	}
}

func run() int {
	s, err := config.FromEnv(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load: %v\n", err)
		return exitBadSetting
	}
	tune(s)
	e, err := engine.New(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load: %v\n", err)
		return exitBadSetting
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := e.Setup(); err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load: %v\n", err)
		var unreachable *engine.UnreachableError
		if errors.As(err, &unreachable) {
			return exitUnreachable
		}
		return exitInternal
	}
	if !s.StartAt.IsZero() && s.Plan == 0 && time.Since(s.StartAt) > s.LateBound {
		// Its first requests would all be late: the caller must give its drivers more time to set up.
		fmt.Fprintf(os.Stderr, "bidbench-load: ready %s after BB_START_AT; start it earlier or set BB_START_AT later\n",
			time.Since(s.StartAt).Round(time.Millisecond))
		return exitStartMissed
	}
	var summary *tally.Summary
	if s.Plan > 0 {
		summary = tally.Summarize(tally.New(nil), tally.Meta{DriverVersion: engine.Version})
		summary.Plan = e.Plan(s.Plan)
	} else {
		summary = e.Run(ctx)
	}
	if err := write(summary, s.SummaryPath); err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load: writing the summary: %v\n", err)
		return exitInternal
	}
	if summary.Partial {
		fmt.Fprintln(os.Stderr, "bidbench-load: interrupted; the summary is partial")
		return exitInterrupted
	}
	return exitOK
}

// tune keeps the driver cheap: one OS thread runs Go code at the rates one machine serves (fewer
// cross-thread wake-ups per request), and the collector runs less often (memory is plentiful).
func tune(s *config.Settings) {
	procs := s.Procs
	if procs == 0 {
		procs = 1
		if s.Model == "open" && peakRate(s) > 4000 || s.Model == "closed" && s.Users > 256 {
			procs = runtime.NumCPU()
		}
	}
	runtime.GOMAXPROCS(procs)
	debug.SetGCPercent(400)
}

func peakRate(s *config.Settings) float64 {
	peak := s.Rate
	for _, st := range s.Stages {
		peak = max(peak, st.Target)
	}
	return peak
}

func write(summary *tally.Summary, path string) error {
	body, err := summary.Marshal()
	if err != nil {
		return err
	}
	if path == "" {
		_, err = os.Stdout.Write(body)
		return err
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return err
	}
	if summary.Plan != nil {
		fmt.Printf("bidbench-load: plan of %d requests -> %s\n", len(summary.Plan), path)
		return nil
	}
	p50, p99 := "-", "-"
	if l := summary.LatencyMS; l != nil {
		p50, p99 = fmt.Sprint(l.P50), fmt.Sprint(l.P99)
	}
	fmt.Printf("bidbench-load: %d requests in %gs (ok %d, app %d, sys %d), %g ok/s, p50 %s ms, p99 %s ms, late %d -> %s\n",
		summary.Requests, summary.WindowS, summary.OK, summary.AppErrors, summary.SysErrors,
		summary.Throughput["ok_rps"], p50, p99, summary.LateSends, path)
	return nil
}

func merge(args []string) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("o", "", "where to write the merged summary (default: stdout)")
	if err := fs.Parse(args); err != nil {
		return exitBadSetting
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "bidbench-load merge: name at least one summary file or pod log")
		return exitBadSetting
	}
	var parts []*tally.Summary
	for _, path := range fs.Args() {
		s, err := readSummary(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bidbench-load merge: %s: %v\n", path, err)
			return exitBadSetting
		}
		parts = append(parts, s)
	}
	merged, err := tally.Merge(parts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load merge: %v\n", err)
		return exitBadSetting
	}
	body, err := merged.Marshal()
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(body)
		} else {
			err = os.WriteFile(*out, body, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load merge: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// readSummary reads a summary file, or a pod log whose summary is its last JSON object.
func readSummary(path string) (*tally.Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	start := 0
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		start = bytes.LastIndex(data, []byte("\n{"))
		if start < 0 {
			return nil, fmt.Errorf("no JSON summary in it")
		}
	}
	// A pod log may go on after the summary (kubectl logs interleave stderr: an interrupted shard's
	// notice follows it), so only the first JSON value from there is read.
	var s tally.Summary
	if err := json.NewDecoder(bytes.NewReader(data[start:])).Decode(&s); err != nil {
		return nil, fmt.Errorf("not a bidbench-load summary: %v", err)
	}
	if s.Driver != "bidbench-load" {
		return nil, fmt.Errorf("not a bidbench-load summary (driver %q)", s.Driver)
	}
	return &s, nil
}
