package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/message"
)

// seenRecord is a committed message as `judge tail` prints it: the record, and when
// ReadCommittedIter handed it over (Unix seconds, microseconds precise).
type seenRecord struct {
	record
	Seen float64 `json:"seen"`
}

// tail follows the journals from their write heads (or `offset`, for all) with blocking reads
// through Gazette's ReadCommittedIter, one per journal, and prints each committed message (ACKs
// left out) as a line the moment the iterator yields it, until `seconds` have passed (0: until
// stdin closes or SIGTERM). "ready" on stderr once every journal's read is open. What a
// read-committed reader sees, and when: the end of an end-to-end latency.
func tail(broker string, journals []string, offset int64, seconds float64) {
	var ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var rjc = connect(ctx, broker)
	var out = bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var print = func(r seenRecord) {
		var line, _ = json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		_, _ = out.Write(append(line, '\n'))
		_ = out.Flush()
	}
	var opened sync.WaitGroup
	for _, j := range journals {
		var journal = pb.Journal(j)
		var from = offset
		if from < 0 {
			// The write head: a metadata-only read answers with it.
			var rr = client.NewReader(ctx, rjc, pb.ReadRequest{Journal: journal, Offset: -1, Block: false, MetadataOnly: true})
			var _, err = rr.Read(nil)
			if err != nil && !errors.Is(err, client.ErrOffsetJump) && !errors.Is(err, client.ErrOffsetNotYetAvailable) {
				fail(fmt.Sprintf("write head of %s: %v", journal, err))
			}
			from = rr.Response.WriteHead
		}
		opened.Add(1)
		go func() {
			var rr = client.NewRetryReader(ctx, rjc, pb.ReadRequest{Journal: journal, Offset: from, Block: true})
			var it = message.NewReadCommittedIter(rr, newDocFunc, message.NewSequencer(nil, nil, 8192))
			opened.Done()
			for {
				var env, err = it.Next()
				if ctx.Err() != nil {
					return
				} else if err != nil {
					fail(fmt.Sprintf("tailing %s: %v", journal, err))
				}
				var seen = float64(time.Now().UnixMicro()) / 1e6
				var d = env.Message.(*doc)
				var flags = message.GetFlags(d.uuid)
				if flags == message.Flag_ACK_TXN && message.GetClock(d.uuid) != 0 {
					continue
				}
				var u = ""
				if d.uuid != (message.UUID{}) {
					u = d.uuid.String()
				}
				print(seenRecord{record{string(journal), env.Begin, env.End, u, int(flags), d.payload()}, seen})
			}
		}()
	}
	opened.Wait()
	fmt.Fprintln(os.Stderr, "ready")
	if seconds > 0 {
		time.Sleep(time.Duration(seconds * float64(time.Second)))
	} else {
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
}
