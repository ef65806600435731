// franz-go compat check: the stock franz-go client (github.com/twmb/franz-go)
// against the broker given as the only argument. Run by compat/franz-go.sh.
//
// For each compression codec franz-go has (none, gzip, snappy, lz4, zstd) it
// asks Metadata for a new topic (auto-created by the broker), produces N
// records with the idempotent producer (franz-go's default) to explicit
// partitions, with keys, values, headers and explicit timestamps, reads them
// back with a group-less consumer (kgo.ConsumePartitions) and compares every
// byte, offset and timestamp, starts another one in the middle of each
// partition, then checks ListOffsets earliest, latest, max timestamp and by
// timestamp. Exit status 0 when everything matches, 1 with
// the first differences on stderr. With an id and a scenario it runs that
// one scenario instead (scenarios.go).
package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const nRecords = 2000

var (
	errCount      int
	compared      int   // records compared after consuming
	comparedBytes int64 // key, value and header bytes among them
)

func failf(format string, args ...any) {
	errCount++
	if errCount <= 20 {
		fmt.Fprintf(os.Stderr, "MISMATCH: "+format+"\n", args...)
	}
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// want is one record as produced, in produce order.
type want struct {
	part    int32
	key     []byte
	value   []byte
	headers []kgo.RecordHeader
	ts      time.Time
	offset  int64 // assigned by the broker, from the produce result
}

// detBytes returns n deterministic bytes covering all byte values (0x00 and
// 0xff included), different for each seed.
func detBytes(seed, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// makeRecords builds the data set: null, empty and binary keys and values,
// UTF-8, one large value, zero to three headers (with an empty value, a null
// value and a repeated key), timestamps increasing by 1 ms from base, partitions
// round-robin over nparts.
func makeRecords(nparts int32, base time.Time) []*want {
	ws := make([]*want, nRecords)
	for i := range ws {
		w := &want{part: int32(i) % nparts, ts: base.Add(time.Duration(i) * time.Millisecond)}
		switch {
		case i%97 == 0:
			w.key = nil
		case i%89 == 0:
			w.key = []byte{}
		case i%11 == 0:
			w.key = detBytes(i, 16)
		default:
			w.key = []byte("key-" + strconv.Itoa(i))
		}
		switch {
		case i == nRecords/2:
			w.value = detBytes(i, 200000)
		case i%101 == 5:
			w.value = nil
		case i%50 == 0:
			w.value = []byte{}
		case i%7 == 0:
			w.value = detBytes(i, 1+i%300)
		default:
			w.value = []byte(fmt.Sprintf("value %d of the franz-go compat test: ünïcödé ✓", i))
		}
		switch i % 4 {
		case 1:
			w.headers = []kgo.RecordHeader{{Key: "h1", Value: []byte("v" + strconv.Itoa(i))}}
		case 2:
			w.headers = []kgo.RecordHeader{{Key: "empty", Value: []byte{}}, {Key: "bin", Value: detBytes(i+1, 8)},
				{Key: "null", Value: nil}}
		case 3:
			w.headers = []kgo.RecordHeader{{Key: "dup", Value: []byte("a")}, {Key: "dup", Value: []byte("b")},
				{Key: "ключ", Value: []byte("значение")}}
		}
		ws[i] = w
	}
	return ws
}

func newClient(bs string, opts ...kgo.Opt) *kgo.Client {
	opts = append([]kgo.Opt{kgo.SeedBrokers(bs), kgo.ClientID("strand-compat-franz-go"),
		kgo.RetryTimeout(20 * time.Second)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		die("kgo.NewClient: %v", err)
	}
	return cl
}

// checkBrokers asks Metadata for no topic and checks the broker list: one
// broker, advertised at the bootstrap address.
func checkBrokers(ctx context.Context, cl *kgo.Client, bs string) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		die("Metadata (no topics): %v", err)
	}
	if len(resp.Brokers) != 1 {
		die("Metadata lists %d brokers, expected 1", len(resp.Brokers))
	}
	br := resp.Brokers[0]
	addr := net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port)))
	if addr != bs {
		die("Metadata: broker %d at %s, expected %s", br.NodeID, addr, bs)
	}
	cid := "<null>"
	if resp.ClusterID != nil {
		cid = *resp.ClusterID
	}
	fmt.Printf("Metadata v%d: broker %d at %s, controller %d, cluster %s\n",
		resp.GetVersion(), br.NodeID, addr, resp.ControllerID, cid)
}

// autoCreate asks Metadata for a new topic with auto-creation allowed until
// every partition has a leader, and returns the partition count.
func autoCreate(ctx context.Context, cl *kgo.Client, topic string) int32 {
	var last string
	for try := 0; try < 50; try++ {
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
		req.AllowAutoTopicCreation = true
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			die("Metadata (auto-create %s): %v", topic, err)
		}
		if len(resp.Topics) != 1 {
			die("Metadata for %s answered %d topics", topic, len(resp.Topics))
		}
		rt := resp.Topics[0]
		last = fmt.Sprintf("topic error %d, %d partitions", rt.ErrorCode, len(rt.Partitions))
		ok := rt.ErrorCode == 0 && len(rt.Partitions) > 0
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				ok = false
			}
		}
		if ok {
			return int32(len(rt.Partitions))
		}
		time.Sleep(100 * time.Millisecond)
	}
	die("topic %s not auto-created with leaders: last answer %s", topic, last)
	return 0
}

// produce sends the records asynchronously with at most 64 buffered, so
// they go out in many batches with several produce requests in flight (the
// idempotent producer's sequence numbers at work).
func produce(ctx context.Context, bs, topic string, codec kgo.CompressionCodec, ws []*want) {
	cl := newClient(bs, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec), kgo.MaxBufferedRecords(64))
	defer cl.Close()
	rs := make([]*kgo.Record, len(ws))
	res := make(kgo.ProduceResults, 0, len(ws))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, w := range ws {
		rs[i] = &kgo.Record{Topic: topic, Partition: w.part, Key: w.key, Value: w.value,
			Headers: w.headers, Timestamp: w.ts}
		wg.Add(1)
		cl.Produce(ctx, rs[i], func(r *kgo.Record, err error) {
			mu.Lock()
			res = append(res, kgo.ProduceResult{Record: r, Err: err})
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	if err := res.FirstErr(); err != nil {
		die("produce to %s: %v", topic, err)
	}
	if len(res) != len(ws) {
		die("produce to %s: %d results for %d records", topic, len(res), len(ws))
	}
	// The results come in completion order: map them back to the records.
	index := map[*kgo.Record]int{}
	for i, r := range rs {
		index[r] = i
	}
	for _, r := range res {
		i, ok := index[r.Record]
		if !ok {
			die("produce to %s: a result for a record never produced", topic)
		}
		ws[i].offset = r.Record.Offset
		if r.Record.Partition != ws[i].part {
			failf("record %d produced to partition %d, asked %d", i, r.Record.Partition, ws[i].part)
		}
		if r.Record.ProducerID < 0 {
			failf("record %d: no producer id (idempotence off?)", i)
		}
	}
	// Offsets follow the produce order within each partition, from 0.
	next := map[int32]int64{}
	for i, w := range ws {
		if w.offset != next[w.part] {
			failf("record %d: produce result offset %d in partition %d, expected %d", i, w.offset, w.part, next[w.part])
		}
		next[w.part]++
	}
}

// consume reads every partition from the start until each has as many
// records as produced (or the deadline), and compares them in order.
func consume(ctx context.Context, bs, topic string, nparts int32, ws []*want) {
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < nparts; p++ {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl := newClient(bs, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	byPart := map[int32][]*want{}
	for _, w := range ws {
		byPart[w.part] = append(byPart[w.part], w)
	}
	got := map[int32]int{}
	total := 0
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for total < len(ws) {
		fs := cl.PollFetches(cctx)
		if cctx.Err() != nil {
			die("consume %s: only %d of %d records after 20 s (per partition: %v)", topic, total, len(ws), got)
		}
		fs.EachError(func(t string, p int32, err error) {
			die("consume %s[%d]: %v", t, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			i := got[r.Partition]
			got[r.Partition]++
			total++
			exp := byPart[r.Partition]
			if i >= len(exp) {
				failf("%s[%d]: extra record at offset %d", topic, r.Partition, r.Offset)
				return
			}
			compared++
			comparedBytes += compare(topic, exp[i], r)
		})
	}
}

// consumeFromMiddle starts a consumer in the middle of each partition
// (inside a batch): the first record it gets must be the one at that offset.
func consumeFromMiddle(ctx context.Context, bs, topic string, nparts int32, ws []*want) {
	byPart := map[int32][]*want{}
	for _, w := range ws {
		byPart[w.part] = append(byPart[w.part], w)
	}
	mid := func(p int32) *want { return byPart[p][len(byPart[p])/2+1] }
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < nparts; p++ {
		parts[p] = kgo.NewOffset().At(mid(p).offset)
	}
	cl := newClient(bs, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	seen := map[int32]bool{}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(seen) < int(nparts) {
		fs := cl.PollFetches(cctx)
		if cctx.Err() != nil {
			die("consume %s from the middle: records of %d partitions only after 10 s", topic, len(seen))
		}
		fs.EachError(func(t string, p int32, err error) {
			die("consume %s[%d] from the middle: %v", t, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if !seen[r.Partition] {
				seen[r.Partition] = true
				compare(topic, mid(r.Partition), r)
			}
		})
	}
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// compare reports every difference between a record read and the one
// produced, and returns the key, value and header bytes compared.
func compare(topic string, w *want, r *kgo.Record) int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	at := fmt.Sprintf("%s[%d]@%d", topic, r.Partition, r.Offset)
	if r.Offset != w.offset {
		failf("%s: offset %d, expected %d", at, r.Offset, w.offset)
	}
	if !sameBytes(r.Key, w.key) {
		failf("%s: key %q (nil %v), expected %q (nil %v)", at, r.Key, r.Key == nil, w.key, w.key == nil)
	}
	if !sameBytes(r.Value, w.value) {
		failf("%s: value of %d bytes (nil %v) differs from the %d produced (nil %v)", at, len(r.Value),
			r.Value == nil, len(w.value), w.value == nil)
	}
	if !r.Timestamp.Equal(w.ts) {
		failf("%s: timestamp %d, expected %d", at, r.Timestamp.UnixMilli(), w.ts.UnixMilli())
	}
	if r.ProducerID < 0 || r.ProducerEpoch < 0 {
		failf("%s: read back with producer id %d epoch %d: not from the idempotent producer", at, r.ProducerID, r.ProducerEpoch)
	}
	if r.Attrs.TimestampType() != 0 {
		failf("%s: timestamp type %d, expected 0 (CreateTime)", at, r.Attrs.TimestampType())
	}
	if len(r.Headers) != len(w.headers) {
		failf("%s: %d headers, expected %d", at, len(r.Headers), len(w.headers))
		return n
	}
	for j, h := range r.Headers {
		if h.Key != w.headers[j].Key || !sameBytes(h.Value, w.headers[j].Value) {
			failf("%s: header %d is %q=%q, expected %q=%q", at, j, h.Key, h.Value, w.headers[j].Key, w.headers[j].Value)
		}
	}
	return n
}

func listOffsets(ctx context.Context, cl *kgo.Client, topic string, nparts int32,
	ts func(int32) int64) map[int32]kmsg.ListOffsetsResponseTopicPartition {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < nparts; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = ts(p)
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		die("ListOffsets %s: %v", topic, err)
	}
	out := map[int32]kmsg.ListOffsetsResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[p.Partition] = p
		}
	}
	if len(out) != int(nparts) {
		die("ListOffsets %s: %d partitions answered, expected %d", topic, len(out), nparts)
	}
	return out
}

// checkListOffsets: earliest (-2) is 0, latest (-1) the record count, max
// timestamp (-3) the last record, a record's own timestamp finds it, and a
// timestamp past the last record finds nothing (offset -1).
func checkListOffsets(ctx context.Context, cl *kgo.Client, topic string, nparts int32, ws []*want) {
	byPart := map[int32][]*want{}
	for _, w := range ws {
		byPart[w.part] = append(byPart[w.part], w)
	}
	mid := func(p int32) *want { return byPart[p][len(byPart[p])/2] }
	last := func(p int32) *want { return byPart[p][len(byPart[p])-1] }
	type check struct {
		name          string
		ts            func(int32) int64
		offset, tstmp func(int32) int64 // tstmp nil: not checked
	}
	checks := []check{
		{"earliest", func(int32) int64 { return -2 }, func(int32) int64 { return 0 }, nil},
		{"latest", func(int32) int64 { return -1 }, func(p int32) int64 { return int64(len(byPart[p])) }, nil},
		{"max-timestamp", func(int32) int64 { return -3 }, func(p int32) int64 { return last(p).offset },
			func(p int32) int64 { return last(p).ts.UnixMilli() }},
		{"by-timestamp", func(p int32) int64 { return mid(p).ts.UnixMilli() },
			func(p int32) int64 { return mid(p).offset },
			func(p int32) int64 { return mid(p).ts.UnixMilli() }},
		{"by-timestamp-between", func(p int32) int64 { return mid(p).ts.UnixMilli() - 1 },
			func(p int32) int64 { return mid(p).offset }, func(p int32) int64 { return mid(p).ts.UnixMilli() }},
		{"by-timestamp-past-end", func(p int32) int64 { return last(p).ts.UnixMilli() + 1 },
			func(int32) int64 { return -1 }, func(int32) int64 { return -1 }},
	}
	for _, c := range checks {
		out := listOffsets(ctx, cl, topic, nparts, c.ts)
		for p := int32(0); p < nparts; p++ {
			r := out[p]
			if r.ErrorCode != 0 {
				failf("ListOffsets %s %s[%d]: error %d", c.name, topic, p, r.ErrorCode)
				continue
			}
			if r.Offset != c.offset(p) {
				failf("ListOffsets %s %s[%d] (timestamp %d): offset %d, expected %d",
					c.name, topic, p, c.ts(p), r.Offset, c.offset(p))
			}
			if c.tstmp != nil && r.Timestamp != c.tstmp(p) {
				failf("ListOffsets %s %s[%d] (timestamp %d): timestamp %d, expected %d",
					c.name, topic, p, c.ts(p), r.Timestamp, c.tstmp(p))
			}
		}
	}
}

func main() {
	if len(os.Args) >= 4 {
		phase := ""
		if len(os.Args) > 4 {
			phase = os.Args[4]
		}
		runScenario(os.Args[1], os.Args[2], os.Args[3], phase)
		return
	}
	if len(os.Args) != 2 {
		die("usage: franz-compat HOST:PORT | franz-compat HOST:PORT ID SCENARIO [PHASE]")
	}
	bs := os.Args[1]
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	admin := newClient(bs, kgo.AllowAutoTopicCreation())
	defer admin.Close()
	checkBrokers(ctx, admin, bs)

	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{
		{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()},
	}
	nerr := 0
	run := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1000000)
	for _, c := range codecs {
		topic := "compat-franz-go-" + c.name + "-" + run
		nparts := autoCreate(ctx, admin, topic)
		// Timestamps from ten minutes ago: well inside retention and
		// Kafka's default timestamp bounds.
		base := time.UnixMilli(time.Now().Add(-10 * time.Minute).UnixMilli())
		ws := makeRecords(nparts, base)
		start := time.Now()
		compared, comparedBytes = 0, 0
		produce(ctx, bs, topic, c.codec, ws)
		consume(ctx, bs, topic, nparts, ws)
		consumeFromMiddle(ctx, bs, topic, nparts, ws)
		checkListOffsets(ctx, admin, topic, nparts, ws)
		if compared != len(ws) {
			failf("%s: %d records compared, %d produced", c.name, compared, len(ws))
		}
		if errCount > nerr {
			fmt.Printf("%-6s: %d differences (first ones on stderr)\n", c.name, errCount-nerr)
			nerr = errCount
			continue
		}
		fmt.Printf("%-6s: %d records (%d bytes) to %s (%d partitions, auto-created) produced idempotently,"+
			" read back byte for byte, ListOffsets ok (%.2fs)\n",
			c.name, compared, comparedBytes, topic, nparts, time.Since(start).Seconds())
	}
	if errCount > 0 {
		die("%d differences", errCount)
	}
}
