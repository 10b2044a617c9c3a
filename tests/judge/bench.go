package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/message"
)

// publishBench publishes n ndjson messages of about size bytes into journals as the sink
// writes them: `producers` concurrent Publishers (one per writing task), each publishing its
// share uncommitted, keyed over the journals, then appending its ACK intents. It prints the
// seconds taken, the reference the sink's benchmark is measured against.
func publishBench(broker string, journals []string, n, size, producers int) {
	var ctx = context.Background()
	var rjc = connect(ctx, broker)
	var as = client.NewAppendService(ctx, rjc)
	var start = time.Now()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			var pub = message.NewPublisher(as, nil)
			for i := p; i < n; i += producers {
				must(pub.PublishUncommitted(toJournal(pb.Journal(journals[i%len(journals)])), numbered(i, size)))
			}
			commit(as, pub)
		}(p)
	}
	wg.Wait()
	for op := range as.PendingExcept("") {
		if err := op.Err(); err != nil {
			fail(err.Error())
		}
	}
	fmt.Printf("%.3f\n", time.Since(start).Seconds())
}
