package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"bidbench/loadgen/internal/tally"
)

// driver is the bidbench-load binary, built once by TestMain.
var driver string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bidbench-load-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	driver = filepath.Join(dir, "bidbench-load")
	build := exec.Command("go", "build", "-o", driver, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "go build of the driver: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// counter is a target that answers 200 and counts the requests outside the setup phase.
func counter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Bidbench-Phase") != "setup" {
			n.Add(1)
		}
		w.Header().Set("Server-Timing", "db;dur=0.250, app;dur=0.750")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// command prepares the driver with BB_* settings only (nothing from the test's environment but PATH).
func command(ctx context.Context, vars map[string]string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, driver, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		t.Fatalf("running the driver: %v", err)
		return -1
	}
}

func readJSON(t *testing.T, path string) *tally.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s tally.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &s
}

func TestInterruptWritesAPartialSummary(t *testing.T) {
	srv, served := counter(t)
	path := filepath.Join(t.TempDir(), "summary.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, map[string]string{
		"BB_TARGETS": srv.URL, "BB_RATE": "100", "BB_WARMUP": "0s", "BB_DURATION": "60s", "BB_SUMMARY": path,
	})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code := exitCode(t, cmd.Wait())
	t.Logf("exit %d %v after SIGINT", code, time.Since(start))
	if code != exitInterrupted {
		t.Fatalf("exit code %d after SIGINT, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr: %q", stderr.String())
	}
	s := readJSON(t, path)
	t.Logf("partial summary: %d requests in %v s", s.Requests, s.WindowS)
	if !s.Partial {
		t.Error("the summary is not marked partial")
	}
	// About 1.5 s at 100 req/s (less the start-up), all of it answered and counted.
	if s.Requests < 50 || s.Requests > 250 || s.OK != s.Requests || s.Requests != served.Load() {
		t.Errorf("%d requests (%d ok) in the summary, %d at the target", s.Requests, s.OK, served.Load())
	}
	if s.WindowS < 0.5 || s.WindowS > 3 || s.LatencyMS == nil {
		t.Errorf("window %v s, latency %+v", s.WindowS, s.LatencyMS)
	}
	if rate := s.Throughput["all_rps"]; rate < 60 || rate > 140 {
		t.Errorf("throughput %v req/s over the partial window, want about 100", rate)
	}
}

func TestMergeOfTwoShards(t *testing.T) {
	srv, served := counter(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	outputs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := command(ctx, map[string]string{
				"BB_TARGETS": srv.URL, "BB_MIX": "mixed", "BB_RATE": "300", "BB_WARMUP": "0.5s", "BB_DURATION": "1s",
				"BB_SHARDS": "2", "BB_SHARD_INDEX": fmt.Sprint(i), "BB_SUMMARY": filepath.Join(dir, fmt.Sprintf("shard%d.json", i)),
			})
			outputs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	var shards []*tally.Summary
	for i := range 2 {
		if code := exitCode(t, errs[i]); code != 0 {
			t.Fatalf("shard %d exited %d:\n%s", i, code, outputs[i])
		}
		s := readJSON(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
		if s.Settings["rate"] != 150.0 || s.Settings["seed"] != float64(42+i) || s.Requests != 150 {
			t.Errorf("shard %d: rate %v, seed %v, %d requests; want 150, %d, 150", i, s.Settings["rate"], s.Settings["seed"], s.Requests, 42+i)
		}
		shards = append(shards, s)
	}
	// The second shard's summary as a pod log: progress and trace lines before it, the interrupt
	// notice after it.
	podLog := filepath.Join(dir, "shard1.log")
	body, _ := os.ReadFile(filepath.Join(dir, "shard1.json"))
	log := append([]byte("bbt m 1700000000000 1.0 200 - get_item 0 -\n{\"t\":1}\n"), body...)
	if err := os.WriteFile(podLog, log, 0o644); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "merged.json")
	out, err := command(ctx, nil, "merge", "-o", merged, filepath.Join(dir, "shard0.json"), podLog).CombinedOutput()
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("merge exited %d:\n%s", code, out)
	}
	m := readJSON(t, merged)
	if m.Shards != 2 || m.Requests != shards[0].Requests+shards[1].Requests || m.Requests != served.Load()-m.Warmup.Requests ||
		m.OK != shards[0].OK+shards[1].OK || m.Warmup.Requests != shards[0].Warmup.Requests+shards[1].Warmup.Requests {
		t.Errorf("merged: %d shards, %d requests (%d ok, %d warm-up); shards %d and %d; the target served %d",
			m.Shards, m.Requests, m.OK, m.Warmup.Requests, shards[0].Requests, shards[1].Requests, served.Load())
	}
	if m.Settings["rate"] != 300.0 || *m.OfferedRPS != 300 || fmt.Sprint(m.Settings["shard_seeds"]) != "[42 43]" {
		t.Errorf("merged settings: rate %v, offered %v, seeds %v", m.Settings["rate"], *m.OfferedRPS, m.Settings["shard_seeds"])
	}
	for name, pt := range m.PerType {
		if pt.Requests != shards[0].PerType[name].Requests+shards[1].PerType[name].Requests {
			t.Errorf("%s: merged %d requests", name, pt.Requests)
		}
	}
}

func TestMergeOfAnInterruptedPodLog(t *testing.T) {
	// kubectl logs interleave stderr: an interrupted shard's log ends with the notice after its summary.
	s := tally.Summarize(tally.New([]string{"get_item"}), tally.Meta{DriverVersion: "test", WindowS: 1, Partial: true,
		Settings: map[string]any{"rate": 10.0, "seed": 42.0}})
	body, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pod.log")
	log := append(append([]byte("starting\n"), body...), "bidbench-load: interrupted; the summary is partial\n"...)
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readSummary(path)
	if err != nil {
		t.Fatalf("readSummary of an interrupted pod's log: %v", err)
	}
	if !got.Partial || got.Driver != "bidbench-load" {
		t.Errorf("read %+v", got)
	}
}

func TestExitCodes(t *testing.T) {
	srv, _ := counter(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	notSummary := filepath.Join(dir, "other.json")
	os.WriteFile(notSummary, []byte(`{"driver":"another-tool"}`), 0o644)
	quick := map[string]string{"BB_TARGETS": srv.URL, "BB_RATE": "20", "BB_WARMUP": "0s", "BB_DURATION": "0.2s",
		"BB_SUMMARY": filepath.Join(dir, "s.json")}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range quick {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name   string
		vars   map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"a short run", quick, []string{"run"}, exitOK, ""},
		{"run is the default", quick, nil, exitOK, ""},
		{"bad mix", with("BB_MIX", "shopping"), nil, exitBadSetting, "BB_MIX"},
		{"bad rate", with("BB_RATE", "0"), nil, exitBadSetting, "BB_RATE"},
		{"small payload", map[string]string{"BB_MIX": "payload", "BB_PAYLOAD_BYTES": "5"}, nil, exitBadSetting, "BB_PAYLOAD_BYTES"},
		{"unreachable", with("BB_TARGETS", closed), nil, exitUnreachable, "is the target up?"},
		{"start time already past", with("BB_START_AT", "1700000000"), nil, exitStartMissed, "BB_START_AT"},
		{"start time ahead", with("BB_START_AT", fmt.Sprint(time.Now().Add(500*time.Millisecond).Unix()+1)), nil, exitOK, ""},
		{"unknown command", nil, []string{"fly"}, exitBadSetting, "unknown command"},
		{"merge of nothing", nil, []string{"merge"}, exitBadSetting, "at least one"},
		{"merge of a missing file", nil, []string{"merge", filepath.Join(dir, "none.json")}, exitBadSetting, "none.json"},
		{"merge of another tool's JSON", nil, []string{"merge", notSummary}, exitBadSetting, "not a bidbench-load summary"},
		{"version", nil, []string{"version"}, exitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := command(ctx, c.vars, c.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := exitCode(t, err); code != c.code || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), c.code, c.stderr)
			}
		})
	}
}

func TestSIGTERMIsAnInterruptToo(t *testing.T) {
	srv, _ := counter(t)
	path := filepath.Join(t.TempDir(), "summary.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, map[string]string{"BB_TARGETS": srv.URL, "BB_RATE": "50", "BB_WARMUP": "10s", "BB_SUMMARY": path})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd.Wait()); code != exitInterrupted {
		t.Fatalf("exit code %d after SIGTERM, want %d", code, exitInterrupted)
	}
	// Stopped in the warm-up: nothing measured, and the summary says so.
	s := readJSON(t, path)
	if !s.Partial || s.Requests != 0 || s.WindowS != 0 || s.Warmup.Requests == 0 {
		t.Errorf("partial %v, %d requests over %v s, %d warm-up requests", s.Partial, s.Requests, s.WindowS, s.Warmup.Requests)
	}
}
