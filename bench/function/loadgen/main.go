// Command loadgen sends one encoded RunFunctionRequest to a function over gRPC, from N goroutines on one client
// connection (as Crossplane's function runner does), and prints the calls' wall time and latency percentiles as JSON.
// The request is sent as bytes (a pass-through codec), so the client spends no time encoding and the figures are the
// server's. Used by bench/function (loadgen.ts builds it into the cache).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const method = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"

// raw passes messages through as bytes: the request is encoded once, the response only counted.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (raw) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (raw) Name() string { return "proto" }

type result struct {
	Calls         int     `json:"calls"`
	WallMs        float64 `json:"wallMs"`
	P50Ms         float64 `json:"p50Ms"`
	P99Ms         float64 `json:"p99Ms"`
	ResponseBytes int     `json:"responseBytes"`
}

func main() {
	addr := flag.String("addr", "", "host:port of the function (insecure)")
	reqFile := flag.String("request", "", "file holding one encoded RunFunctionRequest")
	conc := flag.Int("concurrency", 1, "calls in flight")
	calls := flag.Int("calls", 1000, "calls to time")
	warmup := flag.Int("warmup", 500, "calls before timing")
	flag.Parse()
	if *addr == "" || *reqFile == "" {
		fmt.Fprintln(os.Stderr, "loadgen: -addr and -request are required")
		os.Exit(2)
	}
	req, err := os.ReadFile(*reqFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: cannot read the request: %v\n", err)
		os.Exit(1)
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.ForceCodec(raw{})))
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: cannot dial %s: %v\n", *addr, err)
		os.Exit(1)
	}
	defer conn.Close()
	var respBytes atomic.Int64
	run := func(n int, lat []time.Duration) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, *conc)
		for g := 0; g < *conc; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					var rsp []byte
					t := time.Now()
					if err := conn.Invoke(context.Background(), method, &req, &rsp); err != nil {
						errs <- err
						return
					}
					if lat != nil {
						lat[i] = time.Since(t)
					}
					respBytes.Store(int64(len(rsp)))
				}
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
			return nil
		}
	}
	if err := run(*warmup, nil); err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: warm-up call failed: %v\n", err)
		os.Exit(1)
	}
	lat := make([]time.Duration, *calls)
	t0 := time.Now()
	if err := run(*calls, lat); err != nil {
		fmt.Fprintf(os.Stderr, "loadgen: call failed: %v\n", err)
		os.Exit(1)
	}
	wall := time.Since(t0)
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	pct := func(p float64) float64 {
		i := int(p/100*float64(len(lat))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(lat) {
			i = len(lat) - 1
		}
		return float64(lat[i].Microseconds()) / 1000
	}
	out, _ := json.Marshal(result{Calls: *calls, WallMs: float64(wall.Microseconds()) / 1000, P50Ms: pct(50), P99Ms: pct(99), ResponseBytes: int(respBytes.Load())})
	fmt.Println(string(out))
}
