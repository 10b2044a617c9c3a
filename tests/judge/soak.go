package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/message"
)

// publishRate publishes ndjson messages of about `size` bytes into journals at `rate` bytes a
// second in all, for `seconds` (or until SIGTERM): one Publisher per journal, a transaction of
// what is due every 100 ms. Message n of journal j carries "n": n*len(journals)+j, so that
// `exactly-once` can count every number in and out. It prints "seconds messages bytes" every
// `every` seconds and at the end.
func publishRate(broker string, journals []string, rate float64, size int, seconds float64, every float64) {
	var ctx, cancel = context.WithCancel(context.Background())
	var stop = make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; cancel() }()
	if seconds > 0 {
		go func() { time.Sleep(time.Duration(seconds * float64(time.Second))); cancel() }()
	}
	var as = client.NewAppendService(context.Background(), connect(ctx, broker))
	var messages, sent atomic.Int64
	var start = time.Now()
	var perJournal = rate / float64(len(journals)) / float64(size) // messages a second
	var report = func() {
		fmt.Printf("%.1f %d %d\n", time.Since(start).Seconds(), messages.Load(), sent.Load())
	}
	go func() {
		for range time.Tick(time.Duration(every * float64(time.Second))) {
			report()
		}
	}()
	var wg sync.WaitGroup
	for j, name := range journals {
		wg.Add(1)
		go func(j int, journal pb.Journal) {
			defer wg.Done()
			var pub = message.NewPublisher(as, nil)
			for k := 0; ctx.Err() == nil; {
				var due = int(time.Since(start).Seconds() * perJournal)
				if due <= k {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				var from, written = k, 0
				for ; k < due; k++ {
					var d = numbered(k*len(journals)+j, size)
					must(pub.PublishUncommitted(toJournal(journal), d))
					written += len(`{"_meta":{"uuid":"00000000-0000-0000-0000-000000000000"},}`) + len(d.body) + 1
				}
				for _, a := range commit(as, pub) {
					<-a.Done() // counted once the ACK is durable: what read-committed readers see
					must(nil, a.Err())
				}
				messages.Add(int64(k - from))
				sent.Add(int64(written))
			}
		}(j, pb.Journal(name))
	}
	wg.Wait()
	report()
}

// exactlyOnce reads the input and output journals committed, with Gazette's ReadCommittedIter,
// and counts the numbers ("n") of publish-rate's messages: each one in the input should be in
// the output once. It prints {"in", "out", "lost", "duplicated", "unexpected"} as JSON.
func exactlyOnce(broker string, inputs, outputs []string) {
	var in, out []uint8
	var count = func(journals []string, seen *[]uint8) int64 {
		var total int64
		for _, j := range journals {
			eachNumber(broker, pb.Journal(j), func(n int) {
				for len(*seen) <= n {
					*seen = append(*seen, make([]uint8, len(*seen)+1024)...)
				}
				if (*seen)[n] < 255 {
					(*seen)[n]++
				}
				total++
			})
		}
		return total
	}
	var result = map[string]int64{"in": count(inputs, &in), "out": count(outputs, &out)}
	var lost, duplicated, unexpected int64
	for n := 0; n < max(len(in), len(out)); n++ {
		var i, o uint8
		if n < len(in) {
			i = in[n]
		}
		if n < len(out) {
			o = out[n]
		}
		switch {
		case i > 0 && o == 0:
			lost++
		case i == 0 && o > 0:
			unexpected += int64(o)
		case o > i:
			duplicated += int64(o - i)
		}
	}
	result["lost"], result["duplicated"], result["unexpected"] = lost, duplicated, unexpected
	_ = json.NewEncoder(os.Stdout).Encode(result)
}

// eachNumber calls f with the "n" of every message of the journal, read committed.
func eachNumber(broker string, journal pb.Journal, f func(int)) {
	var ctx = context.Background()
	var rr = client.NewRetryReader(ctx, connect(ctx, broker), pb.ReadRequest{Journal: journal, Block: false})
	var it = message.NewReadCommittedIter(rr, newDocFunc, message.NewSequencer(nil, nil, 8192))
	for {
		var env, err = it.Next()
		if err == io.EOF || errors.Is(err, client.ErrOffsetNotYetAvailable) {
			return
		} else if err != nil {
			fail(fmt.Sprintf("reading %s: %v", journal, err))
		}
		var d = env.Message.(*doc)
		if message.GetFlags(d.uuid) == message.Flag_ACK_TXN && message.GetClock(d.uuid) != 0 {
			continue
		}
		var at = bytes.Index(d.raw, []byte(`"n":`))
		if at < 0 {
			fail(fmt.Sprintf("%s@%d: no \"n\" in %q", journal, env.Begin, d.raw))
		}
		var digits = d.raw[at+4:]
		var end = bytes.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
		var n, perr = strconv.Atoi(string(digits[:end]))
		if perr != nil {
			fail(fmt.Sprintf("%s@%d: bad \"n\" in %q", journal, env.Begin, d.raw))
		}
		f(n)
	}
}
