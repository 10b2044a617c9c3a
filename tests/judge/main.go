// Command judge is the interop harness: it writes journals with Gazette's own Publisher and
// reads them with Gazette's own iterators, so that the connector's message layer can be checked
// against Gazette itself.
//
//	judge publish --broker URL --journal NAME (--scenario NAME | --random SEED | --events N [--users U] [--random SEED] [--rate R])
//	judge traffic --broker URL --journals a,b [--seconds N] [--random SEED] [--rate R] [--no-rollbacks]   (see traffic.go)
//	judge script --broker URL --journal NAME < commands   (see script.go)
//	judge read --broker URL --journal NAME [--committed | --uncommitted] [--ring N] [--acks] [--count] [--direct]
//	judge read --broker URL --journal NAME --raw   (copies the journal's bytes to nowhere; prints their number)
//	judge map --journals a,b,c < keys        (prints "modulo<TAB>rendezvous" per key line)
//	judge publish-rate --broker URL --journals a,b --rate BYTES_PER_S [--size N] [--seconds S]   (see soak.go)
//	judge exactly-once --broker URL --journals in1,in2 --out out1,out2
//	judge tail --broker URL --journals a,b [--offset N] [--seconds S]   (see tail.go)
//	judge scenarios                          (lists the named scenarios)
//
// With GAZETTE_AUTH_KEY_FILE set, every RPC carries a token signed with the first key of that file
// (the brokers' --broker.auth-keys), read for each RPC.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"math/rand"
	"os"
	"strings"
	"time"

	log "github.com/sirupsen/logrus"
	"go.gazette.dev/core/auth"
	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/labels"
	"go.gazette.dev/core/message"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func main() {
	log.SetLevel(log.ErrorLevel)
	if len(os.Args) < 2 {
		fail("usage: judge publish|traffic|read|map|scenarios|publish-bench [flags]")
	}
	var cmd, args = os.Args[1], os.Args[2:]
	var fs = flag.NewFlagSet(cmd, flag.ExitOnError)
	var broker = fs.String("broker", "http://127.0.0.1:8080", "broker endpoint")
	var journal = fs.String("journal", "", "journal name")
	var scenario = fs.String("scenario", "", "named scenario to publish")
	var seed = fs.Int64("random", -1, "publish a random interleaving drawn with this seed")
	var committed = fs.Bool("committed", false, "read committed (the default)")
	var uncommitted = fs.Bool("uncommitted", false, "read uncommitted")
	var ring = fs.Int("ring", 8192, "sequencer ring size")
	var acks = fs.Bool("acks", false, "also print ACK messages")
	var offset = fs.Int64("offset", 0, "read: the offset to begin at (a message boundary); tail: the same, -1 each journal's write head")
	var skipMalformed = fs.Bool("skip-malformed", false, "read: pass over messages the framing cannot unmarshal")
	var direct = fs.Bool("direct", false, "read: persisted fragments straight from their stores' signed URLs (DoNotProxy)")
	var journals = fs.String("journals", "", "comma-separated journals, in listing order")
	var events = fs.Int("events", 0, "publish this many purchase events (ndjson)")
	var users = fs.Int("users", 8, "users of --events")
	var countOnly = fs.Bool("count", false, "read: print only the number of messages and their bytes")
	var raw = fs.Bool("raw", false, "read: copy the journal's bytes to nowhere, decoding nothing, and print their number")
	var count = fs.Int("n", 0, "publish-bench: messages to publish")
	var size = fs.Int("size", 1024, "publish-bench: bytes per message")
	var producers = fs.Int("producers", 16, "publish-bench: concurrent publishers")
	var rate = fs.Float64("rate", 0, "traffic: operations a second per journal (default 20); publish-rate: bytes a second, in all (default 5 MiB); publish --events: events a second, at most (default: as fast as it goes)")
	var seconds = fs.Float64("seconds", 0, "traffic, publish-rate: how long to publish (0: until SIGTERM); tail: how long to follow (0: until stdin closes)")
	var noRollbacks = fs.Bool("no-rollbacks", false, "traffic: leave rollbacks out of the mix")
	var every = fs.Float64("every", 5, "publish-rate: seconds between progress lines")
	var outputs = fs.String("out", "", "exactly-once: comma-separated output journals")
	_ = fs.Parse(args)
	_ = committed

	switch cmd {
	case "scenarios":
		fmt.Println(strings.Join(scenarioNames(), "\n"))
	case "publish":
		publish(*broker, pb.Journal(*journal), *scenario, *seed, *events, *users, *rate)
	case "traffic":
		traffic(*broker, strings.Split(*journals, ","), int(*seconds), max(*seed, 0), int(orDefault(*rate, 20)), *noRollbacks)
	case "script":
		script(*broker, pb.Journal(*journal))
	case "read":
		if *raw {
			readRaw(*broker, pb.Journal(*journal))
			return
		}
		read(*broker, pb.Journal(*journal), *offset, !*uncommitted, *ring, *acks, *countOnly, *skipMalformed, *direct)
	case "map":
		mapKeys(strings.Split(*journals, ","))
	case "publish-bench":
		publishBench(*broker, strings.Split(*journals, ","), *count, *size, *producers)
	case "publish-rate":
		publishRate(*broker, strings.Split(*journals, ","), orDefault(*rate, 5<<20), *size, *seconds, *every)
	case "exactly-once":
		exactlyOnce(*broker, strings.Split(*journals, ","), strings.Split(*outputs, ","))
	case "tail":
		tail(*broker, strings.Split(*journals, ","), *offset, *seconds)
	default:
		fail("unknown command " + cmd)
	}
}

// orDefault is v, or def when the flag was left at 0.
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

func connect(ctx context.Context, broker string) pb.RoutedJournalClient {
	var opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if f := os.Getenv("GAZETTE_AUTH_KEY_FILE"); f != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(keyFileAuth(f)))
	}
	var conn, err = grpc.NewClient(pb.Endpoint(broker).GRPCAddr(), opts...)
	if err != nil {
		fail(err.Error())
	}
	return pb.NewRoutedJournalClient(pb.NewJournalClient(conn), pb.NoopDispatchRouter{})
}

func publish(broker string, journal pb.Journal, scenario string, seed int64, events, users int, rate float64) {
	var w = newWriter(broker, journal, seed)
	if events > 0 {
		if seed < 0 {
			w.rng = rand.New(rand.NewSource(1))
		}
		publishEvents(w, events, users, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), rate)
	} else if seed >= 0 {
		random(w)
	} else if run, ok := scenarios[scenario]; ok {
		run(w)
	} else {
		fail(fmt.Sprintf("unknown scenario %q; known: %s", scenario, strings.Join(scenarioNames(), ", ")))
	}
	w.sync()
}

func script(broker string, journal pb.Journal) {
	runScript(newWriter(broker, journal, 0))
}

// newWriter is a writer of the journal, in the framing its content-type label names.
func newWriter(broker string, journal pb.Journal, seed int64) *writer {
	var ctx = context.Background()
	var rjc = connect(ctx, broker)
	var spec, err = client.GetJournal(ctx, rjc, journal)
	if err != nil {
		fail(fmt.Sprintf("journal %s: %v", journal, err))
	}
	var ct = spec.LabelSet.ValueOf(labels.ContentType)
	framing, err := message.FramingByContentType(ct)
	if err != nil {
		fail(err.Error())
	}
	return &writer{ctx: ctx, as: client.NewAppendService(ctx, rjc), journal: journal,
		contentType: ct, framing: framing, rng: rand.New(rand.NewSource(seed))}
}

// record is one message as the judge prints it.
type record struct {
	Journal string `json:"journal"`
	Begin   int64  `json:"begin"`
	End     int64  `json:"end"`
	UUID    string `json:"uuid"`
	Flags   int    `json:"flags"`
	Payload string `json:"payload"`
}

func read(broker string, journal pb.Journal, offset int64, committed bool, ring int, acks bool, countOnly bool, skipMalformed bool, direct bool) {
	var ctx = context.Background()
	var counting = &countingClient{RoutedJournalClient: connect(ctx, broker)}
	// DoNotProxy: the broker hands out a persisted fragment's signed URL, which Gazette's Reader
	// fetches itself (as consumers and `gazctl journals read` do), instead of proxying its bytes.
	var rr = client.NewRetryReader(ctx, counting,
		pb.ReadRequest{Journal: journal, Offset: offset, Block: false, DoNotProxy: direct})
	var it message.Iterator
	if committed {
		it = message.NewReadCommittedIter(rr, newDocFunc, message.NewSequencer(nil, nil, ring))
	} else {
		it = message.NewReadUncommittedIter(rr, newDocFunc)
	}
	var out = bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var enc = json.NewEncoder(out)
	var messages, bytes int64
	if countOnly {
		// Messages, their bytes, and every byte the reader fetched (replays included).
		defer func() { fmt.Fprintf(out, "%d %d %d\n", messages, bytes, counting.bytes) }()
	}

	for {
		var env, err = it.Next()
		if err == io.EOF || errors.Is(err, client.ErrOffsetNotYetAvailable) {
			return
		} else if err != nil && skipMalformed && strings.Contains(err.Error(), "framing.Unmarshal") {
			// The frame was consumed: the iterator goes on at the next one.
			continue
		} else if err != nil {
			out.Flush()
			fail(fmt.Sprintf("reading %s: %v", journal, err))
		}
		var d = env.Message.(*doc)
		var flags = message.GetFlags(d.uuid)
		if message.GetClock(d.uuid) == 0 {
			flags = message.Flag_OUTSIDE_TXN
		} else if flags == message.Flag_ACK_TXN && !acks {
			continue
		}
		if countOnly {
			messages++
			bytes += env.End - env.Begin
			continue
		}
		var u = ""
		if d.uuid != (message.UUID{}) {
			u = d.uuid.String()
		}
		_ = enc.Encode(record{string(journal), env.Begin, env.End, u, int(flags), d.payload()})
	}
}

// readRaw copies the journal through Gazette's RetryReader to nowhere: the ceiling of reading
// it from the broker, without framing or decoding.
func readRaw(broker string, journal pb.Journal) {
	var ctx = context.Background()
	var rr = client.NewRetryReader(ctx, connect(ctx, broker), pb.ReadRequest{Journal: journal, Block: false})
	var n, err = io.Copy(io.Discard, rr)
	if err != nil && err != io.EOF && !errors.Is(err, client.ErrOffsetNotYetAvailable) {
		fail(fmt.Sprintf("reading %s: %v", journal, err))
	}
	fmt.Println(n)
}

// countingClient counts the content bytes of every read made through it: what a reader, its
// replays included, fetched from the brokers.
type countingClient struct {
	pb.RoutedJournalClient
	bytes int64
}

func (c *countingClient) Read(ctx context.Context, req *pb.ReadRequest, opts ...grpc.CallOption) (pb.Journal_ReadClient, error) {
	var rc, err = c.RoutedJournalClient.Read(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	return &countingReads{Journal_ReadClient: rc, bytes: &c.bytes}, nil
}

type countingReads struct {
	pb.Journal_ReadClient
	bytes *int64
}

// RecvMsg is what Gazette's Reader calls.
func (r *countingReads) RecvMsg(m interface{}) error {
	var err = r.Journal_ReadClient.RecvMsg(m)
	if resp, ok := m.(*pb.ReadResponse); ok && err == nil {
		*r.bytes += int64(len(resp.Content))
	}
	return err
}

// mapKeys prints the journal Gazette's ModuloMapping and RendezvousMapping pick for each key.
func mapKeys(journals []string) {
	var lr = &pb.ListResponse{}
	for _, j := range journals {
		lr.Journals = append(lr.Journals, pb.ListResponse_Journal{Spec: pb.JournalSpec{Name: pb.Journal(j)}})
	}
	var partitions = func() *pb.ListResponse { return lr }
	var key = func(m message.Mappable, w io.Writer) { _, _ = w.(hash.Hash32).Write([]byte(m.(string))) }
	var modulo = message.ModuloMapping(key, partitions)
	var rendezvous = message.RendezvousMapping(key, partitions)

	var in = bufio.NewScanner(os.Stdin)
	var out = bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var m, _, _ = modulo(in.Text())
		var r, _, _ = rendezvous(in.Text())
		fmt.Fprintf(out, "%s\t%s\n", m, r)
	}
}

// keyFileAuth signs a token for every RPC with the first of the brokers' keys that the file holds
// (as --broker.auth-keys takes them), read each time: tests rotate the brokers' keys under a
// running judge.
type keyFileAuth string

func (f keyFileAuth) GetRequestMetadata(_ context.Context, _ ...string) (map[string]string, error) {
	var keys, err = os.ReadFile(string(f))
	if err != nil {
		return nil, err
	}
	keyed, err := auth.NewKeyedAuth(strings.TrimSpace(string(keys)))
	if err != nil {
		return nil, err
	}
	ctx, err := keyed.Authorize(context.Background(), pb.Claims{Capability: pb.Capability_ALL}, time.Minute)
	if err != nil {
		return nil, err
	}
	var md, _ = metadata.FromOutgoingContext(ctx)
	return map[string]string{"authorization": md.Get("authorization")[0]}, nil
}

func (keyFileAuth) RequireTransportSecurity() bool { return false }
