package main

import (
	"fmt"
	"strings"

	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/message"
)

// numbered is an ndjson message of about `size` bytes carrying the number n, as the benchmarks
// and the soak publish them.
func numbered(n, size int) *doc {
	var pad = strings.Repeat("x", max(0, size-len(`{"_meta":{"uuid":"00000000-0000-0000-0000-000000000000"},"n":00000000,"pad":""}`)-1))
	return &doc{contentType: "application/x-ndjson", body: fmt.Sprintf(`"n":%d,"pad":%q`, n, pad)}
}

// toJournal maps every message to one journal.
func toJournal(journal pb.Journal) message.MappingFunc {
	return func(message.Mappable) (pb.Journal, string, error) { return journal, "application/x-ndjson", nil }
}

// commit appends the ACK intents of what pub published uncommitted so far, as a sink's commit does.
func commit(as *client.AppendService, pub *message.Publisher) []*client.AsyncAppend {
	var intents, err = pub.BuildAckIntents()
	must(nil, err)
	var appends []*client.AsyncAppend
	for _, i := range intents {
		var a = as.StartAppend(pb.AppendRequest{Journal: i.Journal}, nil)
		_, _ = a.Writer().Write(i.Intent)
		must(nil, a.Release())
		appends = append(appends, a)
	}
	return appends
}
